"""Spark's SQL metric display strings <-> numbers (ms, bytes, rows, counts).

Spark's REST ``/sql`` endpoint gives every plan node's metrics only as the strings its UI
shows (``SQLMetrics.stringValue`` in Spark 3.5), for example::

    "1,000"                                                     sum: a count
    "12.3 MiB"                                                  size, one value (or driver)
    "total (min, med, max (stageId: taskId))\\n10.0 s (0 ms, 2.1 s, 3.0 s (stage 2.0: task 5))"
    "(min, med, max (stageId: taskId)):\\n(1.2, 1.5, 2.0 (stage 3.0: task 9))"   average

:func:`parse` turns one into normalised numbers; :func:`spark_text` writes numbers the way
Spark does (for sources that have the raw values, e.g. event logs, so ``text`` is equal
across sources). Sizes are shown with one decimal of the largest binary unit (``%.1f``) and
times as ``%d ms`` / ``%.1f s`` / ``%.1f m`` / ``%.2f h``, so a value parsed back from a
display string is exact for counts and for times under 1 s, and otherwise carries Spark's
display precision (documented in docs/operators.md).

Spark's display never says whether a time metric is ``timing`` (ms) or ``nsTiming`` (ns
internally); both are shown in ms. :data:`NS_TIMING_NAMES` lists the nsTiming metrics of
Spark 3.5/4.x by name.
"""
from __future__ import annotations

import math
import re
from typing import Any

from .eventlog import sqltext

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
         "PiB": 1 << 50, "EiB": 1 << 60}
TIMES = {"ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}
NS_TIMING_NAMES = frozenset({"shuffle write time"})
STATS_PREFIX = "total (min, med, max (stageId: taskId))\n"
AVERAGE_PREFIX = "(min, med, max (stageId: taskId)):\n"

_NUMBER = r"-?[0-9][0-9,]*(?:\.[0-9]+)?"
_SIZE = re.compile(rf"^({_NUMBER}) (B|KiB|MiB|GiB|TiB|PiB|EiB)$")
_TIME = re.compile(rf"^({_NUMBER}) (ms|s|m|h)$")
_PLAIN = re.compile(rf"^{_NUMBER}$")
_STATS = re.compile(r"^(?P<total>[^()]+?) \((?P<min>[^,()]+), (?P<med>[^,()]+), "
                    r"(?P<max>[^,()]+) \((?:stage (?P<stage>-?\d+)\.(?P<attempt>-?\d+): "
                    r"task (?P<task>-?\d+)|driver)\)\)$")
_AVERAGE = re.compile(r"^\((?P<min>[^,()]+?), (?P<med>[^()]+?), (?P<max>[^()]+?) "
                      r"\((?:stage (?P<stage>-?\d+)\.(?P<attempt>-?\d+): task (?P<task>-?\d+)"
                      r"|driver)\)\)$")


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def value_of(text: str) -> tuple[str, str, float]:
    """One displayed value -> (metric_type, unit, value in ms | bytes | rows/count)."""
    text = text.strip()
    m = _SIZE.match(text)
    if m:
        return "size", "bytes", _number(m.group(1)) * UNITS[m.group(2)]
    m = _TIME.match(text)
    if m:
        return "timing", "ms", _number(m.group(1)) * TIMES[m.group(2)]
    if _PLAIN.match(text):
        return "sum", "count", _number(text)
    raise ValueError(f"not a Spark SQL metric value: {text[:60]!r}")


def parse(name: str, text: str) -> dict[str, Any]:
    """A metric's display string -> metric_type, unit, value, min, med, max,
    max_stage_id, max_stage_attempt, max_task_id (NaN / -1 where the string has none)."""
    out: dict[str, Any] = {"min": math.nan, "med": math.nan, "max": math.nan,
                           "max_stage_id": -1, "max_stage_attempt": -1, "max_task_id": -1}
    body = text[1:] if text.startswith("\n") else text
    average = body.startswith(AVERAGE_PREFIX)
    if average or body.startswith(STATS_PREFIX):
        rest = body[len(AVERAGE_PREFIX if average else STATS_PREFIX):]
        m = (_AVERAGE if average else _STATS).match(rest)
        if not m:
            raise ValueError(f"not a Spark SQL metric string: {text[:80]!r}")
        kind, unit, low = value_of(m.group("min"))
        out.update(min=low, med=value_of(m.group("med"))[2], max=value_of(m.group("max"))[2])
        out["value"] = math.nan if average else value_of(m.group("total"))[2]
        if m.group("stage") is not None:
            out.update(max_stage_id=int(m.group("stage")),
                       max_stage_attempt=int(m.group("attempt")),
                       max_task_id=int(m.group("task")))
    else:
        kind, unit, out["value"] = value_of(body)
    if average or "avg" in name.lower():
        kind, unit = "average", "count"
    elif kind == "sum":
        unit = "rows" if "rows" in name.lower() else "count"
    elif kind == "timing" and name in NS_TIMING_NAMES:
        kind = "nsTiming"
    out.update(metric_type=kind, unit=unit)
    return out


# -- the other way: Spark's own formatting, for sources that have raw values ---------------
def bytes_text(size: int) -> str:
    """Spark's ``Utils.bytesToString`` (BigDecimal, half up: the event log's formatter)."""
    return sqltext.bytes_to_string(int(size))


def ms_text(ms: int) -> str:
    """Spark's ``Utils.msDurationToString`` (of a Scala Float: the event log's formatter)."""
    return sqltext.ms_duration_to_string(int(ms))


def spark_text(metric_type: str, values: list[int], max_task: tuple[int, int, int] | None) -> str:
    """Spark's ``SQLMetrics.stringValue``: ``values`` are the raw per-task values (and driver
    updates) as Spark keeps them (ns for nsTiming); ``max_task`` = (stage, attempt, task) of
    the largest, or None for "(driver)"."""
    where = f"(stage {max_task[0]}.{max_task[1]}: task {max_task[2]})" if max_task else "(driver)"
    if metric_type == "sum":
        return f"{sum(values):,}"
    if metric_type == "average":
        valid = sorted(v for v in values if v > 0)
        avg = [_grouped(v / 10) for v in valid]
        if len(valid) <= 1:
            return avg[0] if avg else "0"
        return (f"{AVERAGE_PREFIX}({avg[0]}, {avg[len(valid) // 2]}, {avg[-1]} {where})")
    if metric_type == "size":
        fmt = bytes_text
    elif metric_type == "nsTiming":
        def fmt(ns: int) -> str:
            return ms_text(ns // 1_000_000)
    else:
        fmt = ms_text
    valid = sorted(v for v in values if v >= 0)
    if len(valid) <= 1:
        return fmt(valid[0] if valid else 0)
    return (f"{STATS_PREFIX}{fmt(sum(valid))} ({fmt(valid[0])}, {fmt(valid[len(valid) // 2])}, "
            f"{fmt(valid[-1])} {where})")


def _grouped(value: float) -> str:
    """Java's ``NumberFormat.getNumberInstance(Locale.US)``: grouping, at most 3 decimals."""
    text = f"{value:,.3f}".rstrip("0").rstrip(".")
    return text if text not in ("-0", "") else "0"
