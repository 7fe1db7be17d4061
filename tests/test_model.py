"""Units are normalised once, in the model: ns -> ms for CPU and shuffle write time."""
from __future__ import annotations

import pandas as pd
import pytest

from jupyter_perf.collect.eventlog.fields import conform_eventlog
from jupyter_perf.collect.fields import parse_spark_time
from jupyter_perf.collect.listener import conform_sparkmeasure_tasks
from jupyter_perf.collect.rest_fields import conform_rest
from jupyter_perf.model import Run

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
    t = conform_rest("tasks", [REST_TASK], stage_id=3, stage_attempt=0).iloc[0]
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
    e = conform_eventlog("tasks", [ev]).iloc[0]
    s = conform_sparkmeasure_tasks(pd.DataFrame([sm])).iloc[0]
    assert e.cpu_ms == pytest.approx(154.846983) and e.shuffle_write_time_ms == pytest.approx(2.5)
    assert s.cpu_ms == 154 and s.status == "SUCCESS"      # sparkmeasure is already in ms


def test_stage_table_sums_every_attempt():
    tasks = conform_rest("tasks", [REST_TASK, REST_TASK | {"taskId": 8, "status": "SUCCESS"}],
                         stage_id=1, stage_attempt=0)
    run = Run(tasks=tasks, stages=pd.DataFrame([{"stage_id": 1, "attempt": 0, "status": "COMPLETE"}]))
    agg = run.stage_table().iloc[0]
    assert agg.task_attempts == 2 and agg.failed_tasks == 1 and agg.succeeded_tasks == 1
    assert agg.executor_cpu_time_ms == pytest.approx(2 * 154.846983)
    assert agg.shuffle_write_bytes == 100 and agg.status == "COMPLETE"


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


REST_EXECUTOR = {"id": "1", "hostPort": "10.0.0.7:41234", "totalCores": 4, "maxMemory": 434_000_000,
                 "addTime": "2026-11-22T02:01:00.000GMT", "isActive": True,
                 "memoryUsed": 1000, "memoryMetrics": {"usedOnHeapStorageMemory": 900,
                                                       "usedOffHeapStorageMemory": 0},
                 "peakMemoryMetrics": {"JVMHeapMemory": 123_456_789, "OnHeapExecutionMemory": 5,
                                       "OnHeapStorageMemory": 6, "ProcessTreeJVMRSSMemory": 7}}


def test_rest_jobs_stages_executors_and_memory_through_the_field_maps():
    ex = conform_rest("executors", [REST_EXECUTOR]).iloc[0]
    assert ex.executor_id == "1" and ex.host == "10.0.0.7" and ex.total_cores == 4
    assert ex.add_ms == parse_spark_time("2026-11-22T02:01:00.000GMT") and pd.isna(ex.remove_ms)
    assert ex.peak_jvm_heap_bytes == 123_456_789 and ex.peak_process_rss_bytes == 7
    mem = conform_rest("memory", [REST_EXECUTOR | {"time_ms": 5.0}]).iloc[0]
    assert mem.time_ms == 5.0 and mem.used_on_heap_storage_bytes == 900
    assert mem.peak_on_heap_execution_bytes == 5 and mem.memory_used_bytes == 1000
    job = conform_rest("jobs", [{"jobId": 3, "status": "SUCCEEDED", "stageIds": [4, 5],
                                 "submissionTime": "2026-11-22T02:01:00.000GMT",
                                 "jobTags": ["t"]}]).iloc[0]
    assert job.job_id == 3 and job.stage_ids == [4, 5] and job.job_tags == ["t"]
    assert pd.isna(job.completion_ms) and job.num_tasks == 0
    stage = conform_rest("stages", [{"stageId": 4, "attemptId": 1, "status": "COMPLETE",
                                     "numCompleteTasks": 2}]).iloc[0]
    assert (stage.stage_id, stage.attempt, stage.spark_complete_tasks) == (4, 1, 2)
    assert stage.parent_ids is None                          # the REST API has no DAG


def test_a_runs_tables_have_every_column_after_any_assignment():
    from jupyter_perf.model import EXECUTOR_COLUMNS, MEMORY_COLUMNS, STAGE_COLUMNS, TASK_COLUMNS

    run = Run()
    run.memory = [{"time_ms": 1.0, "executor_id": "1"}]
    run.executors = pd.DataFrame({"executor_id": ["driver"], "total_cores": ["2"]})
    run.stages = pd.DataFrame({"stage_id": [1]})
    run.tasks = pd.DataFrame({"stage_id": [1], "run_ms": [3]})
    assert list(run.memory.columns) == MEMORY_COLUMNS and run.memory["max_memory_bytes"].isna().all()
    assert list(run.executors.columns) == EXECUTOR_COLUMNS and run.slots == 2
    assert list(run.stages.columns) == STAGE_COLUMNS and run.stages["status"].tolist() == [""]
    assert list(run.tasks.columns) == TASK_COLUMNS and run.tasks["run_ms"].dtype == "float64"
    assert run.stage_table().iloc[0].executor_run_time_ms == 3
