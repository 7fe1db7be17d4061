"""A SQL metric's display text, exactly as Spark 3.5 writes it, and its normalised numbers.

Spark's ``SQLMetrics.stringValue(metricType, values, maxMetrics)`` over the values of every
task index (0 where a task never updated the metric) and the driver's updates:

* ``sum``: the total with grouping commas (``NumberFormat.getIntegerInstance(Locale.US)``);
* ``size`` / ``timing`` / ``nsTiming``: the values >= 0; one (or none) is shown alone, more
  as ``total (min, med, max (stageId: taskId))`` then ``SUM (MIN, MED, MAX (stage S.A: task
  T))`` (or ``(driver)``), each formatted by ``Utils.bytesToString`` or
  ``Utils.msDurationToString`` (ns truncated to ms first); med is the value at n / 2;
* ``average``: the values > 0, stored x10, shown with up to 3 decimals
  (``NumberFormat.getNumberInstance``); more than one as ``(min, med, max (stageId:
  taskId)):`` then ``(MIN, MED, MAX (stage S.A: task T))``.

Java's formatting is reproduced where Python's differs: ``%.1f`` rounds half up on the
decimal form of the value (a Scala ``Float`` for durations, a ``BigDecimal`` for sizes).
"""
from __future__ import annotations

import decimal
from typing import Any

import numpy as np

SUFFIX = "(min, med, max (stageId: taskId))"
_UNITS = [(1 << 60, "EiB"), (1 << 50, "PiB"), (1 << 40, "TiB"), (1 << 30, "GiB"),
          (1 << 20, "MiB"), (1 << 10, "KiB")]
_CONTEXT = decimal.Context(prec=34, rounding=decimal.ROUND_HALF_UP)   # Scala's DECIMAL128
_TENTH = decimal.Decimal("0.1")
_HUNDREDTH = decimal.Decimal("0.01")


def _half_up(value: decimal.Decimal, places: decimal.Decimal) -> str:
    return str(value.quantize(places, rounding=decimal.ROUND_HALF_UP))


def bytes_to_string(size: int) -> str:
    """Spark's ``Utils.bytesToString``: ``"%.1f %s"`` of size / unit, a unit only from 2 of
    it ("1536.0 B", "2.0 KiB")."""
    # (Spark switches to scientific notation from 2048 EiB, beyond any Long)
    for unit, name in _UNITS:
        if size >= 2 * unit:
            return f"{_half_up(_CONTEXT.divide(decimal.Decimal(size), decimal.Decimal(unit)), _TENTH)} {name}"
    return f"{_half_up(decimal.Decimal(size), _TENTH)} B"


def _float_text(quotient: np.float32, places: decimal.Decimal) -> str:
    # Java formats a float through its double value's shortest decimal form, half up.
    return _half_up(decimal.Decimal(repr(float(quotient))), places)


def ms_duration_to_string(ms: int) -> str:
    """Spark's ``Utils.msDurationToString``: "%d ms", else seconds, minutes ("%.1f") or hours
    ("%.2f") of a Scala Float."""
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{_float_text(np.float32(ms) / np.float32(1000), _TENTH)} s"
    if ms < 3_600_000:
        return f"{_float_text(np.float32(ms) / np.float32(60_000), _TENTH)} m"
    return f"{_float_text(np.float32(ms) / np.float32(3_600_000), _HUNDREDTH)} h"


def _average_text(tenths: int) -> str:
    whole, tenth = divmod(int(tenths), 10)
    return f"{whole:,}" + (f".{tenth}" if tenth else "")


_FORMAT = {"size": bytes_to_string, "timing": ms_duration_to_string,
           "nsTiming": lambda ns: ms_duration_to_string(int(ns) // 1_000_000)}
_SCALE = {"size": 1.0, "timing": 1.0, "nsTiming": 1e-6, "average": 0.1}


def metric_text(kind: str, values: np.ndarray, best: tuple | None) -> tuple[str, dict[str, Any]]:
    """(Spark's text, normalised numbers) of one metric.

    ``values``: every task index's value and the driver's updates; ``best``: (max value,
    stage id, stage attempt, task id) of the task with the largest value, None when the
    driver's was larger or no task reported. Numbers: ``value`` the total (for ``average``
    the one value shown, NaN when Spark shows statistics: it never shows a total),
    ``min``/``med``/``max`` where Spark shows them (NaN otherwise) and where the max ran
    (-1 unknown), in ms / bytes / rows.
    """
    nan = float("nan")
    stats: dict[str, Any] = {"value": nan, "min": nan, "med": nan, "max": nan,
                             "max_stage_id": -1, "max_stage_attempt": -1, "max_task_id": -1}
    values = np.asarray(values, dtype="int64")
    where = "(driver)" if best is None else f"(stage {best[1]}.{best[2]}: task {best[3]})"
    if kind == "sum":
        total = int(values.sum())
        stats["value"] = float(total)
        return f"{total:,}", stats
    if kind == "average":
        valid = np.sort(values[values > 0])
        fmt = _average_text
    elif kind in _FORMAT:
        valid = np.sort(values[values >= 0])
        fmt = _FORMAT[kind]
    else:                                       # a data source's own (V2 custom) metric
        stats["value"] = float(values.sum())
        return "N/A", stats
    scale = _SCALE[kind]
    if len(valid) <= 1:
        one = int(valid[0]) if len(valid) else 0
        stats["value"] = one * scale
        return fmt(one), stats
    lo, med, hi = int(valid[0]), int(valid[len(valid) // 2]), int(valid[-1])
    stats.update(min=lo * scale, med=med * scale, max=hi * scale)
    if best is not None:
        stats.update(max_stage_id=int(best[1]), max_stage_attempt=int(best[2]),
                     max_task_id=int(best[3]))
    if kind == "average":                       # no total: Spark shows none
        return f"{SUFFIX}:\n({fmt(lo)}, {fmt(med)}, {fmt(hi)} {where})", stats
    total = int(valid.sum())
    stats["value"] = total * scale
    return f"total {SUFFIX}\n{fmt(total)} ({fmt(lo)}, {fmt(med)}, {fmt(hi)} {where})", stats
