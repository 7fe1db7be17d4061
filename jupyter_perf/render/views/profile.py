"""The Profile tab's data (issue P): the window's CPU stack samples of the task threads as an
icicle (``analysis/profile.flame_tree``: flat rows, root first), the hot functions
(``a.hot_functions``), the operators the samples were attributed to, and the collapsed stacks
for download (flamegraph.pl / speedscope). ``None`` — no tab — when the run has no profile.
Drawn by ``labextension/src/report/tabs/profile.ts``. Every number here is *sampled*, but
Spark's own CPU time (``spark_cpu_ms``, *measured*).
"""
from __future__ import annotations

from ...analysis import Analysis
from ...analysis.profile import collapsed_text, flame_tree

MAX_HOT = 200
MAX_FLAME = 4000
MIN_SHARE = 0.002        # frames narrower than this share of the samples are left out
MAX_COLLAPSED_CHARS = 4_000_000


def data(a: Analysis, ctx) -> dict | None:
    prof = a.profile
    if prof is None or (prof.method == "none" and not prof.samples):
        return None
    rows = flame_tree(prof.stacks, min_share=MIN_SHARE, max_nodes=MAX_FLAME)
    flame = {"depth": [r[0] for r in rows], "start": [r[1] for r in rows],
             "n": [r[2] for r in rows], "own": [r[3] for r in rows],
             "name": [str(r[4]) for r in rows], "operator": [str(r[5]) for r in rows]}
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
    }
    collapsed = collapsed_text(prof.stacks)
    truncated = len(collapsed) > MAX_COLLAPSED_CHARS
    if truncated:
        collapsed = collapsed[:collapsed.rfind("\n", 0, MAX_COLLAPSED_CHARS) + 1]
    summary = prof.summary()
    return {
        "summary": {k: summary[k] for k in ("method", "interval_ms", "note", "samples",
                                            "other_jvm_samples", "sampled_cpu_ms",
                                            "spark_cpu_ms", "sampled_to_spark", "kinds")},
        # key: the Query tab's operator key ("execution:node"), for the selection both share
        "operators": [{"label": o["label"], "key": ("" if o["node_id"] is None else
                                                    f"{o['execution_id']}:{o['node_id']}"),
                       "samples": o["samples"], "share": o["share"],
                       "sampled_ms": o["sampled_ms"], "stages": ", ".join(
                           str(s) for s in o["stage_ids"]),
                       "kinds": ", ".join(f"{k} {v}" for k, v in o["kinds"].items())}
                      for o in summary["operators"]],
        "flame": flame, "min_share": MIN_SHARE,
        "hot": hot_rows, "hot_total": int((hot["self_samples"] > 0).sum()) if len(hot) else 0,
        "max_hot": MAX_HOT,
        "collapsed": collapsed, "collapsed_truncated": truncated,
        "file_name": f"profile-{a.run.run_id}.collapsed",
    }
