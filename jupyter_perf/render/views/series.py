"""A cell's runs as a series in the report (issue T): the History tab's data and the Summary's
context line. Drawn by ``labextension/src/report/tabs/history.ts``; every word is written here.

The input is ``service/history.cell_series`` (the runs of the report's cell from the store,
judged by the one noise rule of ``analysis/series.py``); the kernel passes it in (``render/``
never reads the store). A run whose cell has no other stored run has no series: no History
tab and no context line.

Wall times are measured (Spark's job times); the band is estimated from the warm runs before
each run (median ± 4 robust SDs of ln(wall)); the "what moved" of a flagged run is each
component's share of the wall time at the run's parallelism (estimated components as the
report's). A run that changed only what the previous warm run's what-if predicts (the slots,
or a setting one of its hints advised) shows that prediction (estimated) beside its measured
wall time, with the signed error (``service/history._check_predictions``).
"""
from __future__ import annotations

import math
from typing import Any

from ... import fmt
from ...analysis.series import BAND_K, MIN_WARM_RUNS

LABELS = {
    "x": "run of this cell (oldest first)",
    "y": "wall time (measured)",
    "run": "wall time of a warm run (measured)",
    "cold": "cold run: first of its code in its Spark application, or new executors "
            "(not judged, not learned from)",
    "current": "this run",
    "band": f"expected band: median ± {BAND_K:g} robust SDs of ln(wall) of the warm runs "
            "before it (estimated)",
    "regression": "regression: slower than its band",
    "improvement": "improvement: faster than its band",
    "change_point": "change point: the level of the warm runs moved here",
    "predicted": "predicted by the previous warm run's what-if for what this run changed "
                 "(estimated)",
}
COLUMNS = [
    {"key": "ordinal", "title": "#", "format": "int", "help": "the run's place in the cell's series"},
    {"key": "run_id", "title": "run", "format": "text", "help": "run id"},
    {"key": "start", "title": "start (UTC)", "format": "text", "help": "when the run started"},
    {"key": "wall_ms", "title": "wall", "format": "ms", "help": "wall time (measured)"},
    {"key": "predicted_ms", "title": "predicted (estimated)", "format": "ms",
     "help": "the previous warm run's prediction for this run's wall time, when this run "
             "changed only what it predicts (the slots, or a setting its hint advised)"},
    {"key": "prediction", "title": "prediction", "format": "text",
     "help": "what the prediction was for, the run that made it, and its error against the "
             "measured wall time (or why none could be made)"},
    {"key": "expected", "title": "expected", "format": "text",
     "help": "the band the warm runs before it set (estimated); unknown below "
             f"{MIN_WARM_RUNS} warm runs with the same code and settings"},
    {"key": "warm_text", "title": "warm", "format": "text",
     "help": "cold: first run of its code in its Spark application, or executors added"},
    {"key": "flag", "title": "flag", "format": "text",
     "help": "regression / improvement by the noise rule; change point: the level moved"},
    {"key": "change", "title": "what changed", "format": "text",
     "help": "against the previous warm run: wall-time parts that moved (each component at "
             "the run's parallelism), settings that differ, code changed"},
]


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, …, 11th, 12th, 13th, 21st."""
    n = int(n)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _runs(n: int) -> str:
    return f"{n} warm run{'s' if n != 1 else ''}"


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and math.isfinite(v)


def context_parts(series: dict | None) -> list | None:
    """The Summary's context line as parts: strings, and ``("ms", value, key)`` numbers; None
    without a series."""
    if not series:
        return None
    j, noise = series["judged"], series["noise"]
    wall = series["runs"]["wall_ms"][series["index"]]
    head = f"{ordinal(series['ordinal'])} run of this cell: "
    if j["warm"] is False:
        return [head + f"a cold run ({j['cold_reason'] or 'not warm'}): not judged against "
                       "the noise and not learned from"]
    if not noise.get("known"):
        more = int(noise.get("more") or MIN_WARM_RUNS)
        have = int(noise.get("runs") or 0)
        return [head + f"noise unknown: {more} more warm run{'s' if more != 1 else ''} with "
                       f"this code and settings would settle it ({have} so far)"]
    median, low, high = noise["median_ms"], noise["low_ms"], noise["high_ms"]
    whose = ("the " + _runs(noise["runs"]) + " before the change"
             if j["basis"] == "before the change" else "its last " + _runs(noise["runs"]))
    if j["regression"] or j["improvement"]:
        rel = wall / median - 1.0 if median else 0.0
        side, what = (("slower", "a regression") if j["regression"]
                      else ("faster", "an improvement"))
        parts: list = [head + f"{side} than {whose} by {abs(rel):.0%} ({what}; median ",
                       ("ms", median, "series_median_ms"), ", expected ",
                       ("ms", low, "series_low_ms"), "–", ("ms", high, "series_high_ms"), ")"]
        if j["change"]:
            parts.append(f" — {j['change']}")
        return parts
    return [head + f"within noise of {whose} (median ", ("ms", median, "series_median_ms"),
            ", expected ", ("ms", low, "series_low_ms"), "–", ("ms", high, "series_high_ms"),
            ")"]


def context_text(series: dict | None) -> str:
    """The context line as plain text (the CLI's and tests' form of the Summary's row)."""
    parts = context_parts(series) or []
    return "".join(p if isinstance(p, str) else fmt.ms(p[1]) for p in parts)


def context_row(series: dict | None) -> dict | None:
    """The Summary's key-numbers row (``summary.py``'s items: a number is ``{"v", "f", "key"}``)
    for the context line."""
    parts = context_parts(series)
    if parts is None:
        return None
    items = [p if isinstance(p, str) else
             {"v": float(p[1]) if _finite(p[1]) else None, "f": p[0], "key": p[2]}
             for p in parts]
    if series["judged"]["regression"] and isinstance(items[0], str):
        items[0] = {"t": items[0], "c": "err"}
    return {"key": "series", "label": "this cell's runs", "items": items}


def with_context(rows: list[dict], series: dict | None) -> list[dict]:
    """The Summary's key-number rows with the context row after the wall time (unchanged
    without a series)."""
    row = context_row(series)
    if row is None:
        return rows
    at = next((i + 1 for i, r in enumerate(rows) if r.get("key") == "wall"), 0)
    return rows[:at] + [row] + rows[at:]


def _prediction_text(what: str, by: str, predicted: Any, wall: Any) -> str:
    """"slots ×2 (2 → 4), by run X: +3.1% against the measured" (or why nothing was predicted)."""
    if not by:
        return ""
    if _finite(predicted) and _finite(wall) and wall > 0:
        return f"{what}, by run {by}: {fmt.change(predicted, wall)} against the measured"
    return f"{what}, against run {by}"


def _start_text(ms: Any) -> str:
    import datetime

    if not _finite(ms) or ms <= 0:
        return ""
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S")


def data(a, ctx) -> dict | None:
    """The History tab's part of the report (``ctx.series``; None: no tab)."""
    return series_data(getattr(ctx, "series", None))


def series_data(series: dict | None) -> dict | None:
    """The History tab's data; None (no tab) without a series."""
    if not series:
        return None
    r = series["runs"]
    n = len(r["run_id"])
    first = int(series["first_ordinal"])
    noise = series["noise"]
    predicted = [v if _finite(v) else None for v in r.get("predicted_ms") or [None] * n]
    what = r.get("predicted_what") or [""] * n
    by = r.get("predicted_by") or [""] * n
    rows = []
    for i in range(n):
        low, high = r["low_ms"][i], r["high_ms"][i]
        flag = ("regression" if r["regression"][i] else "improvement" if r["improvement"][i]
                else "")
        if r["change_point"][i]:
            shift = r["shift"][i]
            cp = "change point" + (f" ({shift:+.0%})" if _finite(shift) else "")
            flag = f"{flag}, {cp}" if flag else cp
        warm = r["warm"][i]
        rows.append({
            "ordinal": first + i, "run_id": r["run_id"][i], "start": _start_text(r["start_ms"][i]),
            "wall_ms": r["wall_ms"][i], "predicted_ms": predicted[i],
            "prediction": _prediction_text(what[i], by[i], predicted[i], r["wall_ms"][i]),
            "expected": (f"{fmt.ms(low)}–{fmt.ms(high)}"
                         + (" (before the change)" if r["basis"][i] == "before the change"
                            else "")) if _finite(low) and _finite(high) else "unknown",
            "warm_text": {True: "warm", False: "cold"}.get(warm, "unknown"),
            "cold_reason": r["cold_reason"][i] if warm is False else "",
            "flag": flag, "change": r["change"][i],
        })
    if noise.get("known"):
        band = (f"This run's band: {fmt.ms(noise['low_ms'])}–{fmt.ms(noise['high_ms'])} "
                f"(median {fmt.ms(noise['median_ms'])} of {_runs(noise['runs'])}; "
                f"{noise['rule']}).")
    else:
        more = int(noise.get("more") or MIN_WARM_RUNS)
        band = (f"noise unknown: {more} more warm run{'s' if more != 1 else ''} with this code "
                f"and settings before the band is known ({int(noise.get('runs') or 0)} so far; "
                f"{MIN_WARM_RUNS} are needed).")
    shown = (f"Runs {first}–{first + n - 1} of the {series['total']} stored runs of this cell"
             + (f" (the latest {series['read_limit']} are read)"
                if series["total"] >= series["read_limit"] else "") + ".")
    points = [{"ordinal": first + i, "run_id": r["run_id"][i], "text": rows[i]["flag"]}
              for i in range(n) if r["change_point"][i]]
    return {
        "context": context_text(series), "band": band, "shown": shown,
        "note": "Wall times are measured; bands are estimated from the warm runs before each "
                "run with the same code and settings (else the cell's usual before a change). "
                "Cold runs are marked and never judged. The same rule as jp.history, "
                "%perfmeasure history and jp.compare (docs/compare.md).",
        "index": int(series["index"]), "run_id": series["run_id"],
        "x": [first + i for i in range(n)],
        "wall_ms": r["wall_ms"], "low_ms": r["low_ms"], "high_ms": r["high_ms"],
        "warm": r["warm"], "same": r["same"], "regression": r["regression"],
        "improvement": r["improvement"], "change_point": r["change_point"],
        "predicted_ms": predicted, "rows": rows, "columns": COLUMNS, "labels": LABELS,
        "change_points": points,
        "colors": {"run": "#1f77b4", "cold": "#9e9e9e", "regression": "#d62728",
                   "improvement": "#2ca02c", "band": "#1f77b4", "current": "#111111",
                   "change_point": "#ff7f0e", "predicted": "#9467bd"},
    }
