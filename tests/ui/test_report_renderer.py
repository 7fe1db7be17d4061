"""The report's MIME renderer (labextension/src/mime.ts) in a real JupyterLab and Chromium.

The outputs are the report data of a synthetic run (tests/ui/report_payload.py) under
``application/vnd.jupyter-perf.report+json``, displayed by a real kernel: no Spark, so the
module checks the renderer alone: drawn from the MIME output by the one renderer with BokehJS
(core + API) fetched once from the server extension, as tall as its content, Bokeh views
removed when the output goes, a format 1 output (a saved notebook's Bokeh item) still drawn,
untrusted notebooks showing the static fallback, and one clear line for payloads it cannot
draw. (test_notebook_report.py checks the same on real %%perfmeasure cells.)
"""
from __future__ import annotations

import json
from pathlib import Path

import bokeh
import pytest
from labhelpers import (
    KERNEL_IDLE_JS,
    TOKEN,
    assert_sized_to_content,
    notebook_js,
    open_page,
    require_browser,
    start_lab,
)

require_browser()

pytestmark = pytest.mark.timeout(600)

HERE = Path(__file__).resolve().parent
SETUP = (f"import sys; sys.path[:0] = [{str(HERE)!r}, {str(HERE.parent / 'server')!r}]\n"
         "from report_payload import bundle, legacy_bundle\nfrom IPython.display import display")
VERSION = bokeh.__version__
#: Bokeh's live documents and root views of this version on the page.
BOKEH_STATE_JS = f"""() => {{
    const b = window.Bokeh && window.Bokeh[{json.dumps(VERSION)}];
    return b ? {{documents: b.documents.length, roots: b.index.roots.length}} : null;
}}"""


def _notebook(cells: list[str], outputs: list[list[dict]] | None = None) -> dict:
    outputs = outputs or [[] for _ in cells]
    return {
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"cell-{i}",
                   "metadata": {}, "outputs": out, "source": src}
                  for i, (src, out) in enumerate(zip(cells, outputs))],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                    "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5,
    }


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    base = tmp_path_factory.mktemp("lab")
    nb = base / "renderer.ipynb"
    nb.write_text(json.dumps(_notebook([
        SETUP,
        "display(bundle('first report'), raw=True)",
        "display(bundle('second report'), raw=True)",
        "display(legacy_bundle(), raw=True)",
    ])))
    yield from start_lab(base, [nb])


@pytest.fixture(scope="module")
def page(lab, browser):
    context, page = open_page(browser, f"{lab['url']}/lab/tree/renderer.ipynb?reset&token={TOKEN}",
                              viewport=(1500, 900))
    bokeh_requests: list[str] = []
    page.on("request", lambda r: bokeh_requests.append(r.url)
            if "/jupyter-perf/static/bokeh/" in r.url else None)
    page.bokeh_requests = bokeh_requests
    page.wait_for_function(KERNEL_IDLE_JS, timeout=120_000)
    yield page
    context.close()


def _run_all(page) -> None:
    page.evaluate(f"""() => window.jupyterapp.shell.activateById(({notebook_js('renderer.ipynb')}).id)""")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(KERNEL_IDLE_JS, timeout=120_000)


def _reports(page):
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-perf-report-output")


def _drawn(report) -> None:
    """Wait until the renderer drew the report (its first tab drawn)."""
    report.locator(".jp-perf-report[data-jp-ready='1']").wait_for(state="attached", timeout=120_000)


def test_renders_from_the_mime_output_sized_to_its_content(page):
    _run_all(page)
    reports = _reports(page)
    reports.nth(2).wait_for(timeout=120_000)
    assert reports.count() == 3
    first = reports.nth(0)
    _drawn(first)
    _drawn(reports.nth(1))
    assert first.get_attribute("data-run-id")
    assert first.get_attribute("aria-label") == "jupyter-perf report: first report"
    assert first.get_by_text("first report").first.is_visible()
    for tab in ("Summary", "Query", "Timeline", "Stages", "Stragglers", "What-if", "Memory"):
        assert first.locator(".jp-perf-tabbar").get_by_text(tab, exact=True).is_visible()
    # drawn in the output itself: no iframe, and the output is as tall as the report
    # the renderer's node is the output element itself
    assert first.evaluate("el => el.classList.contains('jp-OutputArea-output')")
    assert first.locator("iframe").count() == 0
    assert_sized_to_content(first)
    # clicking a tab draws it in place, and the output follows the shown tab's height
    first.locator(".jp-perf-tabbar button[data-tab='stages']").click()
    first.locator("table[data-view='stages']").wait_for(state="visible", timeout=60_000)
    assert_sized_to_content(first)


