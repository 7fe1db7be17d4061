"""A cell's runs as a series in a real JupyterLab and Chromium (issue T, part 2): the report's
History tab and the sidebar's sparkline.

The store is seeded before the server starts with hand-built runs of one cell (six of one
setting, then one much slower with another: the one regression; tests/compare_synth.py, no
Spark), saved as a kernel saves them. A notebook cell displays the slow run's report as the
kernel's finishing path builds it (``kernel/finishing.report_bundle``: with the cell's series
from the store); the test opens its History tab. The sidebar lists the runs, each with its
cell's sparkline, the slow run's newest dot red. The cell's label is markup: it stays text.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from labhelpers import KERNEL_IDLE_JS, TOKEN, notebook_js, open_page, open_sidebar, require_browser, start_lab

require_browser()

pytestmark = pytest.mark.timeout(600)

HERE = Path(__file__).resolve().parent
LABEL = '<img class="pwned" src="x"> daily'
NB = "history.ipynb"


def _seed(home: Path) -> list[str]:
    """Seven runs of one cell into the store at ``home`` (the last one the regression)."""
    import sys

    sys.path[:0] = [str(HERE.parent), str(HERE.parent / "analysis")]
    from compare_synth import cell_run

    import jupyter_perf as jp
    from jupyter_perf.store import RunStore

    store = RunStore(str(home))
    ids = []
    for k in range(7):
        slow = k == 6
        run = cell_run([400] * 4 if slow else [100 + k, 100, 100, 100], label=LABEL,
                       conf={"spark.sql.shuffle.partitions": "8"} if slow else None)
        store.save(run, jp.analyze(run).summary())
        ids.append(run.run_id)
    return ids


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    base = tmp_path_factory.mktemp("lab")
    ids = _seed(base / "perf-home")           # start_lab's JUPYTER_PERF_HOME
    nb = base / NB
    setup = ("from IPython.display import display\n"
             "from jupyter_perf.kernel.finishing import report_bundle\n"
             "from jupyter_perf.store import default_store\n"
             f"display(report_bundle(default_store().load({ids[-1]!r})), raw=True)")
    nb.write_text(json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "id": "cell-0",
                   "metadata": {}, "outputs": [], "source": setup}],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                    "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5}))
    for facts in start_lab(base, [nb]):
        facts["ids"] = ids
        yield facts


@pytest.fixture(scope="module")
def page(lab, browser):
    context, page = open_page(browser, f"{lab['url']}/lab/tree/{NB}?reset&token={TOKEN}",
                              viewport=(1500, 900))
    page.wait_for_function(KERNEL_IDLE_JS, timeout=120_000)
    yield page
    context.close()


def test_the_history_tab_draws_the_cells_runs(lab, page):
    page.evaluate(f"() => window.jupyterapp.shell.activateById(({notebook_js(NB)}).id)")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(KERNEL_IDLE_JS, timeout=120_000)
    report = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-perf-report-output").first
    report.locator(".jp-perf-report[data-jp-ready='1']").wait_for(state="attached",
                                                                   timeout=120_000)
    # the Summary opens with the series' context line
    line = report.locator("table[data-view='key-numbers'] tr[data-key='series']")
    assert line.inner_text().split("\t")[-1].startswith("7th run of this cell: slower than")
    assert "a regression" in line.inner_text()
    assert line.locator("[data-key='series_median_ms']").get_attribute("data-value")

    report.locator(".jp-perf-tabbar button[data-tab='history']").click()
    panel = report.locator(".jp-perf-panel[data-tab='history']")
    page.wait_for_function(
        """el => el.dataset.jpDrawn === '1'""", arg=panel.element_handle(), timeout=60_000)
    assert report.locator(".jp-perf-report").get_attribute("data-jp-error") is None
    ctx = panel.locator("[data-view='history-context']")
    assert ctx.inner_text().startswith("7th run of this cell: slower than the 6 warm runs "
                                       "before the change by ")
    assert "spark.sql.shuffle.partitions 200 → 8" in ctx.inner_text()
    assert panel.locator("[data-view='history-band']").inner_text().startswith(
        "This run's band: ")
    chart = panel.locator(".jp-perf-history-chart")
    assert chart.get_attribute("data-points") == "7"
    assert chart.get_attribute("data-current") == "7"
    assert chart.get_attribute("data-regressions") == "1"
    # BokehJS drew the figure (a canvas with a size) in the chart's element
    page.wait_for_function(
        """el => { const c = el.querySelector('.bk-Canvas, canvas') ||
                   (el.querySelector('.bk-Figure, .bk-Plot') || {}).shadowRoot?.querySelector('canvas');
                   return !!el.querySelector('.bk-Figure, .bk-Plot, .bk-Column, .bk-Row') || !!c; }""",
        arg=chart.element_handle(), timeout=60_000)
    box = chart.bounding_box()
    assert box and box["width"] > 300 and box["height"] > 150
    # the table: one row per run, this run marked, the regression flagged
    rows = panel.locator("table[data-view='history'] tbody tr")
    assert rows.count() == 7
    current = panel.locator("table[data-view='history'] tr.jp-perf-history-current")
    assert current.count() == 1 and lab["ids"][-1] in current.inner_text()
    assert "regression" in current.inner_text()
    assert "unknown" in rows.nth(0).inner_text()
    # the label is markup: shown as text, never made into an element
    assert page.locator("img.pwned").count() == 0
    assert LABEL in report.locator(".jp-perf-title").inner_text()


def test_the_sidebar_shows_each_cells_sparkline(lab, page):
    sidebar = open_sidebar(page)
    ids = lab["ids"]
    newest = sidebar.locator(f".jp-perf-run-item[data-run-id='{ids[-1]}']")
    newest.wait_for(timeout=60_000)
    spark = newest.locator("svg.jp-perf-sparkline")
    spark.wait_for(timeout=60_000)
    assert spark.get_attribute("data-regression") == "1"
    assert spark.locator("polyline").get_attribute("points").count(",") == 7
    last = spark.locator("circle[data-last='1']")
    assert last.get_attribute("fill") == "#d62728"
    assert "a regression" in spark.locator("title").text_content()
    # an earlier run of the cell: its sparkline ends at it, not red
    third = sidebar.locator(f".jp-perf-run-item[data-run-id='{ids[2]}'] svg.jp-perf-sparkline")
    assert third.get_attribute("data-regression") == "0"
    assert third.locator("polyline").get_attribute("points").count(",") == 3
    # the first run of the cell has no line (one point)
    first = sidebar.locator(f".jp-perf-run-item[data-run-id='{ids[0]}']")
    assert first.locator("svg.jp-perf-sparkline").count() == 0
    assert page.locator("img.pwned").count() == 0


def test_the_sidebars_regressed_filter_lists_the_regressed_cells_run(lab, page):
    """The "Regressed" toggle asks the server for the regressed cells' latest runs (the one
    noise rule, ``GET runs?regressed=1``): only the slow run is left; a search with it that
    matches no regressed run says no cell regressed; off again, every run is back."""
    sidebar = open_sidebar(page)
    ids = lab["ids"]
    items = sidebar.locator(".jp-perf-run-item")
    sidebar.locator(f".jp-perf-run-item[data-run-id='{ids[0]}']").wait_for(timeout=60_000)
    assert items.count() == 7
    toggle = sidebar.locator("button.jp-perf-regressed-toggle")
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "true"
    page.wait_for_function("n => document.querySelectorAll("
                           "'.jp-perf-run-item').length === n", arg=1, timeout=60_000)
    assert items.first.get_attribute("data-run-id") == ids[-1]
    assert items.first.locator("svg.jp-perf-sparkline").get_attribute("data-regression") == "1"
    # a search that no regressed run matches
    sidebar.locator("input.jp-perf-search").fill("no-such-cell")
    sidebar.locator(".jp-perf-no-match").wait_for(state="visible", timeout=60_000)
    sidebar.locator("input.jp-perf-search").fill("")
    page.wait_for_function("n => document.querySelectorAll("
                           "'.jp-perf-run-item').length === n", arg=1, timeout=60_000)
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "false"
    page.wait_for_function("n => document.querySelectorAll("
                           "'.jp-perf-run-item').length === n", arg=7, timeout=60_000)
    assert page.locator("img.pwned").count() == 0
