"""The report renderer (labextension/src/report/) in Chromium: the standalone page of a run
draws every tab with no console error and no network request."""

from render_runs import synthetic
from viewhelpers import TAB_KEYS, show_tab

from jupyter_perf.analysis import analyze


def test_every_tab_draws_offline(open_report):
    page = open_report(analyze(synthetic(3000)))
    for key in TAB_KEYS:
        show_tab(page, key)
    assert page.jp_errors == [] and page.jp_requests == []
    assert "jupyter-perf" in page.inner_text(".jp-perf-header")
