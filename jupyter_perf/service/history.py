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

A run whose previous warm run had the same code and differs from it only in what a
prediction covers (the slots, and/or a setting one of that run's hints advised) is checked
against it: ``predicted_ms`` (estimated: the earlier run's what-if for the slots, or its
hint's prediction), ``predicted_what`` ("slots ×2 (1 → 2)", "spark.sql.shuffle.partitions=8";
with why when nothing could be predicted: ``predicted_ms`` NaN), ``predicted_by`` (the earlier
run) and ``prediction_error`` ((predicted − measured) / measured). Each is recorded in the
store's record of predictions (``store/accuracy.py``, what ``jupyter-perf accuracy``
aggregates) once: a pair already recorded is read back from it, not analysed again.

``noise_for(store, a, b)`` is the same rule for ``jp.compare``: the band of the warm runs of
A's code and settings (B left out).
"""
from __future__ import annotations

import hashlib
import os
from typing import Any

import numpy as np
import pandas as pd

from ..analysis.compare import config_diff, config_key, wall_split
from ..analysis.components import BY_KEY, KEYS
from ..analysis.series import (
    BAND_K,
    MIN_SEGMENT,
    Noise,
    change_points,
    is_cold,
    judge_series,
    learn,
    mark_warm,
)
from ..errors import JupyterPerfError, one_line
from ..model import Run, conform
from ..store import RunStore, StoreError, default_store, index, rundir, valid_run_id

#: How many runs of a cell a history reads (newest first).
HISTORY_RUNS = 200
#: Kinds of run that belong to a cell (a past application's event log or REST load does not).
CELL_KINDS = ("cell", "function")
COLUMNS = (["run_id", "start", "wall_ms", "driver_ms"] + [f"{k}_ms" for k in KEYS]
           + ["code", "settings", "warm", "cold_reason", "expected_low_ms", "expected_high_ms",
              "noise_runs", "more_runs_needed", "basis", "regression", "improvement",
              "change_point", "change", "predicted_ms", "predicted_what", "predicted_by",
              "prediction_error", "label", "status", "app_id"])


class HistoryError(JupyterPerfError):
    """No runs for what was asked, in one line with the next step."""


def _fingerprint(value: Any) -> str:
    return hashlib.sha256(repr(value).encode("utf-8", "surrogatepass")).hexdigest()[:12]


class _LightRun:
    """What the settings fingerprint and diff (``analysis/compare.config_of``) read of a run:
    master, Spark version, settings, the executors table and the slots, from run.json. Not a
    Run: a Run conforms every one of its tables, which made a series of 100 runs take seconds."""

    slots = Run.slots                       # the one rule, read from the executors table

    def __init__(self, meta: dict):
        self.run_id = str(meta.get("run_id"))
        self.master = str(meta.get("master") or "")
        self.spark_version = str(meta.get("spark_version") or "")
        self.extra = dict(meta.get("extra") or {})
        self.executors = conform("executors", pd.DataFrame(meta.get("executors") or []))


def _light_run(meta: dict) -> _LightRun:
    """Just what the settings fingerprint reads (no task data)."""
    return _LightRun(meta)


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


#: What ``_row`` read from each run.json, by (run directory, its run.json's mtime and size): a
#: run is written once, so a kernel or the server reads each old run's run.json once, not at
#: every report or sidebar poll (the report's series and the sidebar's sparklines).
_ROW_CACHE: dict[str, tuple[tuple[int, int], dict]] = {}
_ROW_CACHE_MAX = 4096


def _row(store: RunStore, index_row: dict) -> dict | None:
    try:
        folder = store.run_dir(index_row["run_id"])
        st = os.stat(os.path.join(folder, rundir.RUN_JSON))
        stamp = (st.st_mtime_ns, st.st_size)
        hit = _ROW_CACHE.get(folder)
        if hit is not None and hit[0] == stamp:
            meta_row = hit[1]
        else:
            meta_row = _meta_row(rundir.read_meta(folder))
            if len(_ROW_CACHE) >= _ROW_CACHE_MAX:
                _ROW_CACHE.clear()
            _ROW_CACHE[folder] = (stamp, meta_row)
    except Exception:  # broad: a damaged or vanished run is left out of the series
        return None
    wall = float(index_row.get("wall_ms") or 0.0)
    start = meta_row["start_ms"] or float(index_row.get("created_ms") or 0.0)
    row = {"run_id": index_row["run_id"], "start_ms": start, "wall_ms": wall,
           "created_ms": float(index_row.get("created_ms") or 0.0),
           "code": (index_row.get("source_hash") or "")[:12], "settings": meta_row["settings"],
           "app_id": meta_row["app_id"], "executor_added_ms": meta_row["executor_added_ms"],
           "label": index_row.get("label") or "", "status": index_row.get("status") or "ok",
           "num_jobs": int(index_row.get("num_jobs") or 0), "_light": meta_row["_light"],
           "hint_settings": meta_row["hint_settings"]}
    row.update(meta_row["components"])
    return row


def _hint_settings(summary: Any) -> tuple[str, ...] | None:
    """The settings the stored summary's hints advise (None: a summary without hints)."""
    hints = summary.get("hints") if isinstance(summary, dict) else None
    if not isinstance(hints, list):
        return None
    out = []
    for h in hints:
        if isinstance(h, dict):
            out += [str(kv[0]) for kv in (h.get("settings") or [])
                    if isinstance(kv, (list, tuple)) and kv and kv[0]]
            if h.get("setting"):
                out.append(str(h["setting"]))
    return tuple(sorted(set(out)))


