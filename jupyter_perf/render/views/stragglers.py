"""The Stragglers tab's data: ``a.stragglers`` (one row per straggler or data-skewed task
attempt, the largest excess over its stage median first) with the causes in words and
``pos``, the attempt's position in the report's per-task arrays (``-1``: not among them), so
that selecting a row highlights the attempt on the Timeline. Drawn by
``labextension/src/report/tabs/stragglers.ts``.
"""
from __future__ import annotations

import numpy as np

from ...analysis import Analysis
from ...analysis.stragglers import CAUSES

MAX_ROWS = 5000
UNEXPLAINED = "unexplained"
MORE_DATA = "more data than its stage's median task"
RATIO_CAP = 1e9          # a ratio to a zero median: shown as this, not as infinity


def cause_text(kind: str, causes) -> str:
    """The causes in words (``analysis.stragglers.CAUSES``: "shuffle fetch wait, JVM GC"); a
    straggler with none listed is "unexplained", a data-skewed task with none is slow because
    it had more data."""
    words = ", ".join(CAUSES.get(c, c) for c in causes)
    return words or (UNEXPLAINED if kind == "straggler" else MORE_DATA)


def data(a: Analysis, ctx) -> dict:
    s = a.stragglers
    n = len(s)
    shown = s.head(MAX_ROWS)
    pos_of = np.asarray(ctx.extras["pos"])
    srows = np.asarray(ctx.extras["straggler_rows"])[:len(shown)]
    kinds = shown["kind"].astype(str).tolist()
    rows = {
        "stage_id": shown["stage_id"].astype(int).tolist(),
        "stage_attempt": shown["stage_attempt"].astype(int).tolist(),
        "task_id": shown["task_id"].astype(int).tolist(),
        "index": shown["index"].astype(int).tolist(),
        "attempt": shown["attempt"].astype(int).tolist(),
        "executor_id": shown["executor_id"].astype(str).tolist(),
        "host": shown["host"].astype(str).tolist(),
        "kind": ["straggler" if k == "straggler" else "data skew" for k in kinds],
        "duration_ms": shown["duration_ms"].astype(float).tolist(),
        "stage_median_ms": shown["stage_median_ms"].astype(float).tolist(),
        "rate_ratio": shown["rate_ratio"].astype(float).clip(upper=RATIO_CAP).tolist(),
        "duration_ratio": shown["duration_ratio"].astype(float).clip(upper=RATIO_CAP).tolist(),
        "bytes_read": shown["bytes_read"].astype(float).tolist(),
        "causes": [cause_text(k, cs) for k, cs in zip(kinds, shown["causes"])],
        "cause_keys": [list(cs) for cs in shown["causes"]],
        "data_skew": ["yes" if bool(x) else "" for x in shown["data_skew"]],
        "pos": [int(pos_of[i]) if i >= 0 else -1 for i in srows],
    }
    n_strag = int((s["kind"] == "straggler").sum()) if n else 0
    return {
        "rows": rows, "n": n, "n_stragglers": n_strag, "n_skewed": n - n_strag,
        "max_rows": MAX_ROWS, "threshold": float(a.straggler_threshold),
    }
