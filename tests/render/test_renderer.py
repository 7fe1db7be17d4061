"""The report renderer (labextension/src/report/) in Chromium, across tabs: the standalone page
draws every tab offline with no console error; hostile strings stay text everywhere; an
operator chosen on the Query tab is highlighted on Stages, Stragglers and the Timeline; a
straggler chosen on its tab is highlighted on the Timeline; nbconvert's HTML of a saved
notebook (two reports and one saved with format 1) draws every report offline and the
what-if sliders answer with the Python numbers. (Each tab's own tests: test_view_<tab>.py.)"""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from render_runs import HOSTILE, hostile_copy, synthetic, with_plan, with_skipped, with_speculative
from viewhelpers import TAB_KEYS, show_tab

from jupyter_perf import fmt
from jupyter_perf.analysis import analyze
from jupyter_perf.render import inline

FORMAT1 = Path(__file__).parent / "data" / "format1.ipynb"


@pytest.fixture(scope="module")
def planned():
    """A synthetic run with stragglers, speculative and skipped stages, and a hostile plan."""
    run = with_plan(with_skipped(with_speculative(synthetic(3000, 16, per_stage=400))),
                    n_ops=30, hostile=True)
    return analyze(hostile_copy(run))


def test_every_tab_draws_offline_and_user_strings_stay_text(open_report, planned):
    page = open_report(planned)
    for key in TAB_KEYS:
        show_tab(page, key)
        assert page.locator(f".jp-perf-panel[data-tab='{key}'] .jp-perf-warn",
                            has_text="could not be drawn").count() == 0
    assert page.jp_errors == [] and page.jp_requests == []
    assert page.get_attribute(".jp-perf-report", "data-jp-error") is None
    assert "jupyter-perf" in page.inner_text(".jp-perf-header")
    assert HOSTILE in page.inner_text(".jp-perf-header")            # the label, as text
    assert page.evaluate("window.__xss") is None and page.locator("img[src=x]").count() == 0
    # the report is as tall as the shown tab: not the tallest one visited
    show_tab(page, "summary")
    height = page.evaluate("document.querySelector('.jp-perf-report').getBoundingClientRect().height")
    panel = page.evaluate("document.querySelector(\".jp-perf-panel[data-tab='summary']\")"
                          ".getBoundingClientRect().height")
    assert height < panel + 200


def test_an_operator_row_highlights_its_stages_on_every_tab(open_report, planned):
    a = planned
    page = open_report(a, tab="query")
    rows = page.locator("table[data-view='operators'] tbody tr")
    rows.first.wait_for()
    # the operator with the most task time: the first of a.operators (the view's row 0)
    top = a.operators.iloc[0]
    want = sorted(int(s) for s in top["stage_ids"])
    assert want, "the top operator ran in no stage: nothing to highlight"
    page.locator("table[data-view='operators'] tbody tr[data-row='0']").click()
    show_tab(page, "stages")
    stages = page.locator(".jp-perf-panel[data-tab='stages']")
    page.wait_for_function("() => !!document.querySelector(\".jp-perf-panel[data-tab='stages']\")"
                           ".dataset.selectedStages")
    got = sorted(int(x) for x in stages.get_attribute("data-selected-stages").split(",") if x)
    assert got == want
    show_tab(page, "stragglers")
    selected = page.locator("table[data-view='stragglers'] tr.jp-perf-selected")
    n = int(a.stragglers["stage_id"].isin(want).sum())
    assert selected.count() == min(n, 5000)
    show_tab(page, "timeline")
    line = page.locator(".jp-perf-panel[data-tab='timeline'] [data-kind='operator']")
    line.wait_for()
    attempts = int(a.run.tasks["stage_id"].isin(want).sum())
    assert int(line.get_attribute("data-count")) == attempts
    assert page.jp_errors == []


