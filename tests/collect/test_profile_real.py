"""CPU profiles of measured windows on real Spark ``local[2]`` (async-profiler in the driver's
JVM) and ``local-cluster[2,1,1024]`` (loaded into each executor's JVM with ``jcmd``), issue P.

Workloads whose hot code is known by construction, each of another operator kind: a regex
filter (``rlike`` over many strings: java.util.regex in the Filter), a sort of each partition written to
the noop sink (Spark's UnsafeInMemorySorter / RadixSort in the Sort), a hash aggregate over
many groups (BytesToBytesMap in the partial HashAggregate). For each: a hot function of that
kind is among the top frames and mapped to the right operator, and the sampled CPU of the
task threads is within 35 % of Spark's own executor CPU time for the window. A window whose
profiler cannot load (a missing jar) still gives its run, with one line saying why.
"""
from __future__ import annotations

import re
import shutil

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
    """Each partition sorted on its own: no exchange, so the stage's CPU is the sorter's (with
    ``orderBy`` a busy landing host once sampled the shuffle read's ``readInt`` under the Sort
    39 times and the sorter's own frames outside the top eight)."""
    from pyspark.sql import functions as F
    (spark.range(0, 2_500_000, 1, 4)
     .select((F.rand(7) * 1e9).cast("long").alias("r"), F.col("id"))
     .sortWithinPartitions("r").write.format("noop").mode("overwrite").save())


def wide_aggregate(spark):
    from pyspark.sql import functions as F
    (spark.range(0, 3_000_000, 1, 4).groupBy((F.col("id") % 200_003).alias("k"))
     .agg(F.sum("id"), F.max("id")).select(F.count("*")).collect())


