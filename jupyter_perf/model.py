"""The data model: one measured window of Spark work as a ``Run``.

Every collector (sparkmeasure listener, REST API, event log) hands this module
*raw* records that keep Spark's own field names and units. This module is the
one place where units are normalised: after it, every time is milliseconds
(float64) and every size is bytes (int64). Nothing downstream converts units.

Only numpy and pandas are imported here, so the analysis core can be tested
with no JVM, no Jupyter and no browser.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import secrets
import time
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

NS_PER_MS = 1_000_000.0

# ---------------------------------------------------------------------------
# Task table: the columns every Run's ``tasks`` DataFrame has, in ms and bytes.
# ---------------------------------------------------------------------------
TASK_TIME_COLUMNS = [
    "duration_ms",            # finish - launch, as Spark reports it
    "scheduler_delay_ms",     # measured by Spark's UI from the other fields
    "deserialize_ms",         # executorDeserializeTime
    "deserialize_cpu_ms",     # executorDeserializeCpuTime (ns in Spark)
    "run_ms",                 # executorRunTime
    "cpu_ms",                 # executorCpuTime (ns in Spark)
    "gc_ms",                  # jvmGcTime
    "result_serialization_ms",
    "getting_result_ms",
    "fetch_wait_ms",          # shuffleReadMetrics.fetchWaitTime
    "shuffle_write_time_ms",  # shuffleWriteMetrics.writeTime (ns in Spark)
]
TASK_BYTE_COLUMNS = [
    "input_bytes", "input_records",
    "output_bytes", "output_records",
    "shuffle_read_bytes",          # local + remote
    "shuffle_remote_bytes", "shuffle_local_bytes", "shuffle_read_records",
    "shuffle_write_bytes", "shuffle_write_records",
    "memory_spilled_bytes", "disk_spilled_bytes",
    "peak_execution_memory_bytes", "result_size_bytes",
]
TASK_ID_COLUMNS = [
    "stage_id", "stage_attempt", "task_id", "index", "attempt",
    "executor_id", "host", "launch_ms", "finish_ms", "status", "speculative",
    "locality", "error",
]
TASK_COLUMNS = TASK_ID_COLUMNS + TASK_TIME_COLUMNS + TASK_BYTE_COLUMNS

# Stage aggregate columns: named as in DESIGN.md's summary schema.
STAGE_SUM_COLUMNS = {
    "executor_run_time_ms": "run_ms",
    "executor_cpu_time_ms": "cpu_ms",
    "jvm_gc_time_ms": "gc_ms",
    "shuffle_fetch_wait_ms": "fetch_wait_ms",
    "shuffle_write_time_ms": "shuffle_write_time_ms",
    "input_bytes": "input_bytes",
    "output_bytes": "output_bytes",
    "shuffle_read_bytes": "shuffle_read_bytes",
    "shuffle_remote_bytes": "shuffle_remote_bytes",
    "shuffle_write_bytes": "shuffle_write_bytes",
    "memory_spilled_bytes": "memory_spilled_bytes",
    "disk_spilled_bytes": "disk_spilled_bytes",
}

# Raw field -> (model column, factor to ms/bytes). One table per source.
# REST ``taskList`` items, flattened with "." between nested keys.
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

# sparkmeasure ``TaskMetrics`` rows (TaskVals): already ms, truncated per task.
SPARKMEASURE_TASK_FIELDS: dict[str, tuple[str, float]] = {
    "jobId": ("job_id", 1), "stageId": ("stage_id", 1), "index": ("index", 1),
    "attemptNumber": ("stage_attempt", 1),
    "launchTime": ("launch_ms", 1), "finishTime": ("finish_ms", 1),
    "duration": ("duration_ms", 1), "schedulerDelay": ("scheduler_delay_ms", 1),
    "executorId": ("executor_id", 1), "host": ("host", 1),
    "taskLocality": ("locality", 1), "speculative": ("speculative", 1),
    "gettingResultTime": ("getting_result_ms", 1), "successful": ("successful", 1),
    "executorRunTime": ("run_ms", 1), "executorCpuTime": ("cpu_ms", 1),
    "executorDeserializeTime": ("deserialize_ms", 1),
    "executorDeserializeCpuTime": ("deserialize_cpu_ms", 1),
    "resultSerializationTime": ("result_serialization_ms", 1),
    "jvmGCTime": ("gc_ms", 1), "resultSize": ("result_size_bytes", 1),
    "diskBytesSpilled": ("disk_spilled_bytes", 1),
    "memoryBytesSpilled": ("memory_spilled_bytes", 1),
    "peakExecutionMemory": ("peak_execution_memory_bytes", 1),
    "recordsRead": ("input_records", 1), "bytesRead": ("input_bytes", 1),
    "recordsWritten": ("output_records", 1), "bytesWritten": ("output_bytes", 1),
    "shuffleFetchWaitTime": ("fetch_wait_ms", 1),
    "shuffleTotalBytesRead": ("shuffle_read_bytes", 1),
    "shuffleRemoteBytesRead": ("shuffle_remote_bytes", 1),
    "shuffleLocalBytesRead": ("shuffle_local_bytes", 1),
    "shuffleRecordsRead": ("shuffle_read_records", 1),
    "shuffleBytesWritten": ("shuffle_write_bytes", 1),
    "shuffleRecordsWritten": ("shuffle_write_records", 1),
    "shuffleWriteTime": ("shuffle_write_time_ms", 1),
}

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

SOURCES = {
    "rest": REST_TASK_FIELDS,
    "sparkmeasure": SPARKMEASURE_TASK_FIELDS,
    "eventlog": EVENTLOG_TASK_FIELDS,
}

_STRING_COLUMNS = {"executor_id", "host", "status", "locality", "error"}


def parse_spark_time(value: Any) -> float:
    """Spark REST timestamps ('2026-11-22T01:58:00.123GMT') or epoch ms -> epoch ms."""
    if value is None or value == "":
        return float("nan")
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    text = str(value)
    if text.endswith("GMT"):
        text = text[:-3] + "+00:00"
    return float(round(_dt.datetime.fromisoformat(text).timestamp() * 1000.0))


def parse_spark_times(values: Iterable[Any]) -> np.ndarray:
    """Vectorised :func:`parse_spark_time` for a column of REST timestamps."""
    s = pd.Series(list(values), dtype="object")
    if s.empty:
        return np.array([], dtype="float64")
    if s.map(lambda v: isinstance(v, str)).all():
        ts = pd.to_datetime(s.str.replace("GMT", "", regex=False), format="ISO8601", utc=True)
        return (ts.astype("int64") // 1_000_000).to_numpy().astype("float64")
    return np.array([parse_spark_time(v) for v in s], dtype="float64")


def _flatten(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def empty_tasks() -> pd.DataFrame:
    return normalize_tasks(pd.DataFrame(), "rest")


def normalize_tasks(raw: pd.DataFrame | Iterable[Mapping[str, Any]], source: str,
                    **constants: Any) -> pd.DataFrame:
    """Raw task records from ``source`` -> the model's task table (ms, bytes).

    ``raw`` may be a DataFrame or an iterable of (possibly nested) dicts using
    the source's own field names; ``constants`` fill columns the source keeps
    outside the task record (e.g. ``stage_id`` for a REST ``taskList`` page).
    """
    fields = SOURCES[source]
    if not isinstance(raw, pd.DataFrame):
        raw = pd.DataFrame([_flatten(r) for r in raw])
    out: dict[str, Any] = {}
    n = len(raw)
    for field, (column, factor) in fields.items():
        if field not in raw.columns:
            continue
        col = raw[field]
        if column in _STRING_COLUMNS or column in ("speculative", "successful"):
            out[column] = col
        else:
            values = pd.to_numeric(col, errors="coerce").astype("float64")
            out[column] = values * factor if factor != 1 else values
    table = pd.DataFrame(out, index=raw.index)
    for key, value in constants.items():
        table[key] = value
    if source == "rest" and "launchTime" in raw.columns:
        table["launch_ms"] = parse_spark_times(raw["launchTime"])
        table["finish_ms"] = table["launch_ms"] + table.get("duration_ms", 0.0)
    if source == "sparkmeasure" and "successful" in table.columns:
        table["status"] = np.where(table.pop("successful").astype(bool), "SUCCESS", "FAILED")
    if "shuffle_read_bytes" not in table.columns and n:
        table["shuffle_read_bytes"] = (table.get("shuffle_remote_bytes", 0.0)
                                       + table.get("shuffle_local_bytes", 0.0))
    return conform_tasks(table)


def conform_tasks(table: pd.DataFrame) -> pd.DataFrame:
    """Give ``table`` every task column with the model's dtypes, in order.

    Works on a shallow copy; columns already in the model's dtype are kept as they are,
    so conforming an already-conformed table copies no data.
    """
    table = table.copy(deep=False)
    n = len(table)
    for column in TASK_COLUMNS:
        if column not in table.columns:
            if column in _STRING_COLUMNS:
                table[column] = pd.Series([""] * n, index=table.index, dtype="object")
            elif column == "speculative":
                table[column] = False
            else:
                table[column] = 0.0 if column in TASK_TIME_COLUMNS or column.endswith("_ms") else 0
    for column in TASK_TIME_COLUMNS + ["launch_ms", "finish_ms"]:
        if table[column].dtype != "float64" or table[column].isna().any():
            table[column] = pd.to_numeric(table[column], errors="coerce").astype("float64").fillna(0.0)
    for column in TASK_BYTE_COLUMNS + ["stage_id", "stage_attempt", "task_id", "index", "attempt"]:
        if table[column].dtype != "int64":
            table[column] = pd.to_numeric(table[column], errors="coerce").fillna(0).astype("int64")
    if table["speculative"].dtype != bool:
        table["speculative"] = table["speculative"].fillna(False).astype(bool)
    for column in _STRING_COLUMNS:
        table[column] = table[column].fillna("").astype(str)
    extra = [c for c in table.columns if c not in TASK_COLUMNS]
    return table[TASK_COLUMNS + extra].reset_index(drop=True)


def stage_aggregates(tasks: pd.DataFrame) -> pd.DataFrame:
    """Per (stage_id, stage_attempt) sums over all task attempts, as Spark's UI sums them."""
    keys = ["stage_id", "stage_attempt"]
    if tasks.empty:
        return pd.DataFrame(columns=keys + list(STAGE_SUM_COLUMNS) + ["task_attempts", "failed_tasks"])
    frame = tasks[keys + list(STAGE_SUM_COLUMNS.values())].assign(
        _failed=(tasks["status"] == "FAILED").astype("int64"), _one=1)
    agg = frame.groupby(keys, sort=True).sum()
    agg = agg.rename(columns={v: k for k, v in STAGE_SUM_COLUMNS.items()})
    agg = agg.rename(columns={"_one": "task_attempts", "_failed": "failed_tasks"})
    return agg[list(STAGE_SUM_COLUMNS) + ["task_attempts", "failed_tasks"]].reset_index()