def _meta_row(meta: dict) -> dict:
    """What a series needs of one run.json (no task data)."""
    light = _light_run(meta)
    ex = light.executors
    added = np.nan
    if not ex.empty and "executor_id" in ex and "add_ms" in ex:
        workers = ex[ex["executor_id"].astype(str) != "driver"]
        if len(workers):
            added = pd.to_numeric(workers["add_ms"], errors="coerce").max()
    return {"start_ms": float(meta.get("start_ms") or 0.0),
            "settings": _fingerprint(config_key(light)), "app_id": str(meta.get("app_id") or ""),
            "executor_added_ms": added, "_light": light,
            "hint_settings": _hint_settings(meta.get("summary")),
            "components": _components(meta.get("summary"), 0.0)}


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
            parts.append(f"not decomposed ({one_line(exc, limit=100)})")
    return "; ".join(parts)


# -- the what-if checked by the series ------------------------------------------------------------
#: What moves with the slots (``analysis/compare.config_of``'s setup keys and the settings that
#: size the executors): a run that changed only these, and the slots, checks the what-if.
SLOT_KEYS = frozenset({"master", "executors", "cores (slots)", "spark.master",
                       "spark.executor.instances", "spark.executor.cores", "spark.cores.max"})
#: Pairs (earlier run, run) analysed in this process that gave no prediction, with why (a pair
#: with a prediction is in the store's record and read back from it).
_NO_PREDICTION: dict[tuple[str, str], str] = {}
_NO_PREDICTION_MAX = 4096
PREDICTION_DEFAULTS = {"predicted_ms": np.nan, "predicted_what": "", "predicted_by": "",
                       "prediction_error": np.nan}


def _predictable(prev: pd.Series, cur: pd.Series) -> bool:
    """Whether ``cur`` differs from the earlier warm run ``prev`` only in what a prediction
    covers: the same code, and every setting that differs is the slots (with what moves with
    them) or one that ``prev``'s stored hints advised (any, for a summary without hints)."""
    if prev["code"] != cur["code"] or prev["settings"] == cur["settings"]:
        return False
    if not (float(prev["wall_ms"]) > 0 and float(cur["wall_ms"]) > 0) or cur["status"] != "ok":
        return False
    diff = config_diff(prev["_light"], cur["_light"])
    if not diff or "Spark version" in diff:
        return False
    slots = "cores (slots)" in diff
    advised = prev.get("hint_settings")
    return all((slots and k in SLOT_KEYS)
               or (k.startswith("spark.") and (advised is None or k in advised)) for k in diff)


def _why_not(p: dict) -> str:
    """Why a prediction has no time (``hint_predictions``: B applied A's value, which A did not
    simulate, or B used another value than A advised)."""
    if p.get("kind") == "setting" and p.get("what") == f"{p.get('setting')}={p.get('value')}":
        return "not predicted: the hint that advised it was a suggestion, not simulated"
    return "not predicted: the run used another value than the hint advised"


