"""The Memory tab's data: per executor, memory over the run, its limits, where tasks spilled,
and a table of per-executor peaks. Drawn by ``labextension/src/report/tabs/memory.ts``.

The samples are Spark's REST ``/allexecutors`` polled every 0.5 s: storage memory is the
*current* value; JVM heap, execution memory and RSS are Spark's *running peaks* (they never
go down), and are labelled so. Limits: the JVM heap limit (``-Xmx``) and the unified
storage + execution pool (``maxMemory``). Spills: every task attempt that spilled, at its
finish time. Values are bytes, times seconds since the window started.

``window`` is this window's memory (``analysis/memory.py``): per executor the peaks the window
reached (per-stage peaks, or the sampled rise, labelled), the stage and operator that set the
heap peak, per stage attempt and executor the peaks (JVM and Python), and the sizing answer.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...analysis import Analysis
from ...analysis.verdict import memory_lead

#: (column, label, colour, kind): kind "running peak" | "current"
SERIES = [
    ("peak_jvm_heap_bytes", "JVM heap (running peak)", "#4e79a7", "running peak"),
    ("peak_on_heap_execution_bytes", "execution memory (running peak)", "#f28e2b", "running peak"),
    ("used_on_heap_storage_bytes", "storage memory (current)", "#59a14f", "current"),
    ("peak_process_rss_bytes", "process RSS (running peak)", "#b07aa1", "running peak"),
]
LIMITS = [("jvm_heap_limit_bytes", "JVM heap limit (-Xmx)", "#4e79a7"),
          ("max_memory_bytes", "unified memory limit (storage + execution)", "#f28e2b")]
SPILL = {"label": "task spilled (at its finish)", "color": "#d62728"}
#: columns of the per-executor table: (key, title, format, help)
TABLE = [
    ("executor_id", "executor", "text", "Spark's executor id"),
    ("host", "host", "text", ""),
    ("peak_jvm_heap_bytes", "peak JVM heap", "bytes", "measured: Spark's executor metrics"),
    ("jvm_heap_limit_bytes", "heap limit", "bytes", "the JVM's -Xmx"),
    ("peak_on_heap_execution_bytes", "peak execution", "bytes",
     "measured: Spark's executor metrics"),
    ("peak_on_heap_storage_bytes", "peak storage", "bytes", "measured: Spark's executor metrics"),
    ("max_memory_bytes", "unified limit", "bytes", "storage + execution pool (maxMemory)"),
    ("peak_process_rss_bytes", "peak RSS", "bytes", "measured: Spark's executor metrics"),
    ("memory_spilled_bytes", "spilled (memory)", "bytes",
     "measured: memoryBytesSpilled summed over this executor's task attempts"),
    ("disk_spilled_bytes", "spilled (disk)", "bytes",
     "measured: diskBytesSpilled summed over this executor's task attempts"),
]
#: spill markers sent at most (the largest spills first); the note says when there are more
SPILL_LIMIT = 5000

#: this window's memory per executor (``a.memory_table``): (key, title, format, help)
WINDOW_TABLE = [
    ("executor_id", "executor", "text", "Spark's executor id"),
    ("basis", "how", "text", "how this window's peaks were obtained (see the note above)"),
    ("window_heap_bytes", "JVM heap", "bytes", "this window's peak JVM heap used"),
    ("heap_limit_bytes", "heap limit", "bytes", "the JVM's -Xmx (spark.executor.memory or "
     "spark.driver.memory)"),
    ("heap_share", "of limit", "pct", "peak JVM heap / heap limit"),
    ("window_execution_bytes", "execution", "bytes", "this window's peak on-heap execution "
     "memory (joins, aggregates, sorts)"),
    ("window_storage_bytes", "storage", "bytes", "this window's peak on-heap storage memory "
     "(cache, broadcasts)"),
    ("unified_limit_bytes", "unified limit", "bytes", "storage + execution pool (maxMemory)"),
    ("window_jvm_rss_bytes", "JVM RSS", "bytes", "the JVM process's resident memory "
     "(ProcessTreeJVMRSSMemory)"),
    ("window_python_rss_bytes", "Python RSS", "bytes", "Python workers' resident memory "
     "(ProcessTreePythonRSSMemory; pandas UDFs, toPandas)"),
    ("window_off_heap_bytes", "JVM off-heap", "bytes", "JVMOffHeapMemory (metaspace, code "
     "cache, ...)"),
    ("peak_stage_id", "heap peak in stage", "int", "the stage attempt whose per-stage peak "
     "was this executor's highest heap (measured)"),
    ("peak_operator", "operator", "text", "the stage's operator that holds memory"),
    ("memory_spilled_bytes", "spilled (memory)", "bytes", "memoryBytesSpilled summed over "
     "this executor's task attempts (measured)"),
    ("gc_share", "GC share", "pct", "jvmGcTime / executorRunTime of its task attempts "
     "(measured)"),
]
#: per stage attempt and executor (``a.stage_memory``): (key, title, format, help)
STAGE_TABLE = [
    ("stage_id", "stage", "int", ""), ("attempt", "attempt", "int", ""),
    ("executor_id", "executor", "text", ""),
    ("operator", "operator", "text", "the stage's operator that holds memory, and its kind"),
    ("operator_kind", "kind", "text", "aggregate, join build, sort, cache or Python eval"),
    ("peak_jvm_heap_bytes", "JVM heap", "bytes", "the executor's peak JVM heap while the stage "
     "ran (measured: Spark's per-stage executor metrics)"),
    ("heap_share", "of limit", "pct", "peak JVM heap / heap limit"),
    ("peak_on_heap_execution_bytes", "execution", "bytes", "peak on-heap execution memory"),
    ("peak_on_heap_storage_bytes", "storage", "bytes", "peak on-heap storage memory"),
    ("peak_process_rss_bytes", "JVM RSS", "bytes", "ProcessTreeJVMRSSMemory"),
    ("peak_python_rss_bytes", "Python RSS", "bytes", "ProcessTreePythonRSSMemory"),
    ("peak_task_execution_bytes", "task peak execution", "bytes",
     "the highest peakExecutionMemory of its task attempts on this executor"),
    ("memory_spilled_bytes", "spilled (memory)", "bytes", "memoryBytesSpilled of its task "
     "attempts on this executor"),
]
#: stage rows sent at most (the highest heap peaks first)
STAGE_LIMIT = 2000


def _records(df: pd.DataFrame, keys: list[str]) -> list[dict]:
    out = []
    for rec in df.to_dict("records"):
        row = {}
        for k in keys:
            v = rec.get(k)
            if isinstance(v, (bool, np.bool_)):
                row[k] = bool(v)
            elif isinstance(v, (int, float, np.integer, np.floating)):
                row[k] = _value(v)
            else:
                row[k] = "" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)
        out.append(row)
    return out


def _window(a: Analysis) -> dict:
    """This window's memory: per executor and per stage, the sizing answer, the labels."""
    try:
        ex, st, sized = a.memory_table, a.stage_memory, a.memory_sizing
        summ = a.memory_summary()
    except Exception as exc:  # broad: the memory digest must not cost the whole tab
        return {"error": f"memory analysis failed: {type(exc).__name__}: {exc}"}
    keys = [k for k, *_ in WINDOW_TABLE] + ["near_limit", "gc_pressure", "peak_stage_attempt"]
    rows = _records(ex, keys)
    for row in rows:
        if row.get("peak_stage_id") is not None and row["peak_stage_id"] < 0:
            row["peak_stage_id"] = None
        row["basis"] = str(row.get("basis") or "")
    if len(st) > STAGE_LIMIT:
        st = st.sort_values("peak_jvm_heap_bytes", ascending=False).head(STAGE_LIMIT)
    return {
        "columns": [{"key": k, "title": ti, "format": f, "help": h}
                    for k, ti, f, h in WINDOW_TABLE],
        "table": rows,
        "stage_columns": [{"key": k, "title": ti, "format": f, "help": h}
                          for k, ti, f, h in STAGE_TABLE],
        "stages": _records(st, [k for k, *_ in STAGE_TABLE]),
        "stages_total": int(len(a.stage_memory)),
        "sizing": [{"text": str(h["text"]), "setting": h.get("setting"),
                    "value": h.get("value"), "kind": str(h.get("kind") or "")}
                   for h in sized],
        "sizing_line": str(summ.get("sizing_line") or ""),
        # executors the window lost to memory, one line each in the verdict's own words
        "lost": [memory_lead([x])[1] for x in summ.get("lost_to_memory") or []],
        "flags": [str(f) for f in summ.get("flags") or []],
        "labels": {str(k): str(v) for k, v in (summ.get("labels") or {}).items()},
        "near_limit": float(summ.get("near_limit") or 0.9),
    }


