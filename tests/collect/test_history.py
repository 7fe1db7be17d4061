"""A real Spark History Server (pyspark's own sbin/) reads the same real event logs:
load_eventlog's stage aggregates equal its /stages, and load_eventlog and load_rest give
identical summaries for every application."""
from __future__ import annotations

import pytest
import requests
from sparkapps import APPS, HistoryServer, app_ids
from sqlequal import assert_operator_summaries_equal, assert_sql_tables_equal

import jupyter_perf as jp
from jupyter_perf.collect.history import choose_attempt
from jupyter_perf.collect.rest import RestError


@pytest.fixture(scope="module")
def history(apps, apps_root, tmp_path_factory):
    server = HistoryServer(str(apps_root / "logs"), str(tmp_path_factory.mktemp("history")))
    server.start()
    try:
        server.wait_for(app_ids(str(apps_root)).values())
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def ids(apps_root):
    return app_ids(str(apps_root))


def spark_stages(history, app_id):
    url = f"{history.url}/api/v1/applications/{app_id}/stages"
    return requests.get(url, params={"details": "false"}, timeout=30).json()


@pytest.mark.parametrize("name", APPS)
def test_stage_aggregates_equal_the_history_servers(name, apps, history, ids):
    table = jp.analyze(jp.load_eventlog(apps[name])).stage_table()
    table = table.set_index(["stage_id", "attempt"])
    stages = spark_stages(history, ids[name])
    assert len(stages) == len(table)
    for s in stages:
        row = table.loc[(s["stageId"], s["attemptId"])]
        assert row["status"] == s["status"] and row["num_tasks"] == s["numTasks"]
        assert row["task_attempts"] == (s["numCompleteTasks"] + s["numFailedTasks"]
                                        + s["numKilledTasks"])
        assert row["failed_tasks"] == s["numFailedTasks"]
        assert row["killed_tasks"] == s["numKilledTasks"]
        assert row["executor_run_time_ms"] == s["executorRunTime"]
        assert row["executor_cpu_time_ms"] == pytest.approx(s["executorCpuTime"] / 1e6, abs=1e-3)
        assert row["jvm_gc_time_ms"] == s["jvmGcTime"]
        assert row["shuffle_fetch_wait_ms"] == s["shuffleFetchWaitTime"]
        assert row["shuffle_write_time_ms"] == pytest.approx(s["shuffleWriteTime"] / 1e6, abs=1e-3)
        for ours, theirs in [("input_bytes", "inputBytes"), ("output_bytes", "outputBytes"),
                             ("shuffle_read_bytes", "shuffleReadBytes"),
                             ("shuffle_remote_bytes", "shuffleRemoteBytesRead"),
                             ("shuffle_write_bytes", "shuffleWriteBytes"),
                             ("memory_spilled_bytes", "memoryBytesSpilled"),
                             ("disk_spilled_bytes", "diskBytesSpilled")]:
            assert row[ours] == s[theirs], (ours, s["stageId"])
    statuses = {s["status"] for s in stages}
    if name == "local":
        assert "SKIPPED" in statuses
    if name == "retry":
        assert sum(s["numFailedTasks"] for s in stages) == 1


@pytest.mark.parametrize("name", APPS)
def test_eventlog_and_rest_summaries_are_identical(name, apps, history, ids):
    from_log = jp.load_eventlog(apps[name])
    from_rest = jp.load_rest(history.url, ids[name])
    assert from_rest.kind == "rest" and from_rest.warnings == []
    a, b = jp.analyze(from_log).summary(), jp.analyze(from_rest).summary()
    for s in (a, b):
        del s["run_id"], s["kind"]
    # the plan's operators: equal up to what REST reads from Spark's display (sqlequal.py)
    assert_operator_summaries_equal(b.pop("operators"), a.pop("operators"))
    assert a == b          # verdict, top operator, hints, stages named by operators included
    # the Runs themselves agree too, task by task, and their SQL tables as documented
    assert_sql_tables_equal(from_rest, from_log, live=False)
    cols = [c for c in from_log.tasks.columns if c in from_rest.tasks.columns]
    assert from_log.tasks[cols].equals(from_rest.tasks[cols])
    assert list(from_log.executors["executor_id"]) == list(from_rest.executors["executor_id"])


def test_unknown_application_and_unreachable_server(history):
    with pytest.raises(RestError, match="does not know application 'app-nope'.*/api/v1/applications"):
        jp.load_rest(history.url, "app-nope")
    from sparkapps import free_port
    with pytest.raises(RestError, match="no Spark UI or History Server answers"):
        jp.load_rest(f"http://127.0.0.1:{free_port()}", "app-1")


def test_attempt_choice_latest_by_default_and_warns():
    app = {"id": "app-1", "attempts": [
        {"attemptId": "1", "startTime": "2026-11-22T01:00:00.000GMT"},
        {"attemptId": "2", "startTime": "2026-11-22T02:00:00.000GMT"}]}
    chosen, warnings = choose_attempt(app, None)
    assert chosen["attemptId"] == "2"
    assert "2 attempts" in warnings[0] and "attempt= one of 1" in warnings[0]
    assert choose_attempt(app, "1") == (app["attempts"][0], [])
    with pytest.raises(RestError, match="no attempt '3'; attempts: 1, 2"):
        choose_attempt(app, "3")
    single = {"id": "local-1", "attempts": [{"startTime": "2026-11-22T01:00:00.000GMT"}]}
    assert choose_attempt(single, None) == (single["attempts"][0], [])


def test_load_source_and_cli_over_the_history_server(history, ids, apps, capsys):
    import json

    from jupyter_perf.cli import main
    from jupyter_perf.collect.past import SourceError, load_source

    with pytest.raises(SourceError, match="has 3 applications; choose one with --app ID"):
        load_source(history.url)
    run = load_source(history.url + "/", app=ids["retry"])
    assert run.kind == "rest" and run.app_id == ids["retry"]
    assert load_source(apps["retry"]).kind == "eventlog"
    assert main(["analyze", history.url, "--app", ids["retry"], "--json", "--no-save"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = jp.analyze(jp.load_eventlog(apps["retry"])).summary()
    for s in (got, want):
        del s["run_id"], s["kind"]
    assert got == want
