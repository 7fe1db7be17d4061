"""Render an Analysis (or a Run) as the interactive Bokeh report and standalone offline HTML.

    from jupyter_perf import render
    html = render.report_html(analysis_or_run)     # one self-contained document
    render.export(analysis_or_run, "report.html")  # the same, written atomically
    render.inline.bundle(run, analysis)            # the notebook output (iframe srcdoc)
"""
from .report import export, report_document, report_html

__all__ = ["export", "report_document", "report_html"]
