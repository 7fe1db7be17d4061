"""Pages without JupyterLab — the standalone export, nbconvert's HTML, the sidebar's report
view (an iframe of the same page) — draw the report with the one renderer too: BokehJS and
``static/report-renderer.js`` (``labextension/src/report/``, bundled by
``labextension/bundle-report.js``) inlined once per page, then each report as its MIME payload
in a ``<script type="application/vnd.jupyter-perf.report+json">`` right after the element it
is drawn into. The page makes no network request.
"""
from __future__ import annotations

import functools
import json
from importlib import resources as _res

from .. import fmt
from ..constants import RENDERER_BOKEH_BUNDLES, REPORT_MIME_TYPE

RENDERER = "report-renderer.js"


class RendererMissing(RuntimeError):
    """The package was installed without its built renderer."""


@functools.lru_cache(maxsize=None)
def renderer_js() -> str:
    path = _res.files("jupyter_perf.render") / "static" / RENDERER
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RendererMissing(
            "the report renderer is not built (jupyter_perf/render/static/report-renderer.js): "
            "run `jlpm build` in the source tree, or reinstall jupyter-perf") from None


@functools.lru_cache(maxsize=None)
def bokehjs_scripts() -> str:
    """``<script>`` tags with the BokehJS bundles the renderer uses inlined (this Python
    ``bokeh`` package's own files, as ``bokeh.resources.INLINE`` embeds them)."""
    from bokeh.resources import Resources
    return Resources(mode="inline", components=list(RENDERER_BOKEH_BUNDLES)).render_js()


def renderer_script() -> str:
    """The renderer bundle as one ``<script>`` (after BokehJS: it draws every report of the
    page, those after it as well, once the page has loaded)."""
    return f"<script>{_renderer_inline()}</script>"


def page_scripts() -> str:
    """What a page needs once, before its first report: BokehJS, then the renderer."""
    return bokehjs_scripts() + renderer_script()


def script_json(obj) -> str:
    """JSON that can sit inside a ``<script>`` element: ``<`` never appears raw, so a user
    string cannot close the element; ASCII only, so a lone surrogate in a user string stays a
    ``\\udXXX`` escape (JavaScript strings hold it) instead of making the page unwritable."""
    return (json.dumps(obj, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def plain_text(text: str) -> str:
    """``text`` with lone surrogates as U+FFFD: writable as UTF-8 (a page's title)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def report_element(mime_payload: dict) -> str:
    """One report: the element it is drawn into, then its payload (the renderer, already on
    the page or loaded after it, draws every such pair)."""
    run_id = fmt.esc(plain_text(str(mime_payload.get("run_id", ""))))
    return (f'<div class="jupyter-perf-report" data-run-id="{run_id}">'
            "<div class='jp-perf-muted'>Loading the report…</div></div>"
            f'<script type="{REPORT_MIME_TYPE}">{script_json(mime_payload)}</script>')


def report_page(mime_payload: dict, title: str = "jupyter-perf report") -> str:
    """A whole offline HTML document of one report."""
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<title>{fmt.esc(plain_text(title))}</title>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"{bokehjs_scripts()}</head><body style='margin:12px'>"
            f"{report_element(mime_payload)}<script>{_renderer_inline()}</script>"
            "</body></html>\n")


def _renderer_inline() -> str:
    return renderer_js().replace("</script", "<\\/script")
