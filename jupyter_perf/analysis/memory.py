"""Memory: which stage and operator used it, what this window reached, and a sizing answer.

Pure functions on a :class:`~jupyter_perf.model.Run` (issue V). Inputs are the model's
tables: ``stage_memory`` (each executor's peaks while each stage attempt ran, Spark >= 3.1),
``executors`` (peaks since each executor started: Spark's running peaks never go down),
``memory`` (REST samples during the window) and ``tasks`` (spills, GC, task peak execution
memory); the operator table (``analysis/operators.py``) names the operator of a stage.

**This window's memory, not the JVM's past.** Spark's executor peaks never go down, so an
executor's peak may have been set by an earlier cell. Per executor the window's peak is,
in this order of preference (its ``basis`` says which):

* ``stage peaks`` — the highest of its per-stage peaks over the window's stages (measured);
* ``sampled rise`` — the running peak sampled during the window rose above its value at the
  window's start: the new peak was set in the window (measured); where it did not rise the
  window reached *at most* that value (``at most``);
* ``since start`` — only the executor's running peak since it started is known.

**Sizing.** Values come from measured peaks with headroom (:data:`HEADROOM`); where a run
spilled, the memory that would have held the spilling tasks' data is *estimated* from their
peak execution memory plus what they spilled, as Spark's unified memory divides it
(``(heap - 300 MiB) * spark.memory.fraction / concurrent tasks``). Each answer is a hint dict
like ``analysis/hints.py``'s, with ``evidence`` and ``kind`` (measured | estimated).
"""
from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd

from .. import fmt
from ..model import PEAK_MEMORY_COLUMNS, Run
from .hints import (
    MEMORY_FRACTION,
    NOT_SIMULATED,
    RESERVED,
    GiB,
    MiB,
    as_bytes,
    changes,
    default_value,
    effective,
    effective_text,
    hint,
    int_value,
)

NEAR_LIMIT = 0.9          # a peak at or above 90 % of its limit "approached" it
HEADROOM = 0.4            # sizing keeps 40 % of the limit free above the measured peak
GC_PRESSURE = 0.1         # GC time >= 10 % of an executor's task run time
OVERHEAD_MIN = 384 * MiB  # Spark's spark.executor.memoryOverhead floor (YARN, Kubernetes)
OVERHEAD_FACTOR = 0.1     # ... and its default factor of spark.executor.memory
MIN_HEAP = 1.5 * RESERVED  # Spark refuses a smaller driver or executor heap (450 MiB)

#: operator kinds that hold memory, by Spark's node names (first match wins)
OPERATOR_KINDS = [
    ("Python eval", re.compile(r"^(ArrowEvalPython|BatchEvalPython|FlatMapGroupsInPandas|"
                               r"FlatMapCoGroupsInPandas|MapInPandas|MapInArrow|PythonMapInArrow|"
                               r"AggregateInPandas|WindowInPandas|FlatMapGroupsInArrow)")),
    ("aggregate", re.compile(r"^(HashAggregate|ObjectHashAggregate|SortAggregate)")),
    ("join build", re.compile(r"^(ShuffledHashJoin|BroadcastHashJoin|BroadcastNestedLoopJoin|"
                              r"BroadcastExchange)")),
    ("sort", re.compile(r"^(Sort|SortMergeJoin|Window)\b")),
    ("cache", re.compile(r"^(InMemoryTableScan|InMemoryRelation)")),
]

#: the columns of :func:`stage_table` besides the peaks
STAGE_COLUMNS = ["stage_id", "attempt", "executor_id", "operator", "operator_kind",
                 "task_attempts", "peak_task_execution_bytes", "memory_spilled_bytes",
                 "disk_spilled_bytes", "gc_ms", "run_ms", "heap_limit_bytes", "heap_share"]
#: the columns of :func:`executor_table`
EXECUTOR_COLUMNS = [
    "executor_id", "host", "basis", "window_heap_bytes", "window_execution_bytes",
    "window_storage_bytes", "window_jvm_rss_bytes", "window_python_rss_bytes",
    "window_off_heap_bytes", "heap_rise_bytes", "peak_stage_id", "peak_stage_attempt",
    "peak_operator", "peak_operator_kind", "heap_limit_bytes", "unified_limit_bytes",
    "heap_share", "unified_share", "near_limit", "memory_spilled_bytes", "disk_spilled_bytes",
    "gc_ms", "run_ms", "gc_share", "gc_pressure", *PEAK_MEMORY_COLUMNS]

#: how each number of the memory summary was obtained
LABELS = {
    "stage peaks": "measured: Spark's per-stage executor peaks (the window's stages)",
    "sampled rise": "measured: Spark's running peak rose during the window (REST samples)",
    "at most": "at most: Spark's running peak did not rise in the window, so the window "
               "reached no more than this (set earlier)",
    "since start": "measured since the executor started: may include earlier work",
}