# ---------------------------------------------------------------------------
# The Run
# ---------------------------------------------------------------------------
JOB_COLUMNS = ["job_id", "name", "description", "status", "submission_ms", "completion_ms",
               "stage_ids", "num_tasks", "num_failed_tasks", "job_group"]
STAGE_COLUMNS = ["stage_id", "attempt", "name", "status", "num_tasks", "submission_ms",
                 "first_task_launched_ms", "completion_ms", "parent_ids", "description",
                 "failure_reason"]
EXECUTOR_COLUMNS = ["executor_id", "host", "total_cores", "max_memory_bytes", "add_ms",
                    "remove_ms", "is_active", "peak_jvm_heap_bytes",
                    "peak_on_heap_execution_bytes", "peak_on_heap_storage_bytes",
                    "peak_process_rss_bytes", "jvm_heap_limit_bytes"]
MEMORY_COLUMNS = ["time_ms", "executor_id", "used_on_heap_storage_bytes",
                  "used_off_heap_storage_bytes", "max_memory_bytes", "peak_jvm_heap_bytes",
                  "peak_on_heap_execution_bytes", "peak_on_heap_storage_bytes",
                  "peak_process_rss_bytes", "memory_used_bytes"]

# Cumulative busy core-ms of the CPUs the driver may use, sampled while the window ran;
# only for runs whose executors share the driver's host (local masters).
HOST_CPU_COLUMNS = ["time_ms", "busy_core_ms", "cores"]


