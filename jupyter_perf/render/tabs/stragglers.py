"""The Stragglers tab: ``a.stragglers`` as a sortable table; selecting a row highlights the
task attempt on the Timeline tab (``report.js``)."""
from __future__ import annotations

import numpy as np
from bokeh.layouts import column
from bokeh.models import TabPanel

from ... import fmt
from ...analysis import Analysis
from ...analysis.stragglers import CAUSES
from ..widgets import div, table, table_height

MAX_ROWS = 5000


def stragglers_tab(a: Analysis, pos: np.ndarray, rows: np.ndarray):
    """``pos``: task row -> position in the browser's arrays; ``rows``: task row per straggler."""
    s = a.stragglers
    n = len(s)
    shown = s.head(MAX_ROWS)
    r = rows[:len(shown)]
    data = {
        "stage_id": shown["stage_id"].astype(int).tolist(),
        "stage_attempt": shown["stage_attempt"].astype(int).tolist(),
        "task_id": shown["task_id"].astype(int).tolist(),
        "index": shown["index"].astype(int).tolist(),
        "attempt": shown["attempt"].astype(int).tolist(),
        "executor_id": shown["executor_id"].astype(str).tolist(),
        "host": shown["host"].astype(str).tolist(),
        "kind": ["straggler" if k == "straggler" else "data skew" for k in shown["kind"]],
        "duration_ms": shown["duration_ms"].astype(float).tolist(),
        "stage_median_ms": shown["stage_median_ms"].astype(float).tolist(),
        "rate_ratio": shown["rate_ratio"].astype(float).clip(upper=1e9).tolist(),
        "duration_ratio": shown["duration_ratio"].astype(float).clip(upper=1e9).tolist(),
        "bytes_read": shown["bytes_read"].astype(float).tolist(),
        "causes": [", ".join(CAUSES.get(c, c) for c in cs) or "unexplained" for cs in shown["causes"]],
        "data_skew": ["yes" if bool(x) else "" for x in shown["data_skew"]],
        "pos": [int(pos[i]) if i >= 0 else -1 for i in r],
    }
    cols = [("stage_id", "stage", "int"), ("task_id", "task", "int"), ("index", "index", "int"),
            ("attempt", "attempt", "int"), ("executor_id", "executor", "text"), ("host", "host", "text"),
            ("kind", "kind", "text"), ("duration_ms", "duration ms", "ms"),
            ("stage_median_ms", "stage median ms", "ms"), ("rate_ratio", "rate / median", "float"),
            ("duration_ratio", "duration / median", "float"), ("bytes_read", "input + shuffle read", "bytes"),
            ("causes", "causes (each alone explains it)", "text"), ("data_skew", "data skew", "text")]
    t, src = table(cols, data, height=table_height(len(shown), cap=460), name="jp-stragglers",
                   selectable=True, sortable=True)
    n_strag = int((s["kind"] == "straggler").sum()) if n else 0
    more = (f" Showing the {MAX_ROWS:,} with the largest excess over their stage median "
            f"(of {n:,}).") if n > MAX_ROWS else ""
    counts = f"{fmt.count(n_strag, 'straggler')}, {fmt.count(n - n_strag, 'data-skewed task')}"
    text = (f"<b>{counts}</b> "
            f"<span class='muted'>A straggler's progress rate (duration per byte read) is more than "
            f"{a.straggler_threshold:g}× its stage's median; a cause explains it when the task would "
            f"not be a straggler had that cause taken no time in any task of the stage. "
            f"<i>Data skew</i>: at least {a.straggler_threshold:g}× the median duration because it "
            f"had more data, not a slower rate. Click a row to highlight the attempt on the Timeline "
            f"tab; click a header to sort.{more}</span>")
    if not n:
        text = "<b>No stragglers and no data-skewed tasks.</b>"
    info = div("<span class='muted'>No row selected.</span>", name="jp-straggler-selected")
    return TabPanel(child=column(div(text), info, t, sizing_mode="stretch_width"),
                    title="Stragglers"), src, info

