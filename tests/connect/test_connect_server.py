"""A separate Spark Connect server: pyspark 4's ``sbin/start-connect-server.sh``, its own process
on free gRPC and UI ports, its Spark UI read over HTTP (directly and through a reverse proxy
under a path prefix, the server started with ``spark.ui.proxyBase``). Where the UI comes from
(the session, the environment, the magic option, nowhere, the wrong one); the same query on a
classic session; classic and Connect measured at once in one kernel. The last test kills the
server mid-cell; the module's fixture stops it in any case."""
from __future__ import annotations

import json
import os
import subprocess
import threading

import pytest
import requests
from connectservers import (
    ConnectServer,
    ReverseProxy,
    assert_stages_equal_rest,
    shuffle_query,
    skip_unless_spark4,
    stage_structure,
)
from sparkhelpers import run_cell

import jupyter_perf as jp

pytestmark = [pytest.mark.spark4, pytest.mark.fresh_jvm]
skip_unless_spark4()

PROXY_BASE = "/gateway/sparkui"
THREADS = ("jupyter-perf-progress", "jupyter-perf-memory-sampler", "jupyter-perf-host-cpu")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = ConnectServer(str(tmp_path_factory.mktemp("connect-server")),
                        conf={"spark.ui.proxyBase": PROXY_BASE})
    try:
        yield srv.start()
    finally:
        srv.stop()
    assert srv.pid() is None


@pytest.fixture(scope="module")
def connect(server):
    return jp.spark_session(remote=server.url, ui_url=server.ui)


