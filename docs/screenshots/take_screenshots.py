"""Screenshots of each tab of a report, for README.md (Debian Chromium via Python playwright).

    python docs/screenshots/take_screenshots.py REPORT.html [OUT_DIR] [--tabs query ...]

REPORT.html: any exported report (``jp.export`` / ``jupyter-perf report --html``); the
committed tab screenshots come from ``examples/stragglers.ipynb`` (its skewed-join report,
``stragglers-report.html``, a real local[2] Spark run), ``query.png`` from TPC-H Q9 (SF 0.01,
local[2], ``tests/tpch.py``) with its top operator clicked, ``7-profile.png`` from
``jp.measure(q, profile=True)`` of TPC-H Q1 (SF 0.1, local[2]). Tabs are named by their key
(summary, timeline, stages, stragglers, whatif, memory, query, profile).

The page is drawn by the report renderer (``labextension/src/report/``); the script uses its
DOM: the report is ready when ``.jp-perf-report[data-jp-ready='1']``, a tab is shown by its
button ``.jp-perf-tabbar button[data-tab=KEY]`` and drawn when its panel
``.jp-perf-panel[data-tab=KEY]`` has ``data-jp-drawn='1'``.
"""
from __future__ import annotations

import os
import sys

from playwright.sync_api import sync_playwright

ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-gpu"]
TABS = ["summary", "timeline", "stages", "stragglers", "whatif", "memory", "query"]
# (profile: only a profiled run has the tab; ask for it with --tabs profile)
FILES = {"summary": "1-summary", "timeline": "2-timeline", "stages": "3-stages",
         "stragglers": "4-stragglers", "whatif": "5-whatif", "memory": "6-memory",
         "query": "query", "profile": "7-profile"}
DRAWN = """(key) => { const p = document.querySelector(`.jp-perf-panel[data-tab='${key}']`);
                      return p && !p.hidden && p.dataset.jpDrawn === '1'; }"""


def show(page, key: str) -> None:
    page.click(f".jp-perf-tabbar button[data-tab='{key}']")
    page.wait_for_function(DRAWN, arg=key, timeout=60_000)


def main(report: str, out: str, tabs: list[str]) -> None:
    os.makedirs(out, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 860}, device_scale_factor=1)
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "data:", "blob:"))
                   else r.abort())
        page.goto("file://" + os.path.abspath(report))
        page.wait_for_selector(".jp-perf-report[data-jp-ready='1']", timeout=60_000)
        for key in tabs:
            show(page, key)
            panel = page.locator(f".jp-perf-panel[data-tab='{key}']")
            if key == "stragglers":                             # the first straggler, selected
                rows = panel.locator("table[data-view='stragglers'] tbody tr")
                if rows.count():
                    rows.first.click()
            if key == "whatif":
                panel.locator("input[data-control='disk']").focus()
                page.keyboard.press("End")                      # disk: ∞
                panel.locator("input[data-control='stragglers']").check()   # no stragglers
                # the simulated schedule of that setting is drawn
                page.wait_for_function(
                    """() => { const p = document.querySelector(".jp-perf-panel[data-tab='whatif']");
                               return p && (p.dataset.jpSim || '').includes('|false'); }""")
            if key == "query":                                  # the top operator, selected
                rows = panel.locator("table[data-view='operators'] tbody tr[data-row='0']")
                if rows.count():
                    rows.first.click()
            page.wait_for_timeout(500)                          # BokehJS paints its canvases
            page.screenshot(path=os.path.join(out, FILES[key] + ".png"), full_page=key == "query")
        browser.close()


if __name__ == "__main__":
    args = sys.argv[1:]
    only = args[args.index("--tabs") + 1:] if "--tabs" in args else TABS
    args = args[:args.index("--tabs")] if "--tabs" in args else args
    main(args[0], args[1] if len(args) > 1 else os.path.dirname(os.path.abspath(__file__)), only)
