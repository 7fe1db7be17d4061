"""Fixtures of the browser tests: one Chromium per module (labhelpers.py has the
JupyterLab server and the module-level skip)."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def browser():
    from labhelpers import launch_chromium
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = launch_chromium(p)
        yield chromium
        chromium.close()
