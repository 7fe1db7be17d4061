"""The data model: one measured window of Spark work as a ``Run``.

Every time in a ``Run`` is milliseconds (float64) and every size is bytes. Collectors
(sparkmeasure listener, REST API, event log) keep Spark's own field names and units until
their field maps (``collect/fields.py``, the one place where units are converted, with the
maps beside each collector) hand this module model-named records, through one step:
:func:`conform`, which gives every table its columns and dtypes. Nothing downstream
converts units. A ``Run`` keeps its tables conformed: assigning any of them
(``run.tasks = frame``) gives it every column with the model's dtypes.

Only numpy and pandas are imported here, so the analysis core can be tested
with no JVM, no Jupyter and no browser.
"""
from __future__ import annotations

import dataclasses
import secrets
import time
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

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
TASK_STRING_COLUMNS = {"executor_id", "host", "status", "locality", "error"}

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

# ---------------------------------------------------------------------------
# The other tables of a Run: column -> kind. Kinds: int (0 when unknown), time (epoch ms,
# NaN when unknown), bytes (NaN when unknown), number, id (-1 when unknown), str ('' when
# unknown), bool, object.
# ---------------------------------------------------------------------------
JOB_KINDS = {"job_id": "int", "name": "str", "description": "str", "status": "str",
             "submission_ms": "time", "completion_ms": "time", "stage_ids": "object",
             "num_tasks": "int", "num_failed_tasks": "int", "job_group": "str",
             "num_killed_tasks": "int", "job_tags": "object",
             "sql_execution_id": "number"}     # NaN: not a SQL job, or the source cannot say
STAGE_KINDS = {"stage_id": "int", "attempt": "int", "name": "str", "status": "str",
               "num_tasks": "int", "submission_ms": "time", "first_task_launched_ms": "time",
               "completion_ms": "time",
               "parent_ids": "object",          # list[int]; None where the source has no DAG
               "description": "str", "failure_reason": "str"}
# Spark's executor memory peaks (ExecutorMetrics), bytes; NaN where the source has none.
# ``peak_process_rss_bytes`` is the executor JVM's process-tree RSS (ProcessTreeJVMRSSMemory).
PEAK_MEMORY_COLUMNS = [
    "peak_jvm_heap_bytes", "peak_on_heap_execution_bytes", "peak_on_heap_storage_bytes",
    "peak_process_rss_bytes", "peak_jvm_off_heap_bytes", "peak_off_heap_execution_bytes",
    "peak_off_heap_storage_bytes", "peak_on_heap_unified_bytes", "peak_off_heap_unified_bytes",
    "peak_direct_pool_bytes", "peak_mapped_pool_bytes", "peak_python_rss_bytes",
    "peak_other_rss_bytes"]
_PEAK_KINDS = {c: "bytes" for c in PEAK_MEMORY_COLUMNS}
EXECUTOR_KINDS = {"executor_id": "str", "host": "str", "total_cores": "int",
                  "max_memory_bytes": "int", "add_ms": "time", "remove_ms": "time",
                  "is_active": "bool", **_PEAK_KINDS, "jvm_heap_limit_bytes": "bytes"}
MEMORY_KINDS = {"time_ms": "time", "executor_id": "str", "used_on_heap_storage_bytes": "bytes",
                "used_off_heap_storage_bytes": "bytes", "max_memory_bytes": "bytes",
                **_PEAK_KINDS, "memory_used_bytes": "bytes"}
# Per stage attempt and executor: the executor's peaks while the stage attempt ran (Spark >=
# 3.1, SPARK-23431: REST stage data's executorSummary[*].peakMemoryMetrics, event logs'
# SparkListenerStageExecutorMetrics with spark.eventLog.logStageExecutorMetrics). Empty where
# the source has none (older Spark, runs stored before it existed).
STAGE_MEMORY_KINDS = {"stage_id": "int", "attempt": "int", "executor_id": "str", **_PEAK_KINDS}
# Cumulative busy core-ms of the CPUs the driver may use, sampled while the window ran;
# only for runs whose executors share the driver's host (local masters). ``own_core_ms``:
# cumulative CPU ms of the driver's process tree (JVM, Python workers) at the same instants;
# NaN where not sampled (older stored runs): the analysis then treats all load as unknown.
HOST_CPU_KINDS = {"time_ms": "number", "busy_core_ms": "number", "cores": "number",
                  "own_core_ms": "number"}
