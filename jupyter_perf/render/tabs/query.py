"""The Query tab: the SQL plan as a graph coloured by where the task time went, and the
operator table (``a.operators``: ``analysis/operators.py`` maps operators to stages and
splits their task time).

The graph runs top-down, the way data flows: scans at the top, the query's result at the
bottom. Nodes are the operators of the table (wrappers such as ``WholeStageCodegen``,
``InputAdapter`` and ``AdaptiveSparkPlan`` hold no work and are looked through). The layered
layout is grandalf's Sugiyama layout (layers, crossing reduction, coordinates), a
well-kept pure-Python library, used per execution and per connected component. The graph and
the table share one data source: a click on a box selects its row and the reverse; either
highlights the operator's stages on the Timeline, Stages and Stragglers tabs (``main.js``).
"""
from __future__ import annotations

import dataclasses
import math

from bokeh.layouts import column
from bokeh.models import ColorBar, ColumnDataSource, HoverTool, LinearColorMapper, Range1d, TabPanel, TapTool
from bokeh.palettes import YlOrRd9
from bokeh.plotting import figure

from ... import fmt
from ...analysis import Analysis
from ...analysis.components import BY_KEY
from ...analysis.operator_labels import operator_label as label_of
from ..widgets import div, table, table_height

BOX_H = 38            # px
CHAR_W = 6.4          # px per label character at the box font
LABEL_MAX = 40        # characters of a box label
NO_TIME = "#eeeeee"   # operators with no task time (driver-side, structural)
PALETTE = list(reversed(YlOrRd9))[1:]        # light to dark; the lightest is too pale


@dataclasses.dataclass
class QueryParts:
    source: ColumnDataSource | None       # one row per operator (graph boxes and table rows)
    info: object                          # the Div saying what is selected


def operator_label(name: str, description: str) -> str:
    """The box label: the operator's label (``analysis/operator_labels``: Spark's node name
    plus the table a scan reads, the keys it groups, joins or sorts by), cut to a box."""
    label = label_of(name, description)
    return label if len(label) <= LABEL_MAX else label[:LABEL_MAX - 1] + "…"


def plan_edges(a: Analysis, keys: set) -> list[tuple[tuple, tuple]]:
    """(producer, consumer) between the table's operators, through the nodes left out."""
    nodes = a.plan
    edges = set()
    for key in keys:
        node = nodes[key]
        todo, seen = list(node.parents), set()
        while todo:
            nid = todo.pop()
            k = (node.execution_id, nid)
            if k in seen or k not in nodes:
                continue
            seen.add(k)
            if k in keys:
                edges.add((key, k))
            else:
                todo += nodes[k].parents
    return sorted(edges)


def layout(keys: list, edges: list, widths: dict) -> dict:
    """Box centres (x right, y down, px) of a layered top-down drawing: producers above
    their consumers; executions, then connected components, side by side."""
    from grandalf.graphs import Edge, Graph, Vertex
    from grandalf.layouts import SugiyamaLayout

    class _View:                      # what grandalf reads and writes on each vertex
        def __init__(self, w: float, h: float) -> None:
            self.w, self.h, self.xy = w, h, (0.0, 0.0)

    pos: dict = {}
    left = 0.0
    for ex in sorted({k[0] for k in keys}):
        mine = [k for k in keys if k[0] == ex]
        vs = {k: Vertex(k) for k in mine}
        for k, v in vs.items():
            v.view = _View(widths[k], BOX_H)
        es = [Edge(vs[p], vs[c]) for p, c in edges if p in vs and c in vs]
        g = Graph(list(vs.values()), es)
        for comp in g.C:
            sl = SugiyamaLayout(comp)
            sl.xspace, sl.yspace = 18, 30
            sl.init_all()
            sl.draw(3)
            xs = [v.view.xy[0] for v in comp.sV]
            lo = min(x - v.view.w / 2 for x, v in zip(xs, comp.sV))
            hi = max(x + v.view.w / 2 for x, v in zip(xs, comp.sV))
            for v in comp.sV:
                pos[v.data] = (left + v.view.xy[0] - lo, v.view.xy[1])
            left += hi - lo + 40
    return pos


def _num(v) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f


