"""A real Spark standalone cluster: a Master and two Workers, each its own JVM on this machine
(pyspark's ``bin/spark-class``: ``tests/reliability/clusterhelpers.py``), measured like
``local-cluster``; then one Worker killed mid-cell.

The kill test destroys a Worker, so it is the module's last test. Everything is bound to
127.0.0.1; every daemon's process group is killed at teardown.
"""
from __future__ import annotations

import re
import threading
import time

import pytest
import requests
from clusterhelpers import StandaloneCluster
from sparkhelpers import make_spark, run_cell
from test_magic import assert_matches_spark

import jupyter_perf as jp

pytestmark = [pytest.mark.fresh_jvm, pytest.mark.spark4]

COUNTERS = ("numCompleteTasks", "numFailedTasks", "numKilledTasks")
# 100 ms per row, evaluated on the executors (kept alive by count(s): never pruned)
SLOW = "java_method('java.lang.Thread', 'sleep', cast(100 as bigint))"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cl = StandaloneCluster(tmp_path_factory.mktemp("standalone"), workers=2,
                           reverse_proxy=True).start()
    yield cl
    cl.stop()


@pytest.fixture(scope="module")
def spark(cluster):
    session = make_spark(cluster.master_url, **{
        "spark.executor.memory": "512m", "spark.cores.max": "2",
        "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
        # as a cluster for browsers would be set up; the kernel reads the driver's own UI
        "spark.ui.reverseProxy": "true"})
    try:
        # the Master grants one executor per Worker; they register with the driver shortly
        wait_for(lambda: len(executor_ids(session)) == 2, 180, "two executors to register",
                 cluster)
        yield session
    finally:
        session.stop()


def app_url(spark) -> str:
    sc = spark.sparkContext
    return f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}"


def executor_ids(spark) -> list[str]:
    """The live executors the driver's REST API lists (not the driver)."""
    return sorted(e["id"] for e in requests.get(f"{app_url(spark)}/executors", timeout=30).json()
                  if e["id"] != "driver")


def wait_for(condition, seconds: float, what: str, cluster: StandaloneCluster) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} in {seconds:.0f} s\n{cluster.logs()}")
        time.sleep(0.2)


def rest_task_list(spark, stage_id: int, attempt: int) -> list[dict]:
    return requests.get(f"{app_url(spark)}/stages/{stage_id}/{attempt}/taskList",
                        params={"length": 100_000}, timeout=30).json()


def test_groupby_on_a_standalone_cluster_matches_spark(ipshell, spark, cluster):
    ipshell.user_ns["spark"] = spark
    result, _ = run_cell(ipshell, """%%perfmeasure -o sa
df = spark.range(0, 2_000_000, 1, 4).selectExpr("id % 2000 as k", "id as v")
rows = df.groupBy("k").sum("v").collect()
""")
    assert result.error_in_exec is None
    assert len(ipshell.user_ns["rows"]) == 2000
    run = ipshell.user_ns["sa"]
    assert run.status == "ok" and run.master == cluster.master_url
    # the Master's own view: this application holds both Workers' cores
    [app] = [a for a in cluster.state()["activeapps"] if a["id"] == run.app_id]
    assert app["cores"] == 2
    executors = run.executors[run.executors["executor_id"] != "driver"]
    assert sorted(executors["executor_id"]) == executor_ids(spark)
    assert len(executors) == 2 and run.slots == 2
    assert (executors["host"] == "127.0.0.1").all() and executors["is_active"].all()
    assert sorted(set(run.tasks["executor_id"])) == executor_ids(spark)   # ran on both
    ran = assert_matches_spark(run, spark)          # stage sums == REST /stages (== sparkmeasure)
    # every task attempt Spark lists for those stage attempts, once
    for _, stage in ran.iterrows():
        theirs = {t["taskId"] for t in rest_task_list(spark, stage.stage_id, stage.attempt)}
        mine = run.tasks[(run.tasks["stage_id"] == stage.stage_id)
                         & (run.tasks["stage_attempt"] == stage.attempt)]["task_id"]
        assert sorted(mine.astype(int)) == sorted(theirs)
    assert ran["shuffle_write_bytes"].sum() > 0
    # the Master's reverse proxy serves the same REST API to browsers; not needed by the kernel
    proxied = requests.get(f"{cluster.ui_url}/proxy/{run.app_id}/api/v1/applications/"
                           f"{run.app_id}/stages/{int(ran.stage_id.iloc[0])}", timeout=30).json()
    assert [s["executorRunTime"] for s in proxied] == \
        [s["executorRunTime"] for s in requests.get(
            f"{app_url(spark)}/stages/{int(ran.stage_id.iloc[0])}", timeout=30).json()]
    assert not [w for w in run.warnings if " was lost " in w or "evicted" in w], run.warnings