JOB_COLUMNS, STAGE_COLUMNS = list(JOB_KINDS), list(STAGE_KINDS)
EXECUTOR_COLUMNS, MEMORY_COLUMNS = list(EXECUTOR_KINDS), list(MEMORY_KINDS)
STAGE_MEMORY_COLUMNS = list(STAGE_MEMORY_KINDS)
HOST_CPU_COLUMNS = list(HOST_CPU_KINDS)


def executors_on_this_host(master: str) -> bool:
    """True when every executor runs on the driver's machine (local and local-cluster
    masters): added slots then share the host's cores (``collect/hostcpu.py`` samples them,
    ``analysis/hostcpu.py`` bounds the "more slots" what-if with them)."""
    return str(master or "").strip().startswith("local")


# ---------------------------------------------------------------------------
# The one step into the model
# ---------------------------------------------------------------------------
def conform(table: str, raw: pd.DataFrame | Iterable[Mapping[str, Any]] | None = None,
            **constants: Any) -> pd.DataFrame:
    """``raw`` -> the model's ``table`` (tasks, jobs, stages, executors, memory, host_cpu,
    sql, operators, sql_metrics): every column, the model's dtypes.

    ``raw`` (a DataFrame or records) is already in the model's names and units: a
    collector's field map (``collect/fields.py`` and the maps beside each collector) has
    converted Spark's, or it is a stored run. ``constants`` fill columns the source keeps
    outside the records (e.g. ``stage_id`` for a REST ``taskList`` page). Extra columns are
    kept after the model's.
    """
    if raw is None and not constants:
        return _empty_table(table).copy()
    if isinstance(raw, pd.DataFrame):
        if not constants and _is_empty_conformed(table, raw):
            return raw.copy()
        frame = raw
    else:
        frame = pd.DataFrame(list(raw) if raw is not None else [])
    if constants:
        frame = frame.assign(**constants)
    if table == "tasks":
        return _typed_tasks(frame)
    return _typed(frame, KINDS[table])


_EMPTY_TABLES: dict[str, pd.DataFrame] = {}


def _empty_table(table: str) -> pd.DataFrame:
    """The model's empty ``table``, conformed once per process (a Run starts with ten of them:
    conforming each anew cost ~60 ms before every measured cell's query). Callers get a copy."""
    empty = _EMPTY_TABLES.get(table)
    if empty is None:
        frame = pd.DataFrame([])
        empty = _EMPTY_TABLES[table] = (_typed_tasks(frame) if table == "tasks"
                                        else _typed(frame, KINDS[table]))
    return empty


def _is_empty_conformed(table: str, frame: pd.DataFrame) -> bool:
    """``frame`` has no rows and exactly the model's columns and dtypes (nothing to conform)."""
    if len(frame) or len(frame.columns) != len(_empty_table(table).columns):
        return False
    empty = _empty_table(table)
    return bool(frame.columns.equals(empty.columns) and frame.dtypes.equals(empty.dtypes))


def _typed_tasks(table: pd.DataFrame) -> pd.DataFrame:
    """Every task column with the model's dtypes, in order.

    Works on a shallow copy; columns already in the model's dtype are kept as they are,
    so conforming an already-conformed table copies no data.
    """
    table = table.copy(deep=False)
    n = len(table)
    for column in TASK_COLUMNS:
        if column not in table.columns:
            if column in TASK_STRING_COLUMNS:
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
            values = pd.to_numeric(table[column], errors="coerce").fillna(0)
            # beyond int64 (or any plausible count): -1, which check_tasks reports and zeroes
            values = values.where(values.abs() <= MAX_COUNT, -1)
            table[column] = values.astype("int64")
    if table["speculative"].dtype != bool:
        table["speculative"] = table["speculative"].fillna(False).astype(bool)
    for column in TASK_STRING_COLUMNS:
        if table[column].dtype != object or table[column].isna().any():
            table[column] = table[column].fillna("").astype(str)
    extra = [c for c in table.columns if c not in TASK_COLUMNS]
    table = table[TASK_COLUMNS + extra]            # a new frame (its data copied)
    return table if is_plain_index(table.index) else table.reset_index(drop=True)


