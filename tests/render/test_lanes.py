"""lanes: tasks packed onto their executor's cores from the real schedule."""
import numpy as np
import pandas as pd

from jupyter_perf.model import Run, conform
from jupyter_perf.render.lanes import assign_lanes


def run_of(rows, cores):
    t = pd.DataFrame(rows)
    t["task_id"] = range(len(t))
    ex = [{"executor_id": e, "host": f"h{e}", "total_cores": c} for e, c in cores.items()]
    return Run(tasks=conform("tasks", t), executors=ex)


def test_lanes_follow_the_schedule_per_executor():
    rows = [  # executor 1 has 2 cores: tasks 0,1 overlap, task 2 reuses the first free lane
        {"executor_id": "1", "launch_ms": 0, "finish_ms": 10},
        {"executor_id": "1", "launch_ms": 1, "finish_ms": 20},
        {"executor_id": "1", "launch_ms": 10, "finish_ms": 15},
        {"executor_id": "2", "launch_ms": 0, "finish_ms": 5},
    ]
    run = run_of(rows, {"1": 2, "2": 1})
    launch = run.tasks["launch_ms"].to_numpy(float)
    lanes = assign_lanes(run, launch, run.tasks["finish_ms"].to_numpy(float) - launch)
    assert lanes.lane.tolist() == [0, 1, 0, 2]
    assert lanes.labels == ["exec 1 · core 0", "exec 1 · core 1", "exec 2 · core 0"]
    assert lanes.first_lane == {"1": 0, "2": 2}


def test_lanes_never_exceed_the_cores_a_lagging_finish_stamp_shares_the_freeing_lane():
    """local[2]: the driver executor has 2 cores; Spark stamped task 0's finish 5 ms after
    task 2 launched on the core task 0 freed. No third lane: task 2 goes on the lane that
    frees first, and the lag is counted."""
    rows = [{"executor_id": "driver", "launch_ms": 0, "finish_ms": 100},
            {"executor_id": "driver", "launch_ms": 1, "finish_ms": 200},
            {"executor_id": "driver", "launch_ms": 95, "finish_ms": 150}]
    run = run_of(rows, {"driver": 2})
    launch = run.tasks["launch_ms"].to_numpy(float)
    lanes = assign_lanes(run, launch, run.tasks["finish_ms"].to_numpy(float) - launch)
    assert lanes.count == 2 and lanes.labels == ["exec driver · core 0", "exec driver · core 1"]
    assert lanes.lane.tolist() == [0, 1, 0]
    assert lanes.lagged == 1 and lanes.max_lag_ms == 5.0
    assert not any("overflow" in label for label in lanes.labels)


def test_an_executor_with_unknown_cores_gets_the_lanes_it_used():
    rows = [{"executor_id": "7", "launch_ms": i, "finish_ms": 100} for i in range(3)]
    run = run_of(rows, {"7": 0})
    launch = run.tasks["launch_ms"].to_numpy(float)
    lanes = assign_lanes(run, launch, 100 - launch)
    assert sorted(lanes.lane.tolist()) == [0, 1, 2] and lanes.lagged == 0
    assert np.unique(lanes.lane).size == 3


def test_lanes_fit_the_cores_on_every_synthetic_run():
    from render_runs import synthetic, with_speculative

    from jupyter_perf.analysis import analyze
    a = analyze(with_speculative(synthetic(3000, 16, per_stage=400)))
    lanes = assign_lanes(a.run, a.timeline.launch, a.timeline.duration)
    cores = a.run.executors.set_index(a.run.executors["executor_id"].astype(str))["total_cores"]
    per_exec = pd.Series(lanes.executor).value_counts()
    assert all(per_exec[e] <= cores[e] for e in per_exec.index)
