"""Helpers shared by the test modules (importable by name: ``from sparkhelpers import ...``).

Kept out of ``conftest.py`` on purpose: several directories have a conftest, and importing
``conftest`` by name picks whichever was loaded first.
"""
from __future__ import annotations

import re

#: What the JVM prints when it starts (Ivy resolving sparkmeasure, log4j) and when its own
#: threads fail (Java stack traces): none of it belongs under a notebook cell.
JVM_NOISE = re.compile(r"Ivy Default Cache|:: resolving dependencies|found ch\.cern|"
                       r"resolution report|^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (INFO|WARN|ERROR) |"
                       r"Setting default log level|sc\.setLogLevel|^\s+at [\w.$]+\(|log4j",
                       re.MULTILINE)


def make_spark(master: str, warm_up: bool = False, **conf):
    """A real SparkSession with sparkmeasure attached (stops any previous one first).

    No warm-up query by default: tests count the jobs of their own applications.
    """
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    import jupyter_perf as jp

    old = SparkSession.getActiveSession()
    if old is not None:
        old.stop()
    if SparkContext._active_spark_context is not None:   # e.g. one the magic started
        SparkContext._active_spark_context.stop()
    settings = {"spark.sql.shuffle.partitions": "4", "spark.ui.port": "0"} | conf
    return jp.spark_session(master=master, warm_up=warm_up, **settings)


def rest_stages(spark, stage_id: int) -> list[dict]:
    import requests

    sc = spark.sparkContext
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/stages/{stage_id}"
    return requests.get(url, params={"details": "false"}, timeout=30).json()


def run_cell(shell, source: str):
    """Run a cell, returning (ExecutionResult, captured output)."""
    from IPython.utils.capture import capture_output

    with capture_output() as cap:
        result = shell.run_cell(source, store_history=True)
    return result, cap


def measure_shown(shell, source: str) -> tuple[str, dict | None]:
    """Run a measured cell to its end (the report's finishing included): the run's id and the
    report data the cell showed under it (None if it showed none)."""
    import jupyter_perf as jp
    from jupyter_perf.kernel.handoff import wait_pending
    from jupyter_perf.render.inline import MIME
    from jupyter_perf.render.views import decode_data

    result, cap = run_cell(shell, source)
    assert result.error_in_exec is None, cap.stderr
    wait_pending()
    run = jp.last_run()
    assert run.status == "ok", run.error
    shown = [o.data[MIME] for o in cap.outputs if MIME in (o.data or {})]
    return run.run_id, (decode_data(shown[-1]["data"]) if shown else None)
