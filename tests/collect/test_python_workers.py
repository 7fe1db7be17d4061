"""The embedded session's Python workers run the kernel's interpreter (issue U2).

A kernel started from a virtualenv usually has no ``PYSPARK_PYTHON``, and pyspark's default is
the ``python3`` on ``PATH``: without jupyter-perf's choice, a pandas UDF here dies in a worker
that lacks the kernel's pandas/pyarrow. This module runs in its own process
(``fresh_jvm``, ``scripts/run_tests.py``) with that environment made for real
(``workerpython.kernel_from_a_virtualenv``: no ``PYSPARK_PYTHON``, a system ``python3``
without pandas/pyarrow first on ``PATH``), one ``jp.spark_session()`` default session for
every test of the item, real Spark. Then: a failed UDF's stored error is the worker's own
exception line; the decision and its clean-up without a JVM; the user's choice winning
(last: new sessions).

No ``from __future__ import annotations`` here: pandas UDFs are typed by their annotations,
which pyspark 3.5 cannot read as strings.
"""
import os
import sys

import pytest
from sparkhelpers import run_cell
from workerpython import failing_udf_query, kernel_from_a_virtualenv, wrapper_python

import jupyter_perf as jp
from jupyter_perf.collect.session_state import is_local_master, python_workers, worker_python
from jupyter_perf.errors import one_line
from jupyter_perf.kernel.measuring import run_error, traceback_cause
from jupyter_perf.store import default_store

pytestmark = [pytest.mark.spark4, pytest.mark.fresh_jvm]

MISSING = "ModuleNotFoundError: No module named 'nonexistent_module_xyz'"


def _stop_any():
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    old = SparkSession.getActiveSession()
    if old is not None:
        old.stop()
    if SparkContext._active_spark_context is not None:
        SparkContext._active_spark_context.stop()


@pytest.fixture(scope="module")
def virtualenv_kernel(tmp_path_factory):
    with kernel_from_a_virtualenv(str(tmp_path_factory.mktemp("path"))) as decoy:
        yield decoy


@pytest.fixture(scope="module")
def spark(virtualenv_kernel):
    """The embedded default session, started where PYSPARK_PYTHON is not set."""
    _stop_any()
    assert "PYSPARK_PYTHON" not in os.environ
    session = jp.spark_session(**{"spark.ui.port": "0", "spark.sql.shuffle.partitions": "2"})
    yield session
    session.stop()


@pytest.fixture(scope="module")
def shell(ipshell, spark):
    ipshell.user_ns["spark"] = spark
    return ipshell


def _worker_executable(spark) -> str:
    from pyspark.sql.functions import udf

    where = udf(lambda _: __import__("sys").executable, "string")
    return spark.range(0, 1, 1, 1).select(where("id").alias("py")).collect()[0].py


# --- the kernel's interpreter, in one long-lived session ---------------------------------

def test_workers_run_the_kernels_interpreter_and_the_kernels_env_is_untouched(spark,
                                                                            virtualenv_kernel):
    assert spark.sparkContext.master.startswith("local")
    assert spark.sparkContext.pythonExec == sys.executable
    assert _worker_executable(spark) == sys.executable, virtualenv_kernel
    assert "PYSPARK_PYTHON" not in os.environ          # set while Spark started, then restored


def test_a_pandas_udf_sees_the_kernels_pandas_and_pyarrow(spark):
    import pandas as pd
    from pyspark.sql.functions import pandas_udf

    @pandas_udf("long")
    def times_three(v: pd.Series) -> pd.Series:
        return v * 3

    rows = spark.range(0, 100, 1, 2).select(times_three("id").alias("v")).collect()
    assert sorted(r.v for r in rows) == [3 * i for i in range(100)]


