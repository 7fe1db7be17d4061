"""Spark Connect with ``jp.spark_session(remote="local[2]")``: a real Connect server inside this
Python process (pyspark 4's own), its UI found without help. ``jp.measure``, ``%%perfmeasure``
and the live display on it; two Connect sessions and a classic one on the same server measured
at the same time; Ctrl-C; an unreachable UI."""
from __future__ import annotations

import signal
import threading
import time

import pytest
import requests
from connectservers import ReverseProxy, assert_stages_equal_rest, shuffle_query, skip_unless_spark4
from sparkhelpers import run_cell

import jupyter_perf as jp

pytestmark = [pytest.mark.spark4, pytest.mark.fresh_jvm]
skip_unless_spark4()

THREADS = ("jupyter-perf-progress", "jupyter-perf-memory-sampler", "jupyter-perf-host-cpu")
SLOW = "java_method('java.lang.Thread', 'sleep', cast({ms} as bigint))"


def slow_query(spark, tasks: int = 8, ms: int = 300) -> list:
    # count("s"), not count(): the optimizer would prune the sleeping column
    return (spark.range(0, tasks * 4, 1, tasks).selectExpr("id % 4 AS k", f"{SLOW.format(ms=ms)} AS s")
            .groupBy("k").agg({"s": "count"}).collect())


def our_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name in THREADS]


@pytest.fixture(scope="module")
def spark():
    session = jp.spark_session(remote="local[2]", **{"spark.ui.port": "0",
                                                     "spark.sql.shuffle.partitions": "4"})
    yield session
    session.stop()


@pytest.fixture(scope="module")
def server(spark):
    """The in-process server's own SparkContext (the classic side of the same application)."""
    from pyspark import SparkContext

    return SparkContext._active_spark_context


def tagged_job_ids(server, tag: str) -> set[int]:
    url = f"{server.uiWebUrl}/api/v1/applications/{server.applicationId}/jobs"
    return {j["jobId"] for j in requests.get(url, timeout=60).json()
            if any(t.endswith(f"_Tag_{tag}") for t in j.get("jobTags", []))}


def test_remote_local_is_a_connect_session_on_a_free_port(spark, server):
    from jupyter_perf.collect.connect import endpoint, is_connect_session

    assert is_connect_session(spark)
    assert server.getConf().get("spark.connect.grpc.binding.port") == "0"   # not pyspark's 15002
    service = getattr(getattr(server._jvm, "org.apache.spark.sql.connect.service.SparkConnectService$"),
                      "MODULE$")
    assert endpoint(spark) == f"localhost:{service.localPort()}"
    assert spark.conf.get("spark.app.id") == server.applicationId
    # jp.spark_session(remote="local[2]") again: the same server, a session on it
    again = jp.spark_session(remote="local[2]", warm_up=False)
    assert endpoint(again) == endpoint(spark) and again.conf.get("spark.app.id") == server.applicationId


def test_the_kernel_forks_and_execs_safely_while_the_client_runs(spark):
    # with gRPC's fork handlers on, a fork straight to exec in a process whose gRPC client runs
    # aborts ~2 % of the children before their exec (grpc/grpc#43055: 6 of 300 measured here),
    # which killed a classic session's JVM launch once on a CI run; jp.spark_session turns the
    # handlers off before the client imports grpc
    import os
    import subprocess

    from jupyter_perf.collect.connect_session import FORK_SUPPORT_ENV

    spark.range(10).count()                  # the client's channel is up and polling
    assert os.environ.get(FORK_SUPPORT_ENV) == "0"
    failed = []
    for _ in range(300):
        child = subprocess.run(["/bin/true"], stdin=subprocess.PIPE, capture_output=True,
                               preexec_fn=lambda: None, timeout=60)
        if child.returncode != 0 or child.stderr:
            failed.append((child.returncode, child.stderr[:200]))
    assert failed == []


