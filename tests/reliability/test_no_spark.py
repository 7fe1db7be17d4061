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
    [line] = [x for x in out.stderr.splitlines() if "perfmeasure" in x]
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


def test_a_spark_connect_session_without_its_server_runs_the_cell_unmeasured(ipshell):
    """A real Connect client whose server is not there: one line with the next step, no
    ten minutes in the client's retries, and the cell runs. (Measuring Connect sessions with
    a server: tests/connect/.)"""
    connect = pytest.importorskip("pyspark.sql.connect.session",
                                  reason="pyspark's Spark Connect client needs grpcio")
    from connectservers import free_port
    from sparkhelpers import run_cell

    port = free_port()      # nothing listens there
    # the constructor, not builder.create(): 3.5's create() already calls the server
    ipshell.user_ns["spark"] = connect.SparkSession(f"sc://127.0.0.1:{port}")
    try:
        result, cap = run_cell(ipshell, "%%perfmeasure\nz = 'ran'\nprint(z)\n")
    finally:
        ipshell.user_ns.pop("spark").client.close()
    assert result.error_in_exec is None and "ran" in cap.stdout
    [line] = [x for x in cap.stderr.splitlines() if "perfmeasure" in x]
    assert f"no Spark Connect server answers at 127.0.0.1:{port}" in line and "unmeasured" in line