def test_a_saved_format_1_output_is_still_drawn(page):
    """A notebook saved before the report was drawn from data carries a Bokeh item (format 1):
    the renderer embeds it as it is, with BokehJS's widgets and tables."""
    legacy = _reports(page).nth(2)
    legacy.get_by_text("What-if", exact=True).first.wait_for(state="visible", timeout=120_000)
    assert legacy.locator(".jp-perf-report-output-problem").count() == 0
    assert legacy.get_attribute("data-run-id") == "20261126-134411-39eed1"
    assert_sized_to_content(legacy)


def test_bokehjs_loads_once_per_page_from_the_server_extension(page):
    _drawn(_reports(page).nth(1))
    urls = page.bokeh_requests
    bundles = sorted(u.rsplit("/", 1)[1] for u in urls)
    # the core once; the renderer's API, and the format 1 output's widgets and tables
    assert bundles == ["bokeh-api.min.js", "bokeh-tables.min.js", "bokeh-widgets.min.js",
                       "bokeh.min.js"]
    assert all(f"/jupyter-perf/static/bokeh/{VERSION}/" in u for u in urls)
    assert page.locator("script[data-jupyter-perf]").count() == 4


def test_views_are_removed_when_outputs_go(page):
    def rerun() -> int:
        """Run every cell again; the Bokeh documents once every output has drawn again."""
        _run_all(page)
        _drawn(_reports(page).nth(0))
        _drawn(_reports(page).nth(1))
        _reports(page).nth(2).get_by_text("What-if", exact=True).first.wait_for(state="visible")
        # each fresh report draws its Summary's breakdown bar (one document); the format 1
        # output embeds its item (one document); both asynchronously
        page.wait_for_function(f"() => ({BOKEH_STATE_JS})().documents >= 3", timeout=60_000)
        return page.evaluate(BOKEH_STATE_JS)["documents"]

    # outputs replaced twice: as many documents each time (the replaced outputs' are gone),
    # not more and more (an earlier test drew more tabs of the first outputs)
    first = rerun()
    assert first == 3, first
    assert rerun() == first
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    page.wait_for_function(f"() => ({BOKEH_STATE_JS})().documents === 0", timeout=30_000)
    # every document goes, and every view from BokehJS's global index of root views (the
    # renderer's and the format 1 embed's; a document's notifications view included)
    assert page.evaluate(BOKEH_STATE_JS) == {"documents": 0, "roots": 0}
    assert _reports(page).count() == 0
    # and no request for BokehJS again
    assert len(page.bokeh_requests) == 4


def _open(page, lab, name: str, nb: dict) -> None:
    (lab["root"] / name).write_text(json.dumps(nb))
    page.evaluate("(path) => window.jupyterapp.commands.execute('docmanager:open', {path})", name)
    page.wait_for_function(f"() => {{ const w = {notebook_js(name)}; "
                           "return w && w.isVisible && w.content.widgets.length > 0; }")


def test_untrusted_notebook_shows_the_static_fallback(page, lab):
    """A notebook from elsewhere (no signature: not trusted) never runs the renderer: it shows
    the static summary (sanitized HTML) the kernel put beside the payload."""
    from report_payload import bundle

    out = {"output_type": "display_data", "metadata": {}, "data": bundle("untrusted")}
    _open(page, lab, "untrusted.ipynb", _notebook(["x = 1"], [[out]]))
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    static = panel.locator(".jp-OutputArea-output", has_text="Open this notebook in JupyterLab "
                                                             "with jupyter-perf")
    static.first.wait_for(state="visible")
    assert "untrusted" in static.first.inner_text()        # the run's title, as text
    assert panel.locator(".jp-perf-report-output").count() == 0


