"""The report as a notebook output: an isolated iframe around the standalone HTML.

The iframe keeps BokehJS and the report's styles apart from JupyterLab's, and
the same document is what ``report_html`` exports, so what users see inline is
exactly what they can save. ``text/plain`` carries a one-line summary for
consoles and for front ends that do not render HTML.
"""
from __future__ import annotations

from ..model import Run
from . import fmt
from .report import report_html


def bundle(run: Run, analysis=None) -> dict[str, str]:
    doc = report_html(run)
    rows = max(1, len(run.stages))
    height = 330 + min(400, 30 + 25 * rows) + 22 * len(run.warnings)
    frame = (f"<iframe class='jupyter-perf-report' data-run-id='{fmt.esc(run.run_id)}' "
             f"style='width:100%;height:{height}px;border:0' srcdoc=\"{fmt.esc(doc)}\"></iframe>")
    return {"text/html": frame, "text/plain": run.describe()}
