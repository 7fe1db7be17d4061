"""``jp.history(cell_or_label_or_run)``: every stored run of one cell as a series (issue T).

    h = jp.history("20261126-150642-02a963")   # a run id: that run's cell
    h = jp.history("partitions 200")           # a label
    h = jp.history(run)                        # a Run or an Analysis
    h[["run_id", "wall_ms", "warm", "expected_low_ms", "expected_high_ms", "regression", "change"]]

The cell is found as the comparison finds it: by JupyterLab's cell id, else by label, else by
the cell's source within its notebook. Each row is read from the run's run.json (no task
data): wall time, the components of the wall time (driver gaps, then each breakdown
component at the parallelism the run got, so they add up to the wall time), the code and
settings fingerprints, whether the run was warm (``analysis/series.py``), the band it was
expected in, and whether it was a regression or an improvement by the one noise rule. For a
flagged run and a change point, ``change`` says what moved against the previous warm run:
the wall-time split of ``analysis/compare.py`` (analysing both runs), the settings that
differ and whether the code changed.

``noise_for(store, a, b)`` is the same rule for ``jp.compare``: the band of the warm runs of
A's code and settings (B left out).
"""
from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pandas as pd

from ..analysis.compare import config_diff, config_key, wall_split
from ..analysis.components import BY_KEY, KEYS
from ..analysis.series import Noise, change_points, is_cold, judge_series, learn, mark_warm
from ..errors import JupyterPerfError
from ..model import Run
from ..store import RunStore, StoreError, default_store, index, rundir, valid_run_id

#: How many runs of a cell a history reads (newest first).
HISTORY_RUNS = 200
COLUMNS = (["run_id", "start", "wall_ms", "driver_ms"] + [f"{k}_ms" for k in KEYS]
           + ["code", "settings", "warm", "cold_reason", "expected_low_ms", "expected_high_ms",
              "noise_runs", "more_runs_needed", "basis", "regression", "improvement",
              "change_point", "change", "label", "status", "app_id"])


class HistoryError(JupyterPerfError):
    """No runs for what was asked, in one line with the next step."""


def _fingerprint(value: Any) -> str:
    return hashlib.sha256(repr(value).encode("utf-8", "surrogatepass")).hexdigest()[:12]


def _light_run(meta: dict) -> Run:
    """A Run with just what the settings fingerprint reads (no task data)."""
    return Run(run_id=str(meta.get("run_id")), master=str(meta.get("master") or ""),
               spark_version=str(meta.get("spark_version") or ""),
               executors=pd.DataFrame(meta.get("executors") or []),
               extra=dict(meta.get("extra") or {}))


def _components(summary: Any, wall_ms: float) -> dict[str, float]:
    """Driver gaps and each component at the run's parallelism (they add up to the wall)."""
    out = {"driver_ms": np.nan} | {f"{k}_ms": np.nan for k in KEYS}
    if not isinstance(summary, dict):
        return out
    whatif = summary.get("whatif") or {}
    bd = summary.get("breakdown") or {}
    try:
        gap = float(whatif.get("driver_gap_ms"))
        span = float(whatif.get("actual_ms"))
    except (TypeError, ValueError):
        return out
    total = sum(float((bd.get(k) or {}).get("ms") or 0.0) for k in KEYS)
    out["driver_ms"] = gap
    for k in KEYS:
        ms = float((bd.get(k) or {}).get("ms") or 0.0)
        out[f"{k}_ms"] = span * ms / total if total > 0 else 0.0
    return out


def _row(store: RunStore, index_row: dict) -> dict | None:
    try:
        meta = rundir.read_meta(store.run_dir(index_row["run_id"]))
    except Exception:  # broad: a damaged or vanished run is left out of the series
        return None
    light = _light_run(meta)
    ex = light.executors
    added = np.nan
    if not ex.empty:
        workers = ex[ex["executor_id"].astype(str) != "driver"]
        if len(workers):
            added = pd.to_numeric(workers["add_ms"], errors="coerce").max()
    wall = float(index_row.get("wall_ms") or 0.0)
    start = float(meta.get("start_ms") or 0.0) or float(index_row.get("created_ms") or 0.0)
    conf = config_key(light)
    row = {"run_id": index_row["run_id"], "start_ms": start, "wall_ms": wall,
           "created_ms": float(index_row.get("created_ms") or 0.0),
           "code": (index_row.get("source_hash") or "")[:12], "settings": _fingerprint(conf),
           "app_id": str(meta.get("app_id") or ""), "executor_added_ms": added,
           "label": index_row.get("label") or "", "status": index_row.get("status") or "ok",
           "num_jobs": int(index_row.get("num_jobs") or 0), "_light": light}
    row.update(_components(meta.get("summary"), wall))
    return row


# -- which runs are the cell's ------------------------------------------------------------------
def _label_rows(store: RunStore, label: str, limit: int) -> list[dict]:
    return [r for r in store.list(limit=limit, text=label) if (r.get("label") or "") == label]


