"""The fallback report, for a Run the analysis could not handle: header, breakdown bar, stages.

The full report (``report.py``) needs an ``Analysis``; this one needs only the Run, so a
measured cell always shows something.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from bokeh.layouts import column
from bokeh.models import ColumnDataSource, DataTable, Div, TableColumn
from bokeh.plotting import figure

from ..model import Run
from . import fmt

# Components of executor run time, in stacking order: (key, label, colour, measured?)
COMPONENTS = [
    ("cpu_ms", "CPU", "#4e79a7", "measured"),
    ("gc_ms", "GC", "#e15759", "measured"),
    ("fetch_wait_ms", "shuffle fetch wait", "#f28e2b", "measured"),
    ("shuffle_write_time_ms", "shuffle write", "#edc948", "measured"),
    ("other_ms", "other (not measured by Spark)", "#bab0ac", "estimated"),
]


def time_split(tasks: pd.DataFrame) -> dict[str, float]:
    """Totals of executor run time split into measured parts and the rest (never negative)."""
    if tasks.empty:
        return {key: 0.0 for key, *_ in COMPONENTS} | {"run_ms": 0.0}
    run = tasks["run_ms"].to_numpy()
    measured = {k: tasks[k].to_numpy() for k, *_ in COMPONENTS if k != "other_ms"}
    other = np.clip(run - sum(measured.values()), 0, None)
    out = {k: float(v.sum()) for k, v in measured.items()}
    out["other_ms"] = float(other.sum())
    out["run_ms"] = float(run.sum())
    return out


def _header(run: Run) -> str:
    st = run.stage_table()
    split = time_split(run.tasks)
    total = sum(split[k] for k, *_ in COMPONENTS)
    ex = run.executors
    peak = pd.to_numeric(ex.get("peak_jvm_heap_bytes"), errors="coerce").max() if not ex.empty else None
    limit = pd.to_numeric(ex.get("jvm_heap_limit_bytes"), errors="coerce").max() if not ex.empty else None
    unified_peak = pd.to_numeric(ex.get("peak_on_heap_execution_bytes"), errors="coerce").max() \
        if not ex.empty else None
    unified_max = pd.to_numeric(ex.get("max_memory_bytes"), errors="coerce").max() if not ex.empty else None
    failed = int((run.tasks["status"] == "FAILED").sum())
    parts = " · ".join(
        f"<span style='color:{c}'>■</span> {fmt.esc(label)} {fmt.ms(split[k])} "
        f"({fmt.pct(split[k], total)}, {m})" for k, label, c, m in COMPONENTS)
    title = fmt.esc(run.label or run.first_line or run.run_id)
    status = "" if run.status == "ok" else f" — <b>{fmt.esc(run.status)}</b>"
    error = f"<div class='jp-err'>{fmt.esc(run.error)}</div>" if run.error else ""
    warnings = "".join(f"<li>{fmt.esc(w)}</li>" for w in run.warnings)
    warnings = f"<ul class='jp-warn'>{warnings}</ul>" if warnings else ""
    return f"""
<div class='jp-head' style='font-family:sans-serif;font-size:13px;line-height:1.5'>
 <div style='font-size:15px'><b>jupyter-perf</b> · {title}{status}</div>{error}
 <div><b>{fmt.ms(run.wall_ms)}</b> wall (measured) · {len(run.jobs)} jobs · {len(run.stages)} stages ·
  {len(run.tasks)} task attempts{f' ({failed} failed)' if failed else ''} · {run.slots} slots ·
  Spark {fmt.esc(run.spark_version)} on {fmt.esc(run.master)}</div>
 <div>Task time {fmt.ms(total)}: {parts}</div>
 <div>Read {fmt.nbytes(st['input_bytes'].sum() if not st.empty else 0)} ·
  written {fmt.nbytes(st['output_bytes'].sum() if not st.empty else 0)} ·
  shuffled {fmt.nbytes(st['shuffle_write_bytes'].sum() if not st.empty else 0)}
  (remote reads {fmt.nbytes(st['shuffle_remote_bytes'].sum() if not st.empty else 0)}) — measured</div>
 <div>Peak executor JVM heap {fmt.nbytes(peak)} of {fmt.nbytes(limit)} ·
  peak execution memory {fmt.nbytes(unified_peak)} of {fmt.nbytes(unified_max)} unified
  (measured by Spark's executor metrics)</div>
 {warnings}
 <div style='color:#666;font-size:11px'>run {fmt.esc(run.run_id)} · app {fmt.esc(run.app_id)} ·
  collected with {fmt.esc(run.collector or 'n/a')}</div>
</div>"""


def _breakdown_bar(run: Run):
    split = time_split(run.tasks)
    labels = [f"{label} ({m})" for _, label, _, m in COMPONENTS]
    data = {"y": ["task time"]} | {lab: [split[k] / 1000.0] for (k, *_), lab in zip(COMPONENTS, labels)}
    p = figure(y_range=["task time"], height=110, sizing_mode="stretch_width",
               toolbar_location=None, x_axis_label="seconds of task time")
    p.hbar_stack(labels, y="y", height=0.6, color=[c for _, _, c, _ in COMPONENTS],
                 source=ColumnDataSource(data), legend_label=labels)
    p.legend.orientation = "horizontal"
    p.legend.location = "top_left"
    p.legend.label_text_font_size = "9pt"
    p.add_layout(p.legend[0], "below")
    return p


STAGE_TABLE_COLUMNS = [
    ("stage_id", "stage"), ("attempt", "attempt"), ("status", "status"), ("name", "name"),
    ("task_attempts", "tasks"), ("executor_run_time_ms", "executorRunTime ms"),
    ("executor_cpu_time_ms", "executorCpuTime ms"), ("jvm_gc_time_ms", "jvmGcTime ms"),
    ("shuffle_fetch_wait_ms", "fetchWaitTime ms"), ("shuffle_write_time_ms", "shuffle writeTime ms"),
    ("input_bytes", "input bytes"), ("output_bytes", "output bytes"),
    ("shuffle_read_bytes", "shuffle read bytes"), ("shuffle_write_bytes", "shuffle write bytes"),
    ("failed_tasks", "failed"),
]


def _stage_table(run: Run) -> DataTable:
    st = run.stage_table()
    data: dict[str, Any] = {}
    for key, _ in STAGE_TABLE_COLUMNS:
        values = st[key] if key in st.columns else pd.Series([], dtype=object)
        if key.endswith("_ms"):
            values = values.astype(float).round(1)
        data[key] = values.tolist()
    cols = [TableColumn(field=k, title=t) for k, t in STAGE_TABLE_COLUMNS]
    return DataTable(source=ColumnDataSource(data), columns=cols, index_position=None,
                     height=min(400, 30 + 25 * max(1, len(st))), sizing_mode="stretch_width")


def basic_layout(run: Run, reason: str = ""):
    parts = [Div(text=_header(run), sizing_mode="stretch_width", disable_math=True)]
    if reason:
        parts.append(Div(text=f"<div style='color:#8a4b00;font-family:sans-serif'>⚠ {fmt.esc(reason)}</div>",
                         sizing_mode="stretch_width", disable_math=True))
    if not run.tasks.empty:
        parts.append(_breakdown_bar(run))
    if not run.stages.empty:
        parts.append(_stage_table(run))
    return column(*parts, sizing_mode="stretch_width")

