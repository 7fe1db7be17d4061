"""Screenshots of each tab of a report, for README.md (Debian Chromium via Python playwright).

    python docs/screenshots/take_screenshots.py REPORT.html [OUT_DIR]

REPORT.html: any exported report; the committed ones come from ``examples/stragglers.ipynb``
(its skewed-join report, ``stragglers-report.html``, a real local[2] Spark run).
"""
from __future__ import annotations

import os
import sys

from playwright.sync_api import sync_playwright

ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-gpu"]
TABS = ["Summary", "Timeline", "Stages", "Stragglers", "What-if", "Memory"]
# report.js has drawn the timeline and written its status line
READY = """() => {
  const d = window.Bokeh && Bokeh.documents[0];
  const m = d && d.get_model_by_name('jp-timeline-status');
  return !!m && m.text.includes('task attempts in view');
}"""


def main(report: str, out: str) -> None:
    os.makedirs(out, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 860}, device_scale_factor=1)
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "data:", "blob:"))
                   else r.abort())
        page.goto("file://" + os.path.abspath(report))
        page.wait_for_function(READY)
        for i, name in enumerate(TABS):
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
            page.screenshot(path=os.path.join(out, f"{i + 1}-{name.lower().replace('-', '')}.png"))
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(__file__)))