def test_a_straggler_row_highlights_its_attempt_on_the_timeline(open_report, planned):
    a = planned
    assert len(a.stragglers)
    page = open_report(a, tab="stragglers")
    first = page.locator("table[data-view='stragglers'] tbody tr").first
    first.click()
    pos = page.get_attribute(".jp-perf-panel[data-tab='stragglers']", "data-selected-pos")
    assert pos is not None
    show_tab(page, "timeline")
    line = page.locator(".jp-perf-panel[data-tab='timeline'] [data-kind='task']")
    line.wait_for()
    assert line.get_attribute("data-pos") == pos
    row = int(first.get_attribute("data-row"))
    task_id = int(a.stragglers.iloc[row]["task_id"])
    assert f"Task attempt {task_id} " in line.inner_text()
    assert page.jp_errors == []


def test_nbconvert_html_draws_every_report_offline(jp_browser, tmp_path):
    """A saved notebook — a report saved with format 1, then two of today's — through
    `jupyter nbconvert --to html` (the installed preprocessor, no option), opened from disk with
    the network off: every report draws, the what-if sliders answer with Python's numbers,
    hostile strings stay text."""
    analyses = [analyze(hostile_copy(synthetic(600, 8, per_stage=100))),
                analyze(with_speculative(synthetic(400, 4, per_stage=100)))]
    nb = nbformat.read(FORMAT1, as_version=4)
    for a in analyses:
        cell = nbformat.v4.new_code_cell("%%perfmeasure\n...")
        cell.outputs = [nbformat.v4.new_output("display_data", data=inline.bundle(a.run, a))]
        nb.cells.append(cell)
    src = tmp_path / "saved.ipynb"
    nbformat.write(nb, src)
    res = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "html", str(src)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    page = jp_browser.new_page(viewport={"width": 1200, "height": 900})
    errors, outside = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))

    def route(r):
        if r.request.url.startswith(("file:", "data:", "blob:", "about:")):
            return r.continue_()
        outside.append(r.request.url)
        return r.abort()
    page.route("**/*", route)
    page.goto((tmp_path / "saved.html").as_uri())
    reports = page.locator(".jp-perf-report")
    page.wait_for_function("() => document.querySelectorAll(\".jp-perf-report[data-jp-ready='1']\")"
                           ".length === 2", timeout=60_000)
    # the format 1 report: its Bokeh item embedded and drawn
    page.wait_for_function("() => window.Bokeh && Bokeh.documents.length >= 1")
    page.locator("#jupyter-perf-report-0").get_by_text("What-if", exact=True).first.wait_for()
    for i, a in enumerate(analyses):
        report = reports.nth(i)
        report.locator(".jp-perf-tabbar button[data-tab='whatif']").click()
        slider = report.locator("input[data-control='disk']")
        slider.focus()
        page.keyboard.press("End")
        want = a.whatif(disk=math.inf)
        report.locator(".jp-whatif-predicted").get_by_text(fmt.ms(want)).first.wait_for(timeout=60_000)
        assert float(report.locator(".jp-whatif-predicted").get_attribute("data-predicted-ms")) == want
    assert HOSTILE in reports.nth(0).locator(".jp-perf-header").inner_text()
    assert page.evaluate("window.__xss") is None
    # nbconvert's own template may ask for CDN assets (blocked here); the reports ask for none
    assert all("bokeh" not in u for u in outside), outside
    assert errors == []
    page.close()


def test_the_verdict_is_a_short_headline_then_bullets(open_report, planned):
    """Issue W item 4: one headline of at most ~120 characters that fits two lines at notebook
    width, the rest as at most five bullets, the whole sentence on hover."""
    s = planned.summary()
    page = open_report(planned, width=700)
    head = page.locator(".jp-perf-summary .jp-perf-headline")
    assert head.inner_text() == s["verdict_headline_text"] and len(head.inner_text()) <= 120
    assert head.get_attribute("title") == s["verdict"]
    lines = head.evaluate("el => el.getBoundingClientRect().height / "
                          "parseFloat(getComputedStyle(el).lineHeight)")
    assert lines <= 2.05, lines
    bullets = page.locator(".jp-perf-summary .jp-perf-verdict-bullets li").all_inner_texts()
    assert bullets == s["verdict_bullets"] and len(bullets) <= 5