def operator_rows(a: Analysis) -> dict[str, list]:
    ops = a.operators
    rows: dict[str, list] = {k: [] for k in (
        "execution_id", "node_id", "label", "full_label", "name", "description", "share",
        "task_time_ms",
        "kind", "rows_out", "input_bytes", "spill_bytes", "peak_memory_bytes", "skew_ratio",
        "skew", "python_udf_ms", "driver_ms", "stages", "stage_list", "time")}
    for rec in ops.to_dict("records"):
        stage_ids = [int(s) for s in (rec.get("stage_ids") or [])]
        t = _num(rec.get("task_time_ms"))
        rows["execution_id"].append(int(rec["execution_id"]))
        rows["node_id"].append(int(rec["node_id"]))
        rows["label"].append(operator_label(str(rec["name"]), str(rec.get("description") or "")))
        rows["full_label"].append(str(rec.get("label") or rec["name"]))
        rows["name"].append(str(rec["name"]))
        rows["description"].append(str(rec.get("description") or ""))
        rows["share"].append(_num(rec.get("share")) if t > 0 else 0.0)
        rows["task_time_ms"].append(t if t == t else 0.0)
        rows["kind"].append(str(rec.get("kind") or "") if t > 0 else "")
        for col in ("rows_out", "input_bytes", "spill_bytes", "peak_memory_bytes",
                    "python_udf_ms", "driver_ms"):
            rows[col].append(_num(rec.get(col)))
        rows["skew_ratio"].append(_num(rec.get("skew_ratio")))
        rows["skew"].append("skewed" if rec.get("skew") else "")
        rows["stages"].append(", ".join(str(s) for s in stage_ids))
        rows["stage_list"].append(stage_ids)
        rows["time"].append(f"{fmt.ms(t)} ({rec.get('kind')})" if t > 0 else
                            (f"driver {fmt.ms(_num(rec.get('driver_ms')))}"
                             if _num(rec.get("driver_ms")) > 0 else "no task time"))
    return rows


PYTHON = BY_KEY["python_udf"].label
TOOLTIPS = [("operator", "@full_label"), ("", "@description"), ("task time", "@time"),
            ("share", "@share{0.0%}"), ("rows out", "@rows_out{0,0}"),
            ("input", "@input_text"), ("spill", "@spill_text"), ("peak memory", "@peak_text"),
            ("skew", "@skew_text"), (PYTHON, "@python_text"), ("stages", "@stages")]


