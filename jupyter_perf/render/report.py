"""The interactive report: seven tabs in one Bokeh document, and its standalone offline HTML.

``report_document(a)`` builds the tabs (``tabs/``) and wires one CustomJS — ``js/format.js``
(formatting, built from the sidebar's ``format.ts``) + ``js/report.js`` (replay port, level of
detail) + ``js/main.js`` (dispatch) — to the document's ready event, both timelines' range
updates, the what-if widgets and the straggler table.
The per-task arrays it reads come from :mod:`.payload`. ``report_html`` inlines BokehJS
(``INLINE`` resources): the file makes no network request.
"""
from __future__ import annotations

import functools
import os
from importlib import resources as _res

from bokeh.document import Document
from bokeh.embed import file_html
from bokeh.layouts import column
from bokeh.models import ColumnDataSource, CustomJS, Tabs
from bokeh.resources import INLINE

from .. import fmt
from ..analysis import Analysis, analyze
from ..atomic import write_export
from ..model import Run
from . import payload
from .basic import basic_layout
from .lanes import assign_lanes
from .tabs.memory import memory_tab
from .tabs.query import query_tab
from .tabs.stages import stages_tab
from .tabs.stragglers import stragglers_tab
from .tabs.summary import header_html, summary_tab
from .tabs.timeline import BINS, DETAIL_LIMIT, timeline_tab
from .tabs.whatif import whatif_tab
from .widgets import div, share_styles

TITLE = "jupyter-perf report"
TAB_NAMES = ["Summary", "Query", "Timeline", "Stages", "Stragglers", "What-if", "Memory"]


# The browser code every report carries, in order: format.js (the sidebar's formatter,
# built from labextension/src/format.ts: the one JS formatter), report.js, main.js.
JS_FILES = ("format.js", "report.js", "main.js")


@functools.lru_cache(maxsize=None)
def js_source() -> str:
    """``JS_FILES`` as every report carries them: without indentation, blank lines
    and whole-line comments (each notebook output holds a copy; no template literal of
    ours spans lines, and ``test_report_js`` runs exactly this text)."""
    base = _res.files("jupyter_perf.render") / "js"
    text = "\n".join((base / name).read_text(encoding="utf-8") for name in JS_FILES)
    lines = (line.strip() for line in text.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("//"))


def _parts(tl):
    return {"fig": tl.fig, "agg": tl.agg, "seg": tl.seg, "box": tl.box, "status": tl.status,
            "hl": tl.highlight}


def report_document(a: Analysis) -> Document:
    """The full report of ``a`` as a Bokeh Document (tabs + the browser-side logic)."""
    run = a.run
    s = a.summary()
    tl = a.timeline
    lanes = assign_lanes(run, tl.launch, tl.duration)
    arrays, meta, extras = payload.build(a, lanes)
    flags_by_row = arrays["flags"][extras["pos"]] if len(extras["pos"]) else arrays["flags"]

    t_summary = summary_tab(a, s)
    t_timeline, tlp = timeline_tab(a, lanes, flags_by_row)
    t_query, q = query_tab(a)
    t_stages, stages_src = stages_tab(a)
    t_strag, strag_src, strag_info = stragglers_tab(a, extras["pos"], extras["straggler_rows"])
    t_whatif, w = whatif_tab(a)
    t_memory = memory_tab(a)
    panels = [t_summary, t_query, t_timeline, t_stages, t_strag, t_whatif, t_memory]
    tabs = Tabs(tabs=panels, sizing_mode="stretch_width", name="jp-tabs")
    _lazy_tabs(tabs, panels)
    header = div(header_html(run, f" · {fmt.ms(a.wall_ms)} wall · model error "
                                  f"{100 * a.model_error:.1f}%"), name="jp-header")
    root = column(header, tabs, sizing_mode="stretch_width", name="jp-report")

    cb = CustomJS(args=dict(
        P=arrays, M=payload.meta_json(meta), state=w.state, tl=_parts(tlp), sim=_parts(w.sim),
        disk=w.disk, network=w.network, slots=w.slots, toggles=w.toggles, out=w.out,
        strag=strag_src, selected=strag_info, LIMIT=DETAIL_LIMIT, BINS=BINS,
        simAxis=w.sim.fig.yaxis[0], ops=q.source or ColumnDataSource({}), opInfo=q.info,
        stagesSrc=stages_src, track=tlp.track or ColumnDataSource({})), code=js_source())
    for widget in (w.disk, w.network, w.slots):
        widget.js_on_change("value", cb)
    w.toggles.js_on_change("active", cb)
    strag_src.selected.js_on_change("indices", cb)
    if q.source is not None:
        q.source.selected.js_on_change("indices", cb)
    tlp.fig.js_on_event("rangesupdate", cb)
    w.sim.fig.js_on_event("rangesupdate", cb)
    doc = Document()
    doc.add_root(root)
    doc.js_on_event("document_ready", cb)
    doc.title = TITLE
    share_styles(doc)
    return doc


_SHOW_TAB = """
const i = tabs.active, cur = tabs.tabs[i];
if (cur.child !== real[i]) {
  // A new TabPanel (not a changed child) makes TabsView build the real views.
  const panel = new cur.constructor({title: cur.title, child: real[i]});
  tabs.tabs = tabs.tabs.map((p, j) => (j === i ? panel : p));
}
"""


def _lazy_tabs(tabs: Tabs, panels: list) -> None:
    """Only the active tab is built when the page opens; the others when first shown.

    Every model stays in the document (the what-if logic updates hidden timelines too);
    only BokehJS's views — DOM, canvases, SlickGrid tables — wait, which keeps the first
    paint of a large report fast.
    """
    real = [p.child for p in panels]
    for i, p in enumerate(panels):
        if i != tabs.active:
            p.child = div("<span class='muted'>loading…</span>")
    tabs.js_on_change("active", CustomJS(args={"tabs": tabs, "real": real},
                                         code=_SHOW_TAB))


def _as_analysis(obj) -> Analysis:
    if isinstance(obj, Analysis):
        return obj
    if isinstance(obj, Run):
        return analyze(obj)
    raise TypeError(f"expected a jupyter_perf Run or Analysis, got {type(obj).__name__}")


def fallback_document(run: Run, reason: str) -> Document:
    doc = Document()
    doc.add_root(basic_layout(run, reason))
    doc.title = TITLE
    share_styles(doc)
    return doc


def report_html(obj: Run | Analysis) -> str:
    """One standalone HTML document of a Run or an Analysis; BokehJS is inlined, no network.

    A Run is analysed first; if that analysis fails, the basic report (header, breakdown,
    stages) is returned with the reason, so a measured run always renders.
    """
    if isinstance(obj, Run):
        try:
            a = analyze(obj)
        except Exception as exc:  # broad on purpose: never lose a report to an analysis bug
            return file_html(fallback_document(obj, f"analysis failed: {type(exc).__name__}: {exc}"),
                             resources=INLINE, title=TITLE)
        return file_html(report_document(a), resources=INLINE, title=TITLE)
    return file_html(report_document(_as_analysis(obj)), resources=INLINE, title=TITLE)


def export(obj: Run | Analysis, path: str | os.PathLike) -> str:
    """Write the standalone report to ``path`` atomically (temp file + rename); returns the path."""
    path = os.fspath(path)
    html = report_html(obj)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    return write_export(path, html, getattr(obj, "run", obj).run_id)   # atomic.py: never through a link
