"""nbconvert: an HTML export draws each report with the one renderer, BokehJS and the renderer
inlined once per page; a notebook saved with format 1 still gets its Bokeh item embedded;
other exports and payloads it cannot draw keep the static summary. (The page offline in
Chromium: test_renderer.py.)"""
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter, MarkdownExporter
from render_runs import synthetic

from jupyter_perf.constants import REPORT_MIME_TYPE
from jupyter_perf.render import inline, standalone
from jupyter_perf.render.nbconvert import ReportPreprocessor

EVIL = "</script><script>window.__xss=1</script>"
FORMAT1 = Path(__file__).parent / "data" / "format1.ipynb"     # saved by jupyter-perf 0.1 (Bokeh item)
PAYLOAD = re.compile(rf'<script type="{re.escape(REPORT_MIME_TYPE)}">(.*?)</script>', re.S)


@pytest.fixture(scope="module")
def notebook():
    runs = [synthetic(120, 4, per_stage=30), synthetic(80, 2, per_stage=40)]
    runs[1].label = EVIL
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%%perfmeasure\n...") for _ in runs]
    for cell, run in zip(nb.cells, runs):
        cell.outputs = [nbformat.v4.new_output("display_data", data=inline.bundle(run))]
    return nb


@pytest.fixture(scope="module")
def mixed(notebook):
    """The two reports above after a cell saved with the format 1 payload."""
    old = nbformat.read(FORMAT1, as_version=4)
    nb = nbformat.from_dict(notebook)
    nb.cells = old.cells + nb.cells
    return nb


def core_bundle_banner() -> str:
    from bokeh.resources import Resources
    js = Resources(mode="inline", components=["bokeh"]).js_raw[0]
    return js[:300]


def html_of(nb, exporter=HTMLExporter):
    ex = exporter(preprocessors=[ReportPreprocessor])
    body, _ = ex.from_notebook_node(nbformat.from_dict(nb))
    return body


def test_html_export_draws_every_report_with_bokehjs_and_the_renderer_once(notebook):
    body = html_of(notebook)
    assert body.count(core_bundle_banner()) == 1
    assert body.count("window.JupyterPerfReport") == 1          # the renderer bundle, once
    assert len(PAYLOAD.findall(body)) == 2
    assert body.index(core_bundle_banner()) < body.index(standalone.renderer_js()[:200])
    assert "Open this notebook in JupyterLab" not in body          # the summaries were replaced
    assert "embed_item(item, el)" not in body


def test_a_notebook_saved_with_format_1_still_embeds_its_bokeh_item(mixed):
    body = html_of(mixed)
    assert body.count(core_bundle_banner()) == 1                   # one BokehJS for both kinds
    assert body.count("Bokeh.embed.embed_item(item, el)") == 1
    assert len(PAYLOAD.findall(body)) == 2
    assert body.count("window.JupyterPerfReport") == 1


def test_user_strings_cannot_close_the_payload_script(notebook):
    body = html_of(notebook)
    payloads = PAYLOAD.findall(body)
    assert len(payloads) == 2
    assert all("<" not in text for text in payloads)
    assert "window.__xss=1" in payloads[1]                    # it is there, as JSON text


def test_other_formats_and_unusable_payloads_keep_the_summary(mixed):
    md = html_of(mixed, MarkdownExporter)
    assert "embed_item" not in md and "JupyterPerfReport" not in md
    nb = nbformat.from_dict(mixed)
    nb.cells[0].outputs[0]["data"][inline.MIME]["bokeh_version"] = "0.0.1"
    nb.cells[1].outputs[0]["data"][inline.MIME]["format"] = 99
    body = html_of(nb)
    assert "embed_item(item, el)" not in body
    assert body.count("Open this notebook in JupyterLab") == 2
    assert "made with Bokeh 0.0.1" in body and "format is unknown" in body
    assert len(PAYLOAD.findall(body)) == 1


def test_plain_nbconvert_finds_the_preprocessor(notebook, tmp_path):
    """Installed with the package: `jupyter nbconvert --to html` needs no option; the
    preprocessor switches off with --ReportPreprocessor.enabled=False."""
    src = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.from_dict(notebook), src)
    for extra, want in (([], 2), (["--ReportPreprocessor.enabled=False"], 0)):
        res = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "html", *extra,
                              "--output", f"out{len(extra)}", str(src)],
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        body = (tmp_path / f"out{len(extra)}.html").read_text(encoding="utf-8")
        assert len(PAYLOAD.findall(body)) == want
