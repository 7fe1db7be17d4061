"""Memory on real Spark (issue V): every memory number Spark has, per stage, this window's
peaks and a sizing answer, on ``local-cluster[2,1,1024]`` (separate executor JVMs).

One session for the module, with an event log and ``spark.memory.fraction`` lowered to 0.1
so a wide aggregate spills. A wide aggregate that spills (the sizing names the stage, its
operator and a setting that avoids the spill, labelled estimated), a cached DataFrame
(storage memory in its stage), a large ``collect()`` (the driver's peak), a pandas function
holding a large frame (Python workers' RSS, attributed to MapInPandas); the per-stage
peaks equal Spark's own REST stage data; the event log of the same application gives the
same per-stage table, and so does Spark's History Server; a stored run keeps it.
"""
from __future__ import annotations

import copy
import glob
import time

import pandas as pd
import pytest
import requests

import jupyter_perf as jp
from jupyter_perf.model import PEAK_MEMORY_COLUMNS, conform

# Spark's field -> the model's column (collect/fields.PEAK_MEMORY_FIELDS), spelled out here
# so the test does not read the map it checks
SPARK_NAMES = {
    "JVMHeapMemory": "peak_jvm_heap_bytes", "OnHeapExecutionMemory": "peak_on_heap_execution_bytes",
    "OnHeapStorageMemory": "peak_on_heap_storage_bytes",
    "ProcessTreeJVMRSSMemory": "peak_process_rss_bytes",
    "JVMOffHeapMemory": "peak_jvm_off_heap_bytes",
    "OffHeapExecutionMemory": "peak_off_heap_execution_bytes",
    "OffHeapStorageMemory": "peak_off_heap_storage_bytes",
    "OnHeapUnifiedMemory": "peak_on_heap_unified_bytes",
    "OffHeapUnifiedMemory": "peak_off_heap_unified_bytes",
    "DirectPoolMemory": "peak_direct_pool_bytes", "MappedPoolMemory": "peak_mapped_pool_bytes",
    "ProcessTreePythonRSSMemory": "peak_python_rss_bytes",
    "ProcessTreeOtherRSSMemory": "peak_other_rss_bytes",
}
FRACTION = "0.1"
pytestmark = pytest.mark.spark4     # both legs: Spark 4's REST stage data and event logs too


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    return str(tmp_path_factory.mktemp("memory-logs"))


@pytest.fixture(scope="module")
def spark(logs):
    from sparkhelpers import make_spark

    session = make_spark("local-cluster[2,1,1024]", **{
        "spark.memory.fraction": FRACTION, "spark.executor.memory": "1g",
        "spark.eventLog.enabled": "true", "spark.eventLog.dir": logs,
        # stated, not inherited: what the per-stage peaks need (jupyter-perf's defaults)
        "spark.eventLog.logStageExecutorMetrics": "true",
        "spark.executor.processTreeMetrics.enabled": "true",
        "spark.executor.metrics.pollingInterval": "250ms", "spark.executor.heartbeatInterval": "1s",
        "spark.sql.adaptive.enabled": "false", "spark.sql.shuffle.partitions": "4"})
    yield session
    session.stop()


@pytest.fixture(scope="module")
def runs(spark):
    """The module's measured windows, in order: the spilling aggregate, the cache, the
    collect, the pandas function (each a separate jp.measure of one application)."""
    from pyspark.sql import functions as F

    out = {}
    wide = spark.range(0, 3_000_000, 1, 4).select((F.col("id") % 1_000_000).alias("k"),
                                                  F.col("id").alias("v"))
    out["spill"] = jp.measure(lambda: wide.groupBy("k").agg(F.collect_list("v").alias("l"))
                              .select(F.size("l").alias("n")).agg(F.sum("n")).collect())
    cached = spark.range(0, 2_000_000, 1, 4).selectExpr("id", "id * 2 AS twice")
    cached.cache()
    out["cache"] = jp.measure(lambda: cached.count())
    out["cached_df"] = cached
    # hex digests: results that compress little (a repeated text shrinks to nothing)
    rows = spark.range(0, 250_000, 1, 4).selectExpr(
        "id", "concat(sha2(cast(id AS string), 512), sha2(cast(-id AS string), 512)) AS s")
    out["collect"] = jp.measure(lambda: len(rows.collect()))

    def hold_a_large_frame(batches):     # nested: cloudpickle ships it by value
        """Holds ~300 MiB in its Python worker for 2 s (longer than Spark's 250 ms
        process-tree polling and 1 s heartbeats)."""
        import time as _time

        import numpy as np
        import pandas as pd_

        for batch in batches:
            frame = pd_.DataFrame({"x": np.ones(40_000_000)})       # 305 MiB of float64
            frame["x"] += 1.0                                       # touched: resident
            _time.sleep(2.0)
            yield pd_.DataFrame({"id": batch["id"],
                                 "held": [int(frame.memory_usage().sum())] * len(batch)})

    out["python"] = jp.measure(lambda: spark.range(0, 4, 1, 2).mapInPandas(
        hold_a_large_frame, "id long, held long").agg(F.sum("held")).collect())
    return out