# SQL executions of the window and their physical plans (issue H). Filled by the collectors
# from Spark's /sql REST endpoint (live UI, History Server) or the event log's SQL events;
# every source must give equal tables for the same application. Empty when no SQL ran.
SQL_COLUMNS = [
    "execution_id",        # int
    "root_execution_id",   # int, -1 when none (Spark 3.4+: nested executions)
    "description",         # Spark's description (query text or call site)
    "details",             # Spark's call-site details (points into the cell's source)
    "plan_text",           # physicalPlanDescription (the final plan with AQE)
    "submission_ms", "completion_ms",   # epoch ms
    "job_ids",             # list[int]: jobs of this execution (in the window)
    "status",              # COMPLETED | FAILED | RUNNING
    "error",               # one line
]
# One row per plan node (the final plan: with AQE, the one that ran).
OPERATOR_COLUMNS = [
    "execution_id", "node_id",
    "parent_ids",          # list[int]: the nodes consuming this node's output
    "name",                # Spark's node name: "SortMergeJoin", "Exchange", "Scan parquet "...
    "description",         # short text: join keys, scan path and format, ... ('' if unknown)
    "codegen_id",          # int: wholeStageCodegenId, -1 if none
    "cluster_id",          # int: node id of the WholeStageCodegen cluster holding it, -1 if none
    "stage_attempts",      # list[[stage_id, attempt]] this node ran in
]
# One row per SQL metric of a node, normalised here: ms, bytes, rows / counts.
SQL_METRIC_COLUMNS = [
    "execution_id", "node_id",
    "accumulator_id",      # int, -1 when the source does not say (REST)
    "name",                # Spark's metric name: "number of output rows", "duration", ...
    "metric_type",         # Spark's: sum | size | timing | nsTiming | average
    "unit",                # ms | bytes | rows | count
    "value",               # total over tasks (and driver updates), normalised
    "min", "med", "max",   # per-task statistics where Spark gives them, else NaN
    "max_stage_id", "max_stage_attempt", "max_task_id",   # where the max task ran, -1 if unknown
    "text",                # Spark's own display string, for cross-checks and tooltips
]