def _prediction_cells(preds: list[dict], wall_ms: float) -> tuple[float, str]:
    """(predicted_ms, predicted_what) of a run from A's predictions of what it changed."""
    if not preds:
        return np.nan, "not predicted: the earlier run's analysis advised none of the changes"
    if len(preds) > 1:
        return np.nan, (" and ".join(str(p.get("what")) for p in preds)
                        + ": changed together, each predicted alone (jupyter-perf accuracy)")
    p = preds[0]
    if p.get("predicted_ms") is None or not np.isfinite(float(p["predicted_ms"])):
        return np.nan, f"{p.get('what')} ({_why_not(p)})"
    return float(p["predicted_ms"]), str(p.get("what"))


def _check_predictions(store: RunStore, df: pd.DataFrame, analyses: dict,
                       notes: list[str], analyse_for: str | None = None) -> None:
    """Add the prediction columns to a judged series (see the module's doc): for each warm run
    that changed against the previous warm run only what a prediction covers, the prediction
    from the store's record, else by analysing both runs (``analyses``: by run id, shared with
    ``_change``), recorded there. ``analyse_for``: analyse only the pair ending at that run
    (the report's: at most two runs loaded per report); the others come from the record or
    stay unchecked. A record that cannot be read or written is a note."""
    from ..store import accuracy

    for k, v in PREDICTION_DEFAULTS.items():
        df[k] = v
    todo: list[tuple[int, pd.Series]] = []
    prev = None
    for i in df.index:
        cur = df.loc[i]
        if is_cold(cur["warm"]):
            continue                    # cold: its wall time holds a warm-up no what-if has
        if prev is not None and _predictable(prev, cur):
            todo.append((i, prev))
        prev = cur
    if not todo:
        return
    try:
        recorded, _ = accuracy.read(store.root)
    except StoreError as exc:
        recorded = []
        notes.append(f"the record of predictions was not read: {one_line(exc, with_type=False)}")
    by_pair: dict[tuple, list[dict]] = {}
    for r in recorded:
        by_pair.setdefault((r.get("a"), r.get("b")), []).append(r)
    new_rows: list[dict] = []
    for i, prev in todo:
        pair = (str(prev["run_id"]), str(df.at[i, "run_id"]))
        wall = float(df.at[i, "wall_ms"])
        preds = by_pair.get(pair)
        why = _NO_PREDICTION.get(pair)
        if preds is None and why is None and analyse_for not in (None, pair[1]):
            continue                    # not the report's run: from the record only
        if preds is None and why is None:
            try:
                from ..analysis import analyze
                from ..analysis.compare import hint_predictions, slot_prediction

                for rid in pair:
                    if rid not in analyses:
                        analyses[rid] = analyze(store.load(rid))
                a, b = analyses[pair[0]], analyses[pair[1]]
                preds = [p for p in [slot_prediction(a, b)] if p] + hint_predictions(a, b)
                new_rows += accuracy.rows_of(
                    pair[0], pair[1], preds, a_wall_ms=float(a.wall_ms), a_master=a.run.master,
                    b_master=b.run.master, title=(a.run.label or a.run.first_line
                                                  or a.run.app_name or a.run.run_id))
            except Exception as exc:  # broad: a run that cannot be analysed keeps its row
                why = f"not predicted: could not analyse ({one_line(exc, limit=100)})"
            if not preds:
                if len(_NO_PREDICTION) >= _NO_PREDICTION_MAX:
                    _NO_PREDICTION.clear()
                why = why or _prediction_cells([], wall)[1]
                _NO_PREDICTION[pair] = why
        predicted, what = (np.nan, why) if not preds else _prediction_cells(preds, wall)
        df.at[i, "predicted_ms"] = predicted
        df.at[i, "predicted_what"] = what
        df.at[i, "predicted_by"] = pair[0]
        df.at[i, "prediction_error"] = (predicted - wall) / wall if wall > 0 else np.nan
    if new_rows:
        try:
            accuracy.record(store.root, new_rows)
        except StoreError as exc:
            notes.append(f"the predictions were not recorded: {one_line(exc, with_type=False)}")


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
        out.attrs.update({"found_by": found_by, "change_points": [], "notes": []})
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
    notes: list[str] = []
    _check_predictions(store, df, analyses, notes)
    df["start"] = pd.to_datetime(df["start_ms"], unit="ms", utc=True)
    out = df[[c for c in COLUMNS]].reset_index(drop=True)
    out.attrs.update({"found_by": found_by, "change_points": points, "notes": notes})
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
                     f"{warm:<5} {flag:<5} " + "; ".join(w for w in (r["change"],
                                                                      _prediction_words(r)) if w))
    lines.append("")
    lines.append("measured wall times; EXPECTED: the band of the warm runs before it with the "
                 "same code and settings (else the usual before a change), median ± 4 robust "
                 "SDs of ln(wall); cold runs (first of their code in a Spark application) are "
                 "not learned from or flagged; * = the level moved here (change point)")
    for p in df.attrs.get("change_points") or []:
        lines.append(f"change point at run {p['run_id']}: {fmt.ms(p['before_ms'])} → "
                     f"{fmt.ms(p['after_ms'])} ({p['shift']:+.0%}, medians of the warm runs "
                     "before and after)")
    if df["predicted_by"].astype(bool).any():
        lines.append("predicted: the earlier warm run's what-if (estimated) for what this run "
                     "changed, beside its measured wall time; jupyter-perf accuracy aggregates them")
    lines += list(df.attrs.get("notes") or [])
    return "\n".join(lines)


