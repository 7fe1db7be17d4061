"""collect/hostcpu.py: which masters share the host, and the sampler on this machine."""
import os
import time

import pytest

from jupyter_perf.collect.hostcpu import HostCpuSampler, busy_core_ms, executors_on_this_host


@pytest.mark.parametrize("master,same_host", [
    ("local", True), ("local[2]", True), ("local[*]", True), ("local[2,3]", True),
    ("local-cluster[2,1,1024]", True), ("yarn", False), ("spark://h:7077", False),
    ("k8s://https://api:6443", False), ("", False)])
def test_which_masters_share_this_host(master, same_host):
    assert executors_on_this_host(master) is same_host


def test_sampler_measures_a_busy_core():
    """Host busy time between two samples holds this process's CPU time of a span inside
    them, and is at most every usable core busy for a span around them.

    The loop keeps one core busy until the sampler has taken five samples and this process has
    used 0.3 s of CPU, however slowly a busy host schedules either thread. Each sample reads
    this process tree's CPU time, then the clock, then the host's busy time, in that order in
    one thread, so the spans compared are nested by that order alone: how long the host kept
    the sampler waiting between two reads decides nothing here.
    """
    s = HostCpuSampler(interval=0.02)
    assert s.cpus == sorted(os.sched_getaffinity(0))
    s.start()
    give_up = time.monotonic() + 60
    while len(s.rows) < 2 and time.monotonic() < give_up:
        pass
    spun_from = time.process_time()                 # after the second sample's reads
    while ((len(s.rows) < 5 or time.process_time() - spun_from < 0.3)
           and time.monotonic() < give_up):         # spin: one core busy
        pass
    rows = s.stop()                                 # its last sample is read in this thread
    after_ms = time.time() * 1000.0
    assert not s.is_alive() and len(rows) >= 6, "the sampler never took five samples"
    assert time.process_time() - spun_from >= 0.3, "the spin never got 0.3 s of CPU"
    tick = 10.0 * len(s.cpus)                   # /proc/stat counts in 10 ms ticks per CPU
    # host busy from the first sample's read to the last's, which holds the span from the
    # second sample's read of our CPU time to the last's
    busy = rows[-1]["busy_core_ms"] - rows[0]["busy_core_ms"]
    own = rows[-1]["own_core_ms"] - rows[1]["own_core_ms"]
    assert own >= 300 - 20                      # the spin, in whole 10 ms ticks (user, system)
    assert busy >= own - 2 * tick               # the host's busy time holds ours
    # ... and lies between the first sample's clock reading and the end of stop()
    assert busy <= len(s.cpus) * (after_ms - rows[0]["time_ms"]) + 2 * tick
    assert all(r["cores"] == len(s.cpus) for r in rows)
    assert all(b["busy_core_ms"] >= a["busy_core_ms"] and b["own_core_ms"] >= a["own_core_ms"]
               for a, b in zip(rows, rows[1:]))


def test_busy_is_cumulative_and_monotone():
    cpus = sorted(os.sched_getaffinity(0))
    a = busy_core_ms(cpus)
    sum(range(200_000))
    assert busy_core_ms(cpus) >= a