def test_a_worker_killed_mid_cell_gives_a_run_naming_the_lost_executor(spark, cluster):
    victim = cluster.workers[1]
    [lost_id] = cluster.executors_of(victim)          # the executor that Worker runs
    assert victim.children(), "the executor JVM runs in its Worker's process group"
    survivor = [e for e in executor_ids(spark) if e != lost_id]
    assert len(survivor) == 1
    killed = threading.Event()
    done = threading.Event()
    url = app_url(spark)

    def kill_when_both_finished_a_task():
        """Kill the Worker (and its executor JVM: its process group) once each executor has
        finished a task of the running map stage, while tasks are still pending."""
        while not done.is_set():
            finished = set()
            try:
                for stage in requests.get(f"{url}/stages", params={"status": "active"},
                                          timeout=10).json():
                    finished |= {t["executorId"] for t in rest_task_list(
                        spark, stage["stageId"], stage["attemptId"]) if t["status"] == "SUCCESS"}
            except (requests.RequestException, ValueError):
                pass
            if {lost_id, *survivor} <= finished:
                victim.kill()
                killed.set()
                return
            time.sleep(0.1)

    killer = threading.Thread(target=kill_when_both_finished_a_task, daemon=True)
    killer.start()

    def cell():
        return (spark.range(0, 120, 1, 24).selectExpr("id % 7 as k", f"{SLOW} as s")
                .groupBy("k").agg({"s": "count"}).collect())

    try:
        run = jp.measure(cell, spark=spark)
    finally:
        done.set()
        killer.join(timeout=30)
    assert killed.is_set(), "the map stage ended before each executor finished a task"
    # Spark ran the lost executor's work again on the survivor: the cell's result is whole
    assert run.status == "ok", (run.status, run.error)
    assert victim.proc.poll() is not None and not victim.children()
    # the run names the lost executor, with Spark's own reason for removing it
    removed = {e["id"]: e for e in requests.get(f"{url}/allexecutors", timeout=30).json()}
    assert removed[lost_id]["isActive"] is False
    reason = removed[lost_id]["removeReason"]
    assert reason                                      # e.g. "worker lost: 127.0.0.1:… got disassociated"
    lines = [w for w in run.warnings if w.startswith(f"executor {lost_id} ")]
    assert len(lines) == 1, run.warnings
    assert "was lost" in lines[0] and reason in lines[0]
    assert not [w for w in run.warnings if "evicted" in w], run.warnings
    ex = run.executors.set_index("executor_id")
    assert not ex.loc[lost_id, "is_active"]
    assert run.start_ms <= ex.loc[lost_id, "remove_ms"] <= run.end_ms
    assert ex.loc[lost_id, "remove_reason"] == reason
    # every task attempt Spark lists for the run's stage attempts is in the run, once: the
    # lost executor's finished attempts, the attempts that failed with it, their re-runs
    table = run.stage_table()
    ran = table[table["status"] != "SKIPPED"]
    theirs = {}
    for _, stage in ran.iterrows():
        for t in rest_task_list(spark, stage.stage_id, stage.attempt):
            theirs[(stage.stage_id, stage.attempt, t["taskId"])] = t
    mine = run.tasks
    keys = list(zip(mine["stage_id"].astype(int), mine["stage_attempt"].astype(int),
                    mine["task_id"].astype(int)))
    assert len(keys) == len(set(keys)) and set(keys) == set(theirs)
    for key, status in zip(keys, mine["status"]):
        assert status == theirs[key]["status"], key
    on_lost = [t for t in theirs.values() if t["executorId"] == lost_id]
    assert [t for t in on_lost if t["status"] == "SUCCESS"], "the lost executor finished tasks"
    for t in on_lost:
        if t["status"] == "FAILED":
            assert "ExecutorLostFailure" in t["errorMessage"]
    # stage sums equal Spark's REST /stages, whose counters also count each finished attempt
    # re-run for its lost shuffle output as a failed task (the list keeps it as SUCCESS):
    # not taken for task attempts evicted by spark.ui.retainedTasks (asserted above)
    rerun = re.search(r"(\d+) finished shuffle-map attempts? ran again", lines[0])
    assert rerun, lines[0]
    counted_as_failed = 0
    for _, row in ran.iterrows():
        [rest] = [a for a in requests.get(f"{url}/stages/{row.stage_id}", timeout=30).json()
                  if a["attemptId"] == row.attempt]
        assert row.executor_run_time_ms == rest["executorRunTime"]
        assert row.executor_cpu_time_ms == pytest.approx(rest["executorCpuTime"] / 1e6, abs=1e-3)
        assert row.jvm_gc_time_ms == rest["jvmGcTime"]
        assert row.shuffle_write_bytes == rest["shuffleWriteBytes"]
        assert row.shuffle_read_bytes == rest["shuffleReadBytes"]
        listed = [t for k, t in theirs.items() if k[:2] == (row.stage_id, row.attempt)]
        assert row.task_attempts == len(listed)
        assert rest["numCompleteTasks"] == sum(t["status"] == "SUCCESS" for t in listed)
        assert rest["numKilledTasks"] == sum(t["status"] == "KILLED" for t in listed)
        assert rest["numFailedTasks"] >= sum(t["status"] == "FAILED" for t in listed)
        counted_as_failed += sum(rest[c] for c in COUNTERS) - len(listed)
    assert counted_as_failed == int(rerun.group(1)) >= 1
    # every attempt launched after the loss ran on the survivor
    assert set(mine.loc[mine["launch_ms"] > ex.loc[lost_id, "remove_ms"], "executor_id"]) \
        <= set(survivor)
    a = jp.analyze(run)
    assert lines[0] in a.summary()["warnings"]
    # the run was stored with it
    from jupyter_perf.store import default_store
    stored = default_store().load(run.run_id)
    assert lines[0] in stored.warnings and len(stored.tasks) == len(run.tasks)
