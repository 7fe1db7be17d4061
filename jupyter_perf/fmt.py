"""Human formatting of ms, bytes and counts, the run title, and HTML escaping of user strings.

This is the one Python format of the project: the report, the CLI and the kernel write with
it. Its one JavaScript twin is ``labextension/src/format.ts``: the sidebar and the report's
renderer (``labextension/src/report/``) import it. Both write the same strings:
``tests/render/fmt_vectors.json`` holds input → string pairs that the Python and the jest
tests both check; ``tests/render/text_vectors.json`` does the same for
the run title (``row.ts`` ``runTitle``) and the counts.

Rules: a value is rounded to the unit it is shown in *before* the unit is chosen, so a value
never shows as "1000 ms", "60.00 s" or "1 min 60 s"; rounding is Python's (the exact binary
value, exact ties to even); seconds within minutes and minutes within hours are two digits.
"""
from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

UNKNOWN = "–"
BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def _signed(negative: bool, text: str, zero: bool) -> str:
    return "-" + text if negative and not zero else text


def _number(value: Any) -> float | None:
    """``value`` as a float; None when it is missing, NaN or no number at all."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def _non_finite(v: float | None) -> str | None:
    """What a value that is no finite number reads as ("–" unknown, "∞", "-∞"); else None."""
    if v is None:
        return UNKNOWN
    return ("-∞" if v < 0 else "∞") if math.isinf(v) else None


def slots_x2(whatif: dict) -> str:
    """The "2× slots" what-if in words: a point, or "X–Y (a range: …)" where the run lacks
    what a point needs (``Analysis.whatif_range``: no host CPU samples on a shared host)."""
    high = whatif.get("slots_x2_high_ms")
    if high is None:
        return ms(whatif.get("slots_x2_ms"))
    return (f"{ms(whatif.get('slots_x2_low_ms'))}–{ms(high)} "
            f"({whatif.get('slots_x2_range_reason') or 'estimated; no host CPU samples'})")


def ms(value: Any) -> str:
    """Milliseconds: "12 ms", "1.25 s", "3 min 05 s", "2 h 07 min"; "–" when unknown."""
    v = _number(value)
    if (special := _non_finite(v)) is not None:
        return special
    a = abs(v)
    whole = round(a)                       # half to even, as format(a, ".0f")
    if whole < 1000:
        return _signed(v < 0, f"{whole} ms", whole == 0)
    secs = f"{a / 1000:.2f}"
    if float(secs) < 60:
        return _signed(v < 0, f"{secs} s", False)
    s = round(a / 1000)
    if s < 3600:
        return _signed(v < 0, f"{s // 60} min {s % 60:02d} s", False)
    m = round(a / 60_000)
    return _signed(v < 0, f"{m // 60} h {m % 60:02d} min", False)


def nbytes(value: Any) -> str:
    """Bytes in binary units: "512 B", "1.5 KiB", "10.7 MiB" (never "1024.0 KiB")."""
    v = _number(value)
    if (special := _non_finite(v)) is not None:
        return special
    a = abs(v)
    whole = round(a)
    if whole < 1024:
        return _signed(v < 0, f"{whole} B", whole == 0)
    x = a
    for unit in BYTE_UNITS[1:]:
        x /= 1024
        text = f"{x:.1f}"
        if float(text) < 1024 or unit == BYTE_UNITS[-1]:
            return _signed(v < 0, f"{text} {unit}", False)
    raise AssertionError("unreachable")


def pct(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.0f}%" if whole else UNKNOWN


def esc(text: object) -> str:
    """Escape any user-supplied string before it goes into HTML."""
    return html.escape("" if text is None else str(text), quote=True)


def change(new: float, old: float) -> str:
    """Signed percentage change, as the What-if tab shows it (``format.ts`` formatChange)."""
    if not old:
        return UNKNOWN
    p = 100.0 * (new - old) / old
    s = f"{p:.1f}"
    return ("+" if p >= 0 and not s.startswith("-") else "") + s + "%"


def count(value: Any, noun: str = "") -> str:
    """"1 job", "1,234 task attempts"; the number alone without a noun; "–" when unknown
    (no noun then).

    The noun takes an "s" unless the count is 1 (``format.ts`` formatCount)."""
    v = _number(value)
    if (special := _non_finite(v)) is not None:
        return special
    text = f"{v:,.0f}"
    return f"{text} {noun}{'' if v == 1 else 's'}" if noun else text


TITLE_FIELDS = ("label", "first_line", "app_id", "run_id")


def run_title(run: Any) -> str:
    """The run's title: its label, else the cell's first line, else the Spark application id,
    else the run id — each stripped, the first that is not empty (``row.ts`` runTitle).

    ``run`` is a :class:`~jupyter_perf.model.Run` or a stored run's row (a mapping with the
    same names, as ``GET runs`` and ``Store.list`` give it)."""
    for key in TITLE_FIELDS:
        value = run.get(key) if isinstance(run, Mapping) else getattr(run, key, None)
        text = str(value or "").strip()
        if text:
            return text
    return ""
