"""The Timeline tab's data: one lane per executor slot, the stage track, markers, the lag note.

The bars themselves come from the per-task arrays every tab shares (``tasks``: start, lane,
stage, the breakdown components, flags; ``tasks_meta``: lane labels, stage ids, the
components' labels and colours), drawn by ``labextension/src/report/lanes.ts``: every task
attempt when at most ``DETAIL_LIMIT`` are in view, else one bar per lane and time bin whose
hover says how many attempts it stands for. This part adds what the arrays do not carry:

``span_ms``
    the x extent (ms from the window start, the origin of ``tasks.start``);
``lanes``, ``lagged``, ``max_lag_ms``
    the lane count and how many attempts launched before their lane's previous finish stamp
    (Spark stamps a finish when the driver has fetched the result; ``render/lanes.py``);
``stages``
    per stage attempt (sorted by start): ``code`` (index into ``tasks_meta.stage_ids``),
    ``stage_id``, ``attempt``, ``label``, ``start_ms``, ``end_ms``, ``row`` (its row on the
    stage track), ``tasks``, ``name`` (the call site), ``ops`` (its SQL operators);
    ``stage_rows`` rows; ``boundaries``: whether to draw each stage's boundary lines;
``markers``
    failed/killed and speculative attempts, columnar: ``pos`` (array position), ``kind``,
    ``status``, ``error`` (index into ``errors``: the distinct messages, first 300 characters);
``components``
    the keys of the breakdown components with any time (the legend), in stacking order.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...analysis import Analysis
from ...analysis.components import COMPONENTS

DETAIL_LIMIT = 2000
BINS = 160
MAX_BOUNDARY_STAGES = 400
MAX_STAGE_ROWS = 6
ERROR_CHARS = 300


def stage_label(stage_id: int, attempt: int) -> str:
    """"stage 5"; the attempt only when Spark retried the stage ("stage 5 (attempt 1)")."""
    return f"stage {int(stage_id)}" + (f" (attempt {int(attempt)})" if int(attempt) > 0 else "")


def stage_intervals(a: Analysis) -> pd.DataFrame:
    """Per stage attempt: code, first launch, last finish (ms from the window start), tasks,
    call site; sorted by start."""
    tl = a.timeline
    cols = ["code", "stage_id", "attempt", "start_ms", "end_ms", "tasks", "name"]
    if not len(tl.duration):
        return pd.DataFrame(columns=cols)
    lo = float(tl.window[0]) if tl.has_times else 0.0
    frame = pd.DataFrame({"code": tl.stage_code, "s": tl.launch - lo,
                          "e": tl.launch - lo + tl.duration})
    g = frame.groupby("code")
    out = pd.DataFrame({"start_ms": g["s"].min(), "end_ms": g["e"].max(), "tasks": g.size()})
    codes = out.index.to_numpy()
    out["code"] = codes
    out["stage_id"] = tl.stage_keys[codes, 0]
    out["attempt"] = tl.stage_keys[codes, 1]
    names = {}
    st = a.run.stages
    if not st.empty:
        for sid, att, name in zip(st["stage_id"], st["attempt"], st["name"]):
            try:
                names[(int(sid), int(att))] = "" if name is None else str(name)
            except (TypeError, ValueError):
                continue
    out["name"] = [names.get((int(s), int(t)), "") for s, t in zip(out["stage_id"], out["attempt"])]
    return out.sort_values("start_ms", kind="stable").reset_index(drop=True)[cols]


def pack_rows(starts: np.ndarray, ends: np.ndarray, max_rows: int) -> np.ndarray:
    """A row per interval (sorted by start) so that intervals of one row do not overlap; at
    most ``max_rows`` rows (then the least-loaded row is shared)."""
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
            else:
                r = int(np.argmin(row_end))
                row_end[r] = max(row_end[r], e)
                rows[i] = r
    return rows


def span_ms(a: Analysis) -> float:
    tl = a.timeline
    span = float(a.wall_ms if not tl.has_times else tl.window[1] - tl.window[0])
    if tl.has_times and len(tl.duration):
        span = max(span, float((tl.launch + tl.duration).max() - tl.window[0]))
    return span


def markers(a: Analysis, pos: np.ndarray, flags: np.ndarray) -> dict:
    """Failed/killed and speculative attempts (``flags`` in array order), columnar: ``pos``
    (array position), ``kind``, ``status``, ``error`` (index into ``errors``, the distinct
    messages cut to ``ERROR_CHARS``; -1: none)."""
    from ..payload import FLAG_FAILED, FLAG_KILLED, FLAG_SPECULATIVE
    out: dict = {"pos": [], "kind": [], "status": [], "error": [], "errors": []}
    t = a.run.tasks
    if not len(flags) or t.empty:
        return out
    row_of = np.empty(len(pos), dtype="int64")
    row_of[pos] = np.arange(len(pos))
    status = t["status"].astype(str).to_numpy()
    errors = t["error"].to_numpy() if "error" in t else np.full(len(t), None)
    seen: dict[str, int] = {}
    for mask, kind in (((flags & (FLAG_FAILED | FLAG_KILLED)) > 0, "failed"),
                       ((flags & FLAG_SPECULATIVE) > 0, "speculative")):
        for p in np.flatnonzero(mask).tolist():
            row = int(row_of[p])
            err = errors[row]
            err = "" if err is None or (isinstance(err, float) and np.isnan(err)) else str(err)
            err = err[:ERROR_CHARS]
            out["pos"].append(int(p))
            out["kind"].append(kind)
            out["status"].append(str(status[row]))
            out["error"].append(seen.setdefault(err, len(seen)) if err else -1)
    out["errors"] = list(seen)
    return out


def data(a: Analysis, ctx) -> dict:
    lanes = ctx.lanes
    stages = stage_intervals(a)
    rows = pack_rows(stages["start_ms"].to_numpy(float), stages["end_ms"].to_numpy(float),
                     MAX_STAGE_ROWS)
    stage_rows = int(rows.max() + 1) if len(rows) else 0
    ops = a.stage_operators if len(stages) else {}
    present = [c.key for c in COMPONENTS if a.breakdown[c.key]["ms"] > 0] or [COMPONENTS[0].key]
    return {
        "span_ms": span_ms(a),
        "detail_limit": DETAIL_LIMIT,
        "bins": BINS,
        "lanes": lanes.count,
        "lagged": int(lanes.lagged),
        "max_lag_ms": float(lanes.max_lag_ms),
        "stage_rows": stage_rows,
        "boundaries": len(stages) <= MAX_BOUNDARY_STAGES,
        "stages": {
            "code": stages["code"].astype(int).tolist(),
            "stage_id": stages["stage_id"].astype(int).tolist(),
            "attempt": stages["attempt"].astype(int).tolist(),
            "label": [stage_label(s, t) for s, t in zip(stages["stage_id"], stages["attempt"])],
            "start_ms": stages["start_ms"].astype(float).tolist(),
            "end_ms": stages["end_ms"].astype(float).tolist(),
            "row": rows.tolist(),
            "tasks": stages["tasks"].astype(int).tolist(),
            "name": stages["name"].tolist(),
            "ops": [ops.get(int(s), "") or "" for s in stages["stage_id"]],
        },
        "markers": markers(a, ctx.extras["pos"], ctx.arrays["flags"]),
        "components": present,
    }
