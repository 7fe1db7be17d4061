"""The Timeline tab: one lane per executor slot, one bar per task attempt (or per aggregate).

The figure starts empty: ``report.js`` fills it from the per-task arrays (:mod:`..payload`)
whenever the visible range changes — every task attempt when at most ``DETAIL_LIMIT`` are
in view, else one bar per lane and time bin, whose hover says how many attempts it stands
for. Static parts (stage track, stage boundaries, failed/speculative markers) are drawn
here.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from bokeh.layouts import column
from bokeh.models import ColumnDataSource, FixedTicker, HoverTool, Range1d, Segment, TabPanel
from bokeh.plotting import figure

from ... import fmt
from ...analysis import Analysis
from ..lanes import Lanes
from ..widgets import div, present_components, stage_label, timeline_legend

DETAIL_LIMIT = 2000
BINS = 160
MAX_BOUNDARY_STAGES = 400
MAX_STAGE_ROWS = 6

TASK_TOOLTIPS = [("task", "@task"), ("stage", "@stage"), ("executor", "@exec"), ("time", "@time"),
                 ("breakdown", "@parts"), ("data", "@read"), ("notes", "@notes")]
AGG_TOOLTIPS = [("one bar for", "@count{0,0} task attempts (zoom in to see each)"),
                ("span", "@left{0.000} – @right{0.000} s"), ("task time", "@busy{0,0.000} s"),
                ("mostly", "@mostly (@share{0%})"), ("stages", "@smin – @smax"),
                ("failed/killed", "@failed")]


@dataclasses.dataclass
class TimelineParts:
    fig: object
    agg: ColumnDataSource
    seg: ColumnDataSource
    box: ColumnDataSource
    highlight: ColumnDataSource
    status: object
    track: ColumnDataSource | None = None      # the stage track (main Timeline only)


def _empty_sources():
    agg = ColumnDataSource({k: [] for k in ("left", "right", "bottom", "top", "color", "alpha", "count",
                                            "busy", "mostly", "share", "smin", "smax", "failed")})
    seg = ColumnDataSource({k: [] for k in ("left", "right", "bottom", "top", "color", "alpha")})
    box = ColumnDataSource({k: [] for k in ("left", "right", "bottom", "top", "line", "dash", "row",
                                            "task", "stage", "exec", "time", "parts", "read",
                                            "notes")})
    hl = ColumnDataSource({k: [] for k in ("left", "right", "bottom", "top")})
    return agg, seg, box, hl


def lane_figure(name: str, n_lanes: int, lane_labels: list[str], span_s: float,
                stage_rows: int = 0, height: int | None = None) -> TimelineParts:
    """An empty lane figure with the renderers ``report.js`` fills."""
    pad = max(span_s * 0.01, 0.001)
    height = height or int(min(620, max(220, 60 + 16 * (n_lanes + stage_rows))))
    x_range = Range1d(-pad, span_s + pad, bounds=(-pad * 5, span_s + pad * 5) if span_s > 0 else None)
    y_range = Range1d(n_lanes + 0.3, -stage_rows - 0.3)
    p = figure(name=name, height=height, sizing_mode="stretch_width", x_range=x_range,
               y_range=y_range, tools="xpan,xwheel_zoom,xbox_zoom,reset,save",
               active_scroll="xwheel_zoom", active_drag="xpan",
               x_axis_label="seconds since the window started", toolbar_location="above",
               output_backend="canvas")
    p.grid.visible = False
    p.yaxis.ticker = FixedTicker(ticks=_ticks(n_lanes, stage_rows))
    p.yaxis.major_label_overrides = _tick_labels(lane_labels, stage_rows)
    p.yaxis.major_label_text_font_size = "8pt"
    agg, seg, box, hl = _empty_sources()
    r_agg = p.quad(left="left", right="right", bottom="bottom", top="top", source=agg,
                   fill_color="color", line_color=None, fill_alpha="alpha")
    # (no hatch patterns here: canvas hatching of thousands of bars takes seconds per frame)
    p.quad(left="left", right="right", bottom="bottom", top="top", source=seg,
           fill_color="color", line_color=None, fill_alpha="alpha")
    r_box = p.quad(left="left", right="right", bottom="bottom", top="top", source=box,
                   fill_alpha=0.0, line_color="line", line_dash="dash", line_width=1)
    p.quad(left="left", right="right", bottom="bottom", top="top", source=hl, fill_color="#ffd400",
           fill_alpha=0.25, line_color="#111111", line_width=2.5, name=name + "-highlight")
    p.add_tools(HoverTool(renderers=[r_agg], tooltips=AGG_TOOLTIPS))
    p.add_tools(HoverTool(renderers=[r_box], tooltips=TASK_TOOLTIPS))
    status = div("<span class='muted'>drawing…</span>", name=name + "-status")
    return TimelineParts(p, agg, seg, box, hl, status)


def _ticks(n_lanes: int, stage_rows: int) -> list[float]:
    step = 1 if n_lanes <= 40 else int(np.ceil(n_lanes / 40))
    ticks = [k + 0.5 for k in range(0, n_lanes, step)]
    if stage_rows:
        ticks.append(-stage_rows / 2)
    return ticks


def _tick_labels(labels: list[str], stage_rows: int) -> dict:
    out = {k + 0.5: lab for k, lab in enumerate(labels)}
    if stage_rows:
        out[-stage_rows / 2] = "stages"
    return out


def stage_intervals(a: Analysis) -> pd.DataFrame:
    """Per stage attempt: first launch, last finish (s from the window start), tasks, name."""
    tl = a.timeline
    if not len(tl.duration):
        return pd.DataFrame(columns=["stage_id", "attempt", "start", "end", "tasks", "name"])
    lo = float(tl.window[0]) if tl.has_times else 0.0
    frame = pd.DataFrame({"code": tl.stage_code, "s": tl.launch - lo, "e": tl.launch - lo + tl.duration})
    g = frame.groupby("code")
    out = pd.DataFrame({"start": g["s"].min() / 1000.0, "end": g["e"].max() / 1000.0,
                        "tasks": g.size()})
    out["stage_id"] = tl.stage_keys[out.index.to_numpy(), 0]
    out["attempt"] = tl.stage_keys[out.index.to_numpy(), 1]
    names = {}
    st = a.run.stages
    if not st.empty:
        for sid, att, name in zip(st["stage_id"], st["attempt"], st["name"]):
            try:
                names[(int(sid), int(att))] = "" if name is None else str(name)
            except (TypeError, ValueError):
                continue
    out["name"] = [names.get((int(s), int(t)), "") for s, t in zip(out["stage_id"], out["attempt"])]
    return out.sort_values("start").reset_index(drop=True)


def _pack_rows(starts: np.ndarray, ends: np.ndarray, max_rows: int) -> np.ndarray:
    row_end: list[float] = []
    rows = np.zeros(len(starts), dtype="int64")
    for i, (s, e) in enumerate(zip(starts.tolist(), ends.tolist())):
        for r, re_ in enumerate(row_end):
            if re_ <= s:
                row_end[r] = e
                rows[i] = r
                break
        else:
            if len(row_end) < max_rows:
                row_end.append(e)
                rows[i] = len(row_end) - 1
            else:                        # too many at once: share the least-loaded row
                r = int(np.argmin(row_end))
                row_end[r] = max(row_end[r], e)
                rows[i] = r
    return rows


def timeline_tab(a: Analysis, lanes: Lanes, flags: np.ndarray) -> tuple[TabPanel, TimelineParts]:
    tl = a.timeline
    span_s = float(a.wall_ms if not tl.has_times else tl.window[1] - tl.window[0]) / 1000.0
    if tl.has_times and len(tl.duration):
        span_s = max(span_s, float((tl.launch + tl.duration).max() - tl.window[0]) / 1000.0)
    stages = stage_intervals(a)
    rows = _pack_rows(stages["start"].to_numpy(float), stages["end"].to_numpy(float), MAX_STAGE_ROWS)
    stage_rows = int(rows.max() + 1) if len(rows) else 0
    parts = lane_figure("jp-timeline", lanes.count, lanes.labels, span_s, stage_rows)
    p = parts.fig
    if len(stages):
        ops = a.stage_operators
        src = ColumnDataSource({
            "left": stages["start"], "right": stages["end"],
            "bottom": -rows - 1 + 0.15, "top": -rows - 0.15,
            "stage_id": stages["stage_id"].astype(int).tolist(),
            "label": [stage_label(s, t) for s, t in zip(stages["stage_id"], stages["attempt"])],
            "ops": [ops.get(int(s), "") or "– (no SQL operator)" for s in stages["stage_id"]],
            "name": stages["name"].tolist(), "tasks": stages["tasks"].astype(int).tolist(),
            "span": [f"{s:.3f}–{e:.3f} s" for s, e in zip(stages["start"], stages["end"])],
            "alpha": [1.0] * len(stages),
        }, name="jp-stage-track")
        r = p.quad(left="left", right="right", bottom="bottom", top="top", source=src,
                   fill_color="#cfd8e3", line_color="#6b7b8c", fill_alpha="alpha",
                   line_alpha="alpha")
        p.add_tools(HoverTool(renderers=[r], tooltips=[("stage", "@label"), ("operators", "@ops"),
                                                       ("call site", "@name"),
                                                       ("task attempts", "@tasks"), ("span", "@span")]))
        parts.track = src
        b = stages if len(stages) <= MAX_BOUNDARY_STAGES else stages.iloc[:0]
        xs = np.concatenate([b["start"].to_numpy(float), b["end"].to_numpy(float)])
        bsrc = ColumnDataSource({"x": xs, "y0": np.full(len(xs), -stage_rows - 0.2),
                                 "y1": np.full(len(xs), lanes.count + 0.2)})
        p.add_glyph(bsrc, Segment(x0="x", y0="y0", x1="x", y1="y1", line_color="#8899aa",
                                  line_alpha=0.45, line_dash="dotted"))
    _markers(p, a, lanes, flags)
    n = len(tl.duration)
    note = (f"{n:,} task attempts on {lanes.count} lanes (one per executor core, from the real "
            f"schedule). Zoomed out, a bar stands for every attempt of its lane and time bin — "
            f"its hover says how many; zoom in (wheel, or drag a box) to see single attempts "
            f"(at most {DETAIL_LIMIT:,} in view). Every attempt is drawn, failed ones included.")
    if len(stages) > MAX_BOUNDARY_STAGES:
        note += f" {len(stages):,} stages: boundary lines omitted, the stage track shows them."
    note += lag_note(lanes)
    head = div(timeline_legend(present_components(a)) + f"<div class='muted'>{note}</div>")
    layout = column(head, parts.status, p, sizing_mode="stretch_width")
    return TabPanel(child=layout, title="Timeline"), parts


def lag_note(lanes: Lanes) -> str:
    """Why some bars overlap on one core: Spark's finish stamps lag the freed core."""
    if not lanes.lagged:
        return ""
    n = lanes.lagged
    return (f" {n:,} attempt{'s' if n > 1 else ''} launched up to {fmt.ms(lanes.max_lag_ms)} "
            "before the previous attempt on the same core had its finish stamped: Spark stamps a "
            "finish when the driver has fetched the result, after the executor already started "
            "the next task. Lanes never exceed the executors' cores, so those bars overlap by "
            "that lag.")


