"""The analysis on real Spark runs: data skew, GC, retried tasks, and replay accuracy.

One session for the module: ``local[2,2]`` (a failed task is retried once), a 512 MiB
driver heap (GC pressure), AQE off (it would split the skewed partition for us).
"""
from __future__ import annotations

import pytest
from spark_workloads import hot_key_count
from sparkhelpers import make_spark

import jupyter_perf as jp

pytestmark = [pytest.mark.spark4, pytest.mark.fresh_jvm]


@pytest.fixture(scope="module")
def spark():
    session = make_spark("local[2,2]", **{"spark.driver.memory": "512m",
                                          "spark.sql.adaptive.enabled": "false",
                                          "spark.sql.shuffle.partitions": "6"})
    yield session
    session.stop()


def measured(spark, fn):
    run = jp.measure(fn, spark=spark)
    analysis = jp.analyze(run)
    assert analysis.model_error <= 0.10, (analysis.model_error, analysis.summary()["whatif"])
    return run, analysis


def test_hot_key_is_flagged_as_data_skew(spark):
    run, a = measured(spark, lambda: hot_key_count(spark))
    reduce_stage = run.tasks[run.tasks["shuffle_read_bytes"] > 0]["stage_id"].min()
    tasks = run.tasks[run.tasks["stage_id"] == reduce_stage]
    hot = tasks.loc[tasks["shuffle_read_bytes"].idxmax()]
    assert hot["shuffle_read_bytes"] > 4 * tasks["shuffle_read_bytes"].median()   # the hot key
    flagged = a.stragglers[(a.stragglers["stage_id"] == reduce_stage)
                           & (a.stragglers["index"] == hot["index"])]
    assert len(flagged) == 1
    row = flagged.iloc[0]
    # slow because it had more data, not because it processed it slowly
    assert row["kind"] == "data_skew" and bool(row["data_skew"])
    assert row["duration_ratio"] >= 1.5 and row["rate_ratio"] <= 1.5
    summary = a.summary()
    assert summary["stragglers"]["data_skew_count"] >= 1
    assert "skew" in summary["verdict"]


def test_gc_pressure_shows_in_the_breakdown_and_explains_gc_stragglers(spark):
    from pyspark.sql import functions as F

    def gc_heavy():
        (spark.range(0, 1_200_000, 1, 4)
              .selectExpr("id % 3 AS k", "repeat(cast(id AS string), 3) AS s")
              .groupBy("k").agg(F.collect_list("s").alias("l")).selectExpr("size(l)").collect())

    run, a = measured(spark, gc_heavy)
    gc = a.summary()["breakdown"]["gc"]
    assert gc["kind"] == "measured" and gc["ms"] == run.tasks["gc_ms"].sum() > 0
    assert gc["share"] >= 0.02, gc
    # Where a straggler is attributed to GC, the definition must hold on the real data:
    # with every task's GC time removed, it is no longer slower than 1.5 x its stage median.
    for _, row in a.stragglers[a.stragglers["causes"].map(lambda c: "gc" in c)].iterrows():
        stage = run.tasks[(run.tasks["stage_id"] == row["stage_id"])
                          & (run.tasks["status"] == "SUCCESS")]
        dx = (stage["duration_ms"] - stage["gc_ms"]).clip(lower=0)
        nbytes = stage["input_bytes"] + stage["shuffle_read_bytes"]
        me = (stage["index"] == row["index"]) & (stage["attempt"] == row["attempt"])
        mine, my_bytes = float(dx[me].iloc[0]), float(nbytes[me].iloc[0])
        if my_bytes > 0:
            ratio = (mine / my_bytes) / (dx[nbytes > 0] / nbytes[nbytes > 0]).median()
        else:
            ratio = mine / dx.median()
        assert ratio <= 1.5 or mine - dx.median() < 20, (row.to_dict(), ratio)


def test_failed_then_retried_task_counts_once_failed_once_succeeded(spark):
    def fail_once(rows):
        from pyspark import TaskContext

        ctx = TaskContext.get()
        if ctx.partitionId() == 1 and ctx.attemptNumber() == 0:
            raise RuntimeError("injected failure for the retry test")
        return rows

    run, a = measured(spark, lambda: spark.sparkContext.parallelize(range(1000), 4)
                      .mapPartitions(fail_once).count())
    [stage] = a.summary()["stages"]
    assert stage["num_tasks"] == 4
    assert stage["failed_tasks"] == 1 and stage["succeeded_tasks"] == 4
    assert stage["task_attempts"] == 5
    attempts = run.tasks[run.tasks["index"] == 1].sort_values("attempt")
    assert list(attempts["status"]) == ["FAILED", "SUCCESS"]
    assert "injected failure" in attempts["error"].iloc[0]
