"""The Profile tab's data (issue P): the window's CPU stack samples of the task threads as an
icicle (``analysis/profile.flame_tree``: flat rows, root first), the hot functions
(``a.hot_functions``), the operators the samples were attributed to, and the collapsed stacks
for download (flamegraph.pl / speedscope). ``None`` — no tab — when the run has no profile.
Drawn by ``labextension/src/report/tabs/profile.ts``. Every number here is *sampled*, but
Spark's own CPU time (``spark_cpu_ms``, *measured*).
"""
from __future__ import annotations

from typing import Any

from ...analysis import Analysis
from ...analysis.profile import collapsed_text, pretty

MAX_HOT = 200
MAX_FLAME = 4000
MIN_SHARE = 0.002        # frames narrower than this share of the samples are left out
MAX_COLLAPSED_CHARS = 4_000_000
ROOT = "all task threads"


Group = tuple[str, str, tuple[int, ...]]


def _key(op: str, executor: str, stages) -> Group:
    return (op, executor, tuple(sorted(int(s) for s in stages)))


def _groups(stacks) -> tuple[dict[Group, int], dict[str, Any]]:
    """The samples' groups — (operator, executor, stages: the task's where the sample
    named it, else the operator's) — that the tab's stage, operator and executor filters
    choose among."""
    index: dict[Group, int] = {}
    for _, _, op, executor, stages in stacks:
        index.setdefault(_key(op, executor, stages), len(index))
    keys = list(index)
    return index, {"operator": [k[0] for k in keys], "executor": [k[1] for k in keys],
                   "stages": [list(k[2]) for k in keys]}


def flame(stacks, index: dict[Group, int], min_share: float = MIN_SHARE,
          max_nodes: int = MAX_FLAME) -> dict[str, Any]:
    """The icicle of the task stacks, root first, as flat columns: ``parent`` (-1 for the
    root), ``depth``, ``start`` and ``n`` (samples; start from the left) and ``own`` (self
    samples), ``name``, ``operator`` (the one with most samples), and per node the samples of
    each group (``cells``: node, group, n, own) so the browser can draw any filter of it.
    A frame is kept where, in some group, it has at least ``min_share`` of that group's
    samples (so a filtered view keeps its resolution); the ``max_nodes`` widest so."""
    group_total: dict[int, int] = {}
    root: dict[str, Any] = {"kids": {}, "g": {}}
    for frames, count, op, executor, stages in stacks:
        g = index[_key(op, executor, stages)]
        group_total[g] = group_total.get(g, 0) + count
        path = [root]
        node = root
        for name in (pretty(f) for f in frames[1:]):
            node = node["kids"].setdefault(name, {"kids": {}, "g": {}})
            path.append(node)
        for node in path:
            cell = node["g"].setdefault(g, [0, 0])
            cell[0] += count
        path[-1]["g"][g][1] += count
    if not group_total:
        return {k: [] for k in ("parent", "depth", "start", "n", "own", "name", "operator",
                                "cells")}

    def score(node: dict) -> float:
        return max(c[0] / group_total[g] for g, c in node["g"].items())

    # depth-first, widest child first (the icicle's order), with each node's score
    order: list[tuple[int, str, dict, int, float]] = []   # parent, name, node, depth, score

    def walk(name: str, node: dict, parent: int, depth: int) -> None:
        me = len(order)
        order.append((parent, name, node, depth, score(node)))
        kids = sorted(node["kids"].items(),
                      key=lambda kv: (-sum(c[0] for c in kv[1]["g"].values()), kv[0]))
        for kid_name, kid in kids:
            if score(kid) >= min_share:
                walk(kid_name, kid, me, depth + 1)

    walk(ROOT, root, -1, 0)
    if len(order) > max_nodes:      # a child's score is at most its parent's: parents stay
        keep = sorted(range(len(order)), key=lambda i: (-order[i][4], order[i][3], i))
        kept = set(keep[:max_nodes])
        order_idx = [i for i in range(len(order)) if i in kept and
                     (order[i][0] == -1 or order[i][0] in kept)]
    else:
        order_idx = list(range(len(order)))
    new = {old: i for i, old in enumerate(order_idx)}
    names = {g: k[0] for k, g in index.items()}
    out: dict[str, list] = {k: [] for k in ("parent", "depth", "start", "n", "own", "name",
                                            "operator")}
    cells: dict[str, list] = {"node": [], "group": [], "n": [], "own": []}
    next_start: dict[int, int] = {}
    for i, old in enumerate(order_idx):
        parent, name, node, depth, _ = order[old]
        p = new.get(parent, -1)
        start = 0 if p < 0 else next_start[p]
        n = sum(c[0] for c in node["g"].values())
        if p >= 0:
            next_start[p] = start + n
        next_start[i] = start
        ops: dict[str, int] = {}
        for g, (gn, gown) in sorted(node["g"].items()):
            ops[names[g]] = ops.get(names[g], 0) + gn
            cells["node"].append(i)
            cells["group"].append(g)
            cells["n"].append(gn)
            cells["own"].append(gown)
        out["parent"].append(p)
        out["depth"].append(depth)
        out["start"].append(start)
        out["n"].append(n)
        out["own"].append(sum(c[1] for c in node["g"].values()))
        out["name"].append(str(name))
        out["operator"].append(str(max(ops, key=lambda k: (ops[k], k))) if i else "")
    out["cells"] = cells
    return out