@pytest.fixture(scope="module")
def classic(connect):
    """A classic local[2] session in the same kernel as the Connect one, built with pyspark's
    own builder (no sparkmeasure jar to resolve: the REST path is what is compared)."""
    from pyspark.sql import SparkSession

    from jupyter_perf.collect.session_state import DEFAULT_CONF

    builder = SparkSession.builder.master("local[2]").appName("classic-beside-connect")
    for key, value in (DEFAULT_CONF | {"spark.ui.port": "0",
                                       "spark.sql.shuffle.partitions": "4"}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    yield spark
    spark.stop()


@pytest.fixture
def no_known_ui(monkeypatch):
    """This process knows no UI for the server (the one given to jp.spark_session forgotten)."""
    from jupyter_perf.collect import connect as connect_mod

    monkeypatch.setattr(connect_mod, "_ui_by_key", {})
    monkeypatch.delenv(connect_mod.UI_ENV, raising=False)


def tagged_jobs(server, tag: str) -> set[int]:
    jobs = requests.get(f"{server.ui}/api/v1/applications/{server.app_id}/jobs", timeout=60).json()
    return {j["jobId"] for j in jobs if any(t.endswith(f"_Tag_{tag}") for t in j["jobTags"])}


def test_a_separate_servers_runs_equal_its_rest_view(server, connect):
    from jupyter_perf.collect.connect import is_connect_session

    assert is_connect_session(connect) and server.pid() is not None
    run = jp.measure(lambda: shuffle_query(connect), spark=connect)
    assert run.collector == "connect+rest" and run.app_id == server.app_id
    assert run.extra["connect"]["ui_source"] == "session"
    assert run.extra["connect"]["server"] == server.url.removeprefix("sc://")
    assert set(run.jobs["job_id"]) == tagged_jobs(server, run.extra["connect"]["tag"]) != set()
    assert_stages_equal_rest(run, server.ui)
    assert run.slots == 2 and not run.memory.empty
    assert jp.analyze(run).summary()["verdict"]


def test_the_same_query_on_a_classic_session_has_the_same_stage_structure(connect, classic):
    on_connect = jp.measure(lambda: shuffle_query(connect), spark=connect)
    on_classic = jp.measure(lambda: shuffle_query(classic), spark=classic)
    assert on_classic.app_id != on_connect.app_id
    assert stage_structure(on_connect) == stage_structure(on_classic)
    assert len(stage_structure(on_connect)) >= 2                    # several jobs, shuffles
    assert any(write for job in stage_structure(on_connect) for _, _, write, _ in job)


def test_classic_and_connect_measured_at_once_in_one_kernel_stay_apart(server, connect, classic):
    runs = {}
    start = threading.Barrier(2)

    def measured(name, session):
        start.wait()
        runs[name] = jp.measure(lambda: [shuffle_query(session) for _ in range(2)], spark=session)

    threads = [threading.Thread(target=measured, args=a)
               for a in (("connect", connect), ("classic", classic))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    c, k = runs["connect"], runs["classic"]
    assert c.app_id == server.app_id and k.app_id == classic.sparkContext.applicationId
    assert set(c.jobs["job_id"]) == tagged_jobs(server, c.extra["connect"]["tag"])
    assert len(c.jobs) >= 4 and len(k.jobs) >= 4 and len(c.jobs) == len(k.jobs)
    assert c.collector == "connect+rest" and "rest" in k.collector
    assert_stages_equal_rest(c, server.ui)


def test_the_magic_takes_the_spark_of_the_cell_not_the_active_classic_session(
        ipshell, server, connect, classic):
    ipshell.user_ns["spark"] = connect
    result, _ = run_cell(ipshell, "%%perfmeasure -o on_connect\nspark.range(0, 1000, 1, 2).count()\n")
    assert result.error_in_exec is None
    assert ipshell.user_ns["on_connect"].app_id == server.app_id
    ipshell.user_ns["spark"] = classic
    # --ui names a Connect server's UI: on a classic session it is said, not silently dropped,
    # and the classic session's own UI is read
    result, _ = run_cell(ipshell, f"%%perfmeasure -o on_classic --ui {server.ui}\n"
                                  "spark.range(0, 1000, 1, 2).count()\n")
    assert result.error_in_exec is None and result.result == 1000
    run = ipshell.user_ns["on_classic"]
    assert run.app_id == classic.sparkContext.applicationId and len(run.tasks) > 0
    [line] = [w for w in run.warnings if "--ui" in w]
    assert line == (f"--ui/ui_url {server.ui} is for Spark Connect sessions only; `spark` is a "
                    "classic session, read through its own UI")


def test_no_known_ui_gives_a_client_only_run_with_the_next_step(connect, server, no_known_ui):
    run = jp.measure(lambda: shuffle_query(connect), spark=connect)
    assert run.collector == "connect-client" and run.status == "ok"
    [line] = [w for w in run.warnings if w.startswith("client-only report")]
    assert f"no Spark UI known for {server.url.removeprefix('sc://')}" in line
    assert "ui_url=" in line and "JUPYTER_PERF_SPARK_UI" in line and "--ui URL" in line
    assert run.tasks.empty and len(run.extra["connect"]["operations"]) >= 1


def test_the_ui_from_the_environment_or_the_magic_option(ipshell, connect, server, classic,
                                                         no_known_ui, monkeypatch):
    monkeypatch.setenv("JUPYTER_PERF_SPARK_UI", server.ui + "/")
    run = jp.measure(lambda: shuffle_query(connect), spark=connect)
    assert run.collector == "connect+rest" and run.extra["connect"]["ui_source"] == "environment"
    monkeypatch.delenv("JUPYTER_PERF_SPARK_UI")
    ipshell.user_ns["spark"] = connect
    result, _ = run_cell(ipshell, f"%%perfmeasure -o by_option --ui {server.ui}\n"
                                  "spark.range(0, 1000, 1, 2).count()\n")
    run = ipshell.user_ns["by_option"]
    assert result.error_in_exec is None and run.collector == "connect+rest"
    assert run.extra["connect"]["ui_source"] == "explicit"
    # the UI of another application (here the classic session's): said, never read from
    wrong = classic.sparkContext.uiWebUrl
    result, _ = run_cell(ipshell, f"%%perfmeasure -o wrong --ui {wrong}\n"
                                  "spark.range(0, 1000, 1, 2).count()\n")
    run = ipshell.user_ns["wrong"]
    assert result.error_in_exec is None and run.collector == "connect-client"
    [line] = [w for w in run.warnings if w.startswith("client-only report")]
    assert f"does not know this session's application {server.app_id}" in line
    assert classic.sparkContext.applicationId in line


def test_a_proxied_ui_with_spark_ui_proxybase(connect, server):
    with ReverseProxy(server.ui, PROXY_BASE) as proxy:
        run = jp.measure(lambda: shuffle_query(connect), spark=connect, ui_url=proxy.url)
    assert run.collector == "connect+rest" and run.extra["connect"]["ui_url"] == proxy.url
    assert_stages_equal_rest(run, server.ui)


def test_a_profiled_connect_cell_samples_the_servers_threads(connect, server, monkeypatch):
    """Issue P: a Connect server profiles the same way a classic session whose executors
    async-profiler cannot reach does: Spark's thread dumps through the server's UI, labelled
    the coarser method with why; the regex frames go to the Filter of the window's stages."""
    import re

    from jupyter_perf.collect import profiler

    # a faster rate than the default (the documented setting): samples enough in a short window
    monkeypatch.setenv(profiler.DUMP_INTERVAL_ENV, "250")

    def regex():
        (connect.range(0, 3_000_000, 1, 4)
         .selectExpr("concat('abc', CAST(id AS STRING), 'xyz') AS s")
         .where("s RLIKE '^a.*(1|2)3+x'").count())

    regex()                                             # warm: the code generated and compiled
    run = jp.measure(regex, spark=connect, store=False, profile=True)
    assert not [w for w in run.warnings if w.startswith("no CPU profile")], run.warnings
    a = jp.analyze(run)
    prof = a.summary()["profile"]
    assert prof["method"] == "thread dumps (every 250 ms)"
    assert prof["fallback"] == profiler.ServerDumpProfiler.WHY
    assert prof["samples"] >= 3, prof
    stages = {int(s) for s in run.stages["stage_id"]}
    top = a.hot_functions.head(8)
    mine = top[top["function"].str.contains(r"^java\.util\.regex\.", regex=True)]
    assert len(mine), top[["function", "self_samples", "operator"]].to_string()
    assert all(re.search(r"^Filter\b", op) for op in mine["operator"]), mine.to_string()
    assert set(mine.iloc[0]["stage_ids"]) <= stages


# A pyspark 3.5 client (the project's own .venv, which `make test-spark4` builds first) on
# this pyspark 4 server: jp.spark_session(remote=..., ui_url=...) and jp.measure in that process.
CLIENT_35 = """
import json, sys
import jupyter_perf as jp
spark = jp.spark_session(remote=sys.argv[1], ui_url=sys.argv[2], warm_up=False)
run = jp.measure(lambda: spark.range(0, 10000, 1, 4).selectExpr("id % 5 AS k")
                 .groupBy("k").count().collect(), spark=spark, store=False)
print(json.dumps({"pyspark": __import__("pyspark").__version__, "collector": run.collector,
                  "status": run.status, "tag": run.extra["connect"]["tag"],
                  "jobs": sorted(int(j) for j in run.jobs["job_id"]), "tasks": len(run.tasks)}))
"""


def test_a_pyspark_35_client_is_measured_on_a_spark_4_server(server, tmp_path):
    python = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), ".venv", "bin", "python")
    probe = subprocess.run([python, "-c", "import pyspark, grpc; print(pyspark.__version__)"],
                           capture_output=True, text=True) if os.path.exists(python) else None
    if probe is None or probe.returncode != 0 or not probe.stdout.startswith("3.5"):
        pytest.skip("no pyspark 3.5 venv with the Connect client at .venv (make setup)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPARK_")}
    env["JUPYTER_PERF_HOME"] = str(tmp_path)
    out = subprocess.run([python, "-c", CLIENT_35, server.url, server.ui], capture_output=True,
                         text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["pyspark"].startswith("3.5") and seen["status"] == "ok"
    assert seen["collector"] == "connect+rest" and seen["tasks"] > 0
    assert seen["jobs"] and set(seen["jobs"]) == tagged_jobs(server, seen["tag"])


def test_server_killed_mid_cell_leaves_a_partial_run_and_a_working_kernel(ipshell, server, connect):
    """Last in this module: the server is gone afterwards."""
    from pyspark.sql.connect.client.retries import DefaultPolicy

    from jupyter_perf.store import default_store

    # the client retries an unreachable server for ~10 minutes by default; a user who wants
    # to know sooner sets a shorter policy, as this test does
    connect.client.set_retry_policies([DefaultPolicy(max_retries=2, initial_backoff=100,
                                                     max_backoff=500)])
    progressed = threading.Event()

    def on_progress(stages=None, **_):
        if any(s.num_tasks for s in stages or []):
            progressed.set()          # the client has seen the cell's stage: kill the server

    def kill_when_running():
        if progressed.wait(300):
            server.kill()

    connect.registerProgressHandler(on_progress)
    killer = threading.Thread(target=kill_when_running, daemon=True)
    killer.start()
    ipshell.user_ns["spark"] = connect
    result, cap = run_cell(ipshell, "%%perfmeasure\nspark.range(0, 16, 1, 4).selectExpr("
                                    "\"java_method('java.lang.Thread', 'sleep', cast(20000 as "
                                    "bigint)) AS s\").agg({'s': 'count'}).collect()\n")
    killer.join(60)
    connect.removeProgressHandler(on_progress)
    assert server.pid() is None
    assert result.error_in_exec is not None                       # the client's own error
    assert type(result.error_in_exec).__module__.startswith("pyspark")
    run = jp.last_run()
    assert run.status == "failed" and run.collector == "connect-client"
    [line] = run.warnings
    assert line.startswith("client-only report: the server's REST API stopped answering")
    assert not run.stages.empty and (run.stages["num_tasks"] > 0).all()
    assert default_store().load(run.run_id).collector == "connect-client"
    assert "jupyter-perf-report" in cap.outputs[-1].data["text/html"]
    assert not [t.name for t in threading.enumerate() if t.name in THREADS]
    result, cap = run_cell(ipshell, "x = 6 * 7\nprint('kernel fine', x)\n")
    assert result.error_in_exec is None and "kernel fine 42" in cap.stdout