def _prediction_words(r: pd.Series) -> str:
    """"predicted 1.20 s by run X, -8.0%" (or what was changed and why nothing was predicted)."""
    from .. import fmt

    if not r.get("predicted_by"):
        return ""
    if pd.isna(r["predicted_ms"]):
        return f"against run {r['predicted_by']}: {r['predicted_what']}"
    return (f"predicted {fmt.ms(r['predicted_ms'])} by run {r['predicted_by']} for "
            f"{r['predicted_what']}, {fmt.change(r['predicted_ms'], r['wall_ms'])}")


# -- the series the report and the sidebar draw ---------------------------------------------------
#: How many runs of the cell the report's History tab shows (around the run), and how many the
#: sidebar's sparkline shows (ending at the row's run). The judgement reads up to
#: :data:`SERIES_READ` of the cell's latest runs, as ``jp.history`` does up to HISTORY_RUNS.
SERIES_SHOWN = 60
SPARK_SHOWN = 20
SERIES_READ = 120
_FRAME_CACHE: dict[tuple, pd.DataFrame] = {}
_FRAME_CACHE_MAX = 256


def _noise_at(df: pd.DataFrame, i: int) -> Noise:
    """The band run ``i`` was judged against (``judge_series``' rule: its own code and settings'
    warm runs before it, else the latest earlier group that had enough)."""
    seen: dict[Any, list[float]] = {}
    latest = None
    for j in range(i):
        wall = float(df.at[j, "wall_ms"] or 0.0)
        if is_cold(df.at[j, "warm"]) or wall <= 0:
            continue
        g = df.at[j, "group"]
        seen.setdefault(g, []).append(wall)
        if learn(seen[g]).known:
            latest = g
    own = learn(seen.get(df.at[i, "group"], []))
    if own.known or latest is None or latest == df.at[i, "group"]:
        return own
    return learn(seen[latest])


def _moved(prev: pd.Series, cur: pd.Series) -> list[tuple[str, float]]:
    """The components that moved most between two runs (each at its run's parallelism, as the
    history's columns; from run.json, no task data)."""
    out = [("driver gaps", float(cur["driver_ms"]) - float(prev["driver_ms"]))]
    out += [(BY_KEY[k].label, float(cur[f"{k}_ms"]) - float(prev[f"{k}_ms"])) for k in KEYS]
    out = [(n, v) for n, v in out if np.isfinite(v) and abs(v) >= 0.5]
    return sorted(out, key=lambda p: -abs(p[1]))[:3]


