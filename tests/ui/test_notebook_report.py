"""Reports of real %%perfmeasure cells inside a notebook, in a real JupyterLab and Chromium.

One JupyterLab server and one kernel (with the embedded Spark it starts) for the module.
Three measured cells of about a hundred tasks each run; the tests check what a user sees and
keeps (issue M): each report is drawn from its MIME output by the labextension's renderer, is
as tall as its content, keeps the Stages table's first column in view when scrolled right,
the saved notebook stays small, and a browser reload leaves the Log Console empty.
"""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from labhelpers import (
    KERNEL_IDLE_JS,
    TOKEN,
    api,
    assert_sized_to_content,
    notebook_js,
    open_page,
    require_browser,
    start_lab,
    write_notebook,
)

require_browser()

pytestmark = pytest.mark.timeout(900)

MIME = "application/vnd.jupyter-perf.report+json"
#: What a measured cell may add to the saved .ipynb (issue M: "≤ 150 KB" for ~100 tasks).
BUDGET_BYTES = 150_000
LABELS = ["hundred tasks a", "hundred tasks b", "hundred tasks c"]
#: ~100 map tasks and a small shuffle; each cell a different query shape.
QUERIES = [
    'spark.range(0, 300_000, 1, 100).selectExpr("id % 7 AS k").groupBy("k").count().collect()',
    'spark.range(0, 300_000, 1, 100).selectExpr("id % 11 AS k", "id * 2 AS v")'
    '.groupBy("k").sum("v").collect()',
    'spark.range(0, 300_000, 1, 100).selectExpr("id % 13 AS k").distinct().count()',
]
NAME = "report.ipynb"
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    base = tmp_path_factory.mktemp("lab")
    cells = ["%load_ext jupyter_perf"] + [f"%%perfmeasure --label \"{label}\"\n{query}"
                                          for label, query in zip(LABELS, QUERIES)]
    yield from start_lab(base, [write_notebook(base, NAME, cells)])


@pytest.fixture(scope="module")
def page(lab, browser):
    context, page = open_page(browser, f"{lab['url']}/lab/tree/{NAME}?reset&token={TOKEN}",
                              viewport=(1500, 900))
    page.wait_for_function(KERNEL_IDLE_JS, timeout=120_000)
    yield page
    context.close()


@pytest.fixture(scope="module")
def ran(lab, page):
    """Run every cell once; the three runs as the REST API lists them, by label."""
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    reports = page.locator(f"{PANEL} .jp-perf-report-output")
    reports.nth(2).wait_for(state="attached", timeout=600_000)
    page.wait_for_function(KERNEL_IDLE_JS, timeout=600_000)
    runs = {r["label"]: r for r in api(lab, "runs")["runs"]}
    assert set(LABELS) <= set(runs), runs.keys()
    return runs


def _report(page, i: int):
    report = page.locator(f"{PANEL} .jp-perf-report-output").nth(i)
    report.scroll_into_view_if_needed()
    # the renderer drew it
    report.locator(".jp-perf-report[data-jp-ready='1']").wait_for(state="attached", timeout=120_000)
    return report


def test_each_report_is_drawn_from_its_mime_output(page, ran):
    reports = page.locator(f"{PANEL} .jp-perf-report-output")
    assert reports.count() == 3
    for i, label in enumerate(LABELS):
        report = _report(page, i)
        assert report.get_attribute("data-run-id") == ran[label]["run_id"]
        assert report.get_by_text(label).first.is_visible()
        # in the output itself, as tall as the report: no iframe, no scrollbar inside
        assert report.evaluate("el => el.classList.contains('jp-OutputArea-output')")
        assert report.locator("iframe").count() == 0
        assert_sized_to_content(report)
    # ~100 tasks each, as the budget below assumes
    for label in LABELS:
        assert 100 <= ran[label]["num_tasks"] <= 400, ran[label]


def test_first_column_of_the_stages_table_stays_in_view(page, ran):
    report = _report(page, 0)
    report.locator(".jp-perf-tabbar button[data-tab='stages']").click()
    table = report.locator("table[data-view='stages']")
    table.wait_for(state="visible", timeout=60_000)
    wrap = table.locator("xpath=..")
    first = table.locator("th").first
    first_title = first.inner_text().strip()
    assert first_title
    # scroll the table as far right as it goes (it is wider than the notebook's output)
    moved = wrap.evaluate("""v => { const before = v.scrollLeft; v.scrollLeft = v.scrollWidth;
                                    return v.scrollLeft - before; }""")
    if moved == 0:
        page.set_viewport_size({"width": 700, "height": 900})
        moved = wrap.evaluate("""v => { const before = v.scrollLeft; v.scrollLeft = v.scrollWidth;
                                        return v.scrollLeft - before; }""")
    assert moved > 0, "the Stages table is not wider than its frame: nothing to check"
    box, frame = first.bounding_box(), wrap.bounding_box()
    assert first.is_visible() and box is not None
    # still inside the table's visible area
    assert box["x"] >= frame["x"] - 1 and box["x"] + box["width"] <= frame["x"] + frame["width"] + 1, \
        (first_title, box, frame)
    page.set_viewport_size({"width": 1500, "height": 900})


def test_saved_notebook_stays_small(page, lab, ran):
    page.evaluate(f"() => window.jupyterapp.shell.activateById(({notebook_js(NAME)}).id)")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    path = Path(lab["root"]) / NAME
    page.wait_for_function(f"() => !({notebook_js(NAME)}).context.model.dirty", timeout=60_000)
    saved = path.read_bytes()
    nb = nbformat.reads(saved.decode("utf-8"), as_version=4)
    whole = len(nbformat.writes(nb).encode("utf-8"))
    assert abs(whole - len(saved)) <= 0.01 * len(saved)   # the server wrote it as nbformat does
    measured = [i for i, c in enumerate(nb.cells) if c.source.startswith("%%perfmeasure")]
    assert len(measured) == 3
    for i in measured:
        outputs = nb.cells[i].outputs
        assert any(MIME in o.get("data", {}) for o in outputs), outputs
        without = nbformat.from_dict(json.loads(json.dumps(nb)))
        without.cells[i].outputs = []
        added = whole - len(nbformat.writes(without).encode("utf-8"))
        assert 0 < added <= BUDGET_BYTES, (i, added)


def test_log_console_is_empty_after_a_reload(page, lab, ran):
    page.goto(f"{lab['url']}/lab/tree/{NAME}?token={TOKEN}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    page.wait_for_function("() => window.jupyterapp !== undefined", timeout=60_000)
    page.wait_for_function(KERNEL_IDLE_JS, timeout=120_000)
    # the reports come back from the saved outputs
    _report(page, 2)
    page.evaluate("() => window.jupyterapp.commands.execute('logconsole:open', {insertMode: 'split-bottom'})")
    console = page.locator(".jp-LogConsolePanel")
    console.wait_for(state="visible", timeout=30_000)
    # give late messages (kernel reconnect, widget state restore) time to arrive
    page.wait_for_timeout(3000)
    entries = console.locator(".jp-OutputArea-child")
    assert entries.count() == 0, entries.all_inner_texts()
