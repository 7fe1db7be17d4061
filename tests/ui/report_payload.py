"""The report's notebook output for the renderer's browser tests that need no Spark: what a
measured cell displays (``jupyter_perf.render.inline.bundle``: the report's data, format 2,
the static text/html summary, text/plain) for a synthetic two-stage run shaped as Spark's REST
API describes it (tests/server/runs_factory.py); and ``legacy_bundle()``, the output a cell
saved with format 1 (a kernel-built Bokeh item) carries (tests/render/data/format1.ipynb).

``bokeh_version`` and ``fmt`` make payloads the renderer must refuse.
Used by the kernel of tests/ui/test_report_renderer.py (``display(bundle(), raw=True)``)
and by the test itself (to write a notebook file with that output).
"""
from __future__ import annotations

import json
from pathlib import Path

from runs_factory import make_run

from jupyter_perf.render.inline import MIME
from jupyter_perf.render.inline import bundle as inline_bundle

STATIC_CLASS = "jupyter-perf-static"


def bundle(label: str = "synthetic", bokeh_version: str | None = None,
           fmt: int | None = None) -> dict:
    out = inline_bundle(make_run(label=label))
    if bokeh_version is not None:
        out[MIME]["bokeh_version"] = bokeh_version
    if fmt is not None:
        out[MIME]["format"] = fmt
    return out


FORMAT1 = Path(__file__).resolve().parents[1] / "render" / "data" / "format1.ipynb"


def legacy_bundle(bokeh_version: str | None = None) -> dict:
    """The MIME bundle of the one report in tests/render/data/format1.ipynb (format 1)."""
    nb = json.loads(FORMAT1.read_text(encoding="utf-8"))
    # nbformat stores multi-line strings as lists of lines (a reader joins them)
    out = {k: "".join(v) if isinstance(v, list) else v
           for k, v in nb["cells"][0]["outputs"][0]["data"].items()}
    if bokeh_version is not None:
        out[MIME]["bokeh_version"] = bokeh_version
    return out
