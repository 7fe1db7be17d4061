"""Shared fixtures: one real SparkSession per test module, a real IPython shell, a private run store."""
from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def jp_home(tmp_path_factory, monkeypatch):
    """Every test writes runs into its own store, never the user's."""
    home = tmp_path_factory.mktemp("jphome")
    monkeypatch.setenv("JUPYTER_PERF_HOME", str(home))
    return home


def make_spark(master: str, **conf):
    """A real SparkSession with sparkmeasure attached (stops any previous one first)."""
    from pyspark.sql import SparkSession

    import jupyter_perf as jp

    old = SparkSession.getActiveSession()
    if old is not None:
        old.stop()
    settings = {"spark.sql.shuffle.partitions": "4", "spark.ui.port": "0"} | conf
    return jp.spark_session(master=master, **settings)


@pytest.fixture(scope="module")
def spark_local():
    spark = make_spark("local[2]")
    yield spark
    spark.stop()


@pytest.fixture(scope="module")
def ipshell():
    """A real IPython InteractiveShell with the extension loaded."""
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython()
    shell.run_cell("%load_ext jupyter_perf", store_history=False)
    return shell


def rest_stages(spark, stage_id: int) -> list[dict]:
    import requests

    sc = spark.sparkContext
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/stages/{stage_id}"
    return requests.get(url, params={"details": "false"}, timeout=30).json()


def run_cell(shell, source: str):
    """Run a cell, returning (ExecutionResult, captured stdout)."""
    from IPython.utils.capture import capture_output

    with capture_output() as cap:
        result = shell.run_cell(source, store_history=True)
    return result, cap


os.environ.setdefault("PYSPARK_PYTHON", __import__("sys").executable)