def _series_frame_cached(store: RunStore, rows: list[dict],
                         predict: str | None = None) -> pd.DataFrame:
    """``series_frame`` with change points and cheap ``change`` words (settings, code, the
    components that moved: no run is loaded), remembered by the runs it was made of. With
    ``predict`` (a run id), also the predictions (``_check_predictions``: the two runs around
    a change a prediction covers that ends at that run are analysed once, then read back from
    the record; the other runs' are read from the record)."""
    key = (store.root, tuple((r["run_id"], r.get("wall_ms"), r.get("status")) for r in rows),
           predict)
    hit = _FRAME_CACHE.get(key)
    if hit is not None:
        return hit
    df = series_frame(store, rows)
    df["change_point"] = False
    df["change"] = ""
    df["shift"] = np.nan
    if len(df):
        warm_idx = [i for i in df.index if not is_cold(df.at[i, "warm"])]
        enough = len(warm_idx) >= 2 * MIN_SEGMENT       # else none (and no ruptures import)
        for p in (change_points(df.loc[warm_idx, "wall_ms"].tolist()) if enough else []):
            i = warm_idx[p["index"]]
            df.at[i, "change_point"] = True
            df.at[i, "shift"] = p["shift"]
        prev = None
        for i in df.index:
            cur = df.loc[i]
            if prev is not None and bool(cur["regression"] or cur["improvement"]
                                         or cur["change_point"]):
                words = _change(store, prev, cur, {}, decompose=False)
                moved = _moved(prev, cur)
                if moved:
                    lead = (f"{_words(float(cur['wall_ms']) - float(prev['wall_ms']))} vs run "
                            f"{prev['run_id']}: " + ", ".join(f"{n} {_words(v)}" for n, v in moved))
                    words = "; ".join(w for w in (lead, words) if w)
                df.at[i, "change"] = words
            if not is_cold(cur["warm"]):
                prev = cur
    if predict and len(df):
        _check_predictions(store, df, {}, [], analyse_for=predict)
    if len(_FRAME_CACHE) >= _FRAME_CACHE_MAX:
        _FRAME_CACHE.clear()
    _FRAME_CACHE[key] = df
    return df


def _flag(v: Any) -> bool | None:
    return None if v is None or (isinstance(v, float) and np.isnan(v)) else bool(v)


def cell_series(store: RunStore, run_row: dict, shown: int = SERIES_SHOWN,
                read: int = SERIES_READ) -> dict | None:
    """The series of ``run_row``'s cell as plain data for the report's History tab (columns of
    the shown runs, oldest first, the run's position among them, the band it was judged
    against, the predictions checked by the series); None when the store holds no other run of
    the cell. Reads the index and each run's run.json once per process; task data only for
    this run and the warm run before it when this run changed what a prediction covers, once
    (then the record of predictions)."""
    rows = cell_rows(store, run_row, read)
    if len(rows) < 2:
        return None
    df = _series_frame_cached(store, rows, predict=str(run_row.get("run_id") or "") or None)
    hits = df.index[df["run_id"] == run_row.get("run_id")].tolist()
    if len(df) < 2 or not hits:
        return None
    target = hits[0]
    n = len(df)
    start = max(0, min(target, n - shown))
    part = df.iloc[start:start + shown]
    noise = _noise_at(df, target)
    cur = df.loc[target]
    warm_before = int(sum(1 for j in range(target) if not is_cold(df.at[j, "warm"])
                          and df.at[j, "wall_ms"] > 0))
    return {
        "run_id": str(cur["run_id"]), "index": int(target - start), "ordinal": int(target + 1),
        "total": int(n), "first_ordinal": int(start + 1), "read_limit": int(read),
        "warm_before": warm_before,
        "runs": {
            "run_id": part["run_id"].astype(str).tolist(),
            "start_ms": part["start_ms"].astype(float).tolist(),
            "wall_ms": part["wall_ms"].astype(float).tolist(),
            "warm": [_flag(v) for v in part["warm"]],
            "cold_reason": part["cold_reason"].astype(str).tolist(),
            "low_ms": part["expected_low_ms"].astype(float).tolist(),
            "high_ms": part["expected_high_ms"].astype(float).tolist(),
            "basis": part["basis"].astype(str).tolist(),
            "regression": part["regression"].astype(bool).tolist(),
            "improvement": part["improvement"].astype(bool).tolist(),
            "change_point": part["change_point"].astype(bool).tolist(),
            "shift": part["shift"].astype(float).tolist(),
            "change": part["change"].astype(str).tolist(),
            "same": ((part["code"] == cur["code"]) & (part["settings"] == cur["settings"])
                     ).astype(bool).tolist(),
            "predicted_ms": part["predicted_ms"].astype(float).tolist(),
            "predicted_what": part["predicted_what"].astype(str).tolist(),
            "predicted_by": part["predicted_by"].astype(str).tolist(),
            "prediction_error": part["prediction_error"].astype(float).tolist(),
        },
        "judged": {"basis": str(cur["basis"]), "warm": _flag(cur["warm"]),
                   "cold_reason": str(cur["cold_reason"]),
                   "regression": bool(cur["regression"]),
                   "improvement": bool(cur["improvement"]),
                   "more_runs_needed": int(cur["more_runs_needed"]),
                   "change": str(cur["change"])},
        "noise": noise.as_dict(),
    }


