"""The Stages tab: per stage attempt, task-time quantiles and the time breakdown."""
from __future__ import annotations

import numpy as np
import pandas as pd
from bokeh.layouts import column
from bokeh.models import BooleanFilter, CDSView, CheckboxGroup, CustomJS, HoverTool, TabPanel
from bokeh.plotting import figure

from ... import fmt
from ...analysis import Analysis
from ...analysis.components import COMPONENTS, KEYS
from ..widgets import div, stacked_hbars, stage_label, swatch, table, table_height

QUANTILES = [("min", 0.0), ("p25", 0.25), ("p50", 0.5), ("p75", 0.75), ("p95", 0.95), ("max", 1.0)]
MAX_BAR_STAGES = 40


def stage_rows(a: Analysis) -> pd.DataFrame:
    """``a.stage_table()`` plus task-duration quantiles and per-component ms per stage."""
    st = a.stage_table()
    tl = a.timeline
    run = a.run
    if len(tl.duration):
        keys = pd.DataFrame({"stage_id": run.tasks["stage_id"].to_numpy(),
                             "attempt": run.tasks["stage_attempt"].to_numpy(),
                             "d": tl.duration})
        g = keys.groupby(["stage_id", "attempt"])["d"]
        q = pd.DataFrame({name: g.quantile(p) for name, p in QUANTILES})
        comp = a.task_breakdown.copy()
        comp["stage_id"] = keys["stage_id"].to_numpy()
        comp["attempt"] = keys["attempt"].to_numpy()
        bd = comp.groupby(["stage_id", "attempt"]).sum()
        st = st.merge(q.reset_index(), on=["stage_id", "attempt"], how="left")
        st = st.merge(bd.add_prefix("bd_").reset_index(), on=["stage_id", "attempt"], how="left")
    for name, _ in QUANTILES:
        if name not in st.columns:
            st[name] = np.nan
    for k in KEYS:
        if f"bd_{k}" not in st.columns:
            st[f"bd_{k}"] = 0.0
    bd_cols = [f"bd_{k}" for k in KEYS]
    st[bd_cols] = st[bd_cols].fillna(0.0)
    st["task_time_ms"] = st[bd_cols].sum(axis=1)
    return st


SKIPPED = "SKIPPED"

_FOLD = """
const show = toggle.active.includes(0);
view.filter.booleans = skipped.map((s) => show || !s);
t.height = Math.min(cap, 34 + 26 * Math.max(1, show ? skipped.length : shown));
"""


