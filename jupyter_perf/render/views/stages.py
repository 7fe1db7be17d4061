"""The Stages tab's data: per stage attempt, ``a.stage_table()`` (Spark's REST /stages sums)
plus task-time quantiles over the attempts that ran and the time breakdown per component (ms
and share of the stage's task time), drawn by ``labextension/src/report/tabs/stages.ts``.

``rows`` is columnar (one list per column, one entry per stage attempt, ``a.stage_table()``'s
order); ``components`` is ``analysis.components.as_json()`` (labels, colours, measured or
estimated — the browser never names a component itself); ``bar_rows`` are the rows of the
stacked per-stage bars (the ``MAX_BAR_STAGES`` stages with the most task time, in stage order).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...analysis import Analysis
from ...analysis.callsite import call_site_shown
from ...analysis.components import COMPONENTS, KEYS
from ...analysis.components import as_json as components_json
from ..style import ESTIMATED_HATCH

QUANTILES = [("min", 0.0), ("p25", 0.25), ("p50", 0.5), ("p75", 0.75), ("p95", 0.95), ("max", 1.0)]
MAX_BAR_STAGES = 40
SKIPPED = "SKIPPED"
BYTES = ("input_bytes", "shuffle_read_bytes", "shuffle_write_bytes", "output_bytes",
         "memory_spilled_bytes", "disk_spilled_bytes")


def stage_rows(a: Analysis) -> pd.DataFrame:
    """``a.stage_table()`` plus task-duration quantiles (``min`` … ``max``, ms) and the ms of
    each breakdown component (``bd_<key>``) per stage attempt; ``task_time_ms`` is their sum."""
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


def bar_rows(st: pd.DataFrame, skipped: np.ndarray) -> list[int]:
    """Rows of the stacked bars: of the stages that ran, the ``MAX_BAR_STAGES`` with the most
    task time, in stage order."""
    ran = st[~skipped]
    top = ran.sort_values("task_time_ms", ascending=False, kind="stable").head(MAX_BAR_STAGES)
    top = top.sort_values(["stage_id", "attempt"], kind="stable")
    return [int(st.index.get_loc(i)) for i in top.index]


def _call_sites(a: Analysis, names: list) -> dict[str, list[str]]:
    shown = [call_site_shown(a.run, x) for x in names]
    return {"call_site": [x[0] for x in shown], "call_site_text": [x[1] for x in shown]}


def data(a: Analysis, ctx) -> dict:
    st = stage_rows(a).reset_index(drop=True)
    n = len(st)
    total = st["task_time_ms"].replace(0, np.nan)
    status = st["status"].fillna("").astype(str)
    skipped = (status == SKIPPED).to_numpy()
    rows: dict[str, list] = {
        "stage_id": st["stage_id"].astype(int).tolist(),
        "attempt": st["attempt"].astype(int).tolist(),
        "status": status.tolist(),
        "skipped": skipped.tolist(),
        "operators": [a.stage_operators.get(int(s), "") for s in st["stage_id"]],
        "name": st["name"].fillna("").astype(str).tolist() if "name" in st else [""] * n,
        # the call site as "collect at cell line 11" (the line's text on hover) where it points
        # into the measured cell, else Spark's name
        **_call_sites(a, st["name"].tolist() if "name" in st else [None] * n),
        "task_attempts": st["task_attempts"].astype(int).tolist(),
        "failed_tasks": st["failed_tasks"].astype(int).tolist(),
        "task_time_ms": st["task_time_ms"].astype(float).tolist(),
    }
    for name, _ in QUANTILES:
        # a stage no attempt ran (SKIPPED): 0, as today's report shows it
        rows[name] = st[name].astype(float).fillna(0.0).tolist()
    for c in COMPONENTS:
        rows[f"bd_{c.key}"] = st[f"bd_{c.key}"].astype(float).tolist()
        if c.in_run:
            rows[f"share_{c.key}"] = (st[f"bd_{c.key}"] / total).fillna(0.0).tolist()
    overhead = [f"bd_{c.key}" for c in COMPONENTS if not c.in_run]
    rows["bd_overhead"] = st[overhead].sum(axis=1).astype(float).tolist()
    rows["share_overhead"] = (st[overhead].sum(axis=1) / total).fillna(0.0).tolist()
    for col in BYTES:
        rows[col] = st[col].astype(float).tolist() if col in st else [0.0] * n
    n_skipped = int(skipped.sum())
    return {
        "rows": rows,
        "components": components_json(),
        "show_attempt": bool(any(x > 0 for x in rows["attempt"])),
        "n_stages": n, "n_skipped": n_skipped, "n_ran": n - n_skipped,
        "bar_rows": bar_rows(st, skipped), "max_bar_stages": MAX_BAR_STAGES,
        "estimated_hatch": ESTIMATED_HATCH,
    }
