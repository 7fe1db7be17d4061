"""The report's notebook output (docs/report.md, "In the notebook") built from a synthetic
run, for the renderer's browser tests that need no Spark: a real report document of a
two-stage run shaped as Spark's REST API describes it (tests/server/runs_factory.py),
as ``bokeh.embed.json_item`` under the vendor MIME type.

Used by the kernel of tests/ui/test_report_renderer.py (``display(bundle(), raw=True)``)
and by the test itself (to write a notebook file with that output).
"""
from __future__ import annotations

import bokeh
from bokeh.embed import json_item

from jupyter_perf.analysis import analyze
from jupyter_perf.render.report import report_document
from runs_factory import make_run

MIME = "application/vnd.jupyter-perf.report+json"
FALLBACK = "<p class='jp-perf-static'>static fallback: open in JupyterLab with jupyter-perf</p>"


def bundle(label: str = "synthetic", bokeh_version: str | None = None,
           fmt: int = 1) -> dict:
    run = make_run(label=label)
    doc = report_document(analyze(run))
    return {
        MIME: {"format": fmt, "run_id": run.run_id, "title": label,
               "bokeh_version": bokeh_version or bokeh.__version__,
               "item": json_item(doc.roots[0])},
        "text/html": FALLBACK,
        "text/plain": run.describe(),
    }
