"""report: the standalone page — the report's data and the one renderer, offline, escaped,
exported atomically."""
import os
import re

import pytest
from render_runs import HOSTILE, hostile_copy, synthetic, with_speculative

from jupyter_perf import render
from jupyter_perf.analysis import analyze
from jupyter_perf.constants import REPORT_MIME_TYPE
from jupyter_perf.render import report, standalone
from jupyter_perf.render.views import decode_data


@pytest.fixture(scope="module")
def hostile_run():
    return hostile_copy(with_speculative(synthetic(1200, 8, per_stage=200)))


def payload_of(html: str) -> dict:
    import json
    (text,) = re.findall(rf'<script type="{re.escape(REPORT_MIME_TYPE)}">(.*?)</script>', html, re.S)
    return json.loads(text)


def test_report_html_of_analysis_and_of_run_are_the_same_report(hostile_run):
    a = analyze(hostile_run)
    pages = [render.report_html(a), render.report_html(hostile_run)]
    datas = [decode_data(payload_of(html)["data"]) for html in pages]
    for d in datas:
        assert d["run_id"] == hostile_run.run_id and len(d["tabs"]) == 7
    assert datas[0]["tabs"] == datas[1]["tabs"]
    for html in pages:                      # BokehJS (core + API) and the renderer, inlined once
        assert html.count("window.JupyterPerfReport") == 1
        assert standalone.renderer_js()[:200] in html


def test_no_network_references(hostile_run):
    html = render.report_html(hostile_run)
    assert not re.search(r"""<(script|link|img|iframe)[^>]+(src|href)=["']?(https?:)?//""", html)


def test_user_strings_cannot_close_the_payload_script(hostile_run):
    html = render.report_html(hostile_run)
    body = html[html.index("<body"):]
    # the renderer bundle and the payload are the only scripts in the body; the payload's JSON
    # never holds a raw "<", so a user string cannot end its element or start markup
    payload_text = re.findall(rf'<script type="{re.escape(REPORT_MIME_TYPE)}">(.*?)</script>', body, re.S)
    assert len(payload_text) == 1 and "<" not in payload_text[0]
    assert HOSTILE in payload_of(html)["title"]            # it is there, as JSON text
    assert "<img src=x" not in body.replace(standalone.renderer_js(), "")


def test_export_is_atomic_and_readable(tmp_path, hostile_run):
    path = tmp_path / "sub" / "r.html"
    out = render.export(analyze(hostile_run), path)
    assert out == str(path) and path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert oct(os.stat(path).st_mode & 0o777) == "0o644"
    assert [p.name for p in path.parent.iterdir()] == ["r.html"]        # no temp files left


def test_export_failure_leaves_nothing(tmp_path, monkeypatch, hostile_run):
    def boom(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(report.os, "replace", boom)
    monkeypatch.setattr(report.os, "link", boom)       # a new export is linked into place
    with pytest.raises(OSError):
        render.export(hostile_run, tmp_path / "r.html")
    assert list(tmp_path.iterdir()) == []


def test_run_whose_analysis_fails_gets_the_fallback_report(monkeypatch, hostile_run):
    import jupyter_perf.analysis as analysis

    def broken(run, **kw):
        raise RuntimeError("analysis bug")
    monkeypatch.setattr(analysis, "analyze", broken)
    data = decode_data(payload_of(render.report_html(hostile_run))["data"])
    assert data["problem"] == "analysis failed: RuntimeError: analysis bug"
    assert set(data["tabs"]) == {"summary"}
    with pytest.raises(TypeError):
        render.report_html("not a run")


def test_empty_run_renders():
    from jupyter_perf.model import Run
    html = render.report_html(Run(status="no-jobs"))
    data = decode_data(payload_of(html)["data"])
    assert "whatif" in data["tabs"] and data["header"]["status"] == "no-jobs"


def test_a_missing_renderer_is_one_line_with_the_fix(monkeypatch, hostile_run):
    def missing():
        raise standalone.RendererMissing("the report renderer is not built: run `jlpm build`")
    monkeypatch.setattr(standalone, "renderer_js", missing)
    with pytest.raises(standalone.RendererMissing, match="jlpm build"):
        render.report_html(hostile_run)