def report_series(run: Run, store: RunStore | None = None) -> dict | None:
    """:func:`cell_series` of a stored run (the kernel's report); None when it has no earlier
    run of its cell, or the store cannot say (the report never fails for its history)."""
    if run.kind not in CELL_KINDS:
        return None                     # a past application's load is not a cell's run
    try:
        store = store or default_store()
        row = store.get(run.run_id) if valid_run_id(run.run_id) else None
        return cell_series(store, row) if row is not None else None
    except Exception:  # broad: the history is an extra; the report shows without it
        return None


def sparklines(store: RunStore, rows: list[dict], shown: int = SPARK_SHOWN) -> dict[str, dict]:
    """Per listed run (index rows): its cell's wall times up to it (the last ``shown``),
    oldest first, with the flags; the cell's series is judged once for all its listed runs."""
    out: dict[str, dict] = {}
    done: dict[str, pd.DataFrame] = {}
    for r in rows:
        rid = r.get("run_id")
        if not rid or rid in out:
            continue
        try:
            df = next((f for f in done.values() if (f["run_id"] == rid).any()), None)
            if df is None:
                df = _series_frame_cached(store, cell_rows(store, r, SERIES_READ))
                done[rid] = df
            hits = df.index[df["run_id"] == rid].tolist()
        except Exception:  # broad: a sparkline is an extra; the row is listed without it
            continue
        if len(df) < 2 or not hits:
            continue
        end = hits[0] + 1
        part = df.iloc[max(0, end - shown):end]
        if len(part) < 2:
            continue
        out[rid] = {"run_id": part["run_id"].astype(str).tolist(),
                    "wall_ms": part["wall_ms"].astype(float).tolist(),
                    "cold": [is_cold(v) for v in part["warm"]],
                    "regression": part["regression"].astype(bool).tolist(),
                    "improvement": part["improvement"].astype(bool).tolist(),
                    "change_point": part["change_point"].astype(bool).tolist()}
    return out


# -- the notebook's regressions -------------------------------------------------------------------
#: How many of the store's latest runs ``regressions`` looks through for cells (each found
#: cell's series then reads up to SERIES_READ of its runs, as the report's does).
REGRESSIONS_SCAN = 1000
REGRESSION_COLUMNS = ["cell", "label", "first_line", "notebook", "run_id", "start", "wall_ms",
                      "median_ms", "expected_low_ms", "expected_high_ms", "slower", "basis",
                      "noise_runs", "runs", "latest_run_id", "change"]


def _cell_name(row: dict) -> str:
    """How a cell is named in the list: its JupyterLab cell id, else its label, else its
    source's hash in its notebook (the grouping of :func:`cell_rows`)."""
    if row.get("cell_id"):
        return str(row["cell_id"])
    if row.get("label"):
        return str(row["label"])
    return f"source {(row.get('source_hash') or '')[:12]}"


