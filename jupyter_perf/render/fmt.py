"""Human formatting of ms and bytes, and HTML escaping of user strings.

This is the one duration/bytes format of the project: the report (``js/report.js`` ports
``ms`` and ``nbytes`` operation for operation), the sidebar (TypeScript) and the CLI write
the same strings. ``tests/render/fmt_vectors.json`` holds input → string pairs that the
Python, the report's JS and the sidebar's jest tests all check.

Rules: a value is rounded to the unit it is shown in *before* the unit is chosen, so a value
never shows as "1000 ms", "60.00 s" or "1 min 60 s"; rounding is Python's (the exact binary
value, exact ties to even); seconds within minutes and minutes within hours are two digits.
"""
from __future__ import annotations

import html
import math

UNKNOWN = "–"
BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def _signed(negative: bool, text: str, zero: bool) -> str:
    return "-" + text if negative and not zero else text


def ms(value: float | None) -> str:
    """Milliseconds: "12 ms", "1.25 s", "3 min 05 s", "2 h 07 min"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNKNOWN
    v = float(value)
    if math.isinf(v):
        return "-∞" if v < 0 else "∞"
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


def nbytes(value: float | None) -> str:
    """Bytes in binary units: "512 B", "1.5 KiB", "10.7 MiB" (never "1024.0 KiB")."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNKNOWN
    v = float(value)
    if math.isinf(v):
        return "-∞" if v < 0 else "∞"
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
    """Signed percentage change, as the What-if tab shows it (``report.js`` fmtChange)."""
    if not old:
        return UNKNOWN
    p = 100.0 * (new - old) / old
    s = f"{p:.1f}"
    return ("+" if p >= 0 and not s.startswith("-") else "") + s + "%"