def hot_cells(stacks, index: dict[Group, int],
              max_per_group: int = MAX_HOT) -> dict[str, list]:
    """Each function's self and total samples per group (``function``: the function's name;
    ``group``, ``self``, ``total``) for the functions among the ``max_per_group`` hottest (by
    self samples) of some group, in every group they were sampled in: a filtered
    hot-functions table is exact for the functions it lists."""
    own: dict[tuple[str, int], int] = {}
    total: dict[tuple[str, int], int] = {}
    for frames, count, op, executor, stages in stacks:
        g = index[_key(op, executor, stages)]
        body = [pretty(f) for f in frames[1:]] or ["(no frames)"]
        own[(body[-1], g)] = own.get((body[-1], g), 0) + count
        for f in set(body):
            total[(f, g)] = total.get((f, g), 0) + count
    per_group: dict[int, list[tuple[int, str]]] = {}
    for (fn, g), n in own.items():
        per_group.setdefault(g, []).append((n, fn))
    hottest = {fn for rows in per_group.values()
               for _, fn in sorted(rows, key=lambda r: (-r[0], r[1]))[:max_per_group]}
    keep = [k for k in total if k[0] in hottest]
    out: dict[str, list] = {"function": [], "group": [], "self": [], "total": []}
    for fn, g in sorted(keep, key=lambda k: (k[1], -own.get(k, 0), k[0])):
        out["function"].append(str(fn))
        out["group"].append(g)
        out["self"].append(own.get((fn, g), 0))
        out["total"].append(total[(fn, g)])
    return out


def python_part(prof) -> dict:
    """The Python workers' part of the profile summary (``collect/pyprofiler.py``): method,
    what one sample is, samples, their CPU (sampled) and why there are none; {} without."""
    part = prof.summary().get("python") if prof is not None else None
    if not isinstance(part, dict):
        return {}
    keys = ("method", "sample", "samples", "sampled_cpu_ms", "interval_ms", "note")
    return {k: part.get(k) for k in keys}


def data(a: Analysis, ctx) -> dict | None:
    prof = a.profile
    py = python_part(prof)
    if prof is None or (prof.method == "none" and not prof.samples and not py.get("samples")):
        return None
    index, groups = _groups(prof.stacks)
    hot = a.hot_functions
    shown = hot[hot["self_samples"] > 0].head(MAX_HOT)
    hot_rows = {
        "function": shown["function"].astype(str).tolist(),
        "self_samples": shown["self_samples"].astype(int).tolist(),
        "total_samples": shown["total_samples"].astype(int).tolist(),
        "share": shown["share"].astype(float).tolist(),
        "operator": shown["operator"].astype(str).tolist(),
        "kind": shown["kind"].astype(str).tolist(),
        "stages": [", ".join(str(s) for s in ids) for ids in shown["stage_ids"]],
        "executors": [", ".join(str(e) or "(not recorded)" for e in ids)
                      for ids in shown["executor_ids"]],
    }
    kind_of = dict(zip(hot["function"].astype(str), hot["kind"].astype(str)))
    cells = hot_cells(prof.stacks, index)
    collapsed = collapsed_text(prof.stacks)
    truncated = len(collapsed) > MAX_COLLAPSED_CHARS
    if truncated:
        collapsed = collapsed[:collapsed.rfind("\n", 0, MAX_COLLAPSED_CHARS) + 1]
    summary = prof.summary()
    return {
        "summary": {k: summary[k] for k in ("method", "sample", "fallback", "interval_ms",
                                            "note", "samples",
                                            "other_jvm_samples", "sampled_cpu_ms",
                                            "spark_cpu_ms", "sampled_to_spark", "kinds")},
        # the Python UDF workers' samples (py-spy), counted apart from the task threads'
        "python": py or None,
        # key: the Query tab's operator key ("execution:node"), for the selection both share
        "operators": [{"label": o["label"], "key": ("" if o["node_id"] is None else
                                                    f"{o['execution_id']}:{o['node_id']}"),
                       "samples": o["samples"], "share": o["share"],
                       "sampled_ms": o["sampled_ms"], "stages": ", ".join(
                           str(s) for s in o["stage_ids"]),
                       "kinds": ", ".join(f"{k} {v}" for k, v in o["kinds"].items())}
                      for o in summary["operators"]],
        # the samples' groups (operator x executor, with the operator's stages): the filters
        "groups": groups,
        "flame": flame(prof.stacks, index), "min_share": MIN_SHARE,
        "hot": hot_rows,
        "hot_cells": {**cells, "kind": [kind_of.get(f, "") for f in cells["function"]]},
        "hot_total": int((hot["self_samples"] > 0).sum()) if len(hot) else 0,
        "max_hot": MAX_HOT,
        "collapsed": collapsed, "collapsed_truncated": truncated,
        "file_name": f"profile-{a.run.run_id}.collapsed",
    }
