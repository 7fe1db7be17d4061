"""Faults around Spark itself: no sparkmeasure jar, REST lost mid-cell, evicted tasks, secrets.

One session for the module, started the way a user without network access to the
sparkmeasure artifact would get it: the jar cannot be resolved, Spark still starts.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from sparkhelpers import make_spark, rest_stages

import jupyter_perf as jp
from jupyter_perf.collect import rest as rest_module
from jupyter_perf.collect.redact import REDACTED
from jupyter_perf.store import default_store

MISSING_JAR = "ch.cern.sparkmeasure:spark-measure_2.12:0.0.404"   # no such artifact


pytestmark = [pytest.mark.spark4, pytest.mark.fresh_jvm]


@pytest.fixture(scope="module")
def spark():
    session = make_spark("local[2]", **{
        "spark.jars.packages": MISSING_JAR,
        "spark.ui.retainedTasks": "100",
        "spark.my.service.password": "hunter2",
        "spark.app.token.note": "plain",
    })
    yield session
    session.stop()


def test_missing_jar_falls_back_to_rest_only_with_a_warning(spark):
    run = jp.measure(lambda: spark.range(0, 20_000, 1, 4).selectExpr("id % 9 AS k")
                     .groupBy("k").count().collect(), spark=spark)
    assert run.collector == "rest" and run.listener_stages is None
    assert any("sparkmeasure" in w and "REST API only" in w for w in run.warnings)
    # the numbers still equal Spark's own
    for _, row in run.stage_table().query("status == 'COMPLETE'").iterrows():
        [rest] = [a for a in rest_stages(spark, row.stage_id) if a["attemptId"] == row.attempt]
        assert row.executor_run_time_ms == rest["executorRunTime"]
        assert row.task_attempts == rest["numCompleteTasks"]


def test_the_reason_is_ivys_own_line(spark):
    from jupyter_perf.collect.session_state import session_state

    problem = session_state(spark.sparkContext).jar_problem
    assert f"unresolved dependency: {MISSING_JAR.replace(':', '#', 1).replace(':', ';')}" \
        in problem, problem


def test_a_missing_jar_is_one_line_and_spark_prints_nothing_else(tmp_path):
    code = ("import jupyter_perf as jp\n"
            f"s = jp.spark_session(master='local[1]', warm_up=False, **{{"
            f"'spark.jars.packages': {MISSING_JAR!r}, 'spark.ui.port': '0'}})\n"
            "print('count', s.range(10).count())\ns.stop()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600, env=dict(os.environ, JUPYTER_PERF_HOME=str(tmp_path)))
    assert out.returncode == 0, out.stderr[-3000:]
    [started, counted] = out.stdout.splitlines()
    assert re.fullmatch(r"Spark \d+\.\d+\.\d+ started in \d+ s, log: \S+", started)
    assert counted == "count 10"
    [warning] = out.stderr.splitlines()          # Ivy, log4j, the JVM's shutdown: in the log
    assert warning.startswith("jupyter-perf: sparkmeasure (") and "unresolved dependency" in warning
    assert "REST API only" in warning
    log = started.split(", log: ", 1)[1]
    assert os.path.dirname(log) == str(tmp_path / "logs")
    assert ":: resolving dependencies" in open(log, encoding="utf-8", errors="replace").read()


def test_evicted_tasks_are_detected_and_reported(spark):
    run = jp.measure(lambda: spark.range(0, 4000, 1, 400).count(), spark=spark)
    [warning] = [w for w in run.warnings if "retainedTasks" in w]
    assert "of 400 task attempts" in warning
    assert len(run.tasks) < 401
    assert warning in jp.analyze(run).summary()["warnings"]     # shown with the report


def test_rest_unreachable_mid_cell_gives_a_partial_run_with_a_warning(spark, monkeypatch):
    # A Spark UI that dies mid-cell cannot be produced on demand: the REST client fails here.
    def unreachable(self, path, **params):
        raise rest_module.RestError("Spark REST API unreachable at http://127.0.0.1:1 "
                                    "(ConnectionError); is the Spark UI enabled?")

    def body():
        spark.range(0, 1000, 1, 2).count()
        monkeypatch.setattr(rest_module.SparkRest, "get", unreachable)

    run = jp.measure(body, spark=spark)
    assert any("unreachable" in w and "partial" in w for w in run.warnings), run.warnings
    stored = default_store().load(run.run_id)          # the run is not lost
    assert stored.run_id == run.run_id and stored.warnings == run.warnings


def test_secrets_in_the_spark_conf_are_redacted_in_store_and_report(spark):
    run = jp.measure(lambda: spark.range(10).count(), spark=spark)
    conf = run.extra["spark_conf"]
    assert conf["spark.my.service.password"] == REDACTED
    assert conf["spark.app.token.note"] == REDACTED             # key matches: redacted too
    assert conf["spark.master"] == "local[2]"
    stored = default_store().load(run.run_id)
    from reportpage import page_text
    html = jp.report_html(run)
    assert "hunter2" not in str(stored.extra) and "hunter2" not in html
    assert "hunter2" not in page_text(html)              # nor in the report's data


# Last in the module: it stops the module's session.
def test_spark_stopped_inside_a_cell_without_sparkmeasure_says_so(spark, ipshell):
    from sparkhelpers import run_cell

    ipshell.user_ns["spark"] = spark
    try:
        result, cap = run_cell(ipshell, "%%perfmeasure -o stopped\n"
                                        "spark.range(0, 100, 1, 2).count()\nspark.stop()\n'done'\n")
    finally:
        run = ipshell.user_ns.pop("stopped", None)
        ipshell.user_ns.pop("spark", None)
    assert result.error_in_exec is None and result.result == "done"
    assert run.status == "ok"                  # not "no-jobs": a job ran, it cannot be read
    assert "no Spark jobs ran" not in cap.stdout + cap.stderr
    # no report to list them: every collection warning is one line under the cell
    lines = [line for line in cap.stderr.splitlines() if line.startswith("perfmeasure:")]
    assert lines == [f"perfmeasure: {w}" for w in run.warnings], (lines, run.warnings)
    assert any("spark.stop()" in line and "sparkmeasure is not loaded" in line for line in lines)
    assert any("REST API only" in line for line in lines)       # the jar problem, too