def test_measure_reads_the_windows_jobs_by_tag_and_equals_the_servers_rest(spark, server):
    run = jp.measure(lambda: shuffle_query(spark), spark=spark)
    assert run.collector == "connect+rest" and run.status == "ok"
    info = run.extra["connect"]
    assert info["ui_source"] == "in-process" and info["session_id"] == spark.session_id
    assert run.app_id == server.applicationId and run.spark_version.startswith("4.")
    # exactly the jobs the server tagged with this window's client tag, every one of them
    assert set(run.jobs["job_id"]) == tagged_job_ids(server, info["tag"]) != set()
    for tags in run.jobs["job_tags"]:
        assert any(t.endswith(f"_Session_{spark.session_id}_Tag_{info['tag']}") for t in tags)
    assert_stages_equal_rest(run, server.uiWebUrl)
    assert len(run.tasks) == int(jp.analyze(run).stage_table()["task_attempts"].sum()) > 0
    assert run.slots == 2 and not run.memory.empty and not run.host_cpu.empty
    summary = jp.analyze(run).summary()
    assert len(summary["stages"]) == len(run.stages) and summary["verdict"]
    assert not our_threads()


def test_the_magic_measures_a_connect_cell(ipshell, spark, server):
    ipshell.user_ns["spark"] = spark
    result, cap = run_cell(ipshell, "%%perfmeasure -o r\nprint('before')\n"
                                    "rows = spark.range(0, 100_000, 1, 4).selectExpr('id % 7 AS k')"
                                    ".groupBy('k').count().collect()\nlen(rows)\n")
    assert result.error_in_exec is None and result.result == 7
    assert "before" in cap.stdout and "perfmeasure" not in cap.stderr
    run = ipshell.user_ns["r"]
    assert run.collector == "connect+rest" and len(run.jobs) >= 1 and len(run.tasks) > 0
    assert "jupyter-perf-report" in cap.outputs[-1].data["text/html"]
    assert_stages_equal_rest(run, server.uiWebUrl)


def test_a_failing_connect_cell_keeps_its_own_error_and_the_run(ipshell, spark):
    from jupyter_perf.store import default_store

    ipshell.user_ns["spark"] = spark
    result, cap = run_cell(ipshell, "%%perfmeasure\nspark.range(10).count()\n"
                                    "spark.sql('SELECT * FROM no_such_table').collect()\n")
    assert type(result.error_in_exec).__name__ == "AnalysisException"
    run = jp.last_run()
    assert run.status == "failed" and "no_such_table" in run.error.lower()
    assert len(run.jobs) >= 1 and default_store().load(run.run_id).status == "failed"


def test_live_progress_on_connect_is_read_from_the_rest_api(spark):
    from jupyter_perf.collect.connect_window import ConnectWindow
    from jupyter_perf.kernel.live import LiveDisplay, text_of

    live, seen = LiveDisplay("html"), []

    def on_update(snap):
        seen.append(snap)
        live.update(snap)

    window = ConnectWindow(spark, on_progress=on_update).start()
    slow_query(spark)
    run = window.finish()
    ran = set(run.stages.query("status == 'COMPLETE'")["stage_id"])
    assert len(ran) >= 2 and ran <= set(live.state())
    assert all(value == maximum for value, maximum in live.state().values()), live.state()
    assert any(0 < s.completed < s.num_tasks for snap in seen for s in snap.stages), \
        "never saw a stage part-way: the display was not live"
    last = seen[-1]
    assert last.finished and last.jobs_done == last.jobs_started == len(run.jobs)
    assert last.cores == 2 and "2 cores" in text_of(last)
    assert not our_threads()


def test_live_progress_from_the_client_when_the_ui_cannot_be_read(spark):
    from connectservers import free_port

    from jupyter_perf.collect.connect_client import ClientSnapshot
    from jupyter_perf.collect.connect_window import ConnectWindow
    from jupyter_perf.kernel.live import LiveDisplay, text_of

    live, seen = LiveDisplay("text"), []

    def on_update(snap):
        seen.append(snap)
        live.update(snap)

    window = ConnectWindow(spark, on_progress=on_update,
                           ui_url=f"http://127.0.0.1:{free_port()}").start()
    slow_query(spark, ms=600)      # stages of several progress intervals (2 s)
    run = window.finish()
    assert run.collector == "connect-client"
    assert seen and all(isinstance(s, ClientSnapshot) for s in seen)
    assert any(0 < s.completed < s.num_tasks for snap in seen for s in snap.stages)
    assert live.updates >= 1 and "Spark Connect: 1/1 operations" in text_of(seen[-1])
    assert "None running" not in text_of(seen[-1])
    assert not our_threads()


