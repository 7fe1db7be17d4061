"""Helpers for the renderer's browser tests (fixtures: conftest.py)."""
from __future__ import annotations

TAB_KEYS = ["summary", "query", "timeline", "stages", "stragglers", "whatif", "memory"]


def show_tab(page, key: str) -> None:
    """Click a tab of the report and wait until it is drawn (or failed)."""
    page.click(f".jp-perf-tabbar button[data-tab='{key}']")
    page.wait_for_function(
        """(key) => { const p = document.querySelector(`.jp-perf-panel[data-tab='${key}']`);
                      return p && !p.hidden && p.dataset.jpDrawn === '1'; }""", arg=key,
        timeout=60_000)


LOCAL = ("file:", "data:", "blob:", "about:")


def open_offline(browser, path, ready: str, width: int = 1100):
    """The page at ``path`` opened in Chromium with every non-local request blocked (recorded
    in ``page.jp_requests``), console errors in ``page.jp_errors``, dialogs dismissed and
    recorded in ``page.jp_dialogs``; returned once ``ready`` (a selector) is on the page."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.jp_requests, page.jp_errors, page.jp_dialogs = [], [], []
    page.on("console", lambda m: m.type == "error" and page.jp_errors.append(m.text))
    page.on("pageerror", lambda e: page.jp_errors.append(str(e)))

    def dialog(d):
        page.jp_dialogs.append(d.message)
        d.dismiss()
    page.on("dialog", dialog)

    def route(r):
        if r.request.url.startswith(LOCAL):
            return r.continue_()
        page.jp_requests.append(r.request.url)
        return r.abort()
    page.route("**/*", route)
    page.goto(path.as_uri())
    page.wait_for_selector(ready, timeout=60_000)
    return page
