"""The Memory tab: per executor, memory over the run, its limits, and where tasks spilled.

The samples are Spark's REST ``/allexecutors`` polled every 0.5 s: storage memory is the
*current* value; JVM heap, execution memory and RSS are Spark's *running peaks* (they never
go down), and are labelled so. Limits: the JVM heap limit (``-Xmx``) and the unified
storage + execution pool (``maxMemory``). Spills: every task attempt that spilled, at its
finish time.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from bokeh.layouts import column
from bokeh.models import ColumnDataSource, CustomJS, HoverTool, Range1d, Select, TabPanel
from bokeh.plotting import figure

from ... import fmt
from ...analysis import Analysis
from ..widgets import div

SERIES = [
    ("peak_jvm_heap_bytes", "JVM heap (running peak)", "#4e79a7", "solid"),
    ("peak_on_heap_execution_bytes", "execution memory (running peak)", "#f28e2b", "solid"),
    ("used_on_heap_storage_bytes", "storage memory (current)", "#59a14f", "solid"),
    ("peak_process_rss_bytes", "process RSS (running peak)", "#b07aa1", "solid"),
]
LIMITS = [("jvm_heap_limit_bytes", "JVM heap limit (-Xmx)", "#4e79a7"),
          ("max_memory_bytes", "unified memory limit (storage + execution)", "#f28e2b")]

_SWITCH = """
rs.forEach((r, i) => { r.visible = owner[i] === select.value; });
"""


def _num(df: pd.DataFrame, col: str) -> np.ndarray:
    if col not in df.columns:
        return np.full(len(df), np.nan)
    return pd.to_numeric(df[col], errors="coerce").to_numpy(dtype="float64")


def memory_tab(a: Analysis) -> TabPanel:
    run, tl = a.run, a.timeline
    lo = float(tl.window[0]) if tl.has_times else float(run.start_ms)
    mem, ex = run.memory, run.executors       # a Run's tables have every model column
    ex_ids = [str(e) for e in ex["executor_id"]] if not ex.empty else []
    mem_ids = [str(e) for e in mem["executor_id"].dropna().unique()] if not mem.empty else []
    t = run.tasks
    spill_mask = (t["memory_spilled_bytes"].to_numpy() + t["disk_spilled_bytes"].to_numpy()) > 0
    ids = list(dict.fromkeys(ex_ids + mem_ids + [str(e) for e in t.loc[spill_mask, "executor_id"].unique()]))
    if not ids:
        return TabPanel(child=div("<b>No executor memory was collected for this run.</b>"), title="Memory")
    first = next((e for e in ids if e in mem_ids), ids[0])
    span = max(float(run.wall_ms), float(tl.window[1] - tl.window[0]) if tl.has_times else 0.0) / 1000.0

    ymax = 1.0
    series: dict[str, dict[str, np.ndarray]] = {}
    for e in ids:
        rows_e = mem[mem["executor_id"].astype(str) == e].sort_values("time_ms")
        series[e] = {"x": (_num(rows_e, "time_ms") - lo) / 1000.0}
        for col, *_ in SERIES:
            v = _num(rows_e, col) / 2**20
            series[e][col] = v
            if np.isfinite(v).any():
                ymax = max(ymax, float(np.nanmax(v)))
    lim_rows = []
    for _, rec in ex.iterrows():
        for col, label, color in LIMITS:
            v = pd.to_numeric(rec.get(col), errors="coerce")
            if pd.notna(v) and v > 0:
                lim_rows.append({"executor": str(rec["executor_id"]), "y": float(v) / 2**20,
                                 "label": label, "color": color, "value": fmt.nbytes(v)})
                ymax = max(ymax, float(v) / 2**20)
    x0, x1 = -0.01 * span, span * 1.01 + 1e-3
    p = figure(height=380, sizing_mode="stretch_width", x_range=Range1d(x0, x1),
               y_range=Range1d(0, ymax * 1.1), tools="xpan,xwheel_zoom,box_zoom,reset,save",
               x_axis_label="seconds since the window started", y_axis_label="MiB",
               name="jp-memory", toolbar_location="above")
    renderers = []        # (executor, renderer): only the selected executor's are visible
    for e in ids:
        src = ColumnDataSource(series[e])
        for col, label, color, dash in SERIES:
            if not np.isfinite(series[e][col]).any():
                continue
            r1 = p.line("x", col, source=src, color=color, line_width=2, line_dash=dash,
                        legend_label=label, visible=(e == first))
            r2 = p.scatter("x", col, source=src, color=color, size=4, legend_label=label,
                           visible=(e == first))
            p.add_tools(HoverTool(renderers=[r2], tooltips=[("series", label), ("t", "@x{0.00} s"),
                                                            ("MiB", f"@{col}{{0,0.0}}")]))
            renderers += [(e, r1), (e, r2)]
        mine = [r for r in lim_rows if r["executor"] == e]
        if mine:
            lsrc = ColumnDataSource({k: [r[k] for r in mine] for k in ("y", "label", "color", "value")}
                                    | {"x0": [x0] * len(mine), "x1": [x1] * len(mine)})
            r = p.segment(x0="x0", y0="y", x1="x1", y1="y", source=lsrc, line_color="color",
                          line_dash="dashed", line_width=2, legend_field="label", visible=(e == first))
            p.add_tools(HoverTool(renderers=[r], tooltips=[("limit", "@label"), ("value", "@value")]))
            renderers.append((e, r))

    # spills: every attempt that spilled, at its finish
    rows = np.flatnonzero(spill_mask)
    end = (tl.launch + tl.duration - lo) / 1000.0 if len(tl.duration) else np.zeros(0)
    spill_ex = t["executor_id"].to_numpy()[rows].astype(str)
    for e in ids:
        r_e = rows[spill_ex == e]
        if not len(r_e):
            continue
        ssrc = ColumnDataSource({
            "x": end[r_e], "y": np.full(len(r_e), ymax * 0.02),
            "task": [f"{a_} (stage {b})" for a_, b in zip(t["task_id"].to_numpy()[r_e],
                                                         t["stage_id"].to_numpy()[r_e])],
            "mem": [fmt.nbytes(v) for v in t["memory_spilled_bytes"].to_numpy()[r_e]],
            "disk": [fmt.nbytes(v) for v in t["disk_spilled_bytes"].to_numpy()[r_e]],
        })
        r = p.scatter("x", "y", source=ssrc, marker="triangle", size=10, color="#d62728",
                      legend_label="task spilled (at its finish)", visible=(e == first))
        p.add_tools(HoverTool(renderers=[r], tooltips=[("spill", "@task"), ("memory spilled", "@mem"),
                                                       ("disk spilled", "@disk")]))
        renderers.append((e, r))
    if p.legend:
        p.legend.location = "top_left"
        p.legend.label_text_font_size = "8pt"
    select = Select(title="Executor", value=first, options=ids, name="jp-memory-executor", width=240)
    select.js_on_change("value", CustomJS(args={"select": select, "rs": [r for _, r in renderers],
                                                "owner": [e for e, _ in renderers]}, code=_SWITCH))
    peaks = []
    for _, rec in ex.iterrows():
        peaks.append(f"<tr><td>{fmt.esc(rec['executor_id'])}</td><td>{fmt.esc(rec.get('host'))}</td>"
                     + "".join(f"<td>{fmt.nbytes(pd.to_numeric(rec.get(c), errors='coerce'))}</td>"
                               for c in ("peak_jvm_heap_bytes", "jvm_heap_limit_bytes",
                                         "peak_on_heap_execution_bytes", "peak_on_heap_storage_bytes",
                                         "max_memory_bytes", "peak_process_rss_bytes")) + "</tr>")
    n_spill = int(spill_mask.sum())
    head = ("<b>Memory per executor</b> <span class='muted'>Samples of Spark's /allexecutors every "
            "0.5 s while the window was open: storage memory is the current value; JVM heap, "
            "execution memory and RSS are Spark's running peaks since the executor started (they "
            f"never go down). Dashed: limits. {len(mem)} samples; {n_spill} task attempts "
            f"spilled (red triangles).</span>"
            "<table class='kv'><tr class='muted'><td>executor</td><td>host</td><td>peak JVM heap</td>"
            "<td>heap limit</td><td>peak execution</td><td>peak storage</td><td>unified limit</td>"
            "<td>peak RSS</td></tr>" + "".join(peaks) + "</table>")
    if mem.empty:
        head += "<div class='warn'>⚠ no memory samples were collected (REST API unavailable?)</div>"
    if not renderers:                      # nothing to plot: no samples, limits or spills
        return TabPanel(child=column(div(head), sizing_mode="stretch_width"), title="Memory")
    return TabPanel(child=column(div(head), select, p, sizing_mode="stretch_width"), title="Memory")