def _num(df: pd.DataFrame, col: str) -> np.ndarray:
    if col not in df.columns:
        return np.full(len(df), np.nan)
    return pd.to_numeric(df[col], errors="coerce").to_numpy(dtype="float64")


def _value(v) -> float | None:
    v = pd.to_numeric(v, errors="coerce")
    return None if pd.isna(v) else float(v)


def data(a: Analysis, ctx) -> dict:
    run, tl = a.run, a.timeline
    lo = float(tl.window[0]) if tl.has_times else float(run.start_ms)
    mem, ex, t = run.memory, run.executors, run.tasks
    ex_ids = [str(e) for e in ex["executor_id"]] if not ex.empty else []
    mem_ids = [str(e) for e in mem["executor_id"].dropna().unique()] if not mem.empty else []
    spilled = _num(t, "memory_spilled_bytes") + _num(t, "disk_spilled_bytes")
    spill_mask = np.nan_to_num(spilled) > 0
    t_ex = t["executor_id"].astype(str).to_numpy() if len(t) else np.zeros(0, dtype=object)
    ids = list(dict.fromkeys(ex_ids + mem_ids + [str(e) for e in pd.unique(t_ex[spill_mask])]))
    span = max(float(run.wall_ms),
               float(tl.window[1] - tl.window[0]) if tl.has_times else 0.0) / 1000.0
    n_spill = int(spill_mask.sum())
    out: dict = {
        "series": [{"col": c, "label": lab, "color": col, "kind": k} for c, lab, col, k in SERIES],
        "spill": SPILL, "span_s": span, "samples": int(len(mem)),
        "spilled_attempts": n_spill, "spills_shown": 0,
        "columns": [{"key": k, "title": ti, "format": f, "help": h} for k, ti, f, h in TABLE],
        "table": [], "executors": [],
        "window": _window(a),
    }
    if not ids:
        return out

    # per-executor spill totals (the table) and the markers (the chart)
    mem_sp = np.nan_to_num(_num(t, "memory_spilled_bytes"))
    disk_sp = np.nan_to_num(_num(t, "disk_spilled_bytes"))
    rows = np.flatnonzero(spill_mask)
    if len(rows) > SPILL_LIMIT:
        rows = np.sort(rows[np.argsort(-spilled[rows], kind="stable")[:SPILL_LIMIT]])
    out["spills_shown"] = int(len(rows))
    end = (np.asarray(tl.launch, dtype="float64") + np.asarray(tl.duration, dtype="float64")
           - lo) / 1000.0 if len(tl.duration) else np.zeros(len(t))
    task_id, stage_id = _num(t, "task_id"), _num(t, "stage_id")
    sorted_mem = mem.assign(_e=mem["executor_id"].astype(str)).sort_values("time_ms") \
        if not mem.empty else mem

    for e in ids:
        entry: dict = {"id": e}
        rows_e = sorted_mem[sorted_mem["_e"] == e] if not mem.empty else mem
        entry["t"] = ((_num(rows_e, "time_ms") - lo) / 1000.0).tolist()
        for col, *_ in SERIES:
            v = _num(rows_e, col)
            entry[col] = v.tolist() if np.isfinite(v).any() else None
        limits = []
        rec = ex[ex["executor_id"].astype(str) == e] if not ex.empty else ex
        for col, label, color in LIMITS:
            v = _value(rec[col].iloc[0]) if len(rec) and col in rec else None
            if v is not None and v > 0:
                limits.append({"col": col, "label": label, "color": color, "bytes": v})
        entry["limits"] = limits
        r_e = rows[t_ex[rows] == e]
        entry["spills"] = {"t": end[r_e].tolist(), "task_id": task_id[r_e].tolist(),
                           "stage_id": stage_id[r_e].tolist(),
                           "memory": mem_sp[r_e].tolist(), "disk": disk_sp[r_e].tolist()}
        out["executors"].append(entry)

    for rec in ex.to_dict("records"):
        e = str(rec["executor_id"])
        mine = t_ex == e
        row = {"executor_id": e, "host": "" if pd.isna(rec.get("host")) else str(rec.get("host"))}
        for key, *_ in TABLE[2:8]:
            row[key] = _value(rec.get(key))
        row["memory_spilled_bytes"] = float(mem_sp[mine].sum())
        row["disk_spilled_bytes"] = float(disk_sp[mine].sum())
        out["table"].append(row)
    out["first"] = next((e for e in ids if e in mem_ids), ids[0])
    return out