def stages_tab(a: Analysis) -> tuple[TabPanel, object]:
    st = stage_rows(a)
    total = st["task_time_ms"].replace(0, np.nan)
    status = st["status"].fillna("").astype(str)
    skipped = (status == SKIPPED).tolist()
    data = {
        "stage_id": st["stage_id"].astype(int).tolist(),
        "attempt": st["attempt"].astype(int).tolist(),
        "status": status.tolist(),
        "operators": [a.stage_operators.get(int(s), "") for s in st["stage_id"]],
        "name": st["name"].fillna("").astype(str).tolist() if "name" in st else [""] * len(st),
        "task_attempts": st["task_attempts"].astype(int).tolist(),
        "failed_tasks": st["failed_tasks"].astype(int).tolist(),
        "task_time_ms": st["task_time_ms"].tolist(),
    }
    for name, _ in QUANTILES:
        data[name] = st[name].fillna(0.0).tolist()
    share_cols = [(c.key, c.short) for c in COMPONENTS if c.in_run]
    for k, _ in share_cols:
        data[f"share_{k}"] = (st[f"bd_{k}"] / total).fillna(0.0).tolist()
    overhead = [f"bd_{c.key}" for c in COMPONENTS if not c.in_run]
    data["share_overhead"] = (st[overhead].sum(axis=1) / total).fillna(0.0).tolist()
    for col in ("input_bytes", "shuffle_read_bytes", "shuffle_write_bytes", "output_bytes",
                "memory_spilled_bytes", "disk_spilled_bytes"):
        data[col] = st[col].astype(float).tolist() if col in st else [0.0] * len(st)
    cols = [("stage_id", "stage", "int")]
    if any(x > 0 for x in data["attempt"]):          # Spark retried a stage: say which attempt
        cols.append(("attempt", "attempt", "int"))
    cols += [("status", "status", "text"), ("operators", "operators (input → output)", "text"),
             ("name", "call site", "text"),
             ("task_attempts", "attempts that ran", "int"), ("failed_tasks", "failed", "int"),
             ("task_time_ms", "task time ms", "ms")]
    cols += [(name, f"{name} ms", "ms") for name, _ in QUANTILES]
    cols += [(f"share_{k}", label, "pct") for k, label in share_cols]
    cols += [("share_overhead", "overhead", "pct"), ("input_bytes", "input", "bytes"),
             ("shuffle_read_bytes", "shuffle read", "bytes"),
             ("shuffle_write_bytes", "shuffle write", "bytes"), ("output_bytes", "output", "bytes"),
             ("memory_spilled_bytes", "spill (memory)", "bytes"),
             ("disk_spilled_bytes", "spill (disk)", "bytes")]
    n_skipped = sum(skipped)
    shown = len(st) - n_skipped
    t, source = table(cols, data, height=table_height(shown), name="jp-stages")
    t.columns[[c.field for c in t.columns].index("operators")].width = 300
    parts = []
    if n_skipped:
        # SKIPPED stages (Spark reused their shuffle output; no task ran) are folded
        t.view = CDSView(filter=BooleanFilter([not x for x in skipped]))
        toggle = CheckboxGroup(labels=[f"show the {n_skipped} skipped stage{'s' if n_skipped > 1 else ''} "
                                       "(Spark reused their output: no task ran)"],
                               active=[], name="jp-stages-skipped")
        toggle.js_on_change("active", CustomJS(args=dict(toggle=toggle, view=t.view, t=t,
                                                         skipped=skipped, shown=shown, cap=420),
                                               code=_FOLD))
        parts.append(toggle)
    measured = ", ".join(c.short for c in COMPONENTS if c.in_run and not c.estimated)
    estimated = ", ".join(c.short for c in COMPONENTS if c.in_run and c.estimated)
    around = ", ".join(c.label for c in COMPONENTS if not c.in_run)
    folded = f" {n_skipped} skipped stages are folded below the table." if n_skipped else ""
    head = div(f"<b>Stages</b> <span class='muted'>{shown} stages ran.{folded} Task-time "
               "quantiles over the attempts that ran (ms, finish − launch); breakdown shares of "
               f"each stage's task time — {fmt.esc(measured)} measured by Spark, "
               f"{fmt.esc(estimated)} estimated; overhead = {fmt.esc(around)}; sums equal "
               "Spark's REST /stages. Click a header to sort; scroll sideways for more "
               "columns (the stage stays in view).</span>")
    return TabPanel(child=column(head, t, *parts, _stage_bars(st[~np.asarray(skipped, bool)], a),
                                 sizing_mode="stretch_width"), title="Stages"), source


def _stage_bars(st: pd.DataFrame, a: Analysis):
    top = st.sort_values("task_time_ms", ascending=False).head(MAX_BAR_STAGES)
    top = top.sort_values(["stage_id", "attempt"])
    labels = [stage_label(s, t) for s, t in zip(top["stage_id"], top["attempt"])]
    title = ("task time per stage" if len(st) <= MAX_BAR_STAGES else
             f"task time of the {MAX_BAR_STAGES} stages with the most (of {len(st)})")
    p = figure(y_range=list(reversed(labels)) or ["-"], height=max(120, 70 + 24 * len(labels)),
               sizing_mode="stretch_width", toolbar_location=None, title=title,
               x_axis_label="seconds of task time", name="jp-stage-bars")
    left = np.zeros(len(top))
    items = []
    rows: dict[str, list] = {k: [] for k in ("y", "left", "right", "color", "estimated", "comp",
                                              "kind", "s", "ops")}
    for comp in COMPONENTS:
        w = top[f"bd_{comp.key}"].to_numpy(float) / 1000.0
        if not (w > 0).any():
            continue
        n = len(labels)
        rows["y"] += labels
        rows["left"] += left.tolist()
        rows["right"] += (left + w).tolist()
        rows["color"] += [comp.color] * n
        rows["estimated"] += [comp.estimated] * n
        rows["comp"] += [comp.label] * n
        rows["kind"] += [comp.kind] * n
        rows["s"] += [fmt.ms(x * 1000.0) for x in w]
        rows["ops"] += [a.stage_operators.get(int(s), "") or "–" for s in top["stage_id"]]
        items.append(f"<span style='white-space:nowrap;margin-right:12px'>"
                     f"{swatch(comp.color, comp.estimated)}{fmt.esc(comp.label)}</span>")
        left = left + w
    stacked_hbars(p, rows)
    p.add_tools(HoverTool(tooltips=[("stage", "@y"), ("operators", "@ops"), ("component", "@comp"),
                                    ("", "@kind"), ("time", "@s")]))
    p.ygrid.visible = False
    return column(p, div(" ".join(items)), sizing_mode="stretch_width")
