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
