"""Screenshots of each tab of a report, for README.md (Debian Chromium via Python playwright).

    python docs/screenshots/take_screenshots.py REPORT.html [OUT_DIR] [--tabs Query ...]

REPORT.html: any exported report; the committed tab screenshots come from
``examples/stragglers.ipynb`` (its skewed-join report, ``stragglers-report.html``, a real
local[2] Spark run), ``query.png`` from TPC-H Q9 (SF 0.01, local[2], ``tests/tpch.py``) with
its top operator clicked.
"""
from __future__ import annotations

import os
import sys

from playwright.sync_api import sync_playwright

ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-gpu"]
TABS = ["Summary", "Timeline", "Stages", "Stragglers", "What-if", "Memory", "Query"]
FILES = {"Summary": "1-summary", "Timeline": "2-timeline", "Stages": "3-stages",
         "Stragglers": "4-stragglers", "What-if": "5-whatif", "Memory": "6-memory",
         "Query": "query"}
# report.js has drawn the timeline and written its status line
READY = """() => {
  const d = window.Bokeh && Bokeh.documents[0];
  const m = d && d.get_model_by_name('jp-timeline-status');
  return !!m && m.text.includes('task attempts in view');
}"""


def main(report: str, out: str, tabs: list[str]) -> None:
    os.makedirs(out, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 860}, device_scale_factor=1)
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "data:", "blob:"))
                   else r.abort())
        page.goto("file://" + os.path.abspath(report))
        page.wait_for_function(READY)
        for name in tabs:
            page.get_by_text(name, exact=True).first.click()
            page.wait_for_timeout(700)
            if name == "Stragglers":
                rows = page.locator(".jp-stragglers .slick-row")
                if rows.count():
                    rows.first.locator(".slick-cell").first.click()
                    page.wait_for_timeout(300)
            if name == "What-if":
                page.locator(".noUi-handle").first.focus()
                page.keyboard.press("End")                      # disk: ∞
                page.get_by_text("no stragglers (each", exact=False).filter(visible=True).first.click()
                page.wait_for_timeout(700)
            if name == "Query":                                 # the top operator, selected
                rows = page.locator(".jp-operators .slick-row")
                if rows.count():
                    rows.first.locator(".slick-cell").first.click()
                    page.wait_for_timeout(500)
            page.screenshot(path=os.path.join(out, FILES[name] + ".png"), full_page=name == "Query")
        browser.close()


if __name__ == "__main__":
    args = sys.argv[1:]
    only = args[args.index("--tabs") + 1:] if "--tabs" in args else TABS
    args = args[:args.index("--tabs")] if "--tabs" in args else args
    main(args[0], args[1] if len(args) > 1 else os.path.dirname(os.path.abspath(__file__)), only)