@pytest.mark.parametrize("call, expected", [
    # a format 1 report is Bokeh's own models: only the Bokeh that made it draws it
    ("legacy_bundle(bokeh_version='2.4.3')", ["2.4.3", VERSION]),
    ("bundle('bad', fmt=3)", ["newer jupyter-perf", "upgrade"]),
])
def test_a_payload_it_cannot_draw_says_why_in_one_line(page, lab, call, expected):
    name = f"bad-{abs(hash(call))}.ipynb"
    _open(page, lab, name, _notebook([SETUP, f"display({call}, raw=True)"]))
    page.wait_for_function(KERNEL_IDLE_JS, timeout=120_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    problem = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-perf-report-output-problem")
    problem.wait_for(timeout=120_000)
    text = problem.inner_text()
    assert "\n" not in text.strip()
    for word in expected:
        assert word in text
    # then the plain-text summary of the run
    assert "task attempts" in problem.locator("xpath=..").locator("pre").inner_text()


def test_a_data_report_saved_with_another_bokeh_draws_with_the_servers(page, lab):
    """A format 2 report is data: saved when the kernel had another Bokeh (upgraded since),
    it draws with the server's BokehJS instead of refusing."""
    _open(page, lab, "other-bokeh.ipynb",
          _notebook([SETUP, "display(bundle('older bokeh', bokeh_version='3.4.0'), raw=True)"]))
    page.wait_for_function(KERNEL_IDLE_JS, timeout=120_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    report = _reports(page).first
    _drawn(report)
    assert report.get_attribute("aria-label").endswith("older bokeh")
    assert report.locator(".jp-perf-report-output-problem").count() == 0


#: What a reader sees of each report output on the open notebook: its run, its title, its tabs
#: and the Summary tab's text (format 2); the Bokeh item's run id (format 1).
SNAPSHOT_JS = """() => Array.from(document.querySelectorAll(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-perf-report-output')).map(el => ({
  run: el.getAttribute('data-run-id'), label: el.getAttribute('aria-label'),
  tabs: Array.from(el.querySelectorAll('.jp-perf-tabbar button')).map(b => b.textContent),
  summary: (el.querySelector(".jp-perf-panel[data-tab='summary']") || {}).innerText || null,
}))"""


def test_saved_closed_and_reopened_it_renders_the_same(page, lab):
    """Issue Q: the notebook saved, closed and opened again draws the same reports from the
    outputs it saved (JupyterLab signed it on save: trusted), without running a cell."""
    name = "renderer.ipynb"
    page.evaluate(f"() => window.jupyterapp.shell.activateById(({notebook_js(name)}).id)")
    _run_all(page)
    for i in (0, 1):
        _drawn(_reports(page).nth(i))
    _reports(page).nth(2).get_by_text("What-if", exact=True).first.wait_for(state="visible")
    before = page.evaluate(SNAPSHOT_JS)
    assert len(before) == 3 and all(r["run"] for r in before)
    assert before[0]["label"].endswith("first report") and before[1]["summary"]
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function(f"() => !({notebook_js(name)}).context.model.dirty", timeout=60_000)
    saved = json.loads((lab["root"] / name).read_text())
    mimes = [k for c in saved["cells"] for o in c["outputs"] for k in o.get("data", {})
             if k.startswith("application/vnd.jupyter-perf")]
    assert len(mimes) == 3, mimes
    page.evaluate(f"() => ({notebook_js(name)}).dispose()")
    page.wait_for_function(f"() => !({notebook_js(name)})", timeout=30_000)
    page.evaluate("(path) => window.jupyterapp.commands.execute('docmanager:open', {path})", name)
    page.wait_for_function(f"() => {{ const w = {notebook_js(name)}; "
                           "return w && w.isVisible && w.content.widgets.length > 0; }")
    reports = _reports(page)
    reports.nth(2).wait_for(timeout=120_000)
    for i in (0, 1):
        _drawn(reports.nth(i))
    reports.nth(2).get_by_text("What-if", exact=True).first.wait_for(state="visible")
    assert page.evaluate(SNAPSHOT_JS) == before
    assert page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) "
                        ".jp-perf-report-output-problem").count() == 0
