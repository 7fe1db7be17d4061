"""CPU profiles of measured windows on real Spark ``local[2]`` (async-profiler in the driver's
JVM) and ``local-cluster[2,1,1024]`` (loaded into each executor's JVM with ``jcmd``), issue P.

Workloads whose hot code is known by construction, each of another operator kind: a regex
filter (``rlike`` over many strings: java.util.regex in the Filter), a global sort written to
the noop sink (Spark's UnsafeInMemorySorter / RadixSort in the Sort), a hash aggregate over
many groups (BytesToBytesMap in the partial HashAggregate). For each: a hot function of that
kind is among the top frames and mapped to the right operator, and the sampled CPU of the
task threads is within 35 % of Spark's own executor CPU time for the window. A window whose
profiler cannot load (a missing jar) still gives its run, with one line saying why.
"""
from __future__ import annotations

import re

import pytest
from sparkhelpers import make_spark

import jupyter_perf as jp
from jupyter_perf.collect import profiler

TOP = 8
pytestmark = pytest.mark.spark4     # both legs: Spark 4 names idle task threads differently


@pytest.fixture(scope="module", params=["local[2]", "local-cluster[2,1,1024]"],
                ids=["local", "cluster"])
def spark(request):
    conf = {"spark.sql.adaptive.enabled": "false", "spark.sql.shuffle.partitions": "4"}
    if request.param.startswith("local-cluster"):
        conf["spark.executor.memory"] = "512m"
    session = make_spark(request.param, **conf)
    yield session
    session.stop()


def regex_filter(spark):
    from pyspark.sql import functions as F
    (spark.range(0, 2_500_000, 1, 4)
     .select(F.concat(F.lit("abc"), F.col("id").cast("string"), F.lit("xyz")).alias("s"))
     .where(F.col("s").rlike("^a.*(1|2)3+x")).count())


def big_sort(spark):
    from pyspark.sql import functions as F
    (spark.range(0, 2_500_000, 1, 4)
     .select((F.rand(7) * 1e9).cast("long").alias("r"), F.col("id"))
     .orderBy("r").write.format("noop").mode("overwrite").save())


def wide_aggregate(spark):
    from pyspark.sql import functions as F
    (spark.range(0, 3_000_000, 1, 4).groupBy((F.col("id") % 200_003).alias("k"))
     .agg(F.sum("id"), F.max("id")).select(F.count("*")).collect())


CASES = {
    # workload: (hot function pattern, operator label pattern)
    "regex": (regex_filter, r"^java\.util\.regex\.", r"^Filter\b"),
    "sort": (big_sort, r"unsafe\.sort\.(?:UnsafeInMemorySorter|RadixSort|UnsafeExternalSorter)",
             r"^Sort\b"),
    # the grouping hash map's lookups: its map, hashing, its key comparison
    # (ByteArrayMethods.arrayEquals from BytesToBytesMap.safeLookup: the top self-time frame on
    # Spark 4 in one CI run). Not the generated hashAgg_ code: the final count's aggregate
    # (no grouping keys) has it too
    "aggregate": (wide_aggregate, r"(?:BytesToBytesMap|Murmur3|UnsafeFixedWidthAggregationMap|"
                                  r"ByteArrayMethods\.arrayEquals)",
                  r"^HashAggregate by"),
}


def profiled(spark, fn):
    fn(spark)                                  # warm: classes loaded, code compiled
    run = jp.measure(lambda: fn(spark), spark=spark, store=False, profile=True)
    return run, jp.analyze(run)


