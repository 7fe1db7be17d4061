"""The standalone report: one offline HTML page of a Run or an Analysis.

The page is drawn in the browser by the one renderer (``labextension/src/report/``) from the
report's data (``views.report_data``): ``standalone.report_page`` inlines BokehJS and the
renderer bundle, so the file makes no network request. The sidebar's report view shows the
same page (the server's ``report_html``).
"""
from __future__ import annotations

import os

from ..analysis import Analysis
from ..atomic import write_export
from ..model import Run
from . import standalone
from .views import report_payload

TITLE = "jupyter-perf report"


def report_html(obj: Run | Analysis, series: dict | None = None) -> str:
    """One standalone HTML document of a Run or an Analysis. A Run is analysed first; if that
    fails, the fallback report (header, breakdown, stages) with the reason, so a measured run
    always renders. ``series``: the cell's stored runs (``service/history.report_series``: the
    History tab and the Summary's context line, as in the notebook), if any."""
    if not isinstance(obj, (Run, Analysis)):
        raise TypeError(f"expected a jupyter_perf Run or Analysis, got {type(obj).__name__}")
    payload = report_payload(obj, series)
    return standalone.report_page(payload, f"{TITLE}: {payload['title']}")


def export(obj: Run | Analysis, path: str | os.PathLike, series: dict | None = None) -> str:
    """Write the standalone report to ``path`` atomically (temp file + rename); returns the path.
    ``series``: as for :func:`report_html`."""
    path = os.fspath(path)
    html = report_html(obj, series)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    return write_export(path, html, getattr(obj, "run", obj).run_id)   # atomic.py: never through a link
