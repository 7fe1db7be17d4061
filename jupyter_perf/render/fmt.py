"""Human formatting of ms and bytes, and HTML escaping of user strings."""
from __future__ import annotations

import html
import math


def ms(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    v = float(value)
    if abs(v) < 1000:
        return f"{v:.0f} ms"
    if abs(v) < 60_000:
        return f"{v / 1000:.2f} s"
    if abs(v) < 3_600_000:
        return f"{int(v // 60000)} min {v % 60000 / 1000:.0f} s"
    return f"{int(v // 3600000)} h {int(v % 3600000 // 60000)} min"


def nbytes(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    v = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(v) < 1024 or unit == "TiB":
            return f"{v:.0f} {unit}" if unit == "B" else f"{v:.1f} {unit}"
        v /= 1024
    return f"{v:.1f} TiB"


def pct(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.0f}%" if whole else "–"


def esc(text: object) -> str:
    """Escape any user-supplied string before it goes into HTML."""
    return html.escape("" if text is None else str(text), quote=True)


def change(new: float, old: float) -> str:
    """Signed percentage change, as the What-if tab shows it (``report.js`` fmtChange)."""
    if not old:
        return "–"
    p = 100.0 * (new - old) / old
    s = f"{p:.1f}"
    return ("+" if p >= 0 and not s.startswith("-") else "") + s + "%"