def _frame(rows: Iterable[Mapping[str, Any]] | pd.DataFrame | None, columns: list[str]) -> pd.DataFrame:
    df = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows or []))
    for column in columns:
        if column not in df.columns:
            df[column] = pd.Series([None] * len(df), dtype="object")
    extra = [c for c in df.columns if c not in columns]
    return df[columns + extra].reset_index(drop=True)


def new_run_id(now: float | None = None) -> str:
    """Sortable, unique, filesystem- and URL-safe: 20261122-015800-3f9a1c."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now or time.time()))
    return f"{stamp}-{secrets.token_hex(3)}"


@dataclasses.dataclass
class Run:
    """One measured window of Spark work (a cell, a function, or a whole application)."""

    run_id: str = dataclasses.field(default_factory=new_run_id)
    kind: str = "cell"                     # cell | function | eventlog | rest
    label: str = ""
    source: str = ""                       # the cell's source, when there is one
    notebook: str = ""
    status: str = "ok"                     # ok | failed | interrupted | no-jobs
    start_ms: float = 0.0                  # epoch ms
    end_ms: float = 0.0
    app_id: str = ""
    app_name: str = ""
    spark_version: str = ""
    master: str = ""
    collector: str = ""                    # e.g. "sparkmeasure+rest"
    error: str = ""                        # the cell's exception, one line
    warnings: list[str] = dataclasses.field(default_factory=list)
    jobs: pd.DataFrame = dataclasses.field(default_factory=lambda: _frame(None, JOB_COLUMNS))
    stages: pd.DataFrame = dataclasses.field(default_factory=lambda: _frame(None, STAGE_COLUMNS))
    tasks: pd.DataFrame = dataclasses.field(default_factory=empty_tasks)
    executors: pd.DataFrame = dataclasses.field(default_factory=lambda: _frame(None, EXECUTOR_COLUMNS))
    memory: pd.DataFrame = dataclasses.field(default_factory=lambda: _frame(None, MEMORY_COLUMNS))
    host_cpu: pd.DataFrame = dataclasses.field(default_factory=lambda: _frame(None, HOST_CPU_COLUMNS))
    sql: pd.DataFrame = dataclasses.field(default_factory=lambda: _frame(None, SQL_COLUMNS))
    operators: pd.DataFrame = dataclasses.field(default_factory=lambda: _frame(None, OPERATOR_COLUMNS))
    sql_metrics: pd.DataFrame = dataclasses.field(
        default_factory=lambda: _frame(None, SQL_METRIC_COLUMNS))
    listener_stages: pd.DataFrame | None = None   # sparkmeasure's own stage metrics, for cross-checks
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        self.jobs = _frame(self.jobs, JOB_COLUMNS)
        self.stages = _frame(self.stages, STAGE_COLUMNS)
        self.tasks = conform_tasks(self.tasks)
        self.executors = _frame(self.executors, EXECUTOR_COLUMNS)
        self.memory = _frame(self.memory, MEMORY_COLUMNS)
        self.host_cpu = _frame(self.host_cpu, HOST_CPU_COLUMNS)
        self.sql = _frame(self.sql, SQL_COLUMNS)
        self.operators = _frame(self.operators, OPERATOR_COLUMNS)
        self.sql_metrics = _frame(self.sql_metrics, SQL_METRIC_COLUMNS)

    # -- derived numbers --------------------------------------------------
    @property
    def wall_ms(self) -> float:
        return max(0.0, float(self.end_ms) - float(self.start_ms))

    @property
    def slots(self) -> int:
        """Executor cores available (the driver counts only in local mode)."""
        ex = self.executors
        if ex.empty:
            return 0
        if (ex["executor_id"] != "driver").any():
            ex = ex[ex["executor_id"] != "driver"]
        cores = pd.to_numeric(ex["total_cores"], errors="coerce").fillna(0).to_numpy()
        added = pd.to_numeric(ex["add_ms"], errors="coerce").to_numpy(dtype="float64")
        removed = pd.to_numeric(ex["remove_ms"], errors="coerce").to_numpy(dtype="float64")
        if not (np.isfinite(removed).any() and np.isfinite(added).all()):
            return int(cores.sum())
        # Executors came and went (dynamic allocation): the most cores alive at once.
        times = np.concatenate([added, removed[np.isfinite(removed)]])
        deltas = np.concatenate([cores, -cores[np.isfinite(removed)]])
        order = np.lexsort((deltas, times))          # at equal times, removals first
        return int(np.cumsum(deltas[order]).max())

    @property
    def first_line(self) -> str:
        for line in (self.source or "").splitlines():
            if line.strip() and not line.lstrip().startswith("%%"):
                return line.strip()[:200]
        return ""

    def stage_table(self) -> pd.DataFrame:
        """Stages joined with sums over their task attempts (ms, bytes)."""
        stages = self.stages.copy()
        agg = stage_aggregates(self.tasks).rename(columns={"stage_attempt": "attempt"})
        if stages.empty:
            return agg
        stages["stage_id"] = stages["stage_id"].astype("int64")
        stages["attempt"] = stages["attempt"].astype("int64")
        out = stages.merge(agg, on=["stage_id", "attempt"], how="left")
        numeric = list(STAGE_SUM_COLUMNS) + ["task_attempts", "failed_tasks"]
        out[numeric] = out[numeric].fillna(0)
        return out.sort_values(["stage_id", "attempt"]).reset_index(drop=True)

    def describe(self) -> str:
        jobs, stages, tasks = len(self.jobs), len(self.stages), len(self.tasks)
        return (f"Run {self.run_id}: {self.wall_ms / 1000:.2f} s wall, {jobs} jobs, "
                f"{stages} stages, {tasks} task attempts, {self.slots} slots")

    def __repr__(self) -> str:  # keep notebooks readable
        return f"<jupyter_perf.Run {self.describe()}>"

