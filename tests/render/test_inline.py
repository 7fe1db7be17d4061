"""inline: the notebook output is the report's data (format 2) for the renderer, plus small
fallbacks; notebooks saved with format 1 are still read."""
import base64
import gzip
import json

import bokeh
import nbformat
import numpy as np
import pytest
from render_runs import HOSTILE, hostile_copy, synthetic, with_speculative

from jupyter_perf.analysis import analyze
from jupyter_perf.render import inline
from jupyter_perf.render.views import decode_data

TABS = {"summary", "query", "timeline", "stages", "stragglers", "whatif", "memory"}


@pytest.fixture(scope="module")
def hostile_run():
    return hostile_copy(with_speculative(synthetic(300, 4, per_stage=50)))


def test_bundle_carries_the_report_data_as_the_contract_says(hostile_run):
    a = analyze(hostile_run)
    for b in (inline.bundle(hostile_run), inline.bundle(hostile_run, a)):
        assert set(b) == {inline.MIME, "text/html", "text/plain"}
        p = b[inline.MIME]
        assert set(p) == {"format", "run_id", "title", "bokeh_version", "encoding", "data"}
        assert p["format"] == 2 and p["run_id"] == hostile_run.run_id
        assert p["title"] == inline.title_of(hostile_run) and HOSTILE in p["title"]
        assert p["bokeh_version"] == bokeh.__version__
        assert p["encoding"] == "jpr+gzip+base85" and isinstance(p["data"], str)
        data = decode_data(p["data"])
        assert data["format"] == 2 and data["run_id"] == hostile_run.run_id
        assert set(data["tabs"]) == TABS and "problem" not in data
        assert data["header"]["title"] == p["title"]
        # the per-task arrays travel exactly: the replay's durations in dispatch order
        order = a.timeline.order
        dur = a.timeline.duration[order]
        spec = data["tasks_meta"]["cols"]["dur"]
        assert spec["k"] == "dense"
        assert np.array_equal(data["tasks"][spec["a"]].astype("float64"), dur)
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


def test_bundle_falls_back_when_the_report_data_fails(monkeypatch, hostile_run):
    def broken(a):
        raise ValueError("a view exploded")
    monkeypatch.setattr(inline, "report_data", broken)
    b = inline.bundle(hostile_run)
    assert "report failed: ValueError: a view exploded" in b["text/html"]
    data = decode_data(b[inline.MIME]["data"])
    assert data["problem"] == "report failed: ValueError: a view exploded"
    assert set(data["tabs"]) == {"summary"}                 # the basic report, from the Run alone
    assert data["header"]["run_id"] == hostile_run.run_id


def test_decode_item_still_reads_format_1_payloads():
    item = {"target_id": None, "root_id": "p1", "doc": {"roots": []}, "version": "x"}
    assert inline.decode_item({"item": item}) == item
    encoded = base64.b64encode(gzip.compress(json.dumps(item).encode())).decode()
    assert inline.decode_item({"item": encoded, "item_encoding": inline.ITEM_ENCODING}) == item
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
    assert decode_data(back["data"])["run_id"] == run.run_id          # survives the round trip
