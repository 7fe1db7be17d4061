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


def test_more_overlap_than_cores_opens_an_overflow_lane_never_overdraws():
    rows = [{"executor_id": "driver", "launch_ms": i, "finish_ms": 100} for i in range(3)]
    run = run_of(rows, {"driver": 2})
    launch = run.tasks["launch_ms"].to_numpy(float)
    lanes = assign_lanes(run, launch, 100 - launch)
    assert sorted(lanes.lane.tolist()) == [0, 1, 2]
    assert lanes.labels[2].endswith("(overflow)")
    assert np.unique(lanes.lane).size == 3
