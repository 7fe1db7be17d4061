"""inline: the notebook output is the compact payload for the renderer plus small fallbacks."""
import json

import bokeh
import nbformat
import pytest
from render_runs import HOSTILE, hostile_copy, synthetic, with_speculative

from jupyter_perf.analysis import analyze
from jupyter_perf.render import inline, report


@pytest.fixture(scope="module")
def hostile_run():
    return hostile_copy(with_speculative(synthetic(300, 4, per_stage=50)))


def test_bundle_carries_the_report_as_the_contract_says(hostile_run):
    for b in (inline.bundle(hostile_run), inline.bundle(hostile_run, analyze(hostile_run))):
        assert set(b) == {inline.MIME, "text/html", "text/plain"}
        p = b[inline.MIME]
        assert p["format"] == 1 and p["run_id"] == hostile_run.run_id
        assert p["title"] == inline.title_of(hostile_run) and HOSTILE in p["title"]
        assert p["bokeh_version"] == bokeh.__version__
        assert p["item_encoding"] == "json+gzip+base64" and isinstance(p["item"], str)
        item = inline.decode_item(p)
        assert set(item) == {"target_id", "root_id", "doc", "version"}
        assert item["version"] == bokeh.__version__
        doc = json.dumps(item["doc"])
        # the whole report: every tab, and the document-ready callback that starts report.js
        for name in report.TAB_NAMES:
            assert f'"title": "{name}"' in doc
        assert '"document_ready"' in doc and "J.init(P" in doc
        assert b["text/plain"] == hostile_run.describe()
        json.dumps(b)                            # a kernel can send it as it is


def test_static_fallback_is_small_escaped_and_says_where_the_report_is(hostile_run):
    a = analyze(hostile_run)
    html = inline.bundle(hostile_run, a)["text/html"]
    assert HOSTILE not in html and "&lt;img src=x onerror=window.__xss=1&gt;" in html
    assert a.summary()["verdict"].split()[0] in html
    assert "attempts that ran" in html and "model error" in html
    assert "Open this notebook in JupyterLab with jupyter-perf" in html
    assert "<script" not in html and len(html) < 4000


def test_bundle_falls_back_when_the_report_fails(monkeypatch, hostile_run):
    def broken(a):
        raise ValueError("bokeh exploded")
    monkeypatch.setattr(inline, "report_document", broken)
    b = inline.bundle(hostile_run)
    assert "report failed: ValueError: bokeh exploded" in b["text/html"]
    doc = json.dumps(inline.decode_item(b[inline.MIME])["doc"])
    assert "report failed: ValueError: bokeh exploded" in doc      # the basic report, drawn
    assert "Stragglers" not in doc


def test_decode_item_reads_both_encodings_and_refuses_others():
    item = {"target_id": None, "root_id": "p1", "doc": {"roots": []}, "version": "x"}
    assert inline.decode_item({"item": item}) == item
    assert inline.decode_item({"item": inline.encode_item(item),
                               "item_encoding": inline.ITEM_ENCODING}) == item
    for bad in ({"item": "abc"}, {"item": item, "item_encoding": "zstd"}, {}):
        with pytest.raises(ValueError):
            inline.decode_item(bad)


def test_a_hundred_task_cell_adds_at_most_150_kb_to_the_notebook(tmp_path):
    """Issue M's budget, measured on the saved .ipynb as JupyterLab writes it (nbformat)."""
    run = synthetic(100, 4, per_stage=25)
    assert len(run.tasks) == 100
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%perfmeasure\ndf.collect()")
    nb.cells = [cell]
    empty = len(nbformat.writes(nb).encode())
    cell.outputs = [nbformat.v4.new_output("display_data", data=inline.bundle(run))]
    path = tmp_path / "one.ipynb"
    nbformat.write(nb, path)
    assert path.stat().st_size - empty <= 150_000
    back = nbformat.read(path, as_version=4).cells[0].outputs[0]["data"][inline.MIME]
    assert inline.decode_item(back)["root_id"]                       # survives the round trip
