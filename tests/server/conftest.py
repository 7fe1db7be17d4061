"""Fixtures for the server extension's REST tests: a real Jupyter server (pytest-jupyter)
with jupyter_perf enabled, and a run store in a temporary $JUPYTER_PERF_HOME.

``pytest_plugins`` may only be declared in the top-level conftest, and tests/conftest.py is
shared, so the plugin's fixtures (jp_fetch, jp_serverapp, ...) are imported here, which
scopes them to tests/server.
"""
from __future__ import annotations

import pytest
from pytest_jupyter.jupyter_server import *  # noqa: F403 -- the plugin's fixtures, see above
from runs_factory import make_run, save_run

from jupyter_perf.store import RunStore


@pytest.fixture
def jp_server_config():
    return {"ServerApp": {"jpserver_extensions": {"jupyter_perf": True}}}


@pytest.fixture
def perf_home(jp_home, monkeypatch):
    """$JUPYTER_PERF_HOME for the server under test (tests/conftest.py sets it per test)."""
    monkeypatch.setenv("JUPYTER_PERF_HOME", str(jp_home))
    return jp_home


@pytest.fixture
def store(perf_home) -> RunStore:
    return RunStore(str(perf_home))


@pytest.fixture
def seeded(store, jp_root_dir):
    """Three runs, oldest first: a plain one, one from a notebook under the Jupyter root,
    and a failed one whose label is markup."""
    nb = str(jp_root_dir / "work" / "etl.ipynb")
    runs = [
        save_run(store, make_run(label="daily aggregate")),
        save_run(store, make_run(source="spark.range(10**6).groupBy('id').count().show()\n",
                                 notebook=nb)),
        save_run(store, make_run(label="<img src=x onerror=alert(1)>", status="failed")),
    ]
    return runs
