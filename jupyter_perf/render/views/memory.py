"""The Memory tab's data: per executor, memory over the run, its limits, where tasks spilled,
and a table of per-executor peaks. Drawn by ``labextension/src/report/tabs/memory.ts``.

The samples are Spark's REST ``/allexecutors`` polled every 0.5 s: storage memory is the
*current* value; JVM heap, execution memory and RSS are Spark's *running peaks* (they never
go down), and are labelled so. Limits: the JVM heap limit (``-Xmx``) and the unified
storage + execution pool (``maxMemory``). Spills: every task attempt that spilled, at its
finish time. Values are bytes, times seconds since the window started.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...analysis import Analysis

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
