"""Spark's REST API (live UI and History Server) -> the model: the field maps of its task,
job, stage, executor and memory records, flattened with "." between nested keys. Units are
converted by ``collect/fields.py``."""
from __future__ import annotations

from typing import Any, Iterable, Mapping

import pandas as pd

from .fields import HOSTPORT, NS_PER_MS, TIME, conform_from, parse_spark_times, peaks

# ``taskList`` items, flattened with "." between nested keys.
REST_TASK_FIELDS: dict[str, tuple[str, float]] = {
    "taskId": ("task_id", 1), "index": ("index", 1), "attempt": ("attempt", 1),
    "executorId": ("executor_id", 1), "host": ("host", 1), "status": ("status", 1),
    "speculative": ("speculative", 1), "taskLocality": ("locality", 1),
    "errorMessage": ("error", 1),
    "duration": ("duration_ms", 1),
    "schedulerDelay": ("scheduler_delay_ms", 1),
    "gettingResultTime": ("getting_result_ms", 1),
    "taskMetrics.executorDeserializeTime": ("deserialize_ms", 1),
    "taskMetrics.executorDeserializeCpuTime": ("deserialize_cpu_ms", 1 / NS_PER_MS),
    "taskMetrics.executorRunTime": ("run_ms", 1),
    "taskMetrics.executorCpuTime": ("cpu_ms", 1 / NS_PER_MS),
    "taskMetrics.resultSize": ("result_size_bytes", 1),
    "taskMetrics.jvmGcTime": ("gc_ms", 1),
    "taskMetrics.resultSerializationTime": ("result_serialization_ms", 1),
    "taskMetrics.memoryBytesSpilled": ("memory_spilled_bytes", 1),
    "taskMetrics.diskBytesSpilled": ("disk_spilled_bytes", 1),
    "taskMetrics.peakExecutionMemory": ("peak_execution_memory_bytes", 1),
    "taskMetrics.inputMetrics.bytesRead": ("input_bytes", 1),
    "taskMetrics.inputMetrics.recordsRead": ("input_records", 1),
    "taskMetrics.outputMetrics.bytesWritten": ("output_bytes", 1),
    "taskMetrics.outputMetrics.recordsWritten": ("output_records", 1),
    "taskMetrics.shuffleReadMetrics.fetchWaitTime": ("fetch_wait_ms", 1),
    "taskMetrics.shuffleReadMetrics.remoteBytesRead": ("shuffle_remote_bytes", 1),
    "taskMetrics.shuffleReadMetrics.localBytesRead": ("shuffle_local_bytes", 1),
    "taskMetrics.shuffleReadMetrics.recordsRead": ("shuffle_read_records", 1),
    "taskMetrics.shuffleWriteMetrics.bytesWritten": ("shuffle_write_bytes", 1),
    "taskMetrics.shuffleWriteMetrics.writeTime": ("shuffle_write_time_ms", 1 / NS_PER_MS),
    "taskMetrics.shuffleWriteMetrics.recordsWritten": ("shuffle_write_records", 1),
}

