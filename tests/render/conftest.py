"""Fixtures for the browser tests of the report renderer (labextension/src/report/): the
standalone page of an Analysis opened from disk in Debian's Chromium with the network off."""
from __future__ import annotations

import os

import pytest
from viewhelpers import open_offline, show_tab

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-gpu"]


@pytest.fixture(scope="module")
def jp_browser():
    """One Chromium per module (Python playwright pointed at Debian's binary)."""
    if not os.path.exists(CHROMIUM):
        pytest.skip("no Debian chromium at /usr/bin/chromium (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover
        pytest.skip("Python playwright is not installed")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@pytest.fixture
def open_report(jp_browser, tmp_path):
    """``open_report(analysis_or_run, tab=None) -> page``: the standalone page written to disk
    and opened with every non-local request blocked (recorded in ``page.jp_requests``), waited
    for until the renderer marks the report ready; ``tab`` (e.g. "whatif") is then shown.
    Console errors are collected in ``page.jp_errors``."""
    from jupyter_perf.render.standalone import report_page
    from jupyter_perf.render.views import report_payload

    pages = []

    def _open(obj, tab: str | None = None, width: int = 1100):
        path = tmp_path / f"report-{len(pages)}.html"
        path.write_text(report_page(report_payload(obj)), encoding="utf-8")
        page = open_offline(jp_browser, path, ".jp-perf-report[data-jp-ready='1']", width)
        if tab:
            show_tab(page, tab)
        pages.append(page)
        return page

    yield _open
    for p in pages:
        p.close()
