"""%%perfmeasure on local-cluster[2,1,1024]: two executor JVMs and real remote shuffle reads."""
from __future__ import annotations

import pytest
from sparkhelpers import make_spark, run_cell
from test_magic import assert_host_cpu_sampled, assert_matches_spark

pytestmark = pytest.mark.spark4


@pytest.fixture(scope="module")
def spark_cluster():
    spark = make_spark("local-cluster[2,1,1024]", **{"spark.executor.memory": "768m"})
    yield spark
    spark.stop()


def test_groupby_on_two_executor_jvms_matches_spark(ipshell, spark_cluster):
    ipshell.user_ns["spark"] = spark_cluster
    result, _ = run_cell(ipshell, """%%perfmeasure -o clu
df = spark.range(0, 3_000_000, 1, 8).selectExpr("id % 2000 as k", "id as v")
rows = df.groupBy("k").sum("v").collect()
""")
    assert result.error_in_exec is None
    run = ipshell.user_ns["clu"]
    executors = run.executors[run.executors["executor_id"] != "driver"]
    assert len(executors) == 2 and run.slots == 2
    assert set(run.tasks["executor_id"]) <= set(executors["executor_id"])
    ran = assert_matches_spark(run, spark_cluster)
    assert ran["shuffle_remote_bytes"].sum() > 0          # a real remote shuffle happened
    assert (executors["jvm_heap_limit_bytes"].astype(float) == 768 * 2**20).all()
    assert_host_cpu_sampled(run)          # the executor JVMs share this host's cores too
