"""report: the standalone document — six tabs, offline, escaped, exported atomically."""
import os
import re

import pytest
from render_runs import HOSTILE, hostile_copy, synthetic, with_speculative

from jupyter_perf import render
from jupyter_perf.analysis import analyze
from jupyter_perf.render import report


@pytest.fixture(scope="module")
def hostile_run():
    return hostile_copy(with_speculative(synthetic(1200, 8, per_stage=200)))


def test_report_html_of_analysis_and_of_run_are_the_same_report(hostile_run):
    a = analyze(hostile_run)
    html_a = render.report_html(a)
    html_r = render.report_html(hostile_run)
    for html in (html_a, html_r):
        for name in report.TAB_NAMES:
            assert f'"title":"{name}"' in html
    # bokeh's element ids differ between two documents; the size is the same report
    assert abs(len(html_a) - len(html_r)) < 2000


def test_no_network_references(hostile_run):
    html = render.report_html(hostile_run)
    assert not re.search(r"""<(script|link|img)[^>]+(src|href)=["']?https?:""", html)
    # BokehJS itself mentions a MathJax CDN, used only for math text: every Div disables it
    from bokeh.models import Div
    doc = report.report_document(analyze(hostile_run))
    divs = list(doc.select({"type": Div}))
    assert len(divs) > 10 and all(d.disable_math for d in divs)


def test_user_strings_are_escaped_in_every_div(hostile_run):
    html = render.report_html(hostile_run)
    # Div markup is ours; the hostile string appears only escaped inside it. Raw copies
    # remain only as JSON string values of data sources / table cells (rendered as text —
    # the browser test proves it).
    assert "&lt;img src=x onerror=window.__xss=1&gt;" in html
    divs = re.findall(r'"name":"Div".*?"text":"(.*?)(?<!\\)"', html)
    assert divs
    for text in divs:
        assert "<img src=x" not in text.replace("\\u003c", "<")


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


def test_run_whose_analysis_fails_gets_the_basic_report(monkeypatch, hostile_run):
    def broken(run, **kw):
        raise RuntimeError("analysis bug")
    monkeypatch.setattr(report, "analyze", broken)
    html = render.report_html(hostile_run)
    assert "analysis failed: RuntimeError: analysis bug" in html
    with pytest.raises(TypeError):
        render.report_html("not a run")


def test_empty_run_renders():
    from jupyter_perf.model import Run
    html = render.report_html(Run(status="no-jobs"))
    assert "What-if" in html
    assert HOSTILE not in html