def cell_rows(store: RunStore, run_row: dict, limit: int = HISTORY_RUNS) -> list[dict]:
    """Index rows of the runs of ``run_row``'s cell (itself included), newest first: same
    JupyterLab cell id, else same label, else same source in the same notebook."""
    found: list[dict] = []
    if run_row.get("cell_id"):
        found = store.cell_runs(cell_id=run_row["cell_id"], limit=limit)
    if not found and run_row.get("label"):
        found = _label_rows(store, run_row["label"], limit)
    if not found and run_row.get("source_hash"):
        found = store._query(lambda c: index.cell_rows(
            c, None, run_row["source_hash"], run_row.get("notebook") or "", None, None, limit))
    ids = {r["run_id"] for r in found}
    if run_row.get("run_id") and run_row["run_id"] not in ids:
        found = [run_row] + found
    return found


def _resolve_rows(store: RunStore, what: Any, limit: int) -> tuple[list[dict], str]:
    from ..analysis import Analysis

    if isinstance(what, Analysis):
        what = what.run
    if isinstance(what, Run):
        row = store.get(what.run_id) if valid_run_id(what.run_id) else None
        if row is None:
            row = {"run_id": None, "cell_id": rundir.cell_id(what.extra), "label": what.label,
                   "source_hash": rundir.source_hash(what.source), "notebook": what.notebook}
        return cell_rows(store, row, limit), f"run {what.run_id}"
    if not isinstance(what, str) or not what.strip():
        raise HistoryError(f"cannot find the runs of a {type(what).__name__}: give a run id, a "
                           "label, a cell id, a Run or an Analysis")
    text = what.strip()
    row = store.get(text) if valid_run_id(text) else None
    if row is not None:
        return cell_rows(store, row, limit), f"run {text}"
    rows = _label_rows(store, text, limit)
    if rows:
        return rows, f"label {text!r}"
    rows = store.cell_runs(cell_id=text, limit=limit)
    if rows:
        return rows, f"cell {text}"
    raise HistoryError(f"no stored run has the run id, label or cell id {text[:80]!r}; list "
                       "the runs with `jupyter-perf runs` (or %perfmeasure list)")


# -- the series -----------------------------------------------------------------------------------
def series_frame(store: RunStore, rows: list[dict]) -> pd.DataFrame:
    """The runs (index rows) as a series, oldest first, with warmth and the judgement; runs
    that did not run Spark work or did not end ok are shown but never learned from."""
    light = [r for r in (_row(store, x) for x in rows) if r is not None]
    if not light:
        return pd.DataFrame(columns=COLUMNS)
    # oldest first: by start, then by when the store got it (runs of one second), then id
    df = pd.DataFrame(light).sort_values(["start_ms", "created_ms", "run_id"], kind="stable")
    df = mark_warm(df.reset_index(drop=True))
    usable = (df["status"] == "ok") & (df["num_jobs"] > 0) & (df["wall_ms"] > 0)
    df.loc[~usable, "warm"] = False
    df.loc[~usable, "cold_reason"] = "no Spark work, or did not end ok"
    df["group"] = list(zip(df["code"], df["settings"]))
    return judge_series(df)


def noise_for(store: RunStore, a: Run, b: Run | None = None) -> tuple[Noise, list[str]]:
    """The band of the warm runs of A's code and settings in the store (B left out), and a
    line saying what it was learned from."""
    try:
        row = store.get(a.run_id) if valid_run_id(a.run_id) else None
        base = row or {"run_id": None, "cell_id": rundir.cell_id(a.extra), "label": a.label,
                       "source_hash": rundir.source_hash(a.source), "notebook": a.notebook}
        df = series_frame(store, cell_rows(store, base))
    except (StoreError, KeyError):
        df = pd.DataFrame(columns=COLUMNS)
    code = (rundir.source_hash(a.source) or "")[:12]
    settings = _fingerprint(config_key(a))
    if len(df):
        cold_rows = df["warm"].map(is_cold).astype(bool)
        same = df[(df["code"] == code) & (df["settings"] == settings) & ~cold_rows]
        if b is not None:
            same = same[same["run_id"] != b.run_id]
        walls = same["wall_ms"].astype(float).tolist()
        cold = int(((df["code"] == code) & (df["settings"] == settings) & cold_rows).sum())
    else:
        walls, cold = [], 0
    noise = learn(walls)
    note = (f"Noise: {noise.runs} warm run{'s' if noise.runs != 1 else ''} with the code and "
            f"settings of A in the store ({cold} cold run{'s' if cold != 1 else ''} left out); "
            + ("median ± 4 robust SDs of ln(wall), docs/compare.md." if noise.known else
               f"{noise.more} more would make the noise known."))
    return noise, [note]


def _words(ms: float) -> str:
    from .. import fmt
    return ("+" if ms > 0 else "−") + fmt.ms(abs(ms))


