"""The report as a notebook output: an isolated iframe around the standalone HTML.

The iframe keeps BokehJS and the report's styles apart from JupyterLab's, and the same
document is what ``report_html`` exports, so what users see inline is exactly what they can
save — and, being ``srcdoc``, it survives ``jupyter nbconvert --to html`` and a saved
notebook reopened with no kernel: the what-if sliders run in the page. ``text/plain``
carries a one-line summary for consoles and front ends that do not render HTML.
"""
from __future__ import annotations

from bokeh.embed import file_html
from bokeh.resources import INLINE

from ..model import Run
from . import fmt
from .report import TITLE, fallback_document, report_html

HEIGHT = 860


def bundle(run: Run, analysis=None) -> dict[str, str]:
    """MIME bundle for ``display(..., raw=True)``. ``analysis`` None: analyse here; if that
    fails too, show the basic report with the reason."""
    try:
        doc = report_html(analysis if analysis is not None else run)
    except Exception as exc:  # noqa: BLE001 — a measured cell always shows something
        doc = file_html(fallback_document(run, f"report failed: {type(exc).__name__}: {exc}"),
                        resources=INLINE, title=TITLE)
    frame = (f"<iframe class='jupyter-perf-report' data-run-id='{fmt.esc(run.run_id)}' "
             f"style='width:100%;height:{HEIGHT}px;border:0' srcdoc=\"{fmt.esc(doc)}\"></iframe>")
    return {"text/html": frame, "text/plain": run.describe()}