CASES = {
    # workload: (hot function pattern, operator label pattern)
    "regex": (regex_filter, r"^java\.util\.regex\.", r"^Filter\b"),
    "sort": (big_sort, r"unsafe\.sort\.(?:UnsafeInMemorySorter|RadixSort|UnsafeExternalSorter)",
             r"^Sort\b"),
    # the grouping hash map's lookups: its map and its key comparison
    # (ByteArrayMethods.arrayEquals from BytesToBytesMap.safeLookup: the top self-time frame on
    # Spark 4 in one CI run). Not the generated hashAgg_ code: the final count's aggregate
    # (no grouping keys) has it too. Not Murmur3 either: the Exchange's hash partitioning calls
    # it as well (one CI run sampled Murmur3_x86_32.fmix under the Exchange, rightly)
    "aggregate": (wide_aggregate, r"(?:BytesToBytesMap|UnsafeFixedWidthAggregationMap|"
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
    why = [w for w in run.warnings if w.startswith("no CPU profile")]
    prof = a.summary()["profile"]
    cluster = spark.sparkContext.master.startswith("local-cluster")
    if cluster and prof["method"] != profiler.AGENT_METHOD:
        pytest.skip("async-profiler's agent did not attach to the executor JVMs here: "
                    + ("; ".join(why) or prof["fallback"] or prof["method"]))
    assert not why, run.warnings
    assert prof["method"] == (profiler.AGENT_METHOD if cluster else profiler.METHOD)
    assert prof["interval_ms"] == profiler.INTERVAL_MS
    if cluster:     # both executors sampled, each row tagged with its JVM's executor
        assert set(samples_by_executor(run, a)) == task_executors(run), run.extra["profile"]
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


def task_executors(run) -> set[str]:
    """The executors the window's tasks ran on: two (ids "0" and "1", unless a busy host
    replaced one at start)."""
    ids = {str(e) for e in run.tasks["executor_id"]}
    assert len(ids) == 2 and "driver" not in ids, ids
    return ids


def samples_by_executor(run, a) -> dict[str, int]:
    """Each executor's task-thread samples, which must agree three ways: the sum of its rows
    (every row ``[stack, samples, executor id]``), the profile's ``executors``, and the
    analysis' task stacks (what the Profile tab's executor filter chooses among)."""
    prof = run.extra["profile"]
    from_rows: dict[str, int] = {}
    for row in prof["stacks"]:
        assert len(row) == 3 and row[2] in prof["executors"], row[1:]
        if row[0].startswith(profiler.TASK_ROOTS):
            from_rows[row[2]] = from_rows.get(row[2], 0) + row[1]
    analysed: dict[str, int] = {}
    for _, count, _, executor, _ in a.profile.stacks:
        analysed[executor] = analysed.get(executor, 0) + count
    assert from_rows == prof["executors"] == analysed, (from_rows, prof["executors"], analysed)
    assert sum(analysed.values()) == a.summary()["profile"]["samples"]
    return from_rows


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


# -- the coarser fallback: executor thread dumps sampled through Spark's REST API ------------
def heavy_regex(spark):
    """A regex filter with more CPU than ``regex_filter``: thread dumps sample a few times a
    second, so the window needs seconds of task time."""
    from pyspark.sql import functions as F
    (spark.range(0, 6_000_000, 1, 4)
     .select(F.concat(F.lit("abc"), F.col("id").cast("string"), F.lit("xyz")).alias("s"))
     .where(F.col("s").rlike("^a.*(1|2)3+x")).count())


def test_thread_dump_fallback_finds_the_hot_frame(spark, monkeypatch):
    """Forced by the documented setting (JUPYTER_PERF_PROFILER=thread-dumps), the window is
    sampled by Spark's executor thread dumps: the method says so (and how coarse), the regex
    frames are among the top frames and go to the Filter of the stage their task ran in."""
    monkeypatch.setenv(profiler.METHOD_ENV, "thread-dumps")
    # a faster rate than the default (the documented setting), for samples enough in a short
    # window
    monkeypatch.setenv(profiler.DUMP_INTERVAL_ENV, "250")
    run, a = profiled(spark, heavy_regex)             # run once unprofiled first (warm)
    assert not [w for w in run.warnings if w.startswith("no CPU profile")], run.warnings
    prof = a.summary()["profile"]
    assert prof["method"] == "thread dumps (every 250 ms)"
    assert prof["fallback"] == f"{profiler.METHOD_ENV}=thread-dumps"
    assert prof["sample"].startswith("each RUNNABLE task thread's stack in every dump, a dump "
                                     "about every ") and "coarser" in prof["sample"]
    assert run.extra["profile"]["requested_interval_ms"] == 250
    assert prof["interval_ms"] > 0
    cluster = spark.sparkContext.master.startswith("local-cluster")
    assert set(samples_by_executor(run, a)) == (task_executors(run) if cluster
                                                 else {"driver"}), run.extra["profile"]
    assert prof["samples"] >= 5, prof
    # every sample's root names the stage its task ran in, one of the window's stages
    stages = {int(s) for s in run.stages["stage_id"]}
    roots = {row[0].split(";")[0] for row in run.extra["profile"]["stacks"]}
    assert roots and all(profile_stage(r) in stages for r in roots), roots
    top = a.hot_functions.head(TOP)
    mine = top[top["function"].str.contains(r"^java\.util\.regex\.", regex=True)]
    assert len(mine), top[["function", "self_samples", "operator"]].to_string()
    assert all(re.search(r"^Filter\b", op) for op in mine["operator"]), mine.to_string()
    assert set(mine.iloc[0]["stage_ids"]) and set(mine.iloc[0]["stage_ids"]) <= stages


def profile_stage(root: str) -> int | None:
    from jupyter_perf.analysis.profile import task_stage

    return task_stage(root)


@pytest.mark.parametrize("env, value", [(profiler.METHOD_ENV, "perf"),
                                        (profiler.DUMP_INTERVAL_ENV, "5")])
def test_bad_profiler_setting_says_why(spark, monkeypatch, env, value):
    monkeypatch.setenv(profiler.METHOD_ENV, "thread-dumps")
    monkeypatch.setenv(env, value)
    run = jp.measure(lambda: None, spark=spark, store=False, profile=True)
    why = [w for w in run.warnings if w.startswith("no CPU profile")]
    assert len(why) == 1 and env in why[0], run.warnings


@pytest.mark.parametrize("element, frame", [
    ("app//org.apache.spark.scheduler.Task.run(Task.scala:141)",
     "org/apache/spark/scheduler/Task.run"),
    ("java.base@17.0.15/java.util.regex.Pattern$Curly.match(Pattern.java:4226)",
     "java/util/regex/Pattern$Curly.match"),
    ("app//org.apache.spark.executor.Executor$TaskRunner$$Lambda$630/0x00007f6dc44ea898"
     ".apply(Unknown Source)",
     "org/apache/spark/executor/Executor$TaskRunner$$Lambda$630/0x00007f6dc44ea898.apply"),
    ("org.apache.spark.sql.catalyst.expressions.GeneratedClass$"
     "GeneratedIteratorForCodegenStage1.processNext(Unknown Source)",
     "org/apache/spark/sql/catalyst/expressions/GeneratedClass$"
     "GeneratedIteratorForCodegenStage1.processNext"),
    ("java.sql/java.sql.DriverManager.getConnection(DriverManager.java:1)",
     "java/sql/DriverManager.getConnection"),
    ("java.base/java.lang.Thread.run(Thread.java:840)", "java/lang/Thread.run"),
])
def test_java_frame_of_a_thread_dump(element, frame):
    assert profiler.java_frame(element) == frame


def test_rows_of_executor_jvms_carry_their_executor(monkeypatch):
    """The agent's collapsed stacks of two executor JVMs: every row names its executor, the
    heaviest MAX_STACKS are kept and the rest is one "(other stacks)" row per executor, and
    each executor's samples are the sum of its task rows (its JVM's other threads apart)."""
    monkeypatch.setattr(profiler, "MAX_STACKS", 3)
    task = "[Executor task launch worker for task 1.0 in stage 2.0 (TID 7) tid=41]"
    rec = profiler.executors_profile_record({
        "0": f"{task};a/B.hot 9\n{task};a/B.warm 2\n{task};a/B.cold 1\n"
             "[C2 CompilerThread0 tid=9];Compile 4",
        "1": f"{task};a/B.hot 5\n{task};a/B.cold 1",
        "2": "[GC Thread#0 tid=3];gc 1"}, 10)
    root = "[Executor task launch worker for task 1.0 in stage 2.0 (TID 7)]"
    other = f"[{profiler.TASK_THREAD} (other stacks)]"
    assert rec["method"] == profiler.AGENT_METHOD
    assert rec["stacks"] == [[f"{root};a/B.hot", 9, "0"], [f"{root};a/B.hot", 5, "1"],
                             ["[jvm] C2 CompilerThread", 4, "0"],
                             [other, 3, "0"], [other, 1, "1"], [other, 1, "2"]]
    # executor 2's only sample was a GC thread's: cut into "(other stacks)", counted there
    assert rec["executors"] == {"0": 12, "1": 6, "2": 1}
    # the driver's JVM (local[N]): rows without an executor, as runs have always kept them
    assert profiler.profile_record(f"{task};a/B.hot 3", 10)["stacks"] == [
        [f"{root};a/B.hot", 3]]


def test_dump_stacks_keeps_runnable_task_threads_by_stage():
    def thread(name, state, elems):
        return {"threadId": 1, "threadName": name, "threadState": state,
                "stackTrace": {"elems": elems}}
    task = "Executor task launch worker for task 3.0 in stage 5.1 (TID 42)"
    elems = ["java.base@17.0.15/java.util.regex.Pattern$Curly.match(Pattern.java:4226)",
             "app//org.apache.spark.executor.Executor$TaskRunner$$Lambda$630/0x00007f6dc44ea898"
             ".apply(Unknown Source)",
             "java.base@17.0.15/java.lang.Thread.run(Thread.java:840)"]
    threads = [thread(task, "RUNNABLE", elems),
               thread(task.replace("5.1", "6.0"), "BLOCKED", elems),      # not on CPU
               thread("dispatcher-event-loop-1", "RUNNABLE", elems),     # not a task
               thread(task, "RUNNABLE", [])]                               # no stack
    assert profiler.dump_stacks(threads) == [
        "[Executor task launch worker in stage 5.1];java/lang/Thread.run;"
        "org/apache/spark/executor/Executor$TaskRunner$$Lambda.apply;"
        "java/util/regex/Pattern$Curly.match"]
    assert profiler.dump_stacks({"not": "a list"}) == []


def test_no_jcmd_falls_back_to_thread_dumps(spark, monkeypatch, tmp_path):
    """Executors in JVMs of their own and no jcmd to load the agent with (PATH without it,
    no JAVA_HOME): not "no profile" but the thread dumps, saying why."""
    if not spark.sparkContext.master.startswith("local-cluster"):
        pytest.skip("local[N] loads async-profiler through py4j, not jcmd")
    os_ps = shutil.which("ps")
    assert os_ps
    (tmp_path / "ps").symlink_to(os_ps)       # the executors are still found by their pids
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv(profiler.DUMP_INTERVAL_ENV, "250")
    run = jp.measure(lambda: heavy_regex(spark), spark=spark, store=False, profile=True)
    assert not [w for w in run.warnings if w.startswith("no CPU profile")], run.warnings
    prof = jp.analyze(run).summary()["profile"]
    assert prof["method"] == "thread dumps (every 250 ms)", prof
    assert "no jcmd" in prof["fallback"], prof
    assert prof["samples"] > 0, prof