def rest_stage_peaks(spark, stage_id: int) -> pd.DataFrame:
    """Spark's own REST stage data, every attempt: executorSummary[*].peakMemoryMetrics."""
    sc = spark.sparkContext
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/stages/{stage_id}"
    rows = []
    for attempt in requests.get(url, params={"details": "true"}, timeout=60).json():
        for executor, summary in (attempt.get("executorSummary") or {}).items():
            peaks = summary.get("peakMemoryMetrics") or {}
            if not peaks.get("JVMHeapMemory"):    # zero-filled: never sampled, so unknown
                peaks = {}
            rows.append({"stage_id": attempt["stageId"], "attempt": attempt["attemptId"],
                         "executor_id": executor,
                         **{col: peaks.get(field) for field, col in SPARK_NAMES.items()}})
    return conform("stage_memory", rows)


def test_spilling_aggregate_is_sized_by_stage_and_operator(runs):
    run = runs["spill"]
    a = jp.analyze(run)
    assert run.tasks["memory_spilled_bytes"].sum() > 0, "the aggregate did not spill"
    st = a.stage_memory
    assert len(st) and set(st["executor_id"]) <= set(run.tasks["executor_id"])
    # a stage attempt that ended before its executor's next heartbeat has no peaks (unknown,
    # never 0 B); the spilling aggregate's stage ran long enough to be sampled
    sampled = st[st["peak_jvm_heap_bytes"].notna()]
    assert set(st.loc[st["memory_spilled_bytes"] > 0, "stage_id"]) <= set(sampled["stage_id"])
    assert (sampled["peak_jvm_heap_bytes"] > 0).all()
    assert (sampled["peak_process_rss_bytes"] > 0).all()
    spilled = st[st["memory_spilled_bytes"] > 0]
    assert len(spilled) and spilled["operator_kind"].eq("aggregate").all()
    assert spilled["operator"].str.contains("Aggregate").all()
    mem = a.summary()["memory"]
    [spill] = [s for s in mem["sizing"] if s["kind"] == "estimated"]
    sid = spill["stage_id"]
    assert sid in set(spilled["stage_id"])
    assert f"stage {sid}" in spill["text"] and "Aggregate" in spill["text"]
    # fraction 0.1 of a 1 GiB heap: the default fraction holds the aggregate's tasks
    assert (spill["setting"], spill["value"]) == ("spark.memory.fraction", "0.6")
    assert "estimated" in spill["text"] and spill["evidence"] in spill["text"]
    assert mem["sizing_line"].startswith(spill["text"][:40])
    # every executor that ran the aggregate: its window heap peak set by one of its stages
    ex = a.memory_table.set_index("executor_id")
    for e in set(run.tasks["executor_id"]):
        assert ex.loc[e, "basis"] == "stage peaks"
        assert ex.loc[e, "peak_stage_id"] in set(st["stage_id"])
        assert ex.loc[e, "window_heap_bytes"] == st[st["executor_id"] == e][
            "peak_jvm_heap_bytes"].max()
        # a running peak since the JVM started is never below a window's peak
        assert ex.loc[e, "peak_jvm_heap_bytes"] >= ex.loc[e, "window_heap_bytes"]