def conf_value(run: Run, key: str) -> str | None:
    """``key`` as the run had it: the session's conf, the event log's properties, else
    Spark's default for its version (``hints.effective``: the one rule)."""
    return effective(run, key)


def _bytes_conf(run: Run, key: str) -> float | None:
    return as_bytes(conf_value(run, key), key)


def is_local(run: Run) -> bool:
    """Whether the driver runs the tasks (a local master, or no executor but the driver)."""
    ex = run.executors
    if str(run.master or "").startswith("local") and not str(run.master).startswith(
            "local-cluster"):
        return True
    return not (ex["executor_id"].astype(str) != "driver").any() if len(ex) else True


def operator_kind(name: str) -> str:
    for kind, pattern in OPERATOR_KINDS:
        if pattern.match(str(name or "").strip()):
            return kind
    return ""


def stage_memory_operator(operators: pd.DataFrame) -> dict[int, tuple[str, str]]:
    """Per stage id: (label, kind) of its operator that holds memory — the one with the
    highest peak memory (Spark's ``peak memory`` metric), else the first by kind."""
    out: dict[int, tuple[float, int, str, str]] = {}
    if operators is None or operators.empty:
        return {}
    for rec in operators.to_dict("records"):
        kind = operator_kind(rec.get("name"))
        if not kind:
            continue
        peak = pd.to_numeric(rec.get("peak_memory_bytes"), errors="coerce")
        peak = 0.0 if pd.isna(peak) else float(peak)
        rank = [k for k, _ in OPERATOR_KINDS].index(kind)
        label = str(rec.get("label") or f"{rec.get('name')} (#{rec.get('node_id')})")
        for sid in rec.get("stage_ids") or []:
            best = out.get(int(sid))
            if best is None or (peak, -rank) > (best[0], -best[1]):
                out[int(sid)] = (peak, rank, label, kind)
    return {sid: (v[2], v[3]) for sid, v in out.items()}


def _task_sums(tasks: pd.DataFrame, by: dict[str, str]) -> pd.DataFrame:
    """Per executor (and ``by``: {column: task column}): task attempts, the highest task
    peak execution memory, spills, GC and run time."""
    keys = list(by)
    frame = pd.DataFrame({
        **{k: tasks[c] for k, c in by.items()},
        "executor_id": tasks["executor_id"].astype(str),
        "task_attempts": 1,
        "peak_task_execution_bytes": tasks["peak_execution_memory_bytes"],
        "memory_spilled_bytes": tasks["memory_spilled_bytes"],
        "disk_spilled_bytes": tasks["disk_spilled_bytes"],
        "gc_ms": tasks["gc_ms"], "run_ms": tasks["run_ms"]})
    return frame.groupby(keys + ["executor_id"], sort=True).agg(
        task_attempts=("task_attempts", "sum"),
        peak_task_execution_bytes=("peak_task_execution_bytes", "max"),
        memory_spilled_bytes=("memory_spilled_bytes", "sum"),
        disk_spilled_bytes=("disk_spilled_bytes", "sum"),
        gc_ms=("gc_ms", "sum"), run_ms=("run_ms", "sum")).reset_index()


def heap_limits(run: Run) -> dict[str, float]:
    """Per executor id: its JVM heap limit (bytes) — collected (``jvm_heap_limit_bytes``),
    else ``spark.executor.memory`` / ``spark.driver.memory`` as the run had them."""
    ex = run.executors
    driver = _bytes_conf(run, "spark.driver.memory")
    executor = _bytes_conf(run, "spark.executor.memory")
    out: dict[str, float] = {}
    for rec in ex.to_dict("records") if len(ex) else []:
        e = str(rec["executor_id"])
        v = pd.to_numeric(rec.get("jvm_heap_limit_bytes"), errors="coerce")
        if pd.isna(v) or v <= 0:
            v = driver if e == "driver" else executor
        if v:
            out[e] = float(v)
    return out


