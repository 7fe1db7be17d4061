"""Replay with the slots executors really had over time (dynamic allocation, lost executors)."""
import numpy as np
import pytest
from analysis_synth import T0, make_run, task

from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.replay import scaled_windows, simulate_group, simulate_windows
from jupyter_perf.analysis.timeline import build_timeline

INF = float("inf")


def executors(*rows):
    """(id, cores, add, remove) with times relative to T0; the driver has no cores."""
    out = [{"executor_id": "driver", "host": "d", "total_cores": 0, "add_ms": T0 - 60_000}]
    for eid, cores, add, remove in rows:
        out.append({"executor_id": eid, "host": f"h{eid}", "total_cores": cores,
                    "add_ms": T0 + add,
                    "remove_ms": None if remove is None else T0 + remove})
    return out


def late_second_executor():
    # Executor 1 is there when the stage starts; executor 2 registers at 25 and takes its
    # first task at 30. Six tasks of 20 ms: 1 runs [0,20] [20,40] [40,60] [60,80], 2 runs
    # [30,50] [50,70]: 80 ms. Two slots from the start would replay it in 60.
    tasks = [task(0, 20, executor_id="1"), task(20, 20, executor_id="1"),
             task(30, 20, executor_id="2"), task(40, 20, executor_id="1"),
             task(50, 20, executor_id="2"), task(60, 20, executor_id="1")]
    return make_run(tasks, start=-10, end=90,
                    executors=executors(("1", 1, -5, None), ("2", 1, 25, None)))


def test_an_executor_arriving_mid_stage_offers_its_slot_from_its_first_task():
    run = late_second_executor()
    tl = build_timeline(run)
    begin, end = tl.slot_windows[0]
    assert begin.tolist() == [0.0, 30.0] and end.tolist() == [INF, INF]
    a = analyze(run)
    assert a.simulated_baseline_ms == 80.0 == a.actual_ms
    assert a.model_error == 0.0


def test_the_plain_replay_would_have_missed_it():
    # the same tasks with both executors there before the run: no windows, 2 slots at 0
    run = late_second_executor()
    run.executors = run.executors.assign(add_ms=T0 - 30_000)
    tl = build_timeline(run)
    assert tl.slot_windows == [None]
    assert analyze(run).simulated_baseline_ms == 60.0


def test_an_executor_removed_mid_stage_takes_no_task_after_it_left():
    # Executor 2 is lost at 25: its task [0,25] failed, the retry runs on executor 1.
    tasks = [task(0, 30, executor_id="1"),
             task(0, 25, executor_id="2", status="FAILED"),
             task(30, 30, executor_id="1", attempt=1, index=1),
             task(60, 10, executor_id="1")]
    run = make_run(tasks, start=0, end=70,
                   executors=executors(("1", 1, -50_000, None), ("2", 1, -50_000, 25)))
    tl = build_timeline(run)
    assert tl.slot_windows[0][0].tolist() == [0.0, 0.0]
    assert tl.slot_windows[0][1].tolist() == [INF, 25.0]      # ties: the one that stays first
    a = analyze(run)
    # slot 2 frees at 25 but is gone: the retry and the last task wait for slot 1
    assert a.baseline.starts.tolist() == [0.0, 0.0, 30.0, 60.0]
    assert a.simulated_baseline_ms == 70.0 == a.actual_ms


def test_runs_without_executor_changes_keep_the_plain_replay():
    run = make_run([task(0, 10), task(0, 10), task(10, 10)], slots=2)
    assert build_timeline(run).slot_windows == [None]
    # executors known, all there before the run: still the plain replay
    run = make_run([task(0, 10, executor_id="1"), task(0, 10, executor_id="2")],
                   executors=executors(("1", 1, -100, None), ("2", 1, -100, None)))
    assert build_timeline(run).slot_windows == [None]


def test_tasks_on_an_unknown_executor_keep_the_plain_replay():
    run = make_run([task(0, 10, executor_id="1"), task(5, 10, executor_id="9")],
                   executors=executors(("1", 1, 2, None)))
    assert build_timeline(run).slot_windows == [None]


def test_scaled_windows_repeat_or_keep_the_earliest():
    w = (np.array([0.0, 30.0]), np.array([INF, 50.0]))
    b, e = scaled_windows(w, 2.0, 10)
    assert b.tolist() == [0.0, 30.0, 0.0, 30.0] and e.tolist() == [INF, 50.0, INF, 50.0]
    b, e = scaled_windows(w, 0.5, 10)
    assert b.tolist() == [0.0] and e.tolist() == [INF]
    assert len(scaled_windows(w, INF, 7)[0]) == 7
    assert scaled_windows(w, 1.0, 1)[0] is w[0]


def test_slots_what_if_on_a_dynamic_run():
    a = analyze(late_second_executor())
    # twice the slots: two from 0 (tasks 1-4: [0,20] [0,20] [20,40] [20,40]) and two from
    # 30 (tasks 5-6: [30,50] [30,50])
    assert a.simulate(slots_factor=2.0) == 50.0
    assert a.whatif(slots_factor=2.0) <= a.wall_ms


def test_windows_without_changes_equal_the_plain_replay():
    rng = np.random.default_rng(1)
    for _ in range(50):
        d = rng.exponential(10.0, int(rng.integers(1, 40))).tolist()
        k = int(rng.integers(1, 5))
        plain = simulate_group(d, k)
        windowed = simulate_windows(d, (np.zeros(k), np.full(k, INF)))
        assert windowed[0] == pytest.approx(plain[0]) and windowed[1] == pytest.approx(plain[1])


def _random_windows(rng, k):
    begin = np.sort(rng.uniform(0, 30, k) * (rng.uniform(size=k) < 0.5))
    end = np.where(rng.uniform(size=k) < 0.3, begin + rng.uniform(5, 80, k), INF)
    return begin, end


@pytest.mark.parametrize("seed", range(40))
def test_shorter_tasks_never_slower_with_windows(seed):
    rng = np.random.default_rng(seed)
    d = rng.exponential(10.0, int(rng.integers(1, 50))).tolist()
    w = _random_windows(rng, int(rng.integers(1, 5)))
    shorter = [x * rng.uniform(0, 1) for x in d]
    assert simulate_windows(shorter, w)[0] <= simulate_windows(d, w)[0] + 1e-9


@pytest.mark.parametrize("seed", range(40))
def test_more_slots_never_slower_when_executors_only_arrive(seed):
    # (with removals, list scheduling has Graham's anomalies: an extra slot that leaves can
    # cost a few per cent; replay.py says so)
    rng = np.random.default_rng(seed)
    d = rng.exponential(10.0, int(rng.integers(1, 50))).tolist()
    begin, _ = _random_windows(rng, int(rng.integers(1, 5)))
    w = (begin, np.full(len(begin), INF))
    spans = [simulate_windows(d, scaled_windows(w, f, len(d)))[0] for f in (1.0, 1.5, 2.0, 4.0)]
    assert all(b <= a + 1e-9 for a, b in zip(spans, spans[1:]))
