"""The host CPU floor under more-slots scenarios: shares by hand, the floor, its properties."""
import numpy as np
import pandas as pd
import pytest
from analysis_synth import T0, make_run, task

from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.hostcpu import busy_share, host_cores
from jupyter_perf.analysis.replay import replay


def samples(rate_cores, until=1000.0, step=50.0, cores=2, start=-50.0):
    """Cumulative busy core-ms sampled every ``step`` ms; ``rate_cores(t)``: cores busy at t."""
    t = np.arange(start, until + step, step)
    busy = np.concatenate([[0.0], np.cumsum([rate_cores(x) * step for x in t[:-1]])])
    return pd.DataFrame({"time_ms": T0 + t, "busy_core_ms": busy, "cores": cores})


def four_tasks_one_slot(host=None):
    # local[1]: four 100 ms tasks back to back on one slot, on a 2-core host
    run = make_run([task(100 * i, 100) for i in range(4)], slots=1)
    if host is not None:
        run.host_cpu = host
    return run


def test_busy_share_by_hand():
    # two groups: 0-100 ms with 2 cores busy, 300-400 ms with 1 of 2 busy; a gap between
    run = make_run([task(0, 100, stage=0), task(300, 100, stage=1)], slots=1)
    run.host_cpu = samples(lambda t: 2.0 if t < 200 else 1.0)
    a = analyze(run)
    assert a.timeline.n_groups == 2
    assert busy_share(run, a.timeline) == pytest.approx([1.0, 0.5])
    assert host_cores(run) == 2
    assert a.whatif_summary()["host_cpu_busy_share"] == pytest.approx(0.75)


def test_no_samples_no_floor():
    run = four_tasks_one_slot()
    a = analyze(run)
    assert not a.cpu_share.any()
    assert a.whatif(slots_factor=2.0) == pytest.approx(200.0)     # the plain replay: 2 waves
    assert a.whatif_summary()["host_cpu_busy_share"] is None
    assert a.whatif_summary()["host_cores"] == 0


def test_idle_second_core_leaves_the_replay_alone():
    # the task thread kept one of two cores busy: a second slot has a free core
    a = analyze(four_tasks_one_slot(samples(lambda t: 1.0)))
    assert a.cpu_share == pytest.approx([0.5])
    assert a.whatif(slots_factor=2.0) == pytest.approx(200.0)


def test_busy_host_bounds_more_slots():
    # both cores were busy (the task thread + as much background work): a second slot on
    # the same host has no core to run on, so it cannot make the group faster
    a = analyze(four_tasks_one_slot(samples(lambda t: 2.0)))
    assert a.cpu_share == pytest.approx([1.0])
    assert a.whatif(slots_factor=2.0) == pytest.approx(400.0)
    # 1.5 of 2 cores busy: the floor is 300 ms of the 400 ms group
    a = analyze(four_tasks_one_slot(samples(lambda t: 1.5)))
    assert a.whatif(slots_factor=2.0) == pytest.approx(300.0)
    assert a.whatif(slots_factor=4.0) == pytest.approx(300.0)


def test_floor_shrinks_with_the_scenario_work():
    # half of each task is GC; without GC the CPU work (and its floor) halves too
    run = make_run([task(100 * i, 100, gc_ms=50) for i in range(4)], slots=1)
    run.host_cpu = samples(lambda t: 2.0)
    a = analyze(run)
    assert a.whatif(gc=False) == pytest.approx(200.0)
    assert a.whatif(gc=False, slots_factor=2.0) == pytest.approx(200.0)


