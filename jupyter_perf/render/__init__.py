"""Render a Run (and its Analysis) as a Bokeh report and standalone offline HTML."""
from .report import report_html, report_layout

__all__ = ["report_html", "report_layout"]