def test_map_in_pandas_runs_on_arrow_with_the_kernels_packages(spark):
    import pyarrow

    def tag(batches):
        import pyarrow as pa
        for pdf in batches:
            yield pdf.assign(double=pdf.id * 2, arrow=pa.__version__)

    df = spark.range(0, 50, 1, 2).mapInPandas(tag, "id long, double long, arrow string")
    rows = df.collect()
    assert sorted((r.id, r.double) for r in rows) == [(i, 2 * i) for i in range(50)]
    assert {r.arrow for r in rows} == {pyarrow.__version__}


def test_a_failing_pandas_udf_stores_the_workers_exception_line(spark):
    error = failing_udf_query(spark)
    text = str(error)
    # the real text: on Spark 3.5 it starts with a blank line; its first line is generic
    assert one_line(error).strip() and traceback_cause(text) == MISSING, text
    run = jp.last_run()
    assert run.status == "failed"
    assert run.error.startswith(MISSING), run.error
    assert "PythonException" in run.error and "\n" not in run.error
    assert run.error == run_error(error)
    assert default_store().load(run.run_id).error == run.error     # what the sidebar shows


def test_a_failing_map_in_pandas_cell_keeps_the_cause(shell):
    result, _ = run_cell(shell, "%%perfmeasure\n"
                                "def load(batches):\n"
                                "    import nonexistent_module_xyz\n"
                                "    yield from batches\n"
                                "spark.range(0, 10, 1, 2).mapInPandas(load, 'id long').collect()\n")
    assert type(result.error_in_exec).__name__ == "PythonException"   # the user's error, raised
    run = jp.last_run()
    assert run.status == "failed" and run.kind == "cell"
    assert run.error.startswith(MISSING) and "\n" not in run.error, run.error
    row = [r for r in default_store().list(limit=20) if r["run_id"] == run.run_id]
    assert row and row[0]["status"] == "failed"
    assert default_store().load(run.run_id).error == run.error


# --- the one-line cause, no JVM: the texts pyspark gives ------------------------------------

FRAME = ('  File "/tmp/cell.py", line 3, in f\n    import nonexistent_module_xyz\n')
TEXTS = {
    # pyspark 3.5 classic: a blank first line, then a generic sentence
    "3.5": ("\n  An exception was thrown from the Python worker. Please see the stack trace "
            "below.\nTraceback (most recent call last):\n" + FRAME + MISSING + "\n"),
    # pyspark 4.x classic
    "4.x": ("An exception was thrown from the Python worker:\nTraceback (most recent call "
            "last):\n" + FRAME + MISSING),
    # pyspark 4.x Spark Connect: the traceback starts mid-line, SQLSTATE after it
    "connect": ("\n  An exception was thrown from the Python worker. Please see the stack trace "
                "below.\n[PYTHON_EXCEPTION] An exception was thrown from the Python worker: "
                "Traceback (most recent call last):\n" + FRAME + MISSING + "\n SQLSTATE: 38000"),
}


class PythonException(Exception):
    """Stands for pyspark's (its str() is the text; run_error reads the type's name)."""


@pytest.mark.parametrize("source", sorted(TEXTS))
def test_the_cause_is_the_workers_exception_line(source):
    error = run_error(PythonException(TEXTS[source]))
    assert error == f"{MISSING} — PythonException: An exception was thrown from the Python worker"


def test_a_multi_line_message_and_a_chained_exception_give_their_first_line():
    text = ("\n  An exception was thrown from the Python worker.\nTraceback (most recent call "
            "last):\n  File \"a.py\", line 1, in f\n    int(x)\nValueError: invalid literal\n"
            "\nThe above exception was the direct cause of the following exception:\n\n"
            "Traceback (most recent call last):\n  File \"a.py\", line 3, in f\n"
            "    raise RuntimeError('two\\nlines')\n        ^^^^^\nRuntimeError: two\nlines\n")
    assert traceback_cause(text) == "RuntimeError: two"
    assert run_error(PythonException(text)).startswith("RuntimeError: two — PythonException")