def test_unreachable_ui_gives_a_client_only_report_that_says_what_is_missing(ipshell, spark):
    from connectservers import free_port

    ipshell.user_ns["spark"] = spark
    port = free_port()
    # a query that runs longer than the server's progress interval (2 s): the client sees stages
    result, cap = run_cell(ipshell, f"%%perfmeasure -o c --ui http://127.0.0.1:{port}\n"
                                    "n = len(spark.range(0, 16, 1, 4).selectExpr('id % 3 AS k', "
                                    f"\"{SLOW.format(ms=1000)} AS s\").groupBy('k')"
                                    ".agg({'s': 'count'}).collect())\nprint('n =', n)\n")
    assert result.error_in_exec is None and "n = 3" in cap.stdout
    assert "Traceback" not in cap.stderr
    run = ipshell.user_ns["c"]
    assert run.collector == "connect-client" and run.status == "ok"
    [line] = [w for w in run.warnings if w.startswith("client-only report")]
    assert f"127.0.0.1:{port} is unreachable" in line and "--ui URL" in line
    assert "Missing: task attempts" in line and "executors" in line and "memory" in line
    # what the client saw: the stages with their task counts, and the plan's metrics
    assert not run.stages.empty and (run.stages["num_tasks"] > 0).all()
    assert run.tasks.empty and run.executors.empty
    [op] = run.extra["connect"]["operations"]
    assert op["done"] and set(op["stage_ids"]) == set(run.stages["stage_id"])
    names = {node["name"] for node in op["plan_metrics"]}
    assert any(name.startswith("HashAggregate") for name in names), names
    assert "task attempts could not be read" in cap.outputs[-1].data["text/html"]   # the verdict
    summary = jp.analyze(run).summary()          # not "all driver time": tasks were not read
    ran = int((run.stages["status"] != "SKIPPED").sum())
    assert summary["verdict"].startswith(f"{ran} stage(s) ran, but their task attempts could not")
    assert summary["verdict_headline"] == "Tasks not collected"


def test_a_short_client_only_operation_is_spark_work_not_driver_time(spark):
    from connectservers import free_port

    run = jp.measure(lambda: spark.range(0, 1000, 1, 2).count(), spark=spark,
                     ui_url=f"http://127.0.0.1:{free_port()}")
    assert run.collector == "connect-client" and run.status == "ok"      # not "no-jobs"
    [op] = run.extra["connect"]["operations"]
    assert op["done"] and op["plan_metrics"]
    [line] = [w for w in run.warnings if w.startswith("client-only report")]
    assert "Shown: 1 operation(s)" in line and "plan and observed metrics of 1" in line
    summary = jp.analyze(run).summary()
    assert "task attempts could not be read" in summary["verdict"]
    assert "driver time" not in summary["verdict"]


def test_a_ui_behind_a_reverse_proxy_prefix(spark, server):
    with ReverseProxy(server.uiWebUrl, "/gateway/spark-ui") as proxy:
        # a page address pasted from the browser: the UI root under the prefix is used
        run = jp.measure(lambda: shuffle_query(spark), spark=spark, ui_url=proxy.url + "/jobs/")
    assert run.collector == "connect+rest" and run.extra["connect"]["ui_source"] == "explicit"
    assert run.extra["connect"]["ui_url"] == proxy.url
    assert_stages_equal_rest(run, server.uiWebUrl)


