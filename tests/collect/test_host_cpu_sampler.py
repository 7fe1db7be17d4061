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
    """Host busy time between two samples holds at least this process's CPU time in it.

    The loop keeps one core busy until the sampler has taken five samples (however slowly a
    busy host schedules its thread), so no count or duration here depends on this machine.
    """
    s = HostCpuSampler(interval=0.02)
    assert s.cpus == sorted(os.sched_getaffinity(0))
    s.start()
    give_up = time.monotonic() + 60
    while len(s.rows) < 5 and time.monotonic() < give_up:   # spin: one core busy
        pass
    rows = s.stop()
    assert not s.is_alive() and len(rows) >= 6, "the sampler never took five samples"
    tick = 10.0 * len(s.cpus)                   # /proc/stat counts in 10 ms ticks per CPU
    busy = rows[-1]["busy_core_ms"] - rows[0]["busy_core_ms"]
    own = rows[-1]["own_core_ms"] - rows[0]["own_core_ms"]
    elapsed = rows[-1]["time_ms"] - rows[0]["time_ms"]
    assert own > 0                              # the spin ran between the first and last
    assert busy >= own - 2 * tick               # the host's busy time holds ours
    assert busy <= len(s.cpus) * elapsed + 2 * tick
    assert all(r["cores"] == len(s.cpus) for r in rows)
    assert all(b["busy_core_ms"] >= a["busy_core_ms"] and b["own_core_ms"] >= a["own_core_ms"]
               for a, b in zip(rows, rows[1:]))


def test_busy_is_cumulative_and_monotone():
    cpus = sorted(os.sched_getaffinity(0))
    a = busy_core_ms(cpus)
    sum(range(200_000))
    assert busy_core_ms(cpus) >= a
