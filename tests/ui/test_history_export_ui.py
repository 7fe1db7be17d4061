"""The History tab of a standalone export and of the server's report page, drawn in Chromium
(issue T): the files ``jupyter-perf report`` writes and ``GET runs/{id}/report`` serves carry
the cell's series (tests/test_report_series.py checks the data), and the one renderer draws
the tab from them offline, as in the notebook (test_history_ui.py). Hand-built runs of one
cell (six on 2 slots, then one slower on 4: the one regression, checked against the what-if of
the run before it, issue T item 6); the label is markup and stays text."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from labhelpers import offline_page, require_browser

require_browser()

pytestmark = pytest.mark.timeout(600)

HERE = Path(__file__).resolve().parent
LABEL = '<img class="pwned" src="x"> daily'


def _seed() -> list[str]:
    sys.path[:0] = [str(HERE.parent), str(HERE.parent / "analysis")]
    from compare_synth import cell_run, stored

    ids = [stored(cell_run([100 + k, 100, 100, 100], label=LABEL)) for k in range(6)]
    return ids + [stored(cell_run([400] * 4, label=LABEL, slots=4))]


def _check_history_tab(browser, path: Path, ids: list[str]) -> None:
    with offline_page(browser, path) as page:
        report = page.locator(".jp-perf-report[data-jp-ready='1']")
        report.wait_for(state="attached", timeout=120_000)
        line = page.locator("table[data-view='key-numbers'] tr[data-key='series']")
        assert line.inner_text().split("\t")[-1].startswith("7th run of this cell: slower than")
        page.locator(".jp-perf-tabbar button[data-tab='history']").click()
        panel = page.locator(".jp-perf-panel[data-tab='history']")
        page.wait_for_function("el => el.dataset.jpDrawn === '1'", arg=panel.element_handle(),
                               timeout=60_000)
        assert report.get_attribute("data-jp-error") is None
        assert panel.locator("[data-view='history-context']").inner_text().startswith(
            "7th run of this cell: slower than the 6 warm runs before the change by ")
        chart = panel.locator(".jp-perf-history-chart")
        assert chart.get_attribute("data-points") == "7"
        assert chart.get_attribute("data-current") == "7"
        assert chart.get_attribute("data-regressions") == "1"
        assert chart.get_attribute("data-predicted") == "1"      # the slots what-if's marker
        box = chart.bounding_box()
        assert box and box["width"] > 300 and box["height"] > 150
        rows = panel.locator("table[data-view='history'] tbody tr")
        assert rows.count() == 7
        for k, rid in enumerate(ids):
            assert rid in rows.nth(k).inner_text()
        current = panel.locator("table[data-view='history'] tr.jp-perf-history-current")
        assert current.count() == 1 and ids[-1] in current.inner_text()
        assert "regression" in current.inner_text()
        assert f"slots ×2 (2 → 4), by run {ids[-2]}:" in current.inner_text()
        assert page.locator("img.pwned").count() == 0           # the label stays text
        assert page.requests == [path.as_uri()]                 # offline: nothing fetched


def test_the_exported_report_and_the_servers_page_show_the_history_tab(browser, tmp_path):
    from jupyter_perf.cli import main
    from jupyter_perf.server import runs_service

    ids = _seed()
    exported = tmp_path / "export.html"
    assert main(["report", ids[-1], "-o", str(exported)]) == 0
    _check_history_tab(browser, exported, ids)
    served = tmp_path / "served.html"
    served.write_text(runs_service.report_html(None, ids[-1])[0], encoding="utf-8")
    _check_history_tab(browser, served, ids)
