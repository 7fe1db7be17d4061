"""Small builders every tab uses: an HTML Div with the report's styles, a legend, a table."""
from __future__ import annotations

from typing import Any, Iterable

from bokeh.document import Document
from bokeh.models import (
    ColumnDataSource,
    DataTable,
    Div,
    InlineStyleSheet,
    NumberFormatter,
    StringEditor,
    StringFormatter,
    TableColumn,
)

from .. import fmt
from ..analysis.components import COMPONENTS
from .style import CSS, ESTIMATED_HATCH

NUMBER_FORMATS = {"int": "0,0", "ms": "0,0.0", "pct": "0.0%", "bytes": "0.0 b", "float": "0,0.00"}


def div(html: str, name: str | None = None, **kw: Any) -> Div:
    """A Div whose ``html`` is trusted markup built by us (user strings already escaped)."""
    kw.setdefault("sizing_mode", "stretch_width")
    kw.setdefault("disable_math", True)   # "$$…$$" in a user string must not fetch MathJax
    if name:
        kw.setdefault("css_classes", [name])      # a CSS hook for tests and user styles
    return Div(text=f"<div class='jp'>{html}</div>", name=name, **kw)


def share_styles(doc: Document) -> None:
    """Give every Div of ``doc`` the report's one stylesheet (serialised once, referenced by
    each Div; Bokeh 3 draws a Div in its own shadow root, so each needs it)."""
    sheet = InlineStyleSheet(css=CSS)
    # One recount of the document's models for all Divs: without freeze() Bokeh walks every
    # model (and the data sources' columns) again after each assignment, which was half of a
    # measured cell's cost after its query (benchmarks/overhead.py --profile).
    with doc.models.freeze():
        for d in doc.select({"type": Div}):
            d.stylesheets = [*d.stylesheets, sheet]


def swatch(color: str, estimated: bool, hatched: bool = True) -> str:
    """A legend square: estimated = hatched (bar charts) or lighter (timelines)."""
    if estimated and hatched:
        bg = f"repeating-linear-gradient(135deg,{color} 0 3px,#fff 3px 5px)"
    else:
        bg = color
    op = "opacity:0.45;" if estimated and not hatched else ""
    return (f"<span style='display:inline-block;width:11px;height:11px;background:{bg};{op}"
            f"border:1px solid {color};vertical-align:-1px;margin-right:3px'></span>")


def present_components(a) -> list[str]:
    """Keys of the components with any time in ``a`` (an Analysis), in stacking order."""
    return [c.key for c in COMPONENTS if a.breakdown[c.key]["ms"] > 0] or [COMPONENTS[0].key]


def timeline_legend(keys: Iterable[str] | None = None) -> str:
    """Legend of timeline bars: the components (``keys``: those present; default all)."""
    shown = set(keys) if keys is not None else None
    items = [f"{swatch(c.color, c.estimated, hatched=False)}{fmt.esc(c.label)}"
             for c in COMPONENTS if shown is None or c.key in shown]
    marks = ("<span style='color:#d62728'>▭ red outline</span>: failed/killed attempt · "
             "<span style='color:#9467bd'>dashed</span>: speculative · "
             "black outline: straggler · ✕ failed/killed · ◆ speculative")
    return ("<div>" + " &nbsp; ".join(items) + "</div><div class='muted'>"
            f"Lighter: estimated (not measured by Spark). {marks}</div>")


def stacked_hbars(p, rows: dict[str, list]) -> None:
    """One renderer for a whole stacked bar chart: ``rows`` has y, left, right, estimated
    (bool) and any hover fields; colour per row in ``color``. Estimated parts are lighter and
    hatched."""
    est = [bool(e) for e in rows["estimated"]]
    data = dict(rows) | {"alpha": [0.55 if e else 1.0 for e in est],
                         "hatch": [ESTIMATED_HATCH if e else " " for e in est]}
    p.hbar(y="y", left="left", right="right", height=0.7, source=ColumnDataSource(data),
           fill_color="color", fill_alpha="alpha", line_color="white", hatch_pattern="hatch",
           hatch_color="#444444", hatch_alpha=0.55, hatch_scale=8)


KIND_WIDTH = {"text": 170, "wide": 300, "int": 60}      # px; other kinds 80
CHAR_PX = 7                                 # a header character at the table's font size


def table(columns: Iterable[tuple[str, str, str]], data: dict[str, list], *, height: int,
          name: str | None = None, fit: bool = False, frozen: int = 1,
          source: ColumnDataSource | None = None,
          **kw: Any) -> tuple[DataTable, ColumnDataSource]:
    """``columns``: (field, title, kind) with kind ``text`` | ``wide`` (long text) | ``int`` |
    ``ms`` | ``float`` | ``pct`` | ``bytes``. Text cells use StringFormatter, which writes text, not markup.

    Every column is at least as wide as its header, so no header is cut. ``fit``: the columns
    fill the table's width (small tables); otherwise a wide table scrolls sideways with its
    first ``frozen`` columns kept in view. ``source``: a data source to show (shared with a
    chart) instead of a new one holding ``data``."""
    cols = []
    # one formatter per kind and one (unused: tables are read-only) editor per table, each
    # serialised once and referenced by every column
    formatters: dict[str, Any] = {}
    editor = StringEditor()
    for field, title, kind in columns:
        if kind not in formatters:
            formatters[kind] = (StringFormatter() if kind in ("text", "wide") else
                                NumberFormatter(format=NUMBER_FORMATS.get(kind, "0,0.00"),
                                                nan_format="–", null_format="–"))
        width = max(KIND_WIDTH.get(kind, 80), CHAR_PX * len(title) + 20)
        cols.append(TableColumn(field=field, title=title, formatter=formatters[kind],
                                editor=editor, width=width))
    if source is None:
        source = ColumnDataSource(data, name=(name + "-source") if name else None)
    kw.setdefault("sizing_mode", "stretch_width")
    # force_fit: the columns are scaled to fill the width ("fit_columns" and "fit_viewport"
    # measure cell contents with SlickGrid code that throws "row is not defined" in Bokeh 3.9)
    kw.setdefault("autosize_mode", "force_fit" if fit else "none")
    if not fit and frozen:
        kw.setdefault("frozen_columns", frozen)
    if name:
        kw.setdefault("css_classes", [name])
    t = DataTable(source=source, columns=cols, height=height, index_position=None,
                  name=name, **kw)
    return t, source


def table_height(rows: int, cap: int = 420) -> int:
    """Header plus every row, up to ``cap`` px (then the table scrolls)."""
    return min(cap, 34 + 26 * max(1, rows))


def stage_label(stage_id: int, attempt: int) -> str:
    """"stage 5"; the attempt only when Spark retried the stage ("stage 5 (attempt 1)")."""
    return f"stage {int(stage_id)}" + (f" (attempt {int(attempt)})" if int(attempt) > 0 else "")


__all__ = ["div", "present_components", "share_styles", "stacked_hbars", "stage_label", "swatch",
           "table", "table_height", "timeline_legend", "ESTIMATED_HATCH"]