@pytest.mark.parametrize("rate", [0.3, 1.0, 1.7, 2.0])
def test_properties_hold_with_the_floor(rate):
    tasks = [task(37 * i, 60 + (i * 29) % 90, stage=i // 6, fetch_wait_ms=10, gc_ms=5)
             for i in range(24)]
    run = make_run(tasks, slots=2)
    run.host_cpu = samples(lambda t: rate, until=2000.0)
    a = analyze(run)
    assert a.whatif() == a.wall_ms
    for slots in (0.5, 1.0):       # the floor never binds at or below the measured slots
        sim = replay(a.timeline, a.timeline.duration, slots).total_ms
        plain = a.driver_gap_ms + a.actual_ms * sim / a.simulated_baseline_ms
        assert a.whatif(slots_factor=slots) == pytest.approx(plain)
    times = [a.whatif(slots_factor=k) for k in (0.5, 1.0, 1.5, 2.0, 4.0, 8.0)]
    assert all(x >= y - 1e-9 for x, y in zip(times, times[1:])), times   # more slots never slower
    inf = float("inf")
    for kw in ("disk", "network"):
        for k in (1.0, 2.0, 4.0):
            base = a.whatif(slots_factor=k)
            two = a.whatif(slots_factor=k, **{kw: 2.0})
            free = a.whatif(slots_factor=k, **{kw: inf})
            assert free <= two + 1e-9 <= base + 2e-9


def test_partial_coverage_only_counts_what_was_sampled():
    # samples start half-way through the group: the share is a lower bound, never more
    run = four_tasks_one_slot(samples(lambda t: 2.0, start=200.0))
    share = busy_share(run, analyze(run).timeline)
    assert share == pytest.approx([0.5])


def test_bad_samples_are_ignored():
    run = four_tasks_one_slot(pd.DataFrame({"time_ms": [T0, None], "busy_core_ms": ["x", 5],
                                            "cores": [2, 2]}))
    assert not analyze(run).cpu_share.any()


def test_core_wait_share_from_a_saturated_host():
    from jupyter_perf.analysis.hostcpu import core_wait_share
    # two 100 ms tasks on 2 cores: 0-100 ms both cores busy, 100-200 ms 1.5 of 2 busy
    run = make_run([task(0, 100, cpu_ms=40), task(100, 100, cpu_ms=40)], slots=1)
    run.host_cpu = samples(lambda t: 2.0 if t < 100 else 1.5)
    a = analyze(run)
    # every core busy the whole first task; at least 2 x 0.75 - 1 = half of the second
    assert core_wait_share(run, a.timeline) == pytest.approx([1.0, 0.5])
    bd = a.task_breakdown
    assert bd["core_wait_est"].tolist() == pytest.approx([60.0, 30.0])
    assert bd["other_wait_est"].tolist() == pytest.approx([0.0, 30.0])
    s = a.summary()
    assert s["breakdown"]["core_wait_est"]["kind"] == "estimated"


def test_no_core_wait_without_samples_or_idle_cores():
    from jupyter_perf.analysis.hostcpu import core_wait_share
    run = make_run([task(0, 100, cpu_ms=40)], slots=1)
    assert not core_wait_share(run, analyze(run).timeline).any()
    run.host_cpu = samples(lambda t: 1.0)           # one of two cores idle all the time
    assert not core_wait_share(run, analyze(run).timeline).any()


def test_a_faster_disk_cannot_beat_the_measured_cpu_work():
    # one task: 40 ms CPU, 60 ms of input wait by the task metrics, on a host whose two
    # cores were busy the whole time: infinitely fast disk saves nothing
    MB = 1_000_000
    run = make_run([task(0, 100, cpu_ms=40, input_bytes=500 * MB)], slots=1)
    assert analyze(run).whatif(disk=float("inf")) == pytest.approx(40.0)
    run.host_cpu = samples(lambda t: 2.0)
    a = analyze(run)
    assert a.task_breakdown["io_wait_est"].tolist() == [0.0]     # it waited for a core
    assert a.whatif(disk=float("inf")) == pytest.approx(100.0)
    run.host_cpu = samples(lambda t: 1.0)           # half busy: no core wait, floor 50%
    a = analyze(run)
    assert a.task_breakdown["io_wait_est"].tolist() == [60.0]
    assert a.whatif(disk=float("inf")) == pytest.approx(50.0)


# -- this application's load and other processes' (issue U, item 3) ----------------------

def split_samples(host_cores_busy, own_cores_busy, until=1000.0, step=50.0, cores=2):
    """Host samples with ``own_core_ms``: ``host_cores_busy`` cores busy in all, of which
    ``own_cores_busy`` by this process tree (constant rates)."""
    frame = samples(lambda t: host_cores_busy, until=until, step=step, cores=cores)
    frame["own_core_ms"] = frame["busy_core_ms"] * own_cores_busy / host_cores_busy
    return frame


def cpu_run(host=None):
    # two 100 ms tasks at a time on 2 cores; each ran 40 ms on a CPU, 60 ms unexplained
    run = make_run([task(100 * (i // 2), 100, cpu_ms=40) for i in range(8)], slots=2)
    if host is not None:
        run.host_cpu = host
    return run


def test_other_processes_saturating_the_host_are_contention_not_core_wait():
    from jupyter_perf.analysis.hostcpu import contention_share, core_wait_share, own_share
    # both cores busy, this process tree kept 0.8 of them busy: its threads alone never
    # saturated the cores (2 x 0.4 - 1 < 0), so every bit of saturation is other processes'
    run = cpu_run(split_samples(2.0, 0.8))
    a = analyze(run)
    assert core_wait_share(run, a.timeline) == pytest.approx([0.0] * 8)
    assert contention_share(run, a.timeline) == pytest.approx([1.0] * 8)
    assert own_share(run, a.timeline) == pytest.approx([0.4])
    bd = a.task_breakdown
    assert bd["core_wait_est"].sum() == 0 and bd["contention_est"].sum() == pytest.approx(480.0)
    assert bd["other_wait_est"].sum() == pytest.approx(0.0)
    s = a.summary()
    assert s["breakdown"]["contention_est"]["kind"] == "estimated"
    assert s["host_cpu"]["busy_share"] == pytest.approx(1.0)
    assert s["host_cpu"]["own_share"] == pytest.approx(0.4)
    assert s["host_cpu"]["other_share"] == pytest.approx(0.6)
    assert s["host_cpu"]["lost_share"] == pytest.approx(0.6)
    # the bottleneck is chosen without the other processes' part: all of the rest is CPU
    assert s["verdict_category"] == "cpu" and s["verdict_headline"] == "CPU-bound"
    assert s["verdict"].startswith("CPU-bound: 100% of task time on CPU")
    assert ("the host's CPU was 100% busy (measured): other processes took 60% of its cores, "
            "costing tasks an estimated 60% of their time, the shares above estimated as if the host "
            "had been quiet"
            in s["verdict"])
    assert s["host_cpu"]["context"] in s["verdict"]
    assert "waiting for a core" not in s["verdict"]
    assert [h["cause"] for h in s["hints"]].count("contention") == 1


def test_own_threads_saturating_the_host_are_waiting_for_a_core():
    from jupyter_perf.analysis.hostcpu import contention_share, core_wait_share
    # this process tree kept both cores busy by itself: the whole bound is its own
    run = cpu_run(split_samples(2.0, 2.0))
    a = analyze(run)
    assert core_wait_share(run, a.timeline) == pytest.approx([1.0] * 8)
    assert not contention_share(run, a.timeline).any()
    s = a.summary()
    # 40% on CPU, 60% waiting: one demand for CPU, named CPU-bound (the wait is not twice the
    # CPU time: verdict.OVERSUBSCRIBED), the wait its second figure
    assert s["verdict_category"] == "cpu" and s["verdict_headline"] == "CPU-bound"
    assert s["verdict"].startswith("CPU-bound: 40% of task time on CPU and 60% on waiting for a core")
    assert "other processes" not in s["verdict"] and s["host_cpu"]["context"] in s["verdict"]
    assert s["host_cpu"]["other_share"] == pytest.approx(0.0)
    # mixed: own 1.6 of 2 cores -> 2 x 0.8 - 1 = 0.6 of the rest is its own core wait, the
    # remaining 0.4 of the saturation is the other processes'
    run = cpu_run(split_samples(2.0, 1.6))
    a = analyze(run)
    assert core_wait_share(run, a.timeline) == pytest.approx([0.6] * 8)
    assert contention_share(run, a.timeline) == pytest.approx([0.4] * 8)
    bd = a.task_breakdown.sum()
    assert bd["core_wait_est"] == pytest.approx(0.6 * 480)
    assert bd["contention_est"] == pytest.approx(0.4 * 480)


def test_same_verdict_on_a_quiet_and_on_a_busy_host():
    # quiet: this process tree's 1.6 cores; busy: the tasks stretched to twice as long by other
    # processes (same CPU work), the host 100% busy, this tree 1.0 of its 2 cores
    quiet = make_run([task(100 * (i // 2), 100, cpu_ms=95) for i in range(8)], slots=2)
    quiet.host_cpu = split_samples(1.6, 1.6)
    busy = make_run([task(200 * (i // 2), 200, cpu_ms=95) for i in range(8)], slots=2)
    busy.host_cpu = split_samples(2.0, 1.0, until=2000.0)
    q, b = analyze(quiet).summary(), analyze(busy).summary()
    assert q["verdict_category"] == b["verdict_category"] == "cpu"
    assert q["verdict_headline"] == b["verdict_headline"] == "CPU-bound"
    assert not q["host_cpu"]["context"] and "other processes" not in q["verdict"]
    assert "other processes took 50% of its cores" in b["verdict"]
    # without the split (runs stored before own_core_ms) the busy run's whole saturation is
    # taken as its own core wait, none as other processes'
    busy.host_cpu = busy.host_cpu.drop(columns=["own_core_ms"])
    old = analyze(busy).summary()
    assert old["breakdown"]["core_wait_est"]["ms"] > 0
    assert old["host_cpu"]["own_share"] is None and old["host_cpu"]["other_share"] is None
    assert old["breakdown"]["contention_est"]["ms"] == 0


def test_missing_own_samples_fall_back_to_the_whole_saturation():
    from jupyter_perf.analysis.hostcpu import contention_share, core_wait_share, own_share
    host = split_samples(2.0, 0.8)
    host.loc[3, "own_core_ms"] = np.nan           # one unreadable sample: the split is unknown
    run = cpu_run(host)
    a = analyze(run)
    assert own_share(run, a.timeline) is None
    assert core_wait_share(run, a.timeline) == pytest.approx([1.0] * 8)
    assert not contention_share(run, a.timeline).any()
    assert a.summary()["host_cpu"]["context"] == "the host's CPU was 100% busy (measured)"


def test_the_floor_keeps_the_whole_host_busy_share():
    # other processes' load is part of the floor: adding slots on this host does not remove it
    run = four_tasks_one_slot(split_samples(2.0, 1.0))
    a = analyze(run)
    assert a.cpu_share == pytest.approx([1.0])
    assert a.whatif(slots_factor=2.0) == pytest.approx(400.0)
    assert a.host_cpu_own_share == pytest.approx(0.5)


def test_process_tree_cpu_counts_descendants_and_keeps_ended_ones():
    import subprocess
    import sys

    from jupyter_perf.collect.hostcpu import HostCpuSampler, ProcessTreeCpu
    tree = ProcessTreeCpu(tree_every=1)
    before = tree.core_ms()
    child = subprocess.Popen([sys.executable, "-c",
                              "import time\nt = time.process_time()\n"
                              "while time.process_time() - t < 0.3: pass\n"
                              "time.sleep(30)"])
    try:
        import time
        deadline = time.time() + 60                 # a busy host starts it slowly
        while tree.core_ms() - before < 250 and time.time() < deadline:
            time.sleep(0.05)
        seen = tree.core_ms()
        assert seen - before >= 250                 # the child's 0.3 s of CPU is counted
    finally:
        child.kill()
        child.wait()
    assert tree.core_ms() >= seen                   # it ended: its CPU time stays counted
    sampler = HostCpuSampler()
    sampler.sample()
    sampler.sample()
    assert all(r["own_core_ms"] >= 0 for r in sampler.rows)
    assert sampler.rows[1]["own_core_ms"] >= sampler.rows[0]["own_core_ms"]


def test_the_tree_is_listed_with_each_new_process_read_once():
    # a grandchild (a Python worker the JVM's daemon forks) is in the tree; a process that
    # ends is forgotten, so its pid, if reused, is read again
    import subprocess
    import sys
    import time

    import psutil

    from jupyter_perf.collect.hostcpu import ParentCache, ProcessTreeCpu
    child = subprocess.Popen([sys.executable, "-c",
                              "import subprocess, sys, time\n"
                              "g = subprocess.Popen([sys.executable, '-c', "
                              "'import time\\nt = time.process_time()\\n"
                              "while time.process_time() - t < 0.3: pass\\ntime.sleep(30)'])\n"
                              "print(g.pid, flush=True)\ntime.sleep(30)"],
                             stdout=subprocess.PIPE, text=True)
    try:
        grandchild = int(child.stdout.readline())
        cache = ParentCache()
        assert {child.pid, grandchild} <= set(cache.descendants(psutil.Process().pid))
        assert cache.descendants(child.pid) == [grandchild]
        tree = ProcessTreeCpu(tree_every=1)
        tree.core_ms()
        deadline = time.time() + 60                 # a busy host runs it slowly
        while sum(psutil.Process(grandchild).cpu_times()[:2]) < 0.29 \
                and time.time() < deadline:
            time.sleep(0.05)
        total = tree.core_ms()
        mine = [ms for key, ms in tree._last.items() if key[0] == grandchild]
        assert mine and mine[0] >= 250              # its 0.3 s of CPU, read from its own times
        assert total >= mine[0]
        child.kill()
        child.wait()
        psutil.Process(grandchild).kill()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.pid not in cache.descendants(psutil.Process().pid)
    assert grandchild not in cache.descendants(psutil.Process().pid)   # orphaned: not ours
    assert child.pid not in cache._parent           # ended: forgotten (its pid may be reused)