def test_pandas_workers_rss_is_measured_and_attributed(runs):
    run = runs["python"]
    a = jp.analyze(run)
    st = a.stage_memory
    held = 300 << 20
    python = st[st["peak_python_rss_bytes"] >= held]
    assert len(python), st[["stage_id", "executor_id", "peak_python_rss_bytes"]]
    assert python["operator_kind"].eq("Python eval").all()
    assert python["operator"].str.contains("MapInPandas").all()
    ex = a.memory_table.set_index("executor_id")
    assert ex.loc[python["executor_id"].iloc[0], "window_python_rss_bytes"] >= held
    # 300+ MiB of Python RSS over a 384 MiB default overhead: the overhead is raised
    [h] = [x for x in a.memory_sizing if x["setting"] == "spark.executor.memoryOverhead"]
    assert h["kind"] == "measured" and "Python workers peaked" in h["text"]


def test_the_memory_samples_cover_the_whole_window(runs):
    """Issue V5 ("today they start ~12 s into a 30 s cell"): each window's REST memory samples
    begin before its first stage completes and end after its last task ends (ordering facts
    of Spark's own times, never durations)."""
    for name in ("spill", "cache", "collect", "python"):
        run = runs[name]
        sampled = pd.to_numeric(run.memory["time_ms"], errors="coerce").dropna()
        done = pd.to_numeric(run.stages["completion_ms"], errors="coerce").dropna()
        ended = pd.to_numeric(run.tasks["finish_ms"], errors="coerce").dropna()
        assert len(sampled) and len(done) and len(ended), name
        assert sampled.min() < done.min(), (name, sampled.min(), done.min())
        assert sampled.max() > ended.max(), (name, sampled.max(), ended.max())
        # every executor that ran a task was sampled before its first task ended
        for executor, tasks in run.tasks.groupby("executor_id"):
            mine = sampled[run.memory.loc[sampled.index, "executor_id"].astype(str)
                           == str(executor)]
            assert len(mine) and mine.min() < tasks["finish_ms"].min(), (name, executor)


def test_stage_peaks_equal_sparks_rest_stage_data(spark, runs):
    for name in ("spill", "cache", "collect", "python"):
        run = runs[name]
        for sid in sorted(set(run.stage_memory["stage_id"])):
            ours = run.stage_memory[run.stage_memory["stage_id"] == sid]
            theirs = rest_stage_peaks(spark, sid)
            pd.testing.assert_frame_equal(
                ours[["stage_id", "attempt", "executor_id", *PEAK_MEMORY_COLUMNS]]
                .reset_index(drop=True),
                theirs[["stage_id", "attempt", "executor_id", *PEAK_MEMORY_COLUMNS]]
                .sort_values(["stage_id", "attempt", "executor_id"]).reset_index(drop=True),
                check_dtype=False)
        ran = set(zip(run.tasks["stage_id"], run.tasks["stage_attempt"]))
        assert ran == set(zip(run.stage_memory["stage_id"], run.stage_memory["attempt"])), name


def test_cached_dataframe_shows_storage_memory(runs):
    run = runs["cache"]
    a = jp.analyze(run)
    st = a.stage_memory
    assert (st["peak_on_heap_storage_bytes"] > 1 << 20).any(), st
    ex = a.memory_table
    ran = ex[ex["executor_id"].isin(set(run.tasks["executor_id"]))]
    assert (ran["window_storage_bytes"] > 1 << 20).all()
    assert (ran["window_storage_bytes"] <= ran["unified_limit_bytes"]).all()


def test_large_collect_shows_the_drivers_peak(runs):
    run = runs["collect"]
    a = jp.analyze(run)
    results = float(run.tasks["result_size_bytes"].sum())
    assert results > 20 << 20
    ex = a.memory_table.set_index("executor_id")
    assert "driver" in ex.index
    d = ex.loc["driver"]
    # the driver runs no task on a cluster: its window comes from the samples (or its peak)
    assert d["basis"] in ("sampled rise", "at most", "since start")
    assert d["heap_limit_bytes"] > 0 and d["window_heap_bytes"] > 0
    # the result bytes passed through the driver's heap while the collect ran
    assert d["peak_jvm_heap_bytes"] >= 0.5 * results
    mem = a.summary()["memory"]
    [driver] = [r for r in mem["executors"] if r["executor_id"] == "driver"]
    assert driver["basis"] == d["basis"] and mem["labels"][d["basis"]]


