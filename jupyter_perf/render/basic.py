"""The fallback report, for a Run the analysis could not handle: header, breakdown bar, stages.

The full report (``report.py``) needs an ``Analysis``; this one needs only the Run, so a
measured cell always shows something.
"""
from __future__ import annotations

from typing import Any

import pandas as pd
from bokeh.layouts import column
from bokeh.models import ColumnDataSource, DataTable, Div, TableColumn
from bokeh.plotting import figure

from .. import fmt
from ..analysis.breakdown import task_breakdown, totals
from ..analysis.components import COMPONENTS
from ..model import Run


def time_split(run: Run) -> dict[str, dict]:
    """The analysis' own breakdown of task time (a pure function of the Run): component key
    -> {ms, share, kind, label, …}."""
    return totals(task_breakdown(run))


def _header(run: Run) -> str:
    st = run.stage_table()
    split = time_split(run)
    total = sum(v["ms"] for v in split.values())
    ex = run.executors
    peak = pd.to_numeric(ex.get("peak_jvm_heap_bytes"), errors="coerce").max() if not ex.empty else None
    limit = pd.to_numeric(ex.get("jvm_heap_limit_bytes"), errors="coerce").max() if not ex.empty else None
    unified_peak = pd.to_numeric(ex.get("peak_on_heap_execution_bytes"), errors="coerce").max() \
        if not ex.empty else None
    unified_max = pd.to_numeric(ex.get("max_memory_bytes"), errors="coerce").max() if not ex.empty else None
    failed = int((run.tasks["status"] == "FAILED").sum())
    parts = " · ".join(
        f"<span style='color:{c.color}'>■</span> {fmt.esc(c.label)} {fmt.ms(split[c.key]['ms'])} "
        f"({fmt.pct(split[c.key]['ms'], total)}, {c.kind})"
        for c in COMPONENTS if split[c.key]["ms"] > 0)
    title = fmt.esc(fmt.run_title(run))
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
    split = time_split(run)
    shown = [c for c in COMPONENTS if split[c.key]["ms"] > 0] or list(COMPONENTS[:1])
    labels = [f"{c.label} ({c.kind})" for c in shown]
    data = {"y": ["task time"]} | {lab: [split[c.key]["ms"] / 1000.0] for c, lab in zip(shown, labels)}
    p = figure(y_range=["task time"], height=110, sizing_mode="stretch_width",
               toolbar_location=None, x_axis_label="seconds of task time")
    p.hbar_stack(labels, y="y", height=0.6, color=[c.color for c in shown],
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