def is_plain_index(index: pd.Index) -> bool:
    """``index`` is 0, 1, ... n-1 (what ``reset_index(drop=True)`` would give)."""
    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1



# ---------------------------------------------------------------------------
# Plausibility: every Run's tasks pass here when assigned, whatever the source
# ---------------------------------------------------------------------------
MAX_COUNT = 1e15          # bytes or records of one task attempt: a petabyte is not plausible
PART_SLACK = 1.1          # a part may exceed its whole by 10% + 100 ms (Spark measures parts
PART_SLACK_MS = 100.0     # in ns and wholes in ms, on other clocks)
OUTLIER_MS = 30 * 86_400_000.0   # a timestamp a month away from the run's other tasks
# (part, whole): a part of a task attempt's time cannot be longer than its whole
_PARTS = [("run_ms", "duration_ms"), ("deserialize_ms", "duration_ms"),
          ("result_serialization_ms", "duration_ms"), ("getting_result_ms", "duration_ms"),
          ("scheduler_delay_ms", "duration_ms"), ("gc_ms", "duration_ms"),
          ("cpu_ms", "run_ms"), ("fetch_wait_ms", "run_ms"), ("shuffle_write_time_ms", "run_ms"),
          ("deserialize_cpu_ms", "deserialize_ms")]
SPARK_NAMES = {"duration_ms": "duration", "run_ms": "executorRunTime",
               "cpu_ms": "executorCpuTime", "gc_ms": "jvmGcTime",
               "deserialize_ms": "executorDeserializeTime",
               "deserialize_cpu_ms": "executorDeserializeCpuTime",
               "result_serialization_ms": "resultSerializationTime",
               "getting_result_ms": "gettingResultTime", "scheduler_delay_ms": "schedulerDelay",
               "fetch_wait_ms": "fetchWaitTime", "shuffle_write_time_ms": "shuffle writeTime",
               "launch_ms": "launchTime", "finish_ms": "finishTime"}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _named(counts: dict[str, int]) -> str:
    return ", ".join(f"{SPARK_NAMES.get(c, c)}: {n}" for c, n in counts.items())


