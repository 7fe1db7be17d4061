"""The one place where Spark's units become the model's: every collector's field map (Spark's
field -> the model's column and its unit) is applied here, by :func:`conform_from`.

A field map is ``{spark_field: (model_column, unit)}`` where the unit is a factor to ms or
bytes (``1 / NS_PER_MS`` for Spark's nanosecond CPU and shuffle-write times), :data:`TIME`
for a Spark timestamp (epoch ms or a REST date string) or :data:`HOSTPORT` for a REST
"host:port" (the host is kept). The maps live beside their collectors:
``collect/rest_fields.py`` (REST API: live UI and History Server), ``collect/listener.py``
(sparkmeasure), ``collect/eventlog/fields.py`` (event logs). After this step every time is
milliseconds and every size bytes (``model.py``); nothing downstream converts units.
"""
from __future__ import annotations

import datetime as _dt
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from ..model import KINDS, TASK_COLUMNS, TASK_STRING_COLUMNS, conform

NS_PER_MS = 1_000_000.0
TIME = "time"           # unit of a Spark timestamp: epoch ms, or a REST date string
HOSTPORT = "hostport"   # unit of a REST "host:port": the host is kept

FieldMap = Mapping[str, tuple[str, Any]]
#: A collector's own derivation of task columns its source leaves out: (raw, mapped) -> mapped.
Derive = Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame]

# Spark's executor memory peaks (ExecutorMetrics, bytes), by the same names in every source:
# REST ``peakMemoryMetrics`` (executors, and per executor of a stage attempt), event logs'
# ``Executor Metrics`` (StageExecutorMetrics, ExecutorMetricsUpdate, TaskEnd's ``Task Executor
# Metrics``). ProcessTree* are 0 unless spark.executor.processTreeMetrics.enabled (Linux).
PEAK_MEMORY_FIELDS = {
    "JVMHeapMemory": "peak_jvm_heap_bytes",
    "OnHeapExecutionMemory": "peak_on_heap_execution_bytes",
    "OnHeapStorageMemory": "peak_on_heap_storage_bytes",
    "ProcessTreeJVMRSSMemory": "peak_process_rss_bytes",
    "JVMOffHeapMemory": "peak_jvm_off_heap_bytes",
    "OffHeapExecutionMemory": "peak_off_heap_execution_bytes",
    "OffHeapStorageMemory": "peak_off_heap_storage_bytes",
    "OnHeapUnifiedMemory": "peak_on_heap_unified_bytes",
    "OffHeapUnifiedMemory": "peak_off_heap_unified_bytes",
    "DirectPoolMemory": "peak_direct_pool_bytes",
    "MappedPoolMemory": "peak_mapped_pool_bytes",
    "ProcessTreePythonRSSMemory": "peak_python_rss_bytes",
    "ProcessTreeOtherRSSMemory": "peak_other_rss_bytes",
}


def peaks(prefix: str) -> dict[str, tuple[str, Any]]:
    return {f"{prefix}{field}": (column, 1) for field, column in PEAK_MEMORY_FIELDS.items()}


# The application's settings a whole-application run keeps (``run.extra["properties"]``, from
# the event log's EnvironmentUpdate or the REST /environment): what memory sizing reads
# (analysis/memory.py). The same keys from every source, so their analyses are equal.
KEPT_PROPERTIES = ("spark.executor.memory", "spark.driver.memory", "spark.executor.cores",
                   "spark.memory.fraction", "spark.executor.memoryOverhead",
                   "spark.driver.memoryOverhead", "spark.executor.pyspark.memory",
                   "spark.memory.offHeap.enabled", "spark.memory.offHeap.size",
                   "spark.driver.maxResultSize")


def sorted_stage_memory(table: pd.DataFrame, tasks: pd.DataFrame) -> pd.DataFrame:
    """A conformed ``stage_memory`` table as every source gives it: only the executors that
    ran a task attempt of the stage attempt (as Spark's live UI lists them; an event log
    also has the driver's peaks of every stage on a cluster), ordered by stage, attempt,
    executor. ``tasks``: the run's conformed task table."""
    if len(table):
        ran = set(zip(tasks["stage_id"].astype("int64"), tasks["stage_attempt"].astype("int64"),
                      tasks["executor_id"].astype(str)))
        keep = [k in ran for k in zip(table["stage_id"], table["attempt"],
                                      table["executor_id"].astype(str))]
        table = table[keep]
    return table.sort_values(["stage_id", "attempt", "executor_id"],
                             kind="stable").reset_index(drop=True)


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