def query_tab(a: Analysis) -> tuple[TabPanel, QueryParts]:
    note = a.operators_note
    if a.operators.empty:
        info = div("<span class='muted'>No operator selected.</span>", name="jp-operator-selected")
        text = note or "No SQL plan was collected for this run."
        return (TabPanel(child=column(div(f"<b>Query</b> <span class='muted'>{fmt.esc(text)}</span>"),
                                      sizing_mode="stretch_width"), title="Query"),
                QueryParts(None, info))
    rows = operator_rows(a)
    keys = list(zip(rows["execution_id"], rows["node_id"]))
    widths = {k: max(90.0, CHAR_W * len(lab) + 16) for k, lab in zip(keys, rows["label"])}
    edges = plan_edges(a, set(keys))
    pos = layout(keys, edges, widths)
    rows["x"] = [pos[k][0] for k in keys]
    rows["y"] = [-pos[k][1] for k in keys]                  # Bokeh's y grows upwards
    rows["w"] = [widths[k] for k in keys]
    top = max(rows["share"]) or 1.0
    rows["color"] = [NO_TIME if t <= 0 else PALETTE[min(len(PALETTE) - 1, int(s / top * len(PALETTE)))]
                     for s, t in zip(rows["share"], rows["task_time_ms"])]
    dark = set(PALETTE[len(PALETTE) // 2:])
    rows["text_color"] = ["#ffffff" if c in dark else "#111111" for c in rows["color"]]
    rows["text"] = [f"{lab}\n{100 * s:.0f}% · {fmt.ms(t)}" if t > 0 else lab
                    for lab, s, t in zip(rows["label"], rows["share"], rows["task_time_ms"])]
    rows["input_text"] = [fmt.nbytes(v) if v == v else "–" for v in rows["input_bytes"]]
    rows["spill_text"] = [fmt.nbytes(v) if v == v else "–" for v in rows["spill_bytes"]]
    rows["peak_text"] = [fmt.nbytes(v) if v == v else "–" for v in rows["peak_memory_bytes"]]
    rows["python_text"] = [f"{fmt.ms(v)} (measured)" if v == v else "–" for v in rows["python_udf_ms"]]
    rows["skew_text"] = [f"max task {r:.1f}× its stage's median" + (" (skewed)" if s else "")
                         if r == r else "–" for r, s in zip(rows["skew_ratio"], rows["skew"])]
    rows["description"] = [d[:400] + ("…" if len(d) > 400 else "") for d in rows["description"]]
    source = ColumnDataSource(rows, name="jp-operators-source")
    fig = _graph(source, rows, edges, keys, pos, top)
    t, _ = table([("full_label", "operator", "wide"), ("share", "share of task time", "pct"),
                  ("task_time_ms", "task time ms", "ms"), ("kind", "measured / estimated", "text"),
                  ("rows_out", "rows out", "int"), ("input_bytes", "input", "bytes"),
                  ("spill_bytes", "spill", "bytes"), ("peak_memory_bytes", "peak memory", "bytes"),
                  ("skew_ratio", "max / median task", "float"), ("python_udf_ms", f"{PYTHON} ms", "ms"),
                  ("driver_ms", "driver ms", "ms"), ("stages", "stages", "text"),
                  ("execution_id", "SQL execution", "int"), ("description", "description", "text")],
                 rows, height=table_height(len(keys), cap=360), name="jp-operators",
                 source=source, selectable=True, sortable=True)
    info = div("<span class='muted'>Click an operator (a box or a row) to highlight its stages on "
               "the Timeline, Stages and Stragglers tabs.</span>", name="jp-operator-selected")
    n_exec = len(set(rows["execution_id"]))
    head = div(f"<b>Query</b> <span class='muted'>{len(keys)} operators in {n_exec} SQL "
               f"execution{'s' if n_exec > 1 else ''}, data flowing top-down. Colour: share of "
               "the run's task time (measured where Spark splits it, else estimated; "
               "docs/operators.md). Grey: no task time (driver-side or structural). "
               f"{fmt.esc(note)}</span>")
    return (TabPanel(child=column(head, info, fig, t, sizing_mode="stretch_width"), title="Query"),
            QueryParts(source, info))


def _graph(source, rows, edges, keys, pos, top):
    xs = [x for x in rows["x"]]
    ys = [y for y in rows["y"]]
    pad = 40.0
    x0 = min(x - w / 2 for x, w in zip(xs, rows["w"])) - pad
    x1 = max(x + w / 2 for x, w in zip(xs, rows["w"])) + pad
    y0, y1 = min(ys) - BOX_H - pad, max(ys) + BOX_H + pad
    layers = len(set(round(y) for y in ys))
    height = int(min(900, max(260, 90 + 62 * layers)))
    p = figure(name="jp-plan", height=height, sizing_mode="stretch_width",
               x_range=Range1d(x0, x1), y_range=Range1d(y0, y1), match_aspect=False,
               tools="pan,wheel_zoom,box_zoom,reset,save", active_scroll="wheel_zoom",
               toolbar_location="above", output_backend="canvas")
    p.axis.visible = False
    p.grid.visible = False
    index = {k: i for i, k in enumerate(keys)}
    ex0, ey0, ex1, ey1 = [], [], [], []
    for prod, cons in edges:
        i, j = index[prod], index[cons]
        ex0.append(xs[i])
        ey0.append(ys[i] - BOX_H / 2)
        ex1.append(xs[j])
        ey1.append(ys[j] + BOX_H / 2)
    if ex0:
        p.segment(x0=ex0, y0=ey0, x1=ex1, y1=ey1, line_color="#8899aa", line_width=1.2)
        p.scatter(x=ex1, y=[y + 3 for y in ey1], marker="triangle", angle=math.pi,
                  size=6, color="#8899aa")
    boxes = p.rect(x="x", y="y", width="w", height=BOX_H, source=source, fill_color="color",
                   line_color="#555555", line_width=1,
                   selection_line_color="#111111", selection_line_width=3,
                   nonselection_fill_alpha=0.35, nonselection_line_alpha=0.5)
    p.text(x="x", y="y", text="text", source=source, text_align="center",
           text_baseline="middle", text_font_size="8pt", text_color="text_color",
           text_line_height=1.1, nonselection_text_alpha=0.8)
    p.add_tools(HoverTool(renderers=[boxes], tooltips=TOOLTIPS))
    p.add_tools(TapTool(renderers=[boxes]))
    mapper = LinearColorMapper(palette=PALETTE, low=0.0, high=float(top))
    p.add_layout(ColorBar(color_mapper=mapper, title="share of task time", width=10,
                          formatter=_pct_formatter()), "right")
    return p


def _pct_formatter():
    from bokeh.models import NumeralTickFormatter
    return NumeralTickFormatter(format="0%")


__all__ = ["QueryParts", "operator_label", "operator_rows", "plan_edges", "query_tab"]
