"""``jupyter nbconvert --to html``: each jupyter-perf report becomes the interactive report again.

A notebook stores each report as its payload (:mod:`.inline`) plus a static ``text/html``
summary; nbconvert's HTML shows ``text/html``. For HTML exports this preprocessor replaces
that summary with the report itself: the report's data (format 2) drawn by the one renderer
(:mod:`.standalone`: BokehJS and the bundled renderer inlined **once per page**, in front of
the first report). A notebook saved with a format 1 payload (a Bokeh document built by the
kernel) gets that item and a call to ``Bokeh.embed.embed_item``, with BokehJS (core,
widgets, tables) inlined once per page. The page works offline: no CDN, no server.

Registration: the wheel installs ``share/jupyter/nbconvert/templates/base/conf.json``, whose
``preprocessors`` entry nbconvert merges into every template built on ``base`` (lab,
classic, reveal, ...); nbconvert does not read ``jupyter_nbconvert_config.d``. Other formats
(markdown, latex, pdf, ``--to notebook``) are left alone. Switch it off with
``--ReportPreprocessor.enabled=False``; use it without the conf file with
``--HTMLExporter.preprocessors=jupyter_perf.render.nbconvert.ReportPreprocessor``.

A format 1 report made with another Bokeh version than this nbconvert's keeps its static
summary with one line saying why (BokehJS must match the Bokeh that wrote the item); the report
data of format 2 is drawn with this nbconvert's BokehJS whatever Bokeh the kernel had.
"""
from __future__ import annotations

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

from .. import fmt
from ..constants import BOKEH_BUNDLES, REPORT_DATA_FORMAT, REPORT_FORMAT, REPORT_MIME_TYPE
from .standalone import script_json


def embed_html(item: dict, target: str) -> str:
    """The element, the item and the call that draws it (BokehJS must already be loaded)."""
    return (f'<div class="jupyter-perf-report" id="{target}"></div>'
            f'<script type="application/json" id="{target}-item">{script_json(item)}</script>'
            "<script>(function () {"
            f"const el = document.getElementById('{target}');"
            f"const item = JSON.parse(document.getElementById('{target}-item').textContent);"
            "Bokeh.embed.embed_item(item, el);"
            "})();</script>")


class ReportPreprocessor(Preprocessor):
    """Interactive jupyter-perf reports in HTML exports, BokehJS once per page."""

    enabled = Bool(True, help="Embed the interactive report in HTML exports.").tag(config=True)

    def __init__(self, **kw):
        # nbconvert hands a template's preprocessor its command-line config unparsed
        # (--ReportPreprocessor.enabled=False arrives as a DeferredConfigString)
        from traitlets.config.loader import DeferredConfigString
        for name, value in list(kw.items()):
            if isinstance(value, DeferredConfigString) and self.has_trait(name):
                kw[name] = value.get_value(self.traits()[name])
        super().__init__(**kw)

    def preprocess(self, nb, resources):
        if not str((resources or {}).get("output_extension") or "").endswith(".html"):
            return nb, resources
        # (output data, payload, format 1 item or None, why not drawable)
        found = []
        for cell in nb.cells:
            for out in cell.get("outputs", []):
                data = out.get("data") or {}
                if REPORT_MIME_TYPE not in data:
                    continue
                p = data[REPORT_MIME_TYPE]
                if isinstance(p, dict) and p.get("format") == REPORT_DATA_FORMAT:
                    found.append((data, p, None, renderer_problem()))
                else:
                    item, why = readable(p)
                    found.append((data, p, item, why))
        data_reports = any(item is None and not why for _, _, item, why in found)
        items = any(item is not None for _, _, item, _ in found)
        head = page_head(data_reports, items)    # BokehJS (and the renderer) once per page
        n = 0                                     # format 1 items embedded so far
        for data, p, item, why in found:
            if why:
                data["text/html"] = (f"{data.get('text/html', '')}<div class='jupyter-perf-note' "
                                     f"style='color:#8a4b00;font-size:11px'>{fmt.esc(why)}</div>")
                continue
            if item is None:                      # the report's data: the one renderer draws it
                from .standalone import report_element
                data["text/html"] = head + report_element(p)
            else:
                data["text/html"] = head + embed_html(item, f"jupyter-perf-report-{n}")
                n += 1
            head = ""
        return nb, resources


def renderer_problem() -> str:
    """'' when the renderer bundle is there, else the one line saying why it is not."""
    from .standalone import RendererMissing, renderer_js
    try:
        renderer_js()
    except RendererMissing as exc:
        return f"jupyter-perf: {exc}; showing its summary."
    return ""


def page_head(data_reports: bool, items: bool) -> str:
    """BokehJS with the bundles the page's reports need (the renderer's core + API, a format 1
    item's widgets and tables), each once, then the renderer bundle if a report needs it."""
    from bokeh.resources import Resources
    bundles = list(BOKEH_BUNDLES) if items else []
    if data_reports:
        from ..constants import RENDERER_BOKEH_BUNDLES
        bundles += [b for b in RENDERER_BOKEH_BUNDLES if b not in bundles]
    if not bundles:
        return ""
    head = Resources(mode="inline", components=bundles).render_js()
    if data_reports:
        from .standalone import renderer_script
        head += renderer_script()
    return head


def readable(p) -> tuple[dict | None, str]:
    """(the payload's Bokeh item, "") when this nbconvert can embed it, else (None, why)."""
    import bokeh

    from .inline import decode_item  # Bokeh and the report load only for a report to embed
    if not isinstance(p, dict) or p.get("format") != REPORT_FORMAT:
        return None, "jupyter-perf: this report's format is unknown to this version; showing its summary."
    if p.get("bokeh_version") != bokeh.__version__:
        return None, (f"jupyter-perf: the report was made with Bokeh {p.get('bokeh_version')} and "
                      f"this nbconvert has Bokeh {bokeh.__version__}; showing its summary.")
    try:
        return decode_item(p), ""
    except (ValueError, OSError, EOFError) as exc:
        return None, f"jupyter-perf: the report payload cannot be read ({exc}); showing its summary."