def flatten(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def conform_from(table: str, raw: pd.DataFrame | Iterable[Mapping[str, Any]] | None,
                 fields: FieldMap, derive: Derive | None = None, **constants: Any) -> pd.DataFrame:
    """``raw`` records of one source (a DataFrame, or possibly nested dicts, flattened with
    ".") -> the model's ``table``, through the source's field map ``fields``: the units
    converted here, then :func:`jupyter_perf.model.conform`. Columns already named as the
    model's are kept (a collector may derive some itself); ``derive`` adds the task columns
    the source leaves to be derived; ``constants`` fill columns kept outside the records.
    """
    if isinstance(raw, pd.DataFrame):
        frame = raw
    else:
        frame = pd.DataFrame([flatten(r) for r in (list(raw) if raw is not None else [])])
    mapped = unset_peaks_as_unknown(map_fields(table, fields, frame))
    if table == "tasks":
        if derive is not None:
            mapped = derive(frame, mapped)
        if "shuffle_read_bytes" not in mapped.columns and len(mapped):
            mapped["shuffle_read_bytes"] = (mapped.get("shuffle_remote_bytes", 0.0)
                                            + mapped.get("shuffle_local_bytes", 0.0))
    return conform(table, mapped, **constants)


PEAK_COLUMNS = list(PEAK_MEMORY_FIELDS.values())


def unset_peaks_as_unknown(mapped: pd.DataFrame) -> pd.DataFrame:
    """A peaks record whose JVM heap is 0 was never sampled: Spark zero-fills the metrics of a
    task that ended before the executor's first heartbeat or poll (with
    spark.executor.metrics.pollingInterval=0, the default, a short first query of a session)
    and the live UI then reports those zeros as the executor's peaks. A running JVM's heap is
    never 0, so every peak of such a record is unknown (NaN), not a measured 0 bytes."""
    if "peak_jvm_heap_bytes" not in mapped.columns or mapped.empty:
        return mapped
    heap = pd.to_numeric(mapped["peak_jvm_heap_bytes"], errors="coerce")
    unset = heap.eq(0)
    if unset.any():
        mapped = mapped.copy()
        for column in PEAK_COLUMNS:
            if column in mapped.columns:
                mapped[column] = pd.to_numeric(mapped[column], errors="coerce").astype(
                    "float64").mask(unset)
    return mapped


def map_fields(table: str, fields: FieldMap, raw: pd.DataFrame) -> pd.DataFrame:
    """Spark's columns of ``raw`` -> the model's, each in the model's unit."""
    known = set(KINDS.get(table) or TASK_COLUMNS)
    out: dict[str, Any] = {}
    for field, (column, unit) in fields.items():
        if field not in raw.columns:
            continue
        col = raw[field]
        if unit == TIME:
            times = parse_spark_times(col) if len(col) else np.zeros(0)
            out[column] = np.where(times > 0, times, np.nan)
        elif unit == HOSTPORT:
            out[column] = col.fillna("").astype(str).str.rsplit(":", n=1).str[0]
        elif unit != 1:
            out[column] = pd.to_numeric(col, errors="coerce").astype("float64") * unit
        elif table == "tasks" and column not in TASK_STRING_COLUMNS | {"speculative",
                                                                         "successful"}:
            # (no copy here: conform copies a task table's columns once, see below)
            out[column] = pd.to_numeric(col, errors="coerce").astype("float64", copy=False)
        else:
            out[column] = col
    for column in raw.columns:          # already in the model's names (derived by a collector)
        if column in known and column not in out:
            out[column] = raw[column]
    # A task table's columns are copied into one frame by conform (model._typed_tasks) in
    # the end: not here as well (a quarter of a million rows' blocks merged twice)
    return pd.DataFrame(out, index=raw.index, copy=table != "tasks")
