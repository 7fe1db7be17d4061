"""nbconvert: an HTML export embeds each report with BokehJS once per page; other exports and
payloads it cannot draw keep the static summary. (The page itself, offline in Chromium:
test_report_browser.py.)"""
import re
import subprocess
import sys

import nbformat
import pytest
from nbconvert import HTMLExporter, MarkdownExporter
from render_runs import synthetic

from jupyter_perf.render import inline
from jupyter_perf.render.nbconvert import ReportPreprocessor

EVIL = "</script><script>window.__xss=1</script>"


@pytest.fixture(scope="module")
def notebook():
    runs = [synthetic(120, 4, per_stage=30), synthetic(80, 2, per_stage=40)]
    runs[1].label = EVIL
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%%perfmeasure\n...") for _ in runs]
    for cell, run in zip(nb.cells, runs):
        cell.outputs = [nbformat.v4.new_output("display_data", data=inline.bundle(run))]
    return nb


def core_bundle_banner() -> str:
    from bokeh.resources import Resources
    js = Resources(mode="inline", components=["bokeh"]).js_raw[0]
    return js[:300]


def html_of(nb, exporter=HTMLExporter):
    ex = exporter(preprocessors=[ReportPreprocessor])
    body, _ = ex.from_notebook_node(nbformat.from_dict(nb))
    return body


def test_html_export_embeds_every_report_and_bokehjs_once(notebook):
    body = html_of(notebook)
    assert body.count(core_bundle_banner()) == 1
    assert len(re.findall(r'<div class="jupyter-perf-report" id="jupyter-perf-report-\d"', body)) == 2
    assert body.count("Bokeh.embed.embed_item(item, el)") == 2
    # BokehJS comes before the first report's call
    assert body.index(core_bundle_banner()) < body.index("Bokeh.embed.embed_item")
    assert "Open this notebook in JupyterLab" not in body          # the summaries were replaced


def test_user_strings_cannot_close_the_item_script(notebook):
    body = html_of(notebook)
    items = re.findall(r'<script[^>]* type="application/json"[^>]*>(.*?)</script>', body, re.S)
    assert len(items) == 2
    assert all("<" not in text for text in items)
    assert "window.__xss=1" in items[1]                       # it is there, as JSON text


def test_other_formats_and_unusable_payloads_keep_the_summary(notebook):
    md = html_of(notebook, MarkdownExporter)
    assert "embed_item" not in md
    nb = nbformat.from_dict(notebook)
    nb.cells[0].outputs[0]["data"][inline.MIME]["bokeh_version"] = "0.0.1"
    nb.cells[1].outputs[0]["data"][inline.MIME]["item"] = "not base64 gzip"
    body = html_of(nb)
    assert "embed_item" not in body
    assert body.count("Open this notebook in JupyterLab") == 2
    assert "made with Bokeh 0.0.1" in body and "cannot be read" in body


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
        assert body.count("Bokeh.embed.embed_item(item, el)") == want
