"""The Python workers of ``jp.spark_session(remote="local[N]")`` run the kernel's interpreter
(issue U2, Spark Connect).

A Connect server's planner takes the workers' interpreter from its JVM's environment
(``PYSPARK_PYTHON``, else ``PYSPARK_DRIVER_PYTHON``, else ``python3`` on ``PATH``), fixed when
the JVM starts: this module needs a process whose first JVM is the server's (``fresh_jvm``;
``scripts/run_tests.py`` runs it alone). The environment is a kernel from a virtualenv made
for real (``workerpython.kernel_from_a_virtualenv``); one Connect session serves every test.

No ``from __future__ import annotations`` here: pandas UDFs are typed by their annotations.
"""
import os
import sys

import pytest
from connectservers import skip_unless_spark4
from workerpython import failing_udf_query, kernel_from_a_virtualenv

import jupyter_perf as jp
from jupyter_perf.store import default_store

pytestmark = [pytest.mark.spark4, pytest.mark.fresh_jvm]
skip_unless_spark4()

MISSING = "ModuleNotFoundError: No module named 'nonexistent_module_xyz'"


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    from pyspark import SparkContext

    if SparkContext._gateway is not None:
        pytest.skip("needs a process of its own (its JVM's environment is fixed when it "
                    "starts): python scripts/run_tests.py runs this module alone")
    with kernel_from_a_virtualenv(str(tmp_path_factory.mktemp("path"))):
        assert "PYSPARK_PYTHON" not in os.environ
        session = jp.spark_session(remote="local[2]", **{"spark.ui.port": "0",
                                                         "spark.sql.shuffle.partitions": "2"})
        assert "PYSPARK_PYTHON" not in os.environ     # set while the server started, then not
        yield session
        session.stop()


def test_connect_workers_run_the_kernels_interpreter(spark):
    from pyspark.sql.functions import udf

    from jupyter_perf.collect.connect import is_connect_session

    assert is_connect_session(spark)
    where = udf(lambda _: __import__("sys").executable, "string")
    assert spark.range(0, 1, 1, 1).select(where("id").alias("py")).collect()[0].py == sys.executable


def test_a_pandas_udf_and_map_in_pandas_see_the_kernels_packages(spark):
    import pandas as pd
    import pyarrow
    from pyspark.sql.functions import pandas_udf

    @pandas_udf("long")
    def plus_one(v: pd.Series) -> pd.Series:
        return v + 1

    rows = spark.range(0, 40, 1, 2).select(plus_one("id").alias("v")).collect()
    assert sorted(r.v for r in rows) == list(range(1, 41))

    def tag(batches):
        import pyarrow as pa
        for pdf in batches:
            yield pdf.assign(arrow=pa.__version__)

    rows = spark.range(0, 20, 1, 2).mapInPandas(tag, "id long, arrow string").collect()
    assert sorted(r.id for r in rows) == list(range(20))
    assert {r.arrow for r in rows} == {pyarrow.__version__}


def test_a_failing_udf_on_connect_stores_the_workers_exception_line(spark):
    failing_udf_query(spark)
    run = jp.last_run()
    assert run.status == "failed"
    assert run.error.startswith(MISSING) and "\n" not in run.error, run.error
    assert default_store().load(run.run_id).error == run.error
