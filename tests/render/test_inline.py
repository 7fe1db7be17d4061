"""inline: the notebook output is an iframe srcdoc around the standalone document."""
import html as _html
import re

from jupyter_perf.analysis import analyze
from jupyter_perf.render import inline, report
from render_runs import synthetic


def test_bundle_with_and_without_analysis():
    run = synthetic(300, 4, per_stage=50)
    for b in (inline.bundle(run), inline.bundle(run, analyze(run))):
        frame = b["text/html"]
        assert frame.startswith("<iframe class='jupyter-perf-report'")
        m = re.search(r'srcdoc="([^"]*)"', frame)
        assert m, "srcdoc must be one attribute with no raw double quote inside"
        doc = _html.unescape(m.group(1))
        assert doc.startswith("<!DOCTYPE html>") and "Stragglers" in doc
        assert b["text/plain"] == run.describe()


def test_bundle_falls_back_when_the_report_fails(monkeypatch):
    run = synthetic(100, 2, per_stage=50)

    def broken(obj):
        raise ValueError("bokeh exploded")
    monkeypatch.setattr(inline, "report_html", broken)
    frame = inline.bundle(run)["text/html"]
    assert "report failed: ValueError: bokeh exploded" in _html.unescape(frame)
    assert report.TITLE in _html.unescape(frame)