def test_two_connect_sessions_and_a_classic_one_measured_at_once_stay_apart(spark, server):
    """Three windows on one server at the same time: each gets exactly its own jobs."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession
    from pyspark.sql.session import SparkSession as ClassicSession

    from jupyter_perf.collect.connect import endpoint

    other = ConnectSession.builder.remote(f"sc://{endpoint(spark)}").create()
    classic = ClassicSession._instantiatedSession          # the server's own classic session
    assert other.session_id != spark.session_id and classic is not None
    runs: dict[str, object] = {}
    start = threading.Barrier(3)

    def measured(name, session):
        start.wait()
        runs[name] = jp.measure(lambda: [slow_query(session, tasks=4, ms=100)
                                         for _ in range(2)], spark=session, label=name)

    threads = [threading.Thread(target=measured, args=(n, s))
               for n, s in (("a", spark), ("b", other), ("classic", classic))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    a, b, c = runs["a"], runs["b"], runs["classic"]
    assert a.collector == b.collector == "connect+rest"
    jobs = {name: set(r.jobs["job_id"]) for name, r in runs.items()}
    assert all(len(j) >= 2 for j in jobs.values()), jobs
    assert not (jobs["a"] & jobs["b"]) and not (jobs["a"] | jobs["b"]) & jobs["classic"]
    assert jobs["a"] == tagged_job_ids(server, a.extra["connect"]["tag"])
    assert jobs["b"] == tagged_job_ids(server, b.extra["connect"]["tag"])
    for run, session in ((a, spark), (b, other)):
        assert all(any(f"_Session_{session.session_id}_Tag_" in t for t in tags)
                   for tags in run.jobs["job_tags"])
    stages = [set(r.stages["stage_id"]) for r in (a, b, c)]
    assert not (stages[0] & stages[1]) and not (stages[0] | stages[1]) & stages[2]
    assert {int(s) for s in c.tasks["stage_id"]} <= stages[2]


def test_interrupt_cancels_only_the_cells_operations(ipshell, spark, server):
    """Ctrl-C in a Connect cell: the cell's operations are interrupted by its tag, another
    session's query on the same server finishes, the partial run is stored, and the
    KeyboardInterrupt reaches the user."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    from jupyter_perf.collect.connect import endpoint
    from jupyter_perf.store import default_store

    other = ConnectSession.builder.remote(f"sc://{endpoint(spark)}").create()
    other_result: list = []
    bystander = threading.Thread(
        target=lambda: other_result.append(slow_query(other, tasks=4, ms=1500)), daemon=True)
    main = threading.main_thread().ident
    apps = f"{server.uiWebUrl}/api/v1/applications/{server.applicationId}"

    def interrupt_when_both_run():
        # the other session's query starts once the cell's job runs (its tasks sleep a minute
        # a row), so both run together however long a busy host takes to start the cell
        deadline = time.time() + 300
        while time.time() < deadline:
            jobs = requests.get(f"{apps}/jobs", params={"status": "running"}, timeout=30).json()
            tags = [t for j in jobs for t in j.get("jobTags", [])]
            cell_runs = any("_Tag_jupyter-perf-" in t for t in tags)           # the cell's job
            if cell_runs and bystander.ident is None:                          # not started
                bystander.start()
            other_runs = any(f"_Session_{other.session_id}_" in t for t in tags)
            if cell_runs and other_runs:
                time.sleep(1.0)
                signal.pthread_kill(main, signal.SIGINT)
                return
            time.sleep(0.1)

    ipshell.user_ns["spark"] = spark
    killer = threading.Thread(target=interrupt_when_both_run, daemon=True)
    killer.start()
    result, cap = run_cell(ipshell, "%%perfmeasure\n" + "spark.range(0, 8, 1, 2).selectExpr("
                           f"\"{SLOW.format(ms=60_000)} AS s\").agg({{'s': 'count'}}).collect()\n")
    killer.join()
    assert isinstance(result.error_in_exec, KeyboardInterrupt)
    run = jp.last_run()
    assert run.status == "interrupted" and default_store().load(run.run_id).status == "interrupted"
    assert len(run.jobs) >= 1 and set(run.jobs["status"]) <= {"FAILED"}   # cancelled, not running
    assert bystander.ident is not None, "the cell's job was never seen running"
    bystander.join(300)
    assert len(other_result) == 1 and len(other_result[0]) == 4      # the other session's query
    assert spark.range(5).count() == 5                                # the session still works
