"""Units are normalised once, in the model: ns -> ms for CPU and shuffle write time."""
from __future__ import annotations

import pandas as pd
import pytest

from jupyter_perf.model import Run, normalize_tasks, parse_spark_time, stage_aggregates

REST_TASK = {
    "taskId": 7, "index": 2, "attempt": 1, "launchTime": "2026-11-22T02:01:04.946GMT",
    "duration": 304, "executorId": "1", "host": "h", "status": "FAILED", "speculative": True,
    "schedulerDelay": 24, "gettingResultTime": 0,
    "taskMetrics": {
        "executorDeserializeTime": 41, "executorDeserializeCpuTime": 31_066_468,
        "executorRunTime": 236, "executorCpuTime": 154_846_983, "jvmGcTime": 12,
        "resultSerializationTime": 3, "peakExecutionMemory": 10,
        "inputMetrics": {"bytesRead": 100, "recordsRead": 1},
        "outputMetrics": {"bytesWritten": 5, "recordsWritten": 1},
        "shuffleReadMetrics": {"fetchWaitTime": 9, "remoteBytesRead": 300, "localBytesRead": 400,
                               "recordsRead": 3},
        "shuffleWriteMetrics": {"bytesWritten": 50, "writeTime": 2_500_000, "recordsWritten": 2},
    },
}


def test_rest_task_units_are_ms_and_bytes():
    t = normalize_tasks([REST_TASK], "rest", stage_id=3, stage_attempt=0).iloc[0]
    assert t.cpu_ms == pytest.approx(154.846983)
    assert t.deserialize_cpu_ms == pytest.approx(31.066468)
    assert t.shuffle_write_time_ms == pytest.approx(2.5)
    assert t.run_ms == 236 and t.gc_ms == 12 and t.fetch_wait_ms == 9
    assert t.shuffle_read_bytes == 700 and t.shuffle_remote_bytes == 300
    assert t.launch_ms == parse_spark_time("2026-11-22T02:01:04.946GMT") and t.launch_ms % 1 == 0
    assert t.finish_ms - t.launch_ms == 304
    assert t.status == "FAILED" and bool(t.speculative) and t.stage_id == 3


def test_eventlog_and_sparkmeasure_units_agree_with_rest():
    ev = {"Task Metrics": {"Executor CPU Time": 154_846_983, "Executor Run Time": 236,
                           "Shuffle Write Metrics": {"Shuffle Write Time": 2_500_000}}}
    sm = {"executorCpuTime": 154, "executorRunTime": 236, "shuffleWriteTime": 2, "successful": True}
    e = normalize_tasks([ev], "eventlog").iloc[0]
    s = normalize_tasks([sm], "sparkmeasure").iloc[0]
    assert e.cpu_ms == pytest.approx(154.846983) and e.shuffle_write_time_ms == pytest.approx(2.5)
    assert s.cpu_ms == 154 and s.status == "SUCCESS"      # sparkmeasure is already in ms


def test_stage_aggregates_sum_every_attempt():
    tasks = normalize_tasks([REST_TASK, REST_TASK | {"taskId": 8, "status": "SUCCESS"}], "rest",
                            stage_id=1, stage_attempt=0)
    agg = stage_aggregates(tasks).iloc[0]
    assert agg.task_attempts == 2 and agg.failed_tasks == 1
    assert agg.executor_cpu_time_ms == pytest.approx(2 * 154.846983)
    run = Run(tasks=tasks, stages=pd.DataFrame([{"stage_id": 1, "attempt": 0, "status": "COMPLETE"}]))
    assert run.stage_table().iloc[0].shuffle_write_bytes == 100


def test_slots_exclude_the_driver_on_clusters():
    run = Run(executors=pd.DataFrame([{"executor_id": "driver", "total_cores": 0},
                                      {"executor_id": "0", "total_cores": 2},
                                      {"executor_id": "1", "total_cores": 2}]))
    assert run.slots == 4
    assert Run(executors=pd.DataFrame([{"executor_id": "driver", "total_cores": 8}])).slots == 8


def test_slots_count_the_most_cores_alive_at_once_under_dynamic_allocation():
    run = Run(executors=pd.DataFrame([
        {"executor_id": "driver", "total_cores": 0, "add_ms": 0.0},
        {"executor_id": "0", "total_cores": 1, "add_ms": 10.0, "remove_ms": 50.0},
        {"executor_id": "1", "total_cores": 1, "add_ms": 20.0},
        {"executor_id": "2", "total_cores": 1, "add_ms": 50.0},   # replaces 0 at the same ms
    ]))
    assert run.slots == 2