# REST /jobs, /stages/{id} (one item per attempt) and /allexecutors items, flattened with ".".
REST_JOB_FIELDS: dict[str, tuple[str, Any]] = {
    "jobId": ("job_id", 1), "name": ("name", 1), "description": ("description", 1),
    "status": ("status", 1), "submissionTime": ("submission_ms", TIME),
    "completionTime": ("completion_ms", TIME), "stageIds": ("stage_ids", 1),
    "numTasks": ("num_tasks", 1), "numFailedTasks": ("num_failed_tasks", 1),
    "jobGroup": ("job_group", 1), "jobTags": ("job_tags", 1),
}
REST_STAGE_FIELDS: dict[str, tuple[str, Any]] = {
    "stageId": ("stage_id", 1), "attemptId": ("attempt", 1), "name": ("name", 1),
    "status": ("status", 1), "numTasks": ("num_tasks", 1),
    "submissionTime": ("submission_ms", TIME),
    "firstTaskLaunchedTime": ("first_task_launched_ms", TIME),
    "completionTime": ("completion_ms", TIME), "description": ("description", 1),
    "failureReason": ("failure_reason", 1),
    # Spark's own counters, kept to detect tasks evicted by spark.ui.retainedTasks
    "numCompleteTasks": ("spark_complete_tasks", 1),
    "numFailedTasks": ("spark_failed_tasks", 1),
    "numKilledTasks": ("spark_killed_tasks", 1),
}
REST_EXECUTOR_FIELDS: dict[str, tuple[str, Any]] = {
    "id": ("executor_id", 1), "hostPort": ("host", HOSTPORT), "totalCores": ("total_cores", 1),
    "maxMemory": ("max_memory_bytes", 1), "addTime": ("add_ms", TIME),
    "removeTime": ("remove_ms", TIME), "isActive": ("is_active", 1),
    "removeReason": ("remove_reason", 1),     # why Spark removed it (a lost worker, …)
    **peaks("peakMemoryMetrics."),
}
# One memory sample: an /allexecutors item plus the time it was read ("time_ms", epoch ms).
REST_MEMORY_FIELDS: dict[str, tuple[str, Any]] = {
    "time_ms": ("time_ms", 1), "id": ("executor_id", 1),
    "memoryMetrics.usedOnHeapStorageMemory": ("used_on_heap_storage_bytes", 1),
    "memoryMetrics.usedOffHeapStorageMemory": ("used_off_heap_storage_bytes", 1),
    "maxMemory": ("max_memory_bytes", 1), "memoryUsed": ("memory_used_bytes", 1),
    **peaks("peakMemoryMetrics."),
}

# One executor of a stage attempt: an item of the stage data's ``executorSummary`` map (Spark
# >= 3.1, /stages/{id}?details=true) with its key as "executorId" and the stage attempt's ids.
REST_STAGE_MEMORY_FIELDS: dict[str, tuple[str, Any]] = {
    "stageId": ("stage_id", 1), "attemptId": ("attempt", 1), "executorId": ("executor_id", 1),
    **peaks("peakMemoryMetrics."),
}

_MAPS = {"tasks": REST_TASK_FIELDS, "jobs": REST_JOB_FIELDS, "stages": REST_STAGE_FIELDS,
         "executors": REST_EXECUTOR_FIELDS, "memory": REST_MEMORY_FIELDS,
         "stage_memory": REST_STAGE_MEMORY_FIELDS}


def _derive_tasks(raw: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """Launch and finish as Spark's REST API gives them: a launch date and a duration."""
    if "launchTime" in raw.columns:
        table["launch_ms"] = parse_spark_times(raw["launchTime"])
        table["finish_ms"] = table["launch_ms"] + table.get("duration_ms", 0.0)
    return table


_HEAP_FIELD = next(f for f, (c, _) in REST_MEMORY_FIELDS.items() if c == "peak_jvm_heap_bytes")


def heap_peak(item: Mapping[str, Any]) -> tuple[str, float] | None:
    """(executor id, peak JVM heap bytes) of one raw ``/allexecutors`` item, read from its
    nested dict without a DataFrame (the live display reads it twice a second), or None
    when unknown. The same field, unit and zero rule as ``conform_rest("memory", ...)``
    (``fields.unset_peaks_as_unknown``: a 0 heap was never sampled)."""
    _, unit = REST_MEMORY_FIELDS[_HEAP_FIELD]
    value = item.get("peakMemoryMetrics")
    value = value.get(_HEAP_FIELD.split(".", 1)[1]) if isinstance(value, Mapping) else None
    try:
        number = float(value) * unit          # as the conform step's to_numeric
    except (TypeError, ValueError):
        return None
    executor = item.get("id")
    return (executor, number) if number > 0 and executor is not None else None



def conform_rest(table: str, raw: pd.DataFrame | Iterable[Mapping[str, Any]] | None,
                 **constants: Any) -> pd.DataFrame:
    """REST records of ``table`` (tasks, jobs, stages, executors, memory, stage_memory) -> the
    model's."""
    return conform_from(table, raw, _MAPS[table], _derive_tasks, **constants)