def _markers(p, a: Analysis, lanes: Lanes, flags: np.ndarray) -> None:
    """Failed/killed (✕) and speculative (◆) attempts, always visible at any zoom."""
    from ..payload import FLAG_FAILED, FLAG_KILLED, FLAG_SPECULATIVE
    tl = a.timeline
    if not len(flags):
        return
    lo = float(tl.window[0]) if tl.has_times else 0.0
    end = (tl.launch + tl.duration - lo) / 1000.0
    for mask, marker, color, label in (
            ((flags & (FLAG_FAILED | FLAG_KILLED)) > 0, "x", "#d62728", "failed/killed"),
            ((flags & FLAG_SPECULATIVE) > 0, "diamond", "#9467bd", "speculative")):
        rows = np.flatnonzero(mask)
        if not len(rows):
            continue
        t = a.run.tasks
        src = ColumnDataSource({"x": end[rows], "y": lanes.lane[rows] + 0.5,
                                "task": [f"{tid} (stage {s}, index {i}, attempt {at})" for tid, s, i, at in
                                         zip(t["task_id"].to_numpy()[rows], t["stage_id"].to_numpy()[rows],
                                             t["index"].to_numpy()[rows], t["attempt"].to_numpy()[rows])],
                                "status": t["status"].to_numpy()[rows].astype(str).tolist(),
                                "error": [str(e)[:300] for e in t["error"].to_numpy()[rows]]})
        r = p.scatter("x", "y", source=src, marker=marker, size=9, color=color, line_width=2)
        p.add_tools(HoverTool(renderers=[r], tooltips=[(label, "@task"), ("status", "@status"),
                                                       ("error", "@error")]))