def regressions(store: RunStore | None = None, notebook: str | None = None,
                app_id: str | None = None, scan: int = REGRESSIONS_SCAN,
                decompose: bool = True) -> pd.DataFrame:
    """One row per cell whose latest warm run the one noise rule flags a regression, most
    slowed first: the cell (as :func:`cell_rows` groups runs), the run, its measured wall time,
    the band it was expected in (and its median), by how much it was slower, and ``change``
    (what moved, as ``jp.history`` says it; ``decompose=False``: without analysing the two
    runs). ``notebook``: only cells run in that notebook (the index's exact path); ``app_id``:
    only runs of that Spark application (a kernel's session), its latest warm run judged.
    ``attrs``: ``cells`` (cells looked at), ``known`` (their latest warm run had a known
    noise), ``need_more`` (not yet: too few warm runs), ``scope``."""
    store = store or default_store()
    try:
        listed = store.list(limit=scan, notebook=notebook or "")
    except StoreError as exc:
        raise HistoryError(str(exc)) from None
    listed = [r for r in listed if (r.get("kind") or "cell") in CELL_KINDS
              and (not app_id or (r.get("app_id") or "") == app_id)]
    in_scope = {r["run_id"] for r in listed}
    seen: set[str] = set()
    found: list[dict] = []
    cells = known = need_more = 0
    for r in listed:                                   # newest first: a cell once
        if r["run_id"] in seen:
            continue
        try:
            rows = cell_rows(store, r, SERIES_READ)
            df = _series_frame_cached(store, rows)
        except (StoreError, KeyError):
            continue
        seen.update(x["run_id"] for x in rows)
        seen.add(r["run_id"])
        cells += 1
        warm = [i for i in df.index if not is_cold(df.at[i, "warm"])
                and df.at[i, "run_id"] in in_scope]
        if not warm or pd.isna(df.at[warm[-1], "expected_low_ms"]):
            need_more += 1
            continue
        known += 1
        i = warm[-1]
        if not bool(df.at[i, "regression"]):
            continue
        cur = df.loc[i]
        earlier = [j for j in df.index[:i] if not is_cold(df.at[j, "warm"])]
        change = str(cur["change"])
        if decompose and earlier:
            change = _change(store, df.loc[earlier[-1]], cur, {}, decompose=True)
        by_id = {x["run_id"]: x for x in rows}
        meta = by_id.get(cur["run_id"]) or r
        noise = _noise_at(df, i)
        wall = float(cur["wall_ms"])
        found.append({
            "cell": _cell_name(meta), "label": meta.get("label") or "",
            "first_line": meta.get("first_line") or "", "notebook": meta.get("notebook") or "",
            "run_id": str(cur["run_id"]), "start": pd.to_datetime(cur["start_ms"], unit="ms",
                                                                 utc=True),
            "wall_ms": wall, "median_ms": noise.median_ms,
            "expected_low_ms": float(cur["expected_low_ms"]),
            "expected_high_ms": float(cur["expected_high_ms"]),
            "slower": wall / noise.median_ms - 1.0 if noise.median_ms else np.nan,
            "basis": str(cur["basis"]), "noise_runs": int(cur["noise_runs"]),
            "runs": int(len(df)), "latest_run_id": str(df["run_id"].iloc[-1]), "change": change})
    out = pd.DataFrame(found, columns=REGRESSION_COLUMNS)
    if len(out):
        out = out.sort_values("slower", ascending=False, kind="stable").reset_index(drop=True)
    scope = (f"notebook {notebook}" if notebook else "") + \
        ((" and " if notebook else "") + f"Spark application {app_id}" if app_id else "")
    out.attrs.update({"cells": cells, "known": known, "need_more": need_more,
                      "scope": scope or "every stored run", "scanned": len(listed)})
    return out


def regressions_text(df: pd.DataFrame) -> str:
    """The regressed cells for a terminal: one line per cell, then how many were looked at."""
    from .. import fmt

    known, more = int(df.attrs.get("known", 0)), int(df.attrs.get("need_more", 0))
    need = f"{fmt.count(more, 'cell')} need{'s' if more == 1 else ''} more runs"
    if df.empty:
        return (f"no cell regressed among {fmt.count(known, 'cell')} with a known noise; "
                f"{need} ({df.attrs.get('scope', 'every stored run')})")
    lines = [f"{'RUN':<24} {'CELL':<32} {'WALL':>9} {'EXPECTED':>19} {'SLOWER':>7}  CHANGE"]
    for _, r in df.iterrows():
        name = r["label"] or r["first_line"] or r["cell"]
        name = " ".join(str(name).split())
        name = name if len(name) <= 32 else name[:31] + "…"
        band = f"{fmt.ms(r['expected_low_ms'])}–{fmt.ms(r['expected_high_ms'])}"
        lines.append(f"{r['run_id']:<24} {name:<32} {fmt.ms(r['wall_ms']):>9} {band:>19} "
                     f"{r['slower']:>+7.0%}  {r['change']}")
    lines.append("")
    lines.append(f"{fmt.count(len(df), 'cell')} of {fmt.count(known, 'cell')} with a known "
                 f"noise regressed (the latest warm run of each, {df.attrs.get('scope')}); "
                 f"{need}. Measured wall times; EXPECTED: the band the warm runs before it "
                 f"set (median ± {BAND_K:g} robust SDs of ln(wall)); SLOWER: against their median; "
                 "jupyter-perf history RUN shows a cell's series")
    return "\n".join(lines)
