"""The Query tab's data: the SQL plan as a top-down graph coloured by where the task time went,
and the operator table (``a.operators``: ``analysis/operators.py`` maps operators to stages and
splits their task time). Drawn by ``labextension/src/report/tabs/query.ts``.

The graph runs top-down, the way data flows: scans at the top, the query's result at the
bottom. Nodes are the operators of the table (wrappers such as ``WholeStageCodegen``,
``InputAdapter`` and ``AdaptiveSparkPlan`` hold no work and are looked through). The layered
layout is grandalf's Sugiyama layout (layers, crossing reduction, coordinates), a well-kept
pure-Python library, used per execution and per connected component; it stays here, so the
browser gets box centres and sizes in px (x right, y down).

``data(a, ctx)``::

    {"note": str,                      # what the table cannot say ("" when nothing)
     "operators": [{...}, ...],        # one row per operator, a.operators' order (below)
     "edges": [[producer, consumer]],  # row indices
     "executions": [{"execution_id", "description", "operators"}],
     "palette", "no_time", "top_share", "box_h", "python_label"}

Each operator row carries ``a.operators``' numbers (``None`` where Spark gave none), its
``key`` ("execution:node"), ``stage_list`` (stage ids) and ``stage_codes`` (positions in
``tasks_meta.stage_ids`` of those stages, every attempt), the box (``x``, ``y``, ``w``,
``label``), ``color`` / ``text_color`` by share of the run's task time, and ``kind``
(measured | estimated, "" without task time).
"""
from __future__ import annotations

import math

from ...analysis import Analysis
from ...analysis.components import BY_KEY
from ...analysis.operator_labels import operator_label as label_of

BOX_H = 38            # px
CHAR_W = 6.4          # px per label character at the box font
LABEL_MAX = 40        # characters of a box label
DESCRIPTION_MAX = 400  # characters of a description sent (the rest is cut, "…")
NO_TIME = "#eeeeee"   # operators with no task time (driver-side, structural)
# bokeh.palettes.YlOrRd9 reversed (light to dark) without its lightest, too pale, colour;
# written out so that building the data imports no Bokeh (tests pin it to Bokeh's).
PALETTE = ["#ffeda0", "#fed976", "#feb24c", "#fd8d3c", "#fc4e2a", "#e31a1c", "#bd0026", "#800026"]
DARK = set(PALETTE[len(PALETTE) // 2:])   # white text on these


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


def _num(v) -> float | None:
    """A finite float, or None (Spark gave no value)."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def operator_rows(a: Analysis, stage_ids: list[int]) -> list[dict]:
    """One row per operator of ``a.operators`` (its order), as the table and the graph show
    it; ``stage_ids``: ``tasks_meta.stage_ids`` (stage code -> stage id)."""
    codes_of: dict[int, list[int]] = {}
    for code, sid in enumerate(stage_ids):
        codes_of.setdefault(int(sid), []).append(code)
    rows = []
    for rec in a.operators.to_dict("records"):
        stage_list = [int(s) for s in (rec.get("stage_ids") or [])]
        t = _num(rec.get("task_time_ms")) or 0.0
        description = str(rec.get("description") or "")
        if len(description) > DESCRIPTION_MAX:
            description = description[:DESCRIPTION_MAX] + "…"
        ex, node = int(rec["execution_id"]), int(rec["node_id"])
        rows.append({
            "key": f"{ex}:{node}", "execution_id": ex, "node_id": node,
            "label": operator_label(str(rec["name"]), str(rec.get("description") or "")),
            "full_label": str(rec.get("label") or rec["name"]),
            "name": str(rec["name"]), "description": description,
            "share": (_num(rec.get("share")) or 0.0) if t > 0 else 0.0,
            "task_time_ms": t,
            "kind": str(rec.get("kind") or "") if t > 0 else "",
            **{col: _num(rec.get(col)) for col in (
                "rows_out", "input_bytes", "spill_bytes", "peak_memory_bytes", "skew_ratio",
                "python_udf_ms", "driver_ms")},
            "skew": bool(rec.get("skew")),
            "stages": ", ".join(str(s) for s in stage_list),
            "stage_list": stage_list,
            "stage_codes": sorted(c for s in set(stage_list) for c in codes_of.get(s, [])),
        })
    return rows


def executions(a: Analysis, rows: list[dict]) -> list[dict]:
    """The SQL executions the operators belong to, in id order, with Spark's description."""
    sql = a.run.sql
    desc = {int(e): str(d or "") for e, d in zip(sql["execution_id"], sql["description"])} \
        if len(sql) else {}
    count: dict[int, int] = {}
    for r in rows:
        count[r["execution_id"]] = count.get(r["execution_id"], 0) + 1
    return [{"execution_id": ex, "operators": n,
             "description": desc.get(ex, "")[:DESCRIPTION_MAX]}
            for ex, n in sorted(count.items())]


def data(a: Analysis, ctx) -> dict:
    out = {"note": a.operators_note or "", "operators": [], "edges": [], "executions": [],
           "palette": PALETTE, "no_time": NO_TIME, "top_share": 0.0, "box_h": BOX_H,
           "python_label": BY_KEY["python_udf"].label}
    if a.operators.empty:
        if not out["note"]:
            out["note"] = "No SQL plan was collected for this run."
        return out
    rows = operator_rows(a, list(ctx.meta.get("stage_ids") or []))
    keys = [(r["execution_id"], r["node_id"]) for r in rows]
    widths = {k: max(90.0, CHAR_W * len(r["label"]) + 16) for k, r in zip(keys, rows)}
    edges = plan_edges(a, set(keys))
    pos = layout(keys, edges, widths)
    top = max(r["share"] for r in rows) or 1.0
    for k, r in zip(keys, rows):
        r["x"], r["y"], r["w"] = pos[k][0], pos[k][1], widths[k]
        r["color"] = (NO_TIME if r["task_time_ms"] <= 0 else
                      PALETTE[min(len(PALETTE) - 1, int(r["share"] / top * len(PALETTE)))])
        r["text_color"] = "#ffffff" if r["color"] in DARK else "#111111"
    index = {k: i for i, k in enumerate(keys)}
    out.update(operators=rows, edges=[[index[p], index[c]] for p, c in edges],
               executions=executions(a, rows), top_share=top)
    return out
