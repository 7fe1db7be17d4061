"""Comparing two runs from the "Spark runs" sidebar, in a real JupyterLab and Debian's Chromium.

The notebook tests/ui/notebooks/compare.ipynb runs the same aggregation twice as real
``%%perfmeasure`` cells, with ``spark.sql.shuffle.partitions`` set to 200 and then to 8
inside the cell. The test picks both rows with Ctrl+click, checks the bar (the older run is
A whatever the order of picking; a label with markup shows as text), opens the comparison
tab (the server's page in a sandboxed iframe, drawn by the report renderer's
report/compare.ts from the comparison's payload) and checks that it says what the server's
JSON summary says: the setting that differs, the walls, and that with two runs the noise is
unknown. Then "Export HTML" writes the file, which is opened offline in Chromium (the same
renderer draws it, nothing fetched), and ``%perfmeasure compare A B`` shows the same
comparison inline under a new cell, drawn by the extension's compare MIME renderer.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from labhelpers import KERNEL_IDLE_JS, api, lab_fixtures, notebook_js, open_sidebar, require_browser

from jupyter_perf import fmt
from jupyter_perf.atomic import EXPORT_MARKER
from jupyter_perf.service.comparing import export_id

require_browser()

NOTEBOOK = Path(__file__).parent / "notebooks" / "compare.ipynb"
LABELS = ("partitions 200", "partitions <8>")
#: The root the TypeScript renderer draws a comparison into (labextension/src/report/compare.ts).
DRAWN = ".jp-perf-cmp[data-jp-compare='drawn']"
NOTEBOOK_JS = notebook_js("compare.ipynb")

pytestmark = pytest.mark.timeout(900)


lab, page = lab_fixtures(NOTEBOOK)


def _run_the_notebook(lab, page, sidebar) -> dict[str, dict]:
    page.wait_for_function(KERNEL_IDLE_JS, timeout=120_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    for label in LABELS:
        try:
            sidebar.locator(".jp-perf-run-item", has_text=label).wait_for(timeout=300_000)
        except Exception:
            outputs = page.locator(".jp-OutputArea-output").all_inner_texts()
            pytest.fail(f"run {label!r} never appeared in the sidebar; cell outputs: "
                        f"{outputs!r}; lab log: {lab['log'].read_text()[-2000:]}")
    page.wait_for_function(KERNEL_IDLE_JS, timeout=300_000)
    runs = {r["label"]: r for r in api(lab, "runs")["runs"]}
    assert set(runs) == set(LABELS)
    assert all(r["status"] == "ok" and r["num_tasks"] > 0 for r in runs.values()), runs
    return runs


def test_pick_two_runs_compare_and_export(lab, page, browser):
    sidebar = open_sidebar(page)
    runs = _run_the_notebook(lab, page, sidebar)
    a, b = runs[LABELS[0]]["run_id"], runs[LABELS[1]]["run_id"]

    bar = sidebar.locator(".jp-perf-compare-bar")
    assert bar.is_hidden()                       # nothing picked yet
    # pick the newer run first: Ctrl+click picks, it opens no report
    newer = sidebar.locator(".jp-perf-run-item", has_text=LABELS[1])
    older = sidebar.locator(".jp-perf-run-item", has_text=LABELS[0])
    newer.click(modifiers=["Control"])
    bar.wait_for(state="visible")
    assert bar.locator(".jp-perf-compare-text").inner_text() == \
        f"A: {LABELS[1]}. Ctrl+click a second run to compare."
    assert bar.locator(".jp-perf-compare-button").is_disabled()
    assert "jp-perf-compare-picked" in newer.get_attribute("class")
    assert page.locator('.lm-TabBar-tab[data-id^="jupyter-perf-report-"]').count() == 0
    older.click(modifiers=["Control"])
    # the older run is A; the label's markup is text, not elements
    assert bar.locator(".jp-perf-compare-text").inner_text() == \
        f"Compare A: {LABELS[0]} → B: {LABELS[1]}"
    assert sidebar.locator("img, .jp-perf-compare-bar b").count() == 0
    button = bar.locator(".jp-perf-compare-button")
    assert button.is_enabled()
    button.click()

    # the comparison opens in a tab: the server's HTML in a sandboxed iframe
    view = page.locator(f"#jupyter-perf-compare-{a}-{b}")
    frame_el = view.locator("iframe.jp-perf-report-frame")
    frame_el.wait_for(state="visible", timeout=180_000)
    assert frame_el.get_attribute("sandbox") == "allow-scripts"
    frame = frame_el.element_handle().content_frame()
    frame.wait_for_selector(DRAWN, timeout=60_000)          # drawn by the TS renderer
    text = frame.evaluate("() => document.body.innerText")
    summary = api(lab, f"compare/{a}/{b}?format=json")
    for side in ("a", "b"):                                  # its numbers are the summary's
        wall = frame.locator(f"{DRAWN} [data-key='wall_{side}_ms']")
        assert float(wall.get_attribute("data-value")) == summary[f"wall_{side}_ms"]
        assert wall.inner_text() == fmt.ms(summary[f"wall_{side}_ms"])
    assert (summary["a"], summary["b"]) == (a, b)
    assert summary["config_diff"]["spark.sql.shuffle.partitions"] == ["200", "8"]
    assert summary["within_noise"] is None       # two runs: the noise cannot be known
    # issue T: values never wrap mid-value (a no-break space before each unit in the page)
    assert summary["sentence"] in text.replace("\u00a0", " ") and "noise unknown" in text
    assert "spark.sql.shuffle.partitions" in text
    assert LABELS[1] in text                     # the label as text ...
    assert frame.locator("img").count() == 0     # ... never as markup
    assert frame.evaluate("() => window.origin") == "null"

    # Export HTML writes the comparison into the root; it reads the same offline
    view.locator(".jp-Toolbar").get_by_text("Export HTML").click()
    name = f"jupyter-perf-{export_id(a, b)}.html"
    page.locator(".Toastify__toast", has_text=name).wait_for(timeout=120_000)
    exported = lab["root"] / name
    html = exported.read_text(encoding="utf-8")
    assert html.rstrip().endswith(EXPORT_MARKER.format(run_id=export_id(a, b)))
    offline = browser.new_context(offline=True)
    try:
        standalone = offline.new_page()
        requests: list[str] = []
        standalone.on("request", lambda r: requests.append(r.url))
        standalone.goto(exported.as_uri())
        standalone.wait_for_selector(DRAWN, timeout=60_000)    # the renderer, inlined
        shown = standalone.locator("body").inner_text()
        assert summary["sentence"] in shown.replace("\u00a0", " ") and \
            "spark.sql.shuffle.partitions" in shown           # issue T: no-break spaces
        assert LABELS[1] in shown and standalone.locator("img").count() == 0
        assert requests == [exported.as_uri()]   # nothing else fetched
    finally:
        offline.close()

    # Clear unpicks both rows and hides the bar
    bar.locator(".jp-perf-compare-clear").click()
    assert bar.is_hidden()
    assert sidebar.locator(".jp-perf-compare-picked").count() == 0

    # the same comparison inline: `%perfmeasure compare A B` in a new cell of the notebook
    index = page.evaluate(f"""async (source) => {{
        const app = window.jupyterapp;
        const panel = {NOTEBOOK_JS};
        app.shell.activateById(panel.id);
        const nb = panel.content;
        const shared = nb.model.sharedModel;
        shared.insertCell(shared.cells.length, {{cell_type: 'code', source}});
        nb.activeCellIndex = nb.widgets.length - 1;
        await app.commands.execute('notebook:run-cell');
        return nb.widgets.length - 1;
    }}""", f"%perfmeasure compare {a} {b}")
    cell = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").nth(index)
    output = cell.locator(".jp-OutputArea-output").first
    cell.evaluate("c => c.scrollIntoView({block: 'end'})")
    output.wait_for(state="visible", timeout=120_000)
    output.locator(DRAWN).wait_for(timeout=60_000)           # the compare MIME renderer
    shown = output.inner_text()
    assert summary["sentence"] in shown.replace("\u00a0", " ") and \
            "spark.sql.shuffle.partitions" in shown           # issue T: no-break spaces
    assert a in shown and b in shown and LABELS[1] in shown
    assert output.locator("img").count() == 0
