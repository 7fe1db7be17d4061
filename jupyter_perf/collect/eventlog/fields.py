"""Event logs -> the model: the field maps of SparkListenerTaskEnd events and of the job,
stage-attempt and executor records ``parser.py`` assembles from several events (keeping the
events' own field names, flattened with "."). Units are converted by ``collect/fields.py``."""
from __future__ import annotations

from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from ..fields import NS_PER_MS, TIME, conform_from, peaks

# Event log SparkListenerTaskEnd events, flattened with "." (TaskStart: the same without
# "Task Metrics"). Times in Task Info are epoch ms already; the event log's derived times
# (duration, getting result, scheduler delay) are computed from them by collect/eventlog
# exactly as Spark's REST API derives them.
EVENTLOG_TASK_FIELDS: dict[str, tuple[str, float]] = {
    "Stage ID": ("stage_id", 1), "Stage Attempt ID": ("stage_attempt", 1),
    "Task Info.Task ID": ("task_id", 1), "Task Info.Index": ("index", 1),
    "Task Info.Attempt": ("attempt", 1),
    "Task Info.Launch Time": ("launch_ms", 1), "Task Info.Finish Time": ("finish_ms", 1),
    "Task Info.Executor ID": ("executor_id", 1), "Task Info.Host": ("host", 1),
    "Task Info.Locality": ("locality", 1), "Task Info.Speculative": ("speculative", 1),
    "Task Metrics.Executor Deserialize Time": ("deserialize_ms", 1),
    "Task Metrics.Executor Deserialize CPU Time": ("deserialize_cpu_ms", 1 / NS_PER_MS),
    "Task Metrics.Executor Run Time": ("run_ms", 1),
    "Task Metrics.Executor CPU Time": ("cpu_ms", 1 / NS_PER_MS),
    "Task Metrics.Peak Execution Memory": ("peak_execution_memory_bytes", 1),
    "Task Metrics.Result Size": ("result_size_bytes", 1),
    "Task Metrics.JVM GC Time": ("gc_ms", 1),
    "Task Metrics.Result Serialization Time": ("result_serialization_ms", 1),
    "Task Metrics.Memory Bytes Spilled": ("memory_spilled_bytes", 1),
    "Task Metrics.Disk Bytes Spilled": ("disk_spilled_bytes", 1),
    "Task Metrics.Shuffle Read Metrics.Fetch Wait Time": ("fetch_wait_ms", 1),
    "Task Metrics.Shuffle Read Metrics.Remote Bytes Read": ("shuffle_remote_bytes", 1),
    "Task Metrics.Shuffle Read Metrics.Local Bytes Read": ("shuffle_local_bytes", 1),
    "Task Metrics.Shuffle Read Metrics.Total Records Read": ("shuffle_read_records", 1),
    "Task Metrics.Shuffle Write Metrics.Shuffle Bytes Written": ("shuffle_write_bytes", 1),
    "Task Metrics.Shuffle Write Metrics.Shuffle Write Time": ("shuffle_write_time_ms",
                                                              1 / NS_PER_MS),
    "Task Metrics.Shuffle Write Metrics.Shuffle Records Written": ("shuffle_write_records", 1),
    "Task Metrics.Input Metrics.Bytes Read": ("input_bytes", 1),
    "Task Metrics.Input Metrics.Records Read": ("input_records", 1),
    "Task Metrics.Output Metrics.Bytes Written": ("output_bytes", 1),
    "Task Metrics.Output Metrics.Records Written": ("output_records", 1),
}

# Event logs: jobs, stage attempts and executors are assembled from several events by
# collect/eventlog (which also derives statuses and counts as Spark's listeners do); their
# records keep the events' own field names, flattened with ".".
EVENTLOG_JOB_FIELDS: dict[str, tuple[str, Any]] = {
    "Job ID": ("job_id", 1), "Submission Time": ("submission_ms", TIME),
    "Completion Time": ("completion_ms", TIME), "Stage IDs": ("stage_ids", 1),
    "Properties.spark.job.description": ("description", 1),
    "Properties.spark.jobGroup.id": ("job_group", 1),
}
EVENTLOG_STAGE_FIELDS: dict[str, tuple[str, Any]] = {
    "Stage ID": ("stage_id", 1), "Stage Attempt ID": ("attempt", 1),
    "Stage Name": ("name", 1), "Number of Tasks": ("num_tasks", 1),
    "Parent IDs": ("parent_ids", 1), "Details": ("details", 1),
    "Submission Time": ("submission_ms", TIME), "Completion Time": ("completion_ms", TIME),
    "Failure Reason": ("failure_reason", 1),
    "Properties.spark.job.description": ("description", 1),
}
EVENTLOG_EXECUTOR_FIELDS: dict[str, tuple[str, Any]] = {
    "Executor ID": ("executor_id", 1), "Host": ("host", 1), "Total Cores": ("total_cores", 1),
    "Maximum Memory": ("max_memory_bytes", 1), "Added": ("add_ms", TIME),
    "Removed": ("remove_ms", TIME), "Removed Reason": ("remove_reason", 1),
    **peaks("Executor Metrics."),
}

# SparkListenerStageExecutorMetrics, folded per (stage attempt, executor) by collect/eventlog.
EVENTLOG_STAGE_MEMORY_FIELDS: dict[str, tuple[str, Any]] = {
    "Stage ID": ("stage_id", 1), "Stage Attempt ID": ("attempt", 1),
    "Executor ID": ("executor_id", 1), **peaks("Executor Metrics."),
}

_MAPS = {"tasks": EVENTLOG_TASK_FIELDS, "jobs": EVENTLOG_JOB_FIELDS,
         "stages": EVENTLOG_STAGE_FIELDS, "executors": EVENTLOG_EXECUTOR_FIELDS,
         "stage_memory": EVENTLOG_STAGE_MEMORY_FIELDS}


def _derive_tasks(raw: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """Duration, getting-result time and scheduler delay from Task Info (ms), as Spark's
    AppStatusUtils derives them for the REST API."""
    if not len(table):
        return table
    launch, finish = (table[c].fillna(0.0).to_numpy() if c in table.columns
                      else np.zeros(len(table)) for c in ("launch_ms", "finish_ms"))
    duration = np.where(finish > 0, finish - launch, 0.0)
    fetch = raw["Task Info.Getting Result Time"].fillna(0.0).to_numpy(dtype="float64") \
        if "Task Info.Getting Result Time" in raw.columns else np.zeros(len(table))
    getting = np.where((fetch > 0) & (finish > 0), launch + duration - fetch, 0.0)
    spent = sum(table[c].fillna(0.0).to_numpy() for c in (
        "run_ms", "deserialize_ms", "result_serialization_ms") if c in table.columns)
    has_metrics = raw["Task Metrics"].to_numpy(dtype=bool) if "Task Metrics" in raw.columns \
        else np.ones(len(table), dtype=bool)
    table["duration_ms"] = duration
    table["getting_result_ms"] = getting
    table["scheduler_delay_ms"] = np.where(has_metrics & (finish > 0),
                                           np.maximum(0.0, duration - spent - getting), 0.0)
    return table


def conform_eventlog(table: str, raw: pd.DataFrame | Iterable[Mapping[str, Any]] | None,
                     **constants: Any) -> pd.DataFrame:
    """Event-log records of ``table`` (tasks, jobs, stages, executors, stage_memory) -> the
    model's."""
    return conform_from(table, raw, _MAPS[table], _derive_tasks, **constants)
