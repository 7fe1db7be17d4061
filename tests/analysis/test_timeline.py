"""Windows, wall time, stage groups, concurrency, driver gaps."""
import numpy as np
import pytest
from analysis_synth import T0, make_run, task

from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.timeline import build_timeline, parse_parent_ids


def test_whole_application_wall_is_the_union_of_job_intervals():
    jobs = [{"job_id": 0, "submission_ms": T0 + 0, "completion_ms": T0 + 50},
            {"job_id": 1, "submission_ms": T0 + 40, "completion_ms": T0 + 60},   # overlaps
            {"job_id": 2, "submission_ms": T0 + 100, "completion_ms": T0 + 130}]
    run = make_run([task(5, 40, stage=0), task(105, 20, stage=1)], slots=1,
                   start=0, end=1000, kind="eventlog", jobs=jobs)
    tl = build_timeline(run)
    assert tl.wall_ms == 90.0                    # [0,60] + [100,130], not 1000
    assert tl.actual_ms == 60.0 and tl.driver_gap_ms == 30.0


def test_cell_window_clips_tasks_outside_it():
    run = make_run([task(-10, 30)], slots=1, start=0, end=50)
    tl = build_timeline(run)
    assert tl.wall_ms == 50.0 and tl.actual_ms == 20.0 and tl.driver_gap_ms == 30.0


def test_overlapping_stages_form_one_group_touching_ones_do_not():
    run = make_run([task(0, 10, stage=0), task(5, 10, stage=1),    # overlap -> group 0
                    task(15, 5, stage=2),                          # touches -> group 1
                    task(30, 5, stage=3)], slots=2)                # gap -> group 2
    tl = build_timeline(run)
    assert tl.group.tolist() == [0, 0, 1, 2]
    assert tl.group_slots.tolist() == [2, 1, 1]
    assert tl.actual_ms == 15.0 + 5.0 + 5.0 and tl.driver_gap_ms == 10.0


def test_concurrency_counts_a_finish_before_a_launch_at_the_same_ms():
    run = make_run([task(0, 10), task(10, 10), task(0, 20)], slots=4)
    assert build_timeline(run).group_slots.tolist() == [2]


def test_idle_time_inside_one_stage_is_not_a_driver_gap():
    run = make_run([task(0, 10), task(20, 10)], slots=1)
    tl = build_timeline(run)
    assert tl.n_groups == 1 and tl.driver_gap_ms == 0.0


def test_running_task_runs_to_the_window_end():
    run = make_run([task(0, 10), task(0, 10, status="RUNNING", finish_ms=0, duration_ms=0)],
                   slots=2, start=0, end=30)
    tl = build_timeline(run)
    assert tl.duration.tolist() == [10.0, 30.0]


def test_window_falls_back_to_task_envelope():
    run = make_run([task(0, 10, stage=0), task(20, 10, stage=1)], slots=1)
    run.start_ms = run.end_ms = 0.0
    tl = build_timeline(run)
    assert tl.wall_ms == 30.0 and tl.driver_gap_ms == 10.0
    assert tl.warnings


@pytest.mark.parametrize("value,expected", [
    ([1, 2], [1, 2]), ("[3, 4]", [3, 4]), (None, []), (float("nan"), []),
    (np.array([5]), [5]), (7, [7]), ("", []),
])
def test_parse_parent_ids(value, expected):
    assert parse_parent_ids(value) == expected


def test_empty_run():
    from jupyter_perf.model import Run
    tl = build_timeline(Run(start_ms=100.0, end_ms=350.0))
    assert tl.n_groups == 0 and tl.wall_ms == 250.0 and tl.driver_gap_ms == 250.0


def test_slots_never_exceed_the_executors_cores():
    # Spark stamps a finish when the driver has the result, after the slot was reused: on a
    # 2-core executor the stamps overlap three deep, but only two tasks really ran at once.
    tasks = [task(0, 1000), task(5, 1000), task(990, 500), task(1003, 500)]
    run = make_run(tasks, slots=2)
    tl = build_timeline(run)
    assert list(tl.group_slots) == [2]
    assert analyze(run).simulated_baseline_ms == 1500.0   # 1000 then 500 on each of two slots