def stage_table(run: Run, operators: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per stage attempt and executor: the executor's peaks while the stage attempt
    ran (Spark's per-stage executor metrics, measured), the stage's memory operator and its
    kind, the executor's task spills, GC and run time in that stage attempt, and the heap
    peak's share of the heap limit. Empty when the source has no per-stage peaks."""
    sm = run.stage_memory
    if sm.empty:
        return pd.DataFrame(columns=STAGE_COLUMNS + PEAK_MEMORY_COLUMNS)
    table = sm.copy()
    table["executor_id"] = table["executor_id"].astype(str)
    t = run.tasks
    if len(t):
        sums = _task_sums(t, {"stage_id": "stage_id", "attempt": "stage_attempt"})
        table = table.merge(sums, on=["stage_id", "attempt", "executor_id"], how="left")
    for col in ("task_attempts", "peak_task_execution_bytes", "memory_spilled_bytes",
                "disk_spilled_bytes", "gc_ms", "run_ms"):
        if col not in table.columns:
            table[col] = 0
        table[col] = pd.to_numeric(table[col], errors="coerce").fillna(0)
    ops = stage_memory_operator(operators) if operators is not None else {}
    table["operator"] = [ops.get(int(s), ("", ""))[0] for s in table["stage_id"]]
    table["operator_kind"] = [ops.get(int(s), ("", ""))[1] for s in table["stage_id"]]
    limits = heap_limits(run)
    table["heap_limit_bytes"] = [limits.get(e, np.nan) for e in table["executor_id"]]
    table["heap_share"] = table["peak_jvm_heap_bytes"] / table["heap_limit_bytes"]
    return table[STAGE_COLUMNS + PEAK_MEMORY_COLUMNS].sort_values(
        ["stage_id", "attempt", "executor_id"], kind="stable").reset_index(drop=True)


def _samples(run: Run, executor_id: str) -> pd.DataFrame:
    mem = run.memory
    if mem.empty:
        return mem
    rows = mem[mem["executor_id"].astype(str) == executor_id]
    return rows.sort_values("time_ms", kind="stable")


def _window_from_samples(rows: pd.DataFrame, col: str) -> tuple[float, float, str] | None:
    """(value, rise over the window's start, basis) of a running-peak column's samples."""
    v = pd.to_numeric(rows[col], errors="coerce").dropna() if len(rows) else pd.Series([])
    if v.empty:
        return None
    first, top = float(v.iloc[0]), float(v.max())
    return top, top - first, ("sampled rise" if top > first else "at most")


def _num(rec: dict, col: str) -> float:
    v = pd.to_numeric(rec.get(col), errors="coerce")
    return float("nan") if pd.isna(v) else float(v)


def executor_table(run: Run, stages: pd.DataFrame) -> pd.DataFrame:
    """One row per executor (the driver included): what this window reached (``window_*``,
    its ``basis``: :data:`LABELS`), the stage attempt and operator that set its heap peak,
    its limits and how near they came (``near_limit``: >= :data:`NEAR_LIMIT`), its spills and
    GC share of run time (``gc_pressure``: >= :data:`GC_PRESSURE`), and Spark's running peaks
    since it started (``peak_*``)."""
    ex = run.executors
    if ex.empty:
        return pd.DataFrame(columns=EXECUTOR_COLUMNS)
    limits = heap_limits(run)
    t = run.tasks
    totals = _task_sums(t, {}) if len(t) else pd.DataFrame(columns=["executor_id"])
    totals = {str(r["executor_id"]): r for r in totals.to_dict("records")}
    window_cols = {"window_heap_bytes": "peak_jvm_heap_bytes",
                   "window_execution_bytes": "peak_on_heap_execution_bytes",
                   "window_storage_bytes": "peak_on_heap_storage_bytes",
                   "window_jvm_rss_bytes": "peak_process_rss_bytes",
                   "window_python_rss_bytes": "peak_python_rss_bytes",
                   "window_off_heap_bytes": "peak_jvm_off_heap_bytes"}
    rows = []
    for rec in ex.to_dict("records"):
        e = str(rec["executor_id"])
        row: dict[str, Any] = {"executor_id": e, "host": str(rec.get("host") or "")}
        mine = stages[stages["executor_id"] == e] if len(stages) else stages
        samples = _samples(run, e)
        row["heap_rise_bytes"] = np.nan
        if len(mine) and mine["peak_jvm_heap_bytes"].notna().any():
            row["basis"] = "stage peaks"
            for wcol, pcol in window_cols.items():
                row[wcol] = float(pd.to_numeric(mine[pcol], errors="coerce").max())
            top = mine.loc[pd.to_numeric(mine["peak_jvm_heap_bytes"],
                                         errors="coerce").idxmax()]
            row.update(peak_stage_id=int(top["stage_id"]), peak_stage_attempt=int(top["attempt"]),
                       peak_operator=str(top["operator"]),
                       peak_operator_kind=str(top["operator_kind"]))
        else:
            got = _window_from_samples(samples, "peak_jvm_heap_bytes")
            row["basis"] = got[2] if got else "since start"
            for wcol, pcol in window_cols.items():
                s = _window_from_samples(samples, pcol)
                row[wcol] = s[0] if s else _num(rec, pcol)
            if got:
                row["heap_rise_bytes"] = got[1]
            row.update(peak_stage_id=-1, peak_stage_attempt=-1, peak_operator="",
                       peak_operator_kind="")
        if row["basis"] == "stage peaks":
            got = _window_from_samples(samples, "peak_jvm_heap_bytes")
            if got:
                row["heap_rise_bytes"] = got[1]
        row["heap_limit_bytes"] = limits.get(e, np.nan)
        row["unified_limit_bytes"] = _num(rec, "max_memory_bytes")
        row["heap_share"] = row["window_heap_bytes"] / row["heap_limit_bytes"] \
            if row["heap_limit_bytes"] and row["heap_limit_bytes"] == row["heap_limit_bytes"] \
            else np.nan
        unified = row["window_execution_bytes"] + np.nan_to_num(row["window_storage_bytes"])
        row["unified_share"] = unified / row["unified_limit_bytes"] \
            if row["unified_limit_bytes"] and row["unified_limit_bytes"] > 0 else np.nan
        shares = [s for s in (row["heap_share"], row["unified_share"]) if s == s]
        row["near_limit"] = bool(shares and max(shares) >= NEAR_LIMIT)
        tot = totals.get(e, {})
        for col in ("memory_spilled_bytes", "disk_spilled_bytes", "gc_ms", "run_ms"):
            row[col] = float(tot.get(col, 0.0) or 0.0)
        row["gc_share"] = row["gc_ms"] / row["run_ms"] if row["run_ms"] > 0 else np.nan
        row["gc_pressure"] = bool(row["run_ms"] > 0 and row["gc_share"] >= GC_PRESSURE)
        for col in PEAK_MEMORY_COLUMNS:
            row[col] = _num(rec, col)
        rows.append(row)
    return pd.DataFrame(rows, columns=EXECUTOR_COLUMNS)


def round_up_size(nbytes: float) -> str:
    """A size as a Spark memory setting, rounded up: whole GiB from 1 GiB, else 128 MiB
    steps ("2g", "640m")."""
    if nbytes >= GiB:
        return f"{math.ceil(nbytes / GiB)}g"
    return f"{max(1, math.ceil(nbytes / (128 * MiB))) * 128}m"


def _cores(run: Run, local: bool) -> int:
    ex = run.executors
    workers = ex if local else ex[ex["executor_id"].astype(str) != "driver"]
    cores = pd.to_numeric(workers["total_cores"], errors="coerce").fillna(0) if len(ex) else \
        pd.Series([], dtype="float64")
    return int(cores[cores > 0].max()) if (cores > 0).any() else max(int(run.slots), 1)


def _sized(setting: str | None, value: str | None, text: str, evidence: str, kind: str,
           operator: str | None = None, stage: tuple[int, int] | None = None) -> dict:
    out = hint(operator, text, setting, value)
    out.update(evidence=evidence, kind=kind,
               stage_id=stage[0] if stage else None, stage_attempt=stage[1] if stage else None)
    return out


def spilled_operator(run: Run, stages: pd.DataFrame, operators: pd.DataFrame | None,
                     sid: int, att: int) -> tuple[str, str]:
    """(hint operator "Name (#id)", the label the text names) of the operator that spilled in
    stage ``sid``: the one with Spark's spill metric there (most task time first), else the
    stage's operator that holds memory; ('', '') when no plan names one."""
    if operators is not None and len(operators):
        ran = [r for r in operators.to_dict("records") if int(sid) in (r.get("stage_ids") or [])]
        spilled = [r for r in ran if (pd.to_numeric(r.get("spill_bytes"), errors="coerce") or 0) > 0]
        held = [r for r in ran if operator_kind(r.get("name"))]
        for rec in spilled or held[:1]:
            return f"{rec['name']} (#{rec['node_id']})", str(rec.get("label") or rec["name"])
    row = stages[(stages["stage_id"] == sid) & (stages["attempt"] == att)] if len(stages) \
        else stages
    label = str(row["operator"].iloc[0]) if len(row) and row["operator"].iloc[0] else ""
    return label, label


def spill_sizing(run: Run, stages: pd.DataFrame, local: bool,
                 operators: pd.DataFrame | None = None) -> list[dict]:
    """Where tasks spilled (estimated): the memory the spilling stage's tasks needed against
    what each had, named by stage and operator. In this order, the first that changes
    something: restore ``spark.memory.fraction`` where the session lowered it and the default
    holds the tasks' data in the heap it has; else the heap that holds it
    (``spark.executor.memory``, ``spark.driver.memory`` on a local master); else (the heap is
    that big already: the pool was shared) more, smaller partitions —
    ``spark.sql.shuffle.partitions`` when the stage had that many, else in the code."""
    t = run.tasks
    if t.empty:
        return []
    spilled = t[(t["memory_spilled_bytes"] > 0) | (t["disk_spilled_bytes"] > 0)]
    if spilled.empty:
        return []
    by_stage = spilled.groupby(["stage_id", "stage_attempt"])[
        ["memory_spilled_bytes", "disk_spilled_bytes"]].sum()
    (sid, att) = by_stage.sort_values(["memory_spilled_bytes", "disk_spilled_bytes"],
                                      kind="stable").index[-1]
    mine = spilled[(spilled["stage_id"] == sid) & (spilled["stage_attempt"] == att)]
    need = float((mine["peak_execution_memory_bytes"] + mine["memory_spilled_bytes"]).max())
    setting = "spark.driver.memory" if local else "spark.executor.memory"
    heap_now = _bytes_conf(run, setting) or GiB
    frac_key = "spark.memory.fraction"
    fraction = float(conf_value(run, frac_key) or MEMORY_FRACTION)
    cores = _cores(run, local)
    per_task_now = max(heap_now - RESERVED, 0.0) * fraction / cores
    heap = max(need * cores / fraction + RESERVED, MIN_HEAP)
    value = round_up_size(heap)
    op, label = spilled_operator(run, stages, operators, int(sid), int(att))
    where = f"stage {int(sid)}" + (f" ({label})" if label else "")
    amount = float(by_stage.loc[(sid, att), "memory_spilled_bytes"])
    evidence = (f"{where} spilled {fmt.nbytes(amount)} from memory; its tasks needed up to "
                f"{fmt.nbytes(need)} of execution memory each (peak + spilled), {cores} at a "
                f"time, about {fmt.nbytes(per_task_now)} per task now ({setting} "
                f"{effective_text(run, setting)}, {frac_key} {fraction:g})")
    stage = (int(sid), int(att))

    def sized(key: str | None, v: str | None, text: str) -> list[dict]:
        return [_sized(key, v, text, evidence, "estimated", op or None, stage)]

    default_fraction = float(default_value(frac_key, run.spark_version) or MEMORY_FRACTION)
    restored = need * cores / default_fraction + RESERVED
    if fraction < default_fraction and restored <= heap_now:
        return sized(frac_key, f"{default_fraction:g}", (
            f"{evidence}: the session lowered {frac_key}; {frac_key}={default_fraction:g} "
            f"(Spark's default) would have avoided the spill in the heap it has (estimated: "
            f"{fmt.nbytes(restored)} needed of {fmt.nbytes(heap_now)}). {NOT_SIMULATED}"))
    if as_bytes(value, setting) > heap_now and changes(run, setting, value):
        return sized(setting, value, (
            f"{evidence}: {setting}={value} would have avoided the spill (estimated: "
            f"{fmt.nbytes(heap)} = need x tasks / fraction + 300 MiB reserved), or use more, "
            f"smaller partitions. {NOT_SIMULATED}"))
    # the heap holds that in total: the pool was shared (storage, other tasks). Spark
    # guarantees each of N running tasks at least 1/(2N) of the execution pool: a task that
    # needed more than that can spill whenever the others hold their part — finer work
    guaranteed = per_task_now / 2
    head = (f"{evidence}: a {fmt.nbytes(heap)} heap would hold that (estimated), no more than "
            f"{setting} has, so the spill came from how the pool was shared at the time "
            "(cached data in storage memory, other tasks)")
    if need <= guaranteed:
        return sized(None, None, (
            f"{head}. Each task was guaranteed at least {fmt.nbytes(guaranteed)} (half its "
            "share), more than it needed: no setting sizes that; look at what was cached "
            "(the Memory tab's storage) before sizing anything."))
    parts = max(int(t.loc[(t["stage_id"] == sid) & (t["stage_attempt"] == att),
                          "index"].nunique()), 1)
    more = max(parts + 1, math.ceil(parts * need / max(guaranteed, 1.0)))
    key = "spark.sql.shuffle.partitions"
    head += (f". Each task was guaranteed only {fmt.nbytes(guaranteed)} (half its share); the "
             "heap is big enough in total: split the work finer")
    if parts == int_value(effective(run, key), 200) and changes(run, key, more):
        return sized(key, str(more), f"{head}: {key}={more} (now {effective_text(run, key)}). "
                                     f"{NOT_SIMULATED}")
    return sized(None, None, f"{head}: about {more} partitions instead of {parts} (repartition "
                             f"before the operator). {NOT_SIMULATED}")


def heap_sizing(run: Run, ex: pd.DataFrame, spilled: bool, local: bool) -> list[dict]:
    """The JVM heap the measured peaks need with :data:`HEADROOM` free: raise it where a
    peak approached the limit under GC pressure (heap used includes garbage not yet
    collected: near the limit with little GC is the collector's choice, not a need), lower it
    (on a cluster) where the peaks left most of it unused and nothing spilled."""
    setting = "spark.driver.memory" if local else "spark.executor.memory"
    workers = ex if local else ex[ex["executor_id"] != "driver"]
    workers = workers[workers["window_heap_bytes"].notna() & workers["heap_limit_bytes"].notna()]
    if (workers["basis"] != "since start").any():      # this window's peaks, not the past's
        workers = workers[workers["basis"] != "since start"]
    if workers.empty:
        return []
    top = workers.loc[workers["window_heap_bytes"].idxmax()]
    peak, limit = float(top["window_heap_bytes"]), float(top["heap_limit_bytes"])
    if peak <= 0 or limit <= 0:
        return []
    want = max(peak / (1.0 - HEADROOM), MIN_HEAP)
    value = round_up_size(want)
    where = (f" (stage {int(top['peak_stage_id'])}"
             + (f", {top['peak_operator']}" if top["peak_operator"] else "") + ")") \
        if top["peak_stage_id"] >= 0 else ""
    evidence = (f"peak JVM heap {fmt.nbytes(peak)} of {fmt.nbytes(limit)} on executor "
                f"{top['executor_id']}{where}, {LABELS[top['basis']].split(':')[0]}")
    if peak / limit >= NEAR_LIMIT:
        # heap used counts garbage not yet collected: a full heap is a need only where the
        # collector worked hard to keep it below the limit
        if not top["gc_pressure"]:
            return []
        evidence += f"; GC took {top['gc_share']:.0%} of its task time"
        text = (f"{evidence}: the heap came within {1 - peak / limit:.0%} of its limit; "
                f"{setting}={value} keeps {HEADROOM:.0%} headroom.")
        return [_sized(setting, value, text, evidence, "measured")]
    # lowered only on a cluster: a local master's driver heap also holds the driver's own work;
    # never where an executor ran out of memory (its last peaks may not show it)
    if not spilled and not local and top["basis"] != "at most" and \
            not lost_to_memory(run) and \
            as_bytes(value, setting) < limit:
        text = (f"{evidence} and no spill: {setting}={value} keeps {HEADROOM:.0%} headroom "
                "(JVM heap used includes garbage not yet collected; check GC time after).")
        return [_sized(setting, value, text, evidence, "measured")]
    return []


def overhead_sizing(run: Run, ex: pd.DataFrame, local: bool) -> list[dict]:
    """Python workers' and off-heap memory live outside the heap, in the container's
    ``spark.executor.memoryOverhead`` (YARN, Kubernetes): the overhead they need with
    :data:`HEADROOM`, where they approached the current one."""
    workers = ex if local else ex[ex["executor_id"] != "driver"]
    py = pd.to_numeric(workers["window_python_rss_bytes"], errors="coerce").fillna(0.0)
    if workers.empty or py.max() <= 0:
        return []
    i = py.idxmax()
    top = workers.loc[i]
    off = float(np.nan_to_num(top["window_off_heap_bytes"])) + \
        float(np.nan_to_num(top.get("peak_direct_pool_bytes", 0.0)))
    python = float(py.loc[i])
    heap = _bytes_conf(run, "spark.executor.memory") or GiB
    overhead = _bytes_conf(run, "spark.executor.memoryOverhead") or \
        max(OVERHEAD_MIN, OVERHEAD_FACTOR * heap)
    need = python + off
    evidence = (f"Python workers peaked at {fmt.nbytes(python)} RSS on executor "
                f"{top['executor_id']} (measured), with {fmt.nbytes(off)} JVM off-heap and "
                f"direct buffers, against a {fmt.nbytes(overhead)} memory overhead")
    if need < overhead * NEAR_LIMIT:
        return []
    value = round_up_size(need / (1.0 - HEADROOM))
    where = " (applies on YARN and Kubernetes; a local master has no container limit)" \
        if local else ""
    text = (f"{evidence}: raise spark.executor.memoryOverhead to {value}{where}.")
    return [_sized("spark.executor.memoryOverhead", value, text, evidence, "measured")]


def driver_sizing(run: Run, ex: pd.DataFrame, local: bool) -> list[dict]:
    """On a cluster, the driver holds ``collect``/``toPandas`` results: its heap when its
    window peak approached ``spark.driver.memory``, or results approached
    ``spark.driver.maxResultSize``."""
    if local:
        return []
    d = ex[ex["executor_id"] == "driver"]
    if d.empty:
        return []
    d = d.iloc[0]
    peak, limit = float(np.nan_to_num(d["window_heap_bytes"])), float(
        np.nan_to_num(d["heap_limit_bytes"]))
    results = float(run.tasks["result_size_bytes"].sum()) if len(run.tasks) else 0.0
    if limit <= 0 or peak < limit * NEAR_LIMIT:
        return []
    value = round_up_size(max(peak / (1.0 - HEADROOM), MIN_HEAP))
    evidence = (f"driver JVM heap peaked at {fmt.nbytes(peak)} of {fmt.nbytes(limit)} "
                f"({LABELS[d['basis']].split(':')[0]}); tasks returned "
                f"{fmt.nbytes(results)} of results to it (collect, toPandas)")
    text = f"{evidence}: spark.driver.memory={value} keeps {HEADROOM:.0%} headroom."
    return [_sized("spark.driver.memory", value, text, evidence, "measured")]


LOCAL_CLUSTER = re.compile(r"^local-cluster\[\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\]$")


def local_cluster(master: str) -> tuple[int, int, int] | None:
    """(workers, cores, MiB per worker) of a ``local-cluster[N,C,MiB]`` master, else None."""
    m = LOCAL_CLUSTER.match(str(master or "").strip())
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def capped_by_worker(run: Run, sized: list[dict]) -> list[dict]:
    """On ``local-cluster[N,C,MiB]`` each executor runs in a worker of MiB: a
    ``spark.executor.memory`` above it cannot be applied alone (the worker never launches the
    executor, and the application waits for one). Such an answer keeps its value, says the
    worker's limit and proposes the master string with the MiB raised to hold it
    (``spark.master``: read when the session starts, like the heap)."""
    cluster = local_cluster(run.master)
    if cluster is None:
        return sized
    n, cores, mib = cluster
    out = []
    for s in sized:
        pairs = [list(p) for p in s.get("settings") or []]
        heap = next((as_bytes(v, k) for k, v in pairs if k == "spark.executor.memory"), None)
        if heap is None or heap <= mib * MiB or any(k == "spark.master" for k, _ in pairs):
            out.append(s)
            continue
        master = f"local-cluster[{n},{cores},{math.ceil(heap / MiB)}]"
        s = dict(s, settings=pairs + [["spark.master", master]], text=(
            f"{s['text']} On {run.master} each executor's worker has {mib} MiB: an executor "
            f"asking more never starts, so the master string's MiB must rise with it: "
            f"spark.master={master} (the host needs {n} × that free)."))
        out.append(s)
    return out


def sizing(run: Run, ex: pd.DataFrame, stages: pd.DataFrame,
           operators: pd.DataFrame | None = None) -> list[dict]:
    """The sizing answer: hint dicts with ``setting``, ``value``, ``evidence``, ``kind``, one
    per setting (``operators``: the analysis' operator table, naming what spilled); a heap
    above a local-cluster worker's memory also proposes the master string
    (:func:`capped_by_worker`)."""
    if ex.empty:
        return []
    local = is_local(run)
    spill = spill_sizing(run, stages, local, operators)
    return capped_by_worker(run, _one_value(
        spill + heap_sizing(run, ex, bool(spill), local) + overhead_sizing(run, ex, local)
        + driver_sizing(run, ex, local)))


def _one_value(sized: list[dict]) -> list[dict]:
    """One answer per setting: where the spill and the heap's peak both size the heap, the
    larger value (it holds both), in the first one's place."""
    out: list[dict] = []
    for s in sized:
        same = [i for i, o in enumerate(out) if s["setting"] and o["setting"] == s["setting"]]
        if not same:
            out.append(s)
        elif (as_bytes(s["value"], s["setting"]) or 0) > (
                as_bytes(out[same[0]]["value"], s["setting"]) or 0):
            out[same[0]] = s
    return out


def advice(run: Run, sized: list[dict]) -> list[dict]:
    """The sizing answers that belong in ``a.hints``: those whose settings change something in
    the run (never the value in effect), without the memory overhead on a local master (no
    container holds its Python workers: the Memory tab still shows that answer)."""
    local = is_local(run)
    out = []
    for s in sized:
        pairs = s.get("settings") or []
        if local and any(k == "spark.executor.memoryOverhead" for k, _ in pairs):
            continue
        if all(changes(run, k, v) for k, v in pairs):
            out.append(s)
    return out


def lost_to_memory(run: Run, sized: list[dict] | None = None) -> list[dict]:
    """The executors the window lost to memory (``run.extra["lost_to_memory"]``: the
    collector's records, ``collect/executors_lost.memory_losses``), each with its last
    reported peaks (Spark keeps a lost executor's peaks as its last heartbeat reported them;
    measured, since it started) and the sizing answer that raises the memory it ran out of
    (``sized``: :func:`sizing`'s; None when there is none): ``executor_id``, ``host``,
    ``memory`` ("heap" | "killed"), ``exit_code``, ``reason``, ``heap_bytes``,
    ``heap_limit_bytes``, ``process_rss_bytes``, ``python_rss_bytes``, ``setting``,
    ``value``, ``kind``, ``settings`` (every ``[key, value]`` the answer proposes)."""
    records = run.extra.get("lost_to_memory") if isinstance(run.extra, dict) else None
    if not isinstance(records, list):
        return []
    ex = run.executors
    by_id = {str(r["executor_id"]): r for r in ex.to_dict("records")} if len(ex) else {}
    limits = heap_limits(run)
    local = is_local(run)
    out = []
    for rec in records:
        if not isinstance(rec, dict) or rec.get("memory") not in ("heap", "killed"):
            continue
        e = str(rec.get("executor_id") or "")
        peaks = by_id.get(e, {})
        code = rec.get("exit_code")
        row = {"executor_id": e, "host": str(rec.get("host") or ""), "memory": rec["memory"],
               "exit_code": int(code) if isinstance(code, (int, float)) and code == code
               else None, "reason": str(rec.get("reason") or ""),
               "heap_bytes": _num(peaks, "peak_jvm_heap_bytes"),
               "heap_limit_bytes": limits.get(e, np.nan),
               "process_rss_bytes": _num(peaks, "peak_process_rss_bytes"),
               "python_rss_bytes": _num(peaks, "peak_python_rss_bytes"),
               "setting": None, "value": None, "kind": None, "settings": []}
        # the answer that gives it more of what it ran out of: the heap for an
        # OutOfMemoryError, the heap or the overhead for a process killed for its size
        wanted = (["spark.driver.memory" if local else "spark.executor.memory"]
                  + (["spark.executor.memoryOverhead"] if rec["memory"] == "killed" else []))
        for s in sized or []:
            if s.get("setting") in wanted and s.get("value") and changes(
                    run, s["setting"], s["value"]) and (as_bytes(s["value"], s["setting"]) or 0) \
                    > (_bytes_conf(run, s["setting"]) or 0):
                row.update(setting=s["setting"], value=s["value"], kind=s.get("kind"),
                           settings=[list(p) for p in s.get("settings") or []])
                break
        out.append(row)
    return out


def limit_risks(ex: pd.DataFrame) -> list[str]:
    """One line per executor (the driver included) whose JVM heap peak in the window came to
    :data:`NEAR_LIMIT` of its heap limit while it spent :data:`GC_PRESSURE` of its task time in
    GC: the verdict's OOM-risk fact. A used heap near its limit alone is not one (garbage
    counts until the next collection), nor is unified memory at its limit (Spark fills that
    pool, then spills: the spill category says so)."""
    out = []
    for rec in ex.to_dict("records") if len(ex) else []:
        share = rec["heap_share"]
        if share == share and share >= NEAR_LIMIT and rec["gc_pressure"]:
            out.append(f"executor {rec['executor_id']}'s JVM heap peaked at {share:.0%} of "
                       f"its limit with {rec['gc_share']:.0%} of its task time in GC")
    return out


def _flags(ex: pd.DataFrame) -> list[str]:
    out = []
    for rec in ex.to_dict("records"):
        e = rec["executor_id"]
        if rec["near_limit"]:
            share = max(s for s in (rec["heap_share"], rec["unified_share"]) if s == s)
            out.append(f"executor {e} came to {share:.0%} of a memory limit")
        if rec["gc_pressure"]:
            out.append(f"executor {e} spent {rec['gc_share']:.0%} of its task time in GC")
    return out


def summary(run: Run, ex: pd.DataFrame, stages: pd.DataFrame, sized: list[dict]) -> dict:
    """``a.summary()["memory"]``: per executor (the driver included) the window's peaks and
    what set them, limits, spills; the per-stage rows; the sizing answer, its one line and
    that line's kind ("measured", "estimated", "measured and estimated"; None: no sizing);
    the executors lost to memory (:func:`lost_to_memory`);
    the labels of every kind of number."""
    spilled = float(ex["memory_spilled_bytes"].sum()) if len(ex) else 0.0
    lost = lost_to_memory(run, sized)
    line = " ".join(s["text"] for s in sized[:2]) if sized else (
        f"No sizing answer from the peaks: executor {lost[0]['executor_id']} was lost to memory "
        "and its last reported peaks do not show what it needed; give it more of the memory it "
        "ran out of and measure again." if lost else
        "No sizing change: no spill, and no peak near a limit." if len(ex) else "")
    kinds = [k for k in ("measured", "estimated") if any(s["kind"] == k for s in sized[:2])]
    return {
        "executors": ex.to_dict("records"),
        "stages": stages.to_dict("records"),
        "sizing": sized,
        "sizing_line": line,
        "sizing_kind": " and ".join(kinds) or None,
        "flags": _flags(ex) if len(ex) else [],
        "lost_to_memory": lost,
        "memory_spilled_bytes": spilled,
        "disk_spilled_bytes": float(ex["disk_spilled_bytes"].sum()) if len(ex) else 0.0,
        "per_stage": bool(len(stages)),
        "labels": dict(LABELS, estimated="estimated: a what-if from measured peaks and spills",
                       measured="measured: Spark's executor metrics and task metrics"),
        "near_limit": NEAR_LIMIT, "headroom": HEADROOM, "gc_pressure": GC_PRESSURE,
    }
