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
    s = HostCpuSampler(interval=0.02)
    assert s.cpus == sorted(os.sched_getaffinity(0))
    s.start()
    end = time.process_time() + 0.3
    while time.process_time() < end:      # keep one core busy for 0.3 s of CPU time
        pass
    rows = s.stop()
    assert not s.is_alive() and len(rows) >= 5
    busy = rows[-1]["busy_core_ms"] - rows[0]["busy_core_ms"]
    elapsed = rows[-1]["time_ms"] - rows[0]["time_ms"]
    assert busy >= 250                                  # at least this loop's CPU time
    assert busy <= len(s.cpus) * elapsed + 20 * len(s.cpus)
    assert all(r["cores"] == len(s.cpus) for r in rows)


def test_busy_is_cumulative_and_monotone():
    cpus = sorted(os.sched_getaffinity(0))
    a = busy_core_ms(cpus)
    sum(range(200_000))
    assert busy_core_ms(cpus) >= a