def test_eventlog_gives_the_same_stage_table(spark, runs, logs):
    live = pd.concat([runs[n].stage_memory for n in ("spill", "cache", "collect", "python")],
                     ignore_index=True)
    runs["cached_df"].unpersist()
    spark.stop()                        # the log is complete once the application ends
    deadline = time.time() + 60
    while time.time() < deadline and not [p for p in glob.glob(f"{logs}/*")
                                          if not p.endswith(".inprogress")]:
        time.sleep(0.5)
    [path] = [p for p in glob.glob(f"{logs}/*") if not p.endswith(".inprogress")]
    run = jp.load_eventlog(path)
    logged = run.stage_memory[run.stage_memory["stage_id"].isin(set(live["stage_id"]))]
    pd.testing.assert_frame_equal(logged.reset_index(drop=True),
                                  live.sort_values(["stage_id", "attempt", "executor_id"])
                                  .reset_index(drop=True), check_dtype=False)
    # the event log's properties carry the fraction the sizing reads
    a = jp.analyze(run)
    assert a.memory_table["executor_id"].tolist() == sorted(run.executors["executor_id"])
    assert any(s["setting"] == "spark.memory.fraction" for s in a.memory_sizing)


def test_history_server_gives_the_same_stage_table(runs, logs, tmp_path_factory):
    from sparkapps import HistoryServer

    live = pd.concat([runs[n].stage_memory for n in ("spill", "cache", "collect", "python")],
                     ignore_index=True).sort_values(["stage_id", "attempt", "executor_id"])
    app_id = runs["spill"].app_id
    logged = jp.load_eventlog(next(p for p in glob.glob(f"{logs}/*")
                                   if not p.endswith(".inprogress")))
    server = HistoryServer(logs, str(tmp_path_factory.mktemp("history"))).start()
    try:
        server.wait_for([app_id])
        run = jp.load_rest(server.url, app_id)
    finally:
        server.stop()
    pd.testing.assert_frame_equal(run.stage_memory, logged.stage_memory, check_dtype=False)
    theirs = run.stage_memory[run.stage_memory["stage_id"].isin(set(live["stage_id"]))]
    pd.testing.assert_frame_equal(theirs.reset_index(drop=True), live.reset_index(drop=True),
                                  check_dtype=False)
    # the executors' peaks (every metric) are equal too
    cols = ["executor_id", *PEAK_MEMORY_COLUMNS]
    pd.testing.assert_frame_equal(run.executors[cols].reset_index(drop=True),
                                  logged.executors[cols].reset_index(drop=True),
                                  check_dtype=False)


def test_a_rerun_with_the_sized_setting_does_not_spill(runs, logs):
    """The advice loop by hand: the spill's hint (a.hints carries the sizing answer) applied
    to a new session, the same aggregate no longer spills (last: it replaces the module's
    stopped session)."""
    from pyspark.sql import functions as F
    from sparkhelpers import make_spark

    from jupyter_perf.render.advice import ready_cell

    a = jp.analyze(runs["spill"])
    [spill] = [h for h in a.hints if h.get("kind") == "estimated"]
    assert spill in a.memory_sizing and spill["operator"] and "Aggregate" in spill["operator"]
    keys = [k for h in a.hints for k, _ in h["settings"]]
    assert len(keys) == len(set(keys)), a.hints          # never two hints for one setting
    # as a notebook cell's advice: the ready cell restarts the session with it (a memory
    # setting is read when Spark starts)
    as_cell = copy.copy(runs["spill"])
    as_cell.kind, as_cell.source = "cell", "wide.groupBy('k').agg(...).collect()"
    cell = ready_cell(as_cell, spill)
    assert f"'{spill['setting']}': '{spill['value']}'" in cell and "spark_session(" in cell
    spark = make_spark("local-cluster[2,1,1024]", **{
        "spark.memory.fraction": FRACTION, "spark.executor.memory": "1g",
        "spark.sql.adaptive.enabled": "false", "spark.sql.shuffle.partitions": "4",
        **dict(spill["settings"])})
    try:
        wide = spark.range(0, 3_000_000, 1, 4).select((F.col("id") % 1_000_000).alias("k"),
                                                      F.col("id").alias("v"))
        run = jp.measure(lambda: wide.groupBy("k").agg(F.collect_list("v").alias("l"))
                         .select(F.size("l").alias("n")).agg(F.sum("n")).collect())
    finally:
        spark.stop()
    assert len(run.tasks) and run.tasks["memory_spilled_bytes"].sum() == 0
    assert run.tasks["disk_spilled_bytes"].sum() == 0
    assert not [s for s in jp.analyze(run).memory_sizing if s["kind"] == "estimated"]
    assert not [h for h in jp.analyze(run).hints if h.get("kind") == "estimated"]


