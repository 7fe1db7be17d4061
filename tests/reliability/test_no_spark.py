"""No Java, so no Spark: one clear line with the next step, and the cell still runs."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest


def test_cell_runs_unmeasured_with_one_line_when_spark_cannot_start(tmp_path):
    code = textwrap.dedent("""
        from IPython.testing.globalipapp import start_ipython
        ip = start_ipython()
        ip.run_cell("%load_ext jupyter_perf")
        r = ip.run_cell("%%perfmeasure\\nx = 6 * 7\\nprint('cell ran', x)\\n")
        assert r.error_in_exec is None, r.error_in_exec
    """)
    env = dict(os.environ, JAVA_HOME=str(tmp_path / "no-jdk"), PATH=os.path.dirname(sys.executable),
               JUPYTER_PERF_HOME=str(tmp_path / "home"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert "cell ran 42" in out.stdout
    [line] = [l for l in out.stderr.splitlines() if "perfmeasure" in l]
    assert "no Java runtime found" in line and "JDK 17" in line and "unmeasured" in line
    assert "Traceback" not in out.stderr


def test_after_the_session_is_stopped_the_magic_starts_the_embedded_one(ipshell, spark_local):
    from pyspark.sql import SparkSession

    from sparkhelpers import run_cell

    spark_local.stop()
    ipshell.user_ns.pop("spark", None)
    try:
        result, cap = run_cell(ipshell, "%%perfmeasure\nn = spark.range(10).count()\nprint('n =', n)\n")
        assert result.error_in_exec is None and "n = 10" in cap.stdout
        assert "jupyter-perf-report" in cap.outputs[-1].data["text/html"]
        assert ipshell.user_ns["spark"] is SparkSession.getActiveSession()
    finally:
        started = ipshell.user_ns.pop("spark", None)
        if started is not None:
            started.stop()


def test_a_spark_connect_session_is_refused_in_one_line_and_the_cell_runs(ipshell):
    connect = pytest.importorskip("pyspark.sql.connect.session",
                                  reason="pyspark's Spark Connect client needs grpcio")
    from sparkhelpers import run_cell

    # A real Spark Connect client object. No Connect server can be started here (its jar is not
    # reachable), and the magic must refuse before it would talk to one.
    ipshell.user_ns["spark"] = object.__new__(connect.SparkSession)
    try:
        result, cap = run_cell(ipshell, "%%perfmeasure\nz = 'ran'\nprint(z)\n")
    finally:
        ipshell.user_ns.pop("spark", None)
    assert result.error_in_exec is None and "ran" in cap.stdout
    [line] = [l for l in cap.stderr.splitlines() if "perfmeasure" in l]
    assert "Spark Connect" in line and "unmeasured" in line
