"""Schedule replay: hand-computed schedules, NSDI'15 Figure 2, DAG barriers, properties."""
import numpy as np
import pytest
from analysis_synth import make_run, task

from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.replay import replay, simulate_group
from jupyter_perf.analysis.timeline import build_timeline


def test_one_slot_is_the_sum():
    span, starts = simulate_group([3.0, 4.0, 5.0], 1)
    assert span == 12.0 and starts == [0.0, 3.0, 7.0]


def test_one_wave_is_the_longest_task():
    span, starts = simulate_group([3.0, 9.0, 5.0], 3)
    assert span == 9.0 and starts == [0.0, 0.0, 0.0]


def test_earliest_free_slot_hand_schedule():
    # 2 slots, durations 5, 2, 2, 4, 1 in launch order:
    # t0 A[0,5]  t1 B[0,2]  t2 B[2,4]  t3 B[4,8]  t4 A[5,6]  -> makespan 8
    span, starts = simulate_group([5.0, 2.0, 2.0, 4.0, 1.0], 2)
    assert starts == [0.0, 0.0, 2.0, 4.0, 5.0]
    assert span == 8.0


def figure2_run():
    """NSDI'15 Figure 2 shape: two slots, two waves. Slot A runs t0 [0,8] then t2 [8,14];
    slot B runs t1 [0,10] then t3 [10,16]. t1 was blocked 6 ms on the network."""
    return make_run([
        task(0, 8, index=0),
        task(0, 10, index=1, fetch_wait_ms=6),
        task(8, 6, index=2),
        task(10, 6, index=3),
    ], slots=2)


def test_figure2_baseline_reproduces_the_original_schedule():
    a = analyze(figure2_run())
    assert a.timeline.group_slots.tolist() == [2]
    assert a.baseline.starts.tolist() == [0.0, 0.0, 8.0, 10.0]
    assert a.simulated_baseline_ms == 16.0 == a.actual_ms == a.wall_ms
    assert a.model_error == 0.0


def test_figure2_task_starts_on_the_slot_freed_first_not_at_its_original_start():
    a = analyze(figure2_run())
    tl = a.timeline
    d = tl.duration - np.array([0, 6, 0, 0])          # no network: t1 takes 4 ms
    r = replay(tl, d, want_starts=True)
    # t2 starts at 4 on slot B (freed first by t1), not at its original 8 on slot A;
    # t3 then takes slot A at 8.
    assert r.starts.tolist() == [0.0, 0.0, 4.0, 8.0]
    assert r.total_ms == 14.0
    # Naively subtracting blocked time from the original schedule would claim 16 -> 16.
    assert a.whatif(network=float("inf")) == pytest.approx(14.0)