def test_stored_run_keeps_its_stage_memory(runs):
    from jupyter_perf.store import default_store

    run = runs["spill"]
    store = default_store()
    store.save(run, jp.analyze(run).summary())
    back = store.load(run.run_id)
    pd.testing.assert_frame_equal(back.stage_memory, run.stage_memory, check_dtype=False)


def test_an_executor_lost_to_out_of_memory_is_named_with_its_last_peaks(tmp_path):
    """Issue V6, on a real executor JVM: a task that builds a ~1 GB string in a 512 MiB heap
    kills its executor (java.lang.OutOfMemoryError -> Spark's exit code 52); the run is kept,
    its warnings name the executor as lost to memory with the peaks Spark last heard from it.
    Last in the module: its own application (one attempt per task, so one executor dies)."""
    from pyspark.sql import functions as F
    from sparkhelpers import make_spark

    spark = make_spark("local-cluster[1,1,1024]", **{
        "spark.executor.memory": "512m", "spark.task.maxFailures": "1",
        "spark.executor.metrics.pollingInterval": "250ms",
        "spark.executor.heartbeatInterval": "1s",
        "spark.executor.processTreeMetrics.enabled": "true",
        "spark.eventLog.enabled": "true", "spark.eventLog.dir": str(tmp_path)})
    try:
        spark.range(0, 4, 1, 2).count()        # the executor has registered and reported
        # built from a column, so the optimizer cannot fold it on the driver
        row = F.concat(F.lit("x" * 1000), F.col("id").cast("string"))
        huge = spark.range(0, 1, 1, 1).select(
            F.length(F.concat_ws(",", F.array_repeat(row, 1_000_000))).alias("n"))
        with pytest.raises(Exception, match=r"(?s)ExecutorLostFailure|OutOfMemoryError|exited"):
            jp.measure(lambda: huge.collect(), spark=spark, label="oom")
        run = jp.last_run()
        sc = spark.sparkContext
        sc._jsc.sc().listenerBus().waitUntilEmpty(15_000)
        whole = jp.load_rest(sc.uiWebUrl, sc.applicationId)     # the REST (History Server) path
    finally:
        spark.stop()
    assert run is not None and run.label == "oom" and len(run.jobs) == 1
    lost = [w for w in run.warnings if " was lost" in w]
    assert len(lost) == 1, run.warnings
    assert "out of memory: its JVM heap was exhausted" in lost[0]
    assert "exited with code 52" in lost[0] or "OutOfMemoryError" in lost[0]
    assert lost[0].split(" ")[1].isdigit()              # an executor, not the driver
    assert "its last reported peaks (measured, before the loss): JVM heap " in lost[0]
    # the Summary's verdict leads with it, before the bottleneck; the sidebar's row (the
    # stored index row: its badge) says it too
    executor = lost[0].split(" ")[1]
    s = jp.analyze(run).summary()
    assert s["verdict_category"] == "oom", s["verdict"]
    assert s["verdict"].startswith(f"Out of memory: executor {executor} was lost (")
    assert "java.lang.OutOfMemoryError) at heap " in s["verdict_headline_text"]
    assert s["verdict_headline"].startswith(f"Executor {executor} lost to memory")
    assert [x["executor_id"] for x in s["memory"]["lost_to_memory"]] == [executor]
    from jupyter_perf.store import default_store
    row = default_store().get(run.run_id)
    assert (row["verdict_category"], row["verdict_headline"]) == ("oom", s["verdict_headline"])
    # a past application (event log, REST) whose executor died of memory: the same lead
    [log] = glob.glob(str(tmp_path / "*"))
    for past in (jp.load_eventlog(log), whole):
        assert [x["executor_id"] for x in past.extra.get("lost_to_memory", [])] == [executor], \
            (past.kind, past.warnings)
        assert jp.analyze(past).summary()["verdict_category"] == "oom", past.kind