def check_tasks(tasks: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Implausible task values made harmless, and one warning per kind of problem.

    Negative or out-of-range numbers become 0; a launch or finish time a month or more away
    from the run's other tasks is rebuilt from the task's measured parts; a part longer than
    its whole (CPU over run time, run time over duration, ...) is cut to the whole; and
    successful attempts that carry no metrics at all are counted. So absurd values never
    reach the breakdown or the what-if, and the run says what was changed.
    """
    n = len(tasks)
    if n == 0:
        return tasks, []
    warnings: list[str] = []
    t = tasks.copy(deep=False)

    def arr(column: str) -> np.ndarray:
        return t[column].to_numpy(dtype="float64")

    negative = {}
    for column in TASK_TIME_COLUMNS + TASK_BYTE_COLUMNS:
        v = t[column].to_numpy()
        bad = v < 0
        if bad.any():
            negative[column] = int(bad.sum())
            t[column] = np.where(bad, 0, v).astype(v.dtype)
    if negative:
        warnings.append(f"{_count(sum(negative.values()), 'negative or out-of-range task value')}"
                        f" set to 0 ({_named(negative)})")

    launch, finish = arr("launch_ms"), arr("finish_ms")
    known = launch > 0
    moved = {}
    if known.any():
        q1, med, q3 = np.percentile(launch[known], [25, 50, 75])
        tol = max(OUTLIER_MS, 100.0 * (q3 - q1))
        bad_launch = known & (np.abs(launch - med) > tol)
        bad_finish = (finish > 0) & (np.abs(finish - med) > tol + OUTLIER_MS)
        if bad_launch.any() or bad_finish.any():
            parts = (arr("run_ms") + arr("deserialize_ms") + arr("result_serialization_ms")
                     + arr("getting_result_ms"))
            both = bad_launch & bad_finish
            launch = np.where(both, med, np.where(bad_launch, finish - parts, launch))
            finish = np.where(bad_finish, launch + parts, finish)
            moved = {"launch_ms": int(bad_launch.sum()), "finish_ms": int(bad_finish.sum())}
            t["launch_ms"], t["finish_ms"] = launch, finish
            t["duration_ms"] = np.where(bad_launch | bad_finish, finish - launch, arr("duration_ms"))
            warnings.append(f"{_count(int((bad_launch | bad_finish).sum()), 'task attempt')} with "
                            "a launch or finish time a month or more away from the others "
                            f"({_named({k: v for k, v in moved.items() if v})}): rebuilt from "
                            "their measured run time" + (", placed at the run's median launch"
                                                          if both.any() else ""))
    backwards = (finish > 0) & (launch > 0) & (finish < launch)
    if backwards.any():
        t["finish_ms"] = np.where(backwards, launch, finish)
        t["duration_ms"] = np.where(backwards, 0.0, arr("duration_ms"))
        warnings.append(f"{_count(int(backwards.sum()), 'task attempt')} finishing before "
                        "launch: duration taken as 0")

    over: dict[str, int] = {}
    worst = 0.0
    for part, whole in _PARTS:
        p, w = arr(part), arr(whole)
        if whole == "duration_ms":
            bad = (w > 0) & (p > w * PART_SLACK + PART_SLACK_MS)
        else:
            bad = p > w * PART_SLACK + PART_SLACK_MS
        if bad.any():
            over[f"{SPARK_NAMES[part]} > {SPARK_NAMES[whole]}"] = int(bad.sum())
            worst = max(worst, float((p - w)[bad].max()))
            t[part] = np.where(bad, w, p)
    if over:
        warnings.append(f"{_count(sum(over.values()), 'task value')} longer than the time it is "
                        f"part of ({_named(over)}; up to {worst:.3g} ms over): cut to that time, "
                        "so it cannot inflate the breakdown or the what-if")

    done = t["status"].to_numpy() == "SUCCESS"
    empty = done & (arr("run_ms") == 0) & (arr("cpu_ms") == 0) & (arr("deserialize_ms") == 0) \
        & (t["result_size_bytes"].to_numpy() == 0)
    if empty.any():
        k, total = int(empty.sum()), int(done.sum())
        warnings.append(f"{k} of {_count(total, 'successful task attempt')} ({k / total:.0%}) "
                        "carry no task metrics: their time cannot be broken down (it shows as "
                        "scheduler delay) and the verdict may not hold")
    return t, warnings


def _typed(df: pd.DataFrame, kinds: Mapping[str, str]) -> pd.DataFrame:
    """Every column of ``kinds`` with its kind's dtype, in order, extras after."""
    df = df.copy(deep=False)
    n = len(df)
    for column, kind in kinds.items():
        if column not in df.columns:
            df[column] = _EMPTY_VALUE[kind](n)
            continue
        col = df[column]
        if kind in ("time", "bytes", "number"):
            if col.dtype != "float64":
                df[column] = pd.to_numeric(col, errors="coerce").astype("float64")
        elif kind in ("int", "id"):
            if col.dtype != "int64":
                df[column] = pd.to_numeric(col, errors="coerce").fillna(
                    0 if kind == "int" else -1).astype("int64")
        elif kind == "str":
            if col.dtype != object or col.isna().any():
                df[column] = col.fillna("").astype(str)
        elif kind == "bool":
            if col.dtype != bool:
                df[column] = col.fillna(True).astype(bool)
    extra = [c for c in df.columns if c not in kinds]
    return df[list(kinds) + extra].reset_index(drop=True)


_EMPTY_VALUE = {
    "int": lambda n: np.zeros(n, dtype="int64"), "id": lambda n: np.full(n, -1, dtype="int64"),
    "time": lambda n: np.full(n, np.nan), "bytes": lambda n: np.full(n, np.nan),
    "number": lambda n: np.full(n, np.nan),
    "str": lambda n: pd.Series([""] * n, dtype="object"),
    "bool": lambda n: np.ones(n, dtype=bool),
    "object": lambda n: pd.Series([None] * n, dtype="object"),
}


# ---------------------------------------------------------------------------
# SQL tables
# ---------------------------------------------------------------------------
# SQL executions of the window and their physical plans (issue H). Filled by the collectors
# from Spark's /sql REST endpoint (live UI, History Server) or the event log's SQL events;
# every source must give equal tables for the same application. Empty when no SQL ran.
SQL_KINDS = {
    "execution_id": "int",
    "root_execution_id": "id",          # -1 when none (Spark 3.4+: nested executions)
    "description": "str",               # Spark's description (query text or call site)
    "details": "str",                   # Spark's call-site details (points into the source)
    "plan_text": "str",                 # physicalPlanDescription (the final plan with AQE)
    "submission_ms": "time", "completion_ms": "time",
    "job_ids": "object",                # list[int]: jobs of this execution (in the window)
    "status": "str",                    # COMPLETED | FAILED | RUNNING
    "error": "str",                     # one line
}
# One row per node of the final plan's graph (with AQE, the plan that ran), numbered as
# Spark's SparkPlanGraph numbers them (the REST /sql node ids); WholeStageCodegen clusters
# are nodes too.
OPERATOR_KINDS = {
    "execution_id": "int", "node_id": "int",
    "parent_ids": "object",             # list[int]: the nodes consuming this node's output
    "name": "str",                      # Spark's node name: "SortMergeJoin", "Exchange", ...
    "description": "str",               # Spark's one-line node string (keys, scan, ...) or ''
    "codegen_id": "id",                 # wholeStageCodegenId of its cluster, -1 if none
    "cluster_id": "id",                 # node id of the WholeStageCodegen cluster, -1 if none
    "stage_attempts": "object",         # list[[stage_id, attempt]]: whose tasks updated its
}                                       # metrics
# One row per SQL metric of a node that has a value, normalised: ms, bytes, rows / counts.
SQL_METRIC_KINDS = {
    "execution_id": "int", "node_id": "int",
    "accumulator_id": "id",             # -1 when the source does not say (REST)
    "name": "str",                      # Spark's metric name: "number of output rows", ...
    "metric_type": "str",               # Spark's: sum | size | timing | nsTiming | average
    "unit": "str",                      # ms | bytes | rows | count
    "value": "number",                  # total over tasks and driver updates (average: see docs)
    "min": "number", "med": "number", "max": "number",   # where Spark shows them, else NaN
    "max_stage_id": "id", "max_stage_attempt": "id", "max_task_id": "id",   # -1 unknown
    "text": "str",                      # Spark's own display string, to the character
}
SQL_COLUMNS, OPERATOR_COLUMNS = list(SQL_KINDS), list(OPERATOR_KINDS)
SQL_METRIC_COLUMNS = list(SQL_METRIC_KINDS)
KINDS: dict[str, Mapping[str, str]] = {
    "jobs": JOB_KINDS, "stages": STAGE_KINDS, "executors": EXECUTOR_KINDS,
    "memory": MEMORY_KINDS, "host_cpu": HOST_CPU_KINDS, "sql": SQL_KINDS,
    "operators": OPERATOR_KINDS, "sql_metrics": SQL_METRIC_KINDS,
    "stage_memory": STAGE_MEMORY_KINDS,
}
TABLES = ("jobs", "stages", "tasks", "executors", "memory", "host_cpu", "sql", "operators",
          "sql_metrics", "stage_memory")


# Runs of a whole application: their wall time counts only while a job ran.
WHOLE_APP_KINDS = ("eventlog", "rest")


@dataclasses.dataclass(frozen=True)
class Window:
    """When a run counts as running: the disjoint ``[starts, ends)`` spans within
    ``[lo, hi]``; its wall time is their total length (the one definition of wall time)."""

    wall_ms: float
    lo: float
    hi: float
    starts: np.ndarray
    ends: np.ndarray
    warnings: tuple[str, ...] = ()


def _union(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint sorted union of intervals."""
    if len(starts) == 0:
        return starts, ends
    idx = np.argsort(starts, kind="stable")
    s, e = starts[idx], ends[idx]
    run_max = np.maximum.accumulate(e)
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > run_max[:-1]
    ids = np.cumsum(new) - 1
    return s[new], pd.Series(e).groupby(ids).max().to_numpy()


def window_of(kind: str, start_ms: float, end_ms: float, jobs: pd.DataFrame,
              tasks: pd.DataFrame | None = None) -> Window:
    """The window of a run, the one definition of its wall time.

    For a whole application (``kind`` eventlog or rest) the union of its jobs' intervals:
    time with no job running (driver start-up, idle time) is not counted. For a cell or a
    function ``[start_ms, end_ms]``. When those are unknown (no job times, no end after the
    start), the first task launch to the last task finish (``tasks`` conformed), with a
    warning.
    """
    warnings: list[str] = []
    if kind in WHOLE_APP_KINDS and len(jobs):
        sub = pd.to_numeric(jobs["submission_ms"], errors="coerce").to_numpy(dtype="float64")
        comp = pd.to_numeric(jobs["completion_ms"], errors="coerce").to_numpy(dtype="float64")
        ok = np.isfinite(sub) & np.isfinite(comp) & (comp >= sub) & (sub > 0)
        if ok.any():
            ws, we = _union(sub[ok], comp[ok])
            return Window(float((we - ws).sum()), float(ws[0]), float(we[-1]), ws, we)
    if kind in WHOLE_APP_KINDS:
        warnings.append("no job times: wall time taken from the run's start/end")
    lo, hi = float(start_ms or 0.0), float(end_ms or 0.0)
    if hi > lo:
        return Window(hi - lo, lo, hi, np.array([lo]), np.array([hi]), tuple(warnings))
    if tasks is not None and len(tasks):
        launch, finish = tasks["launch_ms"].to_numpy(), tasks["finish_ms"].to_numpy()
        end = np.where((finish > 0) & (finish >= launch), finish, launch + tasks["duration_ms"])
        env_lo, env_hi = float(launch.min()), float(end.max())
        if env_hi > env_lo:
            warnings.append("no run window: wall time taken from the first task launch to the "
                            "last task finish")
            return Window(env_hi - env_lo, env_lo, env_hi, np.array([env_lo]),
                          np.array([env_hi]), tuple(warnings))
    lo = max(lo, 0.0)
    return Window(0.0, lo, lo, np.array([lo]), np.array([lo]), tuple(warnings))


def cell_body(source: str) -> str:
    """The cell as the user wrote it, without the ``%%perfmeasure …`` line (its options
    change between runs of the same cell), trailing spaces and surrounding blank lines."""
    lines = [line.rstrip() for line in (source or "").splitlines()]
    if lines and lines[0].lstrip().startswith("%%perfmeasure"):
        lines = lines[1:]
    return "\n".join(lines).strip("\n")


def new_run_id(now: float | None = None) -> str:
    """Sortable, unique, filesystem- and URL-safe: 20261122-015800-3f9a1c."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now or time.time()))
    return f"{stamp}-{secrets.token_hex(3)}"


def _empty(table: str):
    return dataclasses.field(default_factory=lambda: conform(table))


@dataclasses.dataclass
class Run:
    """One measured window of Spark work (a cell, a function, or a whole application).

    Its tables (:data:`TABLES`) are conformed whenever they are assigned: every column of the
    model, with the model's dtypes, whatever the caller passed.
    """

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
    jobs: pd.DataFrame = _empty("jobs")
    stages: pd.DataFrame = _empty("stages")
    tasks: pd.DataFrame = _empty("tasks")
    executors: pd.DataFrame = _empty("executors")
    memory: pd.DataFrame = _empty("memory")
    host_cpu: pd.DataFrame = _empty("host_cpu")
    sql: pd.DataFrame = _empty("sql")
    operators: pd.DataFrame = _empty("operators")
    sql_metrics: pd.DataFrame = _empty("sql_metrics")
    stage_memory: pd.DataFrame = _empty("stage_memory")
    listener_stages: pd.DataFrame | None = None   # sparkmeasure's own stage metrics, for cross-checks
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in TABLES:
            value = conform(name, value)
            if name == "tasks":
                value, found = check_tasks(value)
                self._replace_check_warnings(found)
        object.__setattr__(self, name, value)

    def _replace_check_warnings(self, found: list[str]) -> None:
        """The plausibility warnings of the tasks now assigned replace those of earlier ones;
        a warning already on the run (e.g. stored with it) is not repeated."""
        previous = self.__dict__.get("_check_warnings", [])
        warnings = [w for w in self.__dict__.get("warnings", []) if w not in previous]
        object.__setattr__(self, "_check_warnings", [w for w in found if w not in warnings])
        object.__setattr__(self, "warnings", warnings + self._check_warnings)

    # -- derived numbers --------------------------------------------------
    def window(self) -> Window:
        """The run's :func:`window_of` (its wall time is ``window().wall_ms``)."""
        return window_of(self.kind, self.start_ms, self.end_ms, self.jobs, self.tasks)

    @property
    def wall_ms(self) -> float:
        """Wall time of the run's :meth:`window`; the report, the store and the CLI show it."""
        return self.window().wall_ms

    @property
    def slots(self) -> int:
        """Executor cores available (the driver counts only in local mode)."""
        ex = self.executors
        if ex.empty:
            return 0
        if (ex["executor_id"] != "driver").any():
            ex = ex[ex["executor_id"] != "driver"]
        cores = ex["total_cores"].to_numpy()
        added = ex["add_ms"].to_numpy(dtype="float64")
        removed = ex["remove_ms"].to_numpy(dtype="float64")
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
        """One row per stage attempt: the stage's own fields, and sums over all its task
        attempts (the sums Spark's REST /stages reports), task counts per status, the first
        launch and last finish. Stages seen only in tasks are kept; stages without tasks get
        zeros. One vectorised groupby (a per-group ``apply`` costs ~0.4 s per million tasks).
        """
        keys = ["stage_id", "attempt"]
        t = self.tasks
        sums = list(STAGE_SUM_COLUMNS)
        if len(t):
            status = t["status"]
            frame = pd.DataFrame({new: t[old] for new, old in STAGE_SUM_COLUMNS.items()})
            frame["task_attempts"] = 1
            frame["failed_tasks"] = (status == "FAILED").astype("int64")
            frame["killed_tasks"] = (status == "KILLED").astype("int64")
            frame["succeeded_tasks"] = status.isin(["SUCCESS", ""]).astype("int64")
            frame["stage_id"] = t["stage_id"]
            frame["attempt"] = t["stage_attempt"]
            agg = frame.groupby(keys, sort=True).sum()
            g = t.groupby(["stage_id", "stage_attempt"], sort=True)
            agg["distinct_tasks"] = g["index"].nunique().to_numpy()
            agg["first_launch_ms"] = g["launch_ms"].min().to_numpy()
            agg["last_finish_ms"] = g["finish_ms"].max().to_numpy()
            agg = agg.reset_index()
        else:
            agg = pd.DataFrame(columns=keys + sums + ["task_attempts", "failed_tasks"])
        stages = self.stages
        table = agg if stages.empty else stages.merge(agg, on=keys, how="outer")
        for col in ("status", "num_tasks", "name"):
            if col not in table.columns:
                table[col] = None
        for col in ("killed_tasks", "succeeded_tasks", "distinct_tasks", "task_attempts",
                    "failed_tasks", *sums):
            if col not in table.columns:
                table[col] = 0
            table[col] = pd.to_numeric(table[col], errors="coerce").fillna(0).astype(
                "float64" if col.endswith("_ms") else "int64")
        num = pd.to_numeric(table["num_tasks"], errors="coerce")   # NaN: seen only in tasks
        table["num_tasks"] = num.fillna(table["distinct_tasks"]).astype("int64")
        status = table["status"].fillna("").astype(str)
        table["status"] = np.where(status != "", status,
                                   np.where(table["failed_tasks"] > 0, "FAILED", "COMPLETE"))
        return table.sort_values(keys).reset_index(drop=True)

    def describe(self) -> str:
        jobs, stages, tasks = len(self.jobs), len(self.stages), len(self.tasks)
        return (f"Run {self.run_id}: {self.wall_ms / 1000:.2f} s wall, {jobs} jobs, "
                f"{stages} stages, {tasks} task attempts, {self.slots} slots")

    def __repr__(self) -> str:  # keep notebooks readable
        return f"<jupyter_perf.Run {self.describe()}>"