def test_several_waves_three_slots():
    # 7 tasks of 10 ms on 3 slots: waves at 0, 10, 20 -> 30 ms.
    run = make_run([task(10 * (i // 3), 10) for i in range(7)], slots=3)
    a = analyze(run)
    assert a.simulated_baseline_ms == 30.0
    assert a.baseline.starts.tolist() == [0, 0, 0, 10, 10, 10, 20]
    # Twice the slots: 6 slots -> two waves.
    assert a.simulate(slots_factor=2.0) == 20.0
    assert a.whatif(slots_factor=2.0) == pytest.approx(20.0)
    # Infinitely many slots: one wave.
    assert a.simulate(slots_factor=float("inf")) == 10.0


def test_slots_are_the_concurrency_actually_used_not_the_cores():
    # 8 cores, but tasks ran one at a time: replay on 1 slot.
    run = make_run([task(0, 5), task(5, 5), task(10, 5)], slots=8)
    a = analyze(run)
    assert a.timeline.group_slots.tolist() == [1]
    assert a.simulated_baseline_ms == 15.0


def test_failed_attempts_occupy_a_slot_in_the_replay():
    # One slot: a failed attempt [0,10], its retry [10,15], another task [15,20].
    run = make_run([task(0, 10, index=0, status="FAILED"),
                    task(10, 5, index=0, attempt=1),
                    task(15, 5, index=1)], slots=1)
    a = analyze(run)
    assert a.simulated_baseline_ms == 20.0 == a.actual_ms


def test_groups_are_replayed_separately_and_driver_gaps_stay():
    # Stage 0 [0,10] on 2 slots, gap 10..30 (driver), stage 1 [30,40].
    run = make_run([task(0, 10, stage=0), task(0, 10, stage=0),
                    task(30, 10, stage=1)], slots=2, start=0, end=45)
    tl = build_timeline(run)
    assert tl.n_groups == 2
    assert tl.actual_ms == 20.0 and tl.wall_ms == 45.0 and tl.driver_gap_ms == 25.0
    a = analyze(run)
    assert a.simulated_baseline_ms == 20.0
    assert a.whatif() == pytest.approx(45.0)


def test_dag_barrier_inside_a_group():
    # One group: stage 0 (2 tasks) and stage 2 (long, independent) overlap; stage 1 is a
    # child of stage 0 and starts when stage 0 is done, while stage 2 still runs.
    stages = [{"stage_id": 0, "attempt": 0, "parent_ids": []},
              {"stage_id": 2, "attempt": 0, "parent_ids": []},
              {"stage_id": 1, "attempt": 0, "parent_ids": [0]}]
    run = make_run([task(0, 10, stage=0), task(0, 10, stage=0),
                    task(1, 40, stage=2),
                    task(10, 5, stage=1), task(10, 5, stage=1)], slots=3, stages=stages)
    tl = build_timeline(run)
    assert tl.n_groups == 1 and tl.group_slots.tolist() == [3]
    assert len(tl.splits[0]) == 1
    # Shrink stage 0 to 2 ms each: stage 1 may start at 2, not before.
    d = tl.duration.copy()
    d[:2] = 2.0
    r = replay(tl, d, want_starts=True)
    assert r.starts.tolist() == [0.0, 0.0, 0.0, 2.0, 2.0]
    # Without the DAG the same durations would let nothing wait; now make stage 0 longer
    # than its slots' neighbours: stage 1 must wait for both stage-0 tasks.
    d = tl.duration.copy()
    d[0], d[1], d[2] = 10.0, 30.0, 5.0
    r = replay(tl, d, want_starts=True)
    assert r.starts[3] == 30.0 and r.starts[4] == 30.0


def test_tasks_without_launch_times_replay_in_stage_order_on_the_cores():
    import pandas as pd

    from jupyter_perf.model import Run, conform
    df = pd.DataFrame({"stage_id": [0, 0, 0], "task_id": [0, 1, 2], "duration_ms": [4.0] * 3,
                       "run_ms": [4.0] * 3, "status": "SUCCESS"})
    run = Run(tasks=conform("tasks", df), executors=[{"executor_id": "driver", "total_cores": 2}],
              start_ms=1000.0, end_ms=1010.0)
    a = analyze(run)
    assert a.simulated_baseline_ms == 8.0
    assert any("no launch times" in w for w in a.timeline.warnings)


# -- properties ------------------------------------------------------------------------
def _random_group(rng, n):
    d = rng.exponential(10.0, n).tolist()
    k = int(rng.integers(1, 6))
    return d, k


@pytest.mark.parametrize("seed", range(30))
def test_shorter_tasks_never_make_a_group_slower(seed):
    rng = np.random.default_rng(seed)
    d, k = _random_group(rng, int(rng.integers(1, 60)))
    shorter = [x * rng.uniform(0, 1) for x in d]
    assert simulate_group(shorter, k)[0] <= simulate_group(d, k)[0] + 1e-9


@pytest.mark.parametrize("seed", range(30))
def test_more_slots_never_slower(seed):
    rng = np.random.default_rng(seed)
    d, k = _random_group(rng, int(rng.integers(1, 60)))
    spans = [simulate_group(d, kk)[0] for kk in range(1, k + 6)]
    assert all(b <= a + 1e-9 for a, b in zip(spans, spans[1:]))
    assert spans[-1] >= max(d) - 1e-9 and spans[0] == pytest.approx(sum(d))


def test_replay_is_vectorised_for_one_wave_and_one_slot_groups():
    run = make_run([task(0, 5, stage=0), task(0, 7, stage=0),        # one wave
                    task(20, 3, stage=1), task(23, 3, stage=1)],     # one slot
                   slots=2)
    a = analyze(run)
    assert a.baseline.makespan.tolist() == [7.0, 6.0]
    assert a.baseline.starts.tolist() == [0.0, 0.0, 0.0, 3.0]