def _change(store: RunStore, prev: pd.Series, cur: pd.Series, analyses: dict,
            decompose: bool) -> str:
    parts: list[str] = []
    diff = config_diff(prev["_light"], cur["_light"])
    if prev["code"] != cur["code"]:
        parts.append("code changed")
    unset = "(not set)"
    parts += [f"{k} {unset if a is None else a} → {unset if b is None else b}"
              for k, (a, b) in list(diff.items())[:3]]
    if len(diff) > 3:
        parts.append(f"{len(diff) - 3} more settings differ")
    if decompose:
        try:
            from ..analysis import analyze

            for rid in (prev["run_id"], cur["run_id"]):
                if rid not in analyses:
                    analyses[rid] = analyze(store.load(rid))
            split = wall_split(analyses[prev["run_id"]], analyses[cur["run_id"]])
            moved = [("driver gaps", split["driver_ms"]), ("parallelism", split["parallelism_ms"])]
            moved += [(BY_KEY[k].label, v) for k, v in split["components"].items()]
            top = [p for p in sorted(moved, key=lambda p: -abs(p[1])) if abs(p[1]) >= 0.5][:3]
            parts.insert(0, f"{_words(split['wall_delta_ms'])} vs run {prev['run_id']}: "
                         + ", ".join(f"{n} {_words(v)}" for n, v in top))
        except Exception as exc:  # broad: a run that cannot be analysed keeps its row
            from ..errors import one_line
            parts.append(f"not decomposed ({one_line(exc, limit=100)})")
    return "; ".join(parts)


def history(what: Any, store: RunStore | None = None, limit: int = HISTORY_RUNS) -> pd.DataFrame:
    """One row per stored run of a cell (see the module's doc), oldest first."""
    store = store or default_store()
    try:
        rows, found_by = _resolve_rows(store, what, limit)
        df = series_frame(store, rows)
    except StoreError as exc:
        raise HistoryError(str(exc)) from None
    if df.empty:
        out = pd.DataFrame(columns=COLUMNS)
        out.attrs.update({"found_by": found_by, "change_points": []})
        return out
    warm_idx = [i for i in df.index if not is_cold(df.at[i, "warm"])]
    points = change_points(df.loc[warm_idx, "wall_ms"].tolist()) if warm_idx else []
    df["change_point"] = False
    for p in points:
        i = warm_idx[p["index"]]
        df.at[i, "change_point"] = True
        p["run_id"] = df.at[i, "run_id"]
    analyses: dict[str, Any] = {}
    changes = []
    prev = None
    for i in df.index:
        cur = df.loc[i]
        if prev is None:
            changes.append("")
        else:
            flagged = bool(cur["regression"] or cur["improvement"] or cur["change_point"])
            changes.append(_change(store, prev, cur, analyses, flagged))
        if not is_cold(cur["warm"]):
            prev = cur
    df["change"] = changes
    df["start"] = pd.to_datetime(df["start_ms"], unit="ms", utc=True)
    out = df[[c for c in COLUMNS]].reset_index(drop=True)
    out.attrs.update({"found_by": found_by, "change_points": points})
    return out


def history_text(df: pd.DataFrame) -> str:
    """The history for a terminal: one line per run, oldest first, then the change points."""
    from .. import fmt

    if df.empty:
        return "no stored run of this cell"
    lines = [f"{'RUN':<24} {'START (UTC)':<19} {'WALL':>9} {'EXPECTED':>19} {'WARM':<5} "
             "FLAG  CHANGE"]
    for _, r in df.iterrows():
        band = (f"{fmt.ms(r['expected_low_ms'])}–{fmt.ms(r['expected_high_ms'])}"
                if pd.notna(r["expected_low_ms"]) else f"unknown ({r['more_runs_needed']} more)")
        warm = {True: "warm", False: "cold"}.get(r["warm"], "?")
        flag = ("SLOW" if r["regression"] else "FAST" if r["improvement"] else "") + \
            ("*" if r["change_point"] else "")
        start = r["start"].strftime("%Y-%m-%d %H:%M:%S") if pd.notna(r["start"]) else ""
        lines.append(f"{r['run_id']:<24} {start:<19} {fmt.ms(r['wall_ms']):>9} {band:>19} "
                     f"{warm:<5} {flag:<5} {r['change']}")
    lines.append("")
    lines.append("measured wall times; EXPECTED: the band of the warm runs before it with the "
                 "same code and settings (else the usual before a change), median ± 4 robust "
                 "SDs of ln(wall); cold runs (first of their code in a Spark application) are "
                 "not learned from or flagged; * = the level moved here (change point)")
    for p in df.attrs.get("change_points") or []:
        lines.append(f"change point at run {p['run_id']}: {fmt.ms(p['before_ms'])} → "
                     f"{fmt.ms(p['after_ms'])} ({p['shift']:+.0%}, medians of the warm runs "
                     "before and after)")
    return "\n".join(lines)