def test_errors_without_a_traceback_keep_their_one_line():
    assert run_error(ValueError("boom from the cell")) == "ValueError: boom from the cell"
    assert run_error(PythonException("\n\n  \n")) == "PythonException"      # never blank
    assert run_error(KeyError()) == "KeyError"
    unfinished = PythonException("\nsomething failed\nTraceback (most recent call last):\n  x\n")
    assert run_error(unfinished) == "PythonException: something failed"


# --- the decision, no JVM -------------------------------------------------------------------

@pytest.mark.parametrize("master", ["local", "local[*]", "local[2]", "local[2,3]",
                                    "local-cluster[2,1,1024]", " LOCAL[4] "])
def test_local_masters_get_the_kernels_interpreter(master):
    assert is_local_master(master)
    assert worker_python(master, {}, environ={}) == sys.executable
    # the driver's Python is the kernel itself: naming it does not choose the workers'
    assert worker_python(master, {"spark.pyspark.driver.python": "/x/py"}, {}) == sys.executable
    assert worker_python(master, {}, {"PYSPARK_DRIVER_PYTHON": "jupyter"}) == sys.executable


@pytest.mark.parametrize("master", ["spark://host:7077", "yarn", "k8s://https://h:6443",
                                    "localhost", "", None])
def test_other_masters_keep_pysparks_default(master):
    assert not is_local_master(master)
    assert worker_python(master, {}, environ={}) is None


def test_the_users_choice_wins():
    env = {"PYSPARK_PYTHON": "/opt/env/bin/python"}
    assert worker_python("local[*]", {}, env) is None                 # pyspark reads it itself
    conf = {"spark.pyspark.python": "/opt/conf/bin/python"}
    assert worker_python("local[*]", conf, {}) == "/opt/conf/bin/python"
    assert worker_python("local[*]", conf, env) == "/opt/conf/bin/python"   # Spark's order
    assert worker_python("yarn", conf, {}) == "/opt/conf/bin/python"
    assert worker_python("local[*]", {"spark.pyspark.python": ""}, {}) == sys.executable


def test_python_workers_restores_the_environment(monkeypatch):
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    with python_workers("/a/python"):
        assert os.environ["PYSPARK_PYTHON"] == "/a/python"
    assert "PYSPARK_PYTHON" not in os.environ
    monkeypatch.setenv("PYSPARK_PYTHON", "/mine")
    with pytest.raises(RuntimeError):
        with python_workers("/a/python"):
            raise RuntimeError("Spark did not start")
    assert os.environ["PYSPARK_PYTHON"] == "/mine"
    with python_workers(None):
        assert os.environ["PYSPARK_PYTHON"] == "/mine"


# --- last: the user's choice in real sessions (each stops the one before) -------------------

def test_the_users_interpreter_wins_in_a_real_session(spark, tmp_path, monkeypatch):
    spark.stop()
    by_conf, conf_started = wrapper_python(str(tmp_path), "conf-python")
    chosen = jp.spark_session(warm_up=False, **{"spark.ui.port": "0",
                                                "spark.pyspark.python": by_conf})
    try:
        assert chosen.sparkContext.pythonExec == by_conf
        assert _worker_executable(chosen) == sys.executable     # the wrapper execs this one
        assert os.path.exists(conf_started)
        assert "PYSPARK_PYTHON" not in os.environ
    finally:
        chosen.stop()
    by_env, env_started = wrapper_python(str(tmp_path), "env-python")
    monkeypatch.setenv("PYSPARK_PYTHON", by_env)
    chosen = jp.spark_session(warm_up=False, **{"spark.ui.port": "0"})
    try:
        assert chosen.sparkContext.pythonExec == by_env
        assert _worker_executable(chosen) == sys.executable
        assert os.path.exists(env_started)
        assert os.environ["PYSPARK_PYTHON"] == by_env
    finally:
        chosen.stop()
