"""Shared fixtures: one real SparkSession per test module, a real IPython shell, a private run store."""
from __future__ import annotations

import os
import sys

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

# Helper modules of the test folders (sparkapps, render_runs, analysis_synth, ...) import by
# name from any test, whatever subset pytest was asked to run.
_HERE = os.path.dirname(os.path.abspath(__file__))
for _sub in ("", "analysis", "collect", "connect", "render", "server", "reliability", "ui"):
    _path = os.path.join(_HERE, _sub)
    if os.path.isdir(_path) and _path not in sys.path:
        sys.path.insert(0, _path)

# The session fixtures over real Spark event logs (``apps``, ``apps_root``) live in
# tests/collect/sparkapps.py; pytest reads this after the module body above has put
# tests/collect on sys.path, so any test can name them as arguments without importing them.
pytest_plugins = ["sparkapps"]


@pytest.fixture(autouse=True, scope="session")
def session_jp_home(tmp_path_factory):
    """What outlives one test (a module's Spark session and the JVM log it writes) stays out
    of the user's store too."""
    before = os.environ.get("JUPYTER_PERF_HOME")
    os.environ["JUPYTER_PERF_HOME"] = str(tmp_path_factory.mktemp("jphome-session"))
    yield
    if before is None:
        os.environ.pop("JUPYTER_PERF_HOME", None)
    else:
        os.environ["JUPYTER_PERF_HOME"] = before


@pytest.fixture(autouse=True)
def jp_home(tmp_path_factory, monkeypatch):
    """Every test writes runs into its own store, never the user's."""
    home = tmp_path_factory.mktemp("jphome")
    monkeypatch.setenv("JUPYTER_PERF_HOME", str(home))
    return home


@pytest.fixture(scope="module")
def spark_local():
    from sparkhelpers import make_spark

    spark = make_spark("local[2]")
    yield spark
    spark.stop()


@pytest.fixture(scope="module")
def ipshell():
    """A real IPython InteractiveShell with the extension loaded."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.testing.globalipapp import start_ipython

    # start_ipython() builds the shell once per process and returns None afterwards
    shell = start_ipython() or InteractiveShell.instance()
    # Its input history stays in memory (In, _ih, execution counts): no test reads IPython's
    # SQLite history, a throwaway file that start_ipython() writes only at exit. That write
    # fails on a cell with a lone surrogate (tests/reliability/test_store_faults.py) and
    # printed a UnicodeEncodeError traceback after the suite's summary.
    shell.history_manager.enabled = False
    shell.run_cell("%load_ext jupyter_perf", store_history=False)
    return shell