@pytest.mark.parametrize("case", sorted(CASES))
def test_hot_function_operator_and_cpu(spark, case):
    fn, function, operator = CASES[case]
    run, a = profiled(spark, fn)
    assert not [w for w in run.warnings if w.startswith("no CPU profile")], run.warnings
    prof = a.summary()["profile"]
    cluster = spark.sparkContext.master.startswith("local-cluster")
    assert prof["method"] == (profiler.AGENT_METHOD if cluster else profiler.METHOD)
    assert prof["interval_ms"] == profiler.INTERVAL_MS
    if cluster:     # both executors sampled
        assert sorted(run.extra["profile"]["executors"]) == ["0", "1"], run.extra["profile"]
    assert prof["samples"] > 20, prof        # enough CPU in the window to say anything
    hot = a.hot_functions
    assert list(hot.columns[:5]) == ["function", "self_samples", "total_samples", "share",
                                     "operator"] and "stage_ids" in hot.columns
    top = hot.head(TOP)
    mine = top[top["function"].str.contains(function, regex=True)]
    assert len(mine), top[["function", "self_samples", "operator"]].to_string()
    assert all(re.search(operator, op) for op in mine["operator"]), mine.to_string()
    # the operator's stages are the window's stages
    stages = {int(s) for s in run.stages["stage_id"]}
    assert set(mine.iloc[0]["stage_ids"]) and set(mine.iloc[0]["stage_ids"]) <= stages
    # the workload's operator holds a good part of the samples (the sort's shuffle, which
    # compresses every row, may hold more)
    share = sum(o["share"] for o in prof["operators"] if re.search(operator, o["label"]))
    assert share >= 0.2, prof["operators"][:3]
    if case == "regex":     # the rule gives the codegen stage's time to its aggregate
        ops = a.operators
        filt = ops[ops["name"] == "Filter"].iloc[0]
        assert filt["kind"] == "sampled" and filt["task_time_ms"] > 0, ops.to_string()
    # the task threads' sampled CPU against Spark's own executor CPU time of the window
    assert prof["spark_cpu_ms"] > 0
    assert prof["sampled_cpu_ms"] == pytest.approx(prof["spark_cpu_ms"], rel=0.35), prof


def test_missing_jar_gives_the_run_and_one_line(spark, monkeypatch):
    monkeypatch.setenv(profiler.JAR_ENV, "/nonexistent/async-profiler.jar")
    run = jp.measure(lambda: regex_filter(spark), spark=spark, store=False, profile=True)
    why = [w for w in run.warnings if w.startswith("no CPU profile")]
    assert len(why) == 1 and "/nonexistent/async-profiler.jar" in why[0], run.warnings
    a = jp.analyze(run)
    assert len(run.tasks) and a.hot_functions.empty
    assert a.summary()["profile"]["method"] == "none"
    assert a.summary()["profile"]["note"] in why[0]
    # the rest of the report is there, and the next profiled window works again
    assert a.summary()["stages"] and a.summary()["verdict"]
    monkeypatch.delenv(profiler.JAR_ENV)
    run2 = jp.measure(lambda: regex_filter(spark), spark=spark, store=False, profile=True)
    assert run2.extra["profile"]["method"].startswith("async-profiler"), run2.warnings


def test_unprofiled_window_has_no_profile(spark):
    run = jp.measure(lambda: regex_filter(spark), spark=spark, store=False)
    assert "profile" not in run.extra
    assert jp.analyze(run).summary()["profile"] is None


class _Gateway:
    """Stands for py4j's gateway (the profiler keys its state by it, weakly)."""


class _Context:
    def __init__(self, master):
        self.master = master
        self.applicationId = "app-20990101000000-0042"     # no such executors here
        self._gateway = _Gateway()


@pytest.mark.parametrize("master", ["spark://host:7077", "yarn"])
def test_executors_elsewhere_say_why(master):
    with pytest.raises(profiler.ProfilerUnavailable, match="none of them on this machine"):
        profiler.WindowProfiler(_Context(master)).start()


def test_executor_processes_of_the_app_only():
    ps = "\n".join([
        " 101 /usr/bin/java -cp x org.apache.spark.executor.CoarseGrainedExecutorBackend "
        "--driver-url spark://a --executor-id 0 --hostname h --cores 1 --app-id app-1 "
        "--worker-url spark://w",
        " 102 /usr/bin/java org.apache.spark.executor.CoarseGrainedExecutorBackend "
        "--executor-id 1 --app-id app-1",
        " 103 /usr/bin/java org.apache.spark.executor.CoarseGrainedExecutorBackend "
        "--executor-id 0 --app-id app-12",
        " 104 /usr/bin/java org.apache.spark.deploy.worker.Worker --app-id app-1",
    ])
    assert profiler.executor_processes("app-1", ps) == {101: "0", 102: "1"}


def test_magic_profile_flag(ipshell, spark):
    from sparkhelpers import run_cell

    ipshell.user_ns["spark"] = spark
    cell = ("%%perfmeasure --profile --no-report\n"
            "spark.range(0, 1_000_000, 1, 4).selectExpr(\"concat('a', id) AS s\")"
            ".where(\"s rlike '^a.*7+'\").count()")
    result, cap = run_cell(ipshell, cell)
    assert result.error_in_exec is None, cap.stderr
    run = jp.last_run()
    assert run is not None and run.source.strip().startswith("spark.range")
    assert run.extra["profile"]["method"].startswith("async-profiler"), run.warnings
    assert "profile" not in (jp.measure(lambda: None, spark=spark, store=False).extra)
