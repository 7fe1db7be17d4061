"""SQL executions, plan operators and SQL metrics read from real Spark 3.5 event logs.

The applications (tests/collect/sparkapps.py) run a shuffled join + aggregate, a broadcast
join, a cached DataFrame read twice and a Python UDF, with AQE on and off; Spark's own
History Server reads the same logs, and its ``/sql`` answer is the reference: node ids,
names, edges and every metric's display text must be equal, character for character.
"""
from __future__ import annotations

import re

import orjson
import pandas as pd
import pytest
import requests
from sparkapps import SQL_APPS, HistoryServer, app_ids
from sqlequal import assert_sql_tables_equal

import jupyter_perf as jp
from jupyter_perf.collect.eventlog.codecs import open_lines
from jupyter_perf.model import OPERATOR_COLUMNS, SQL_COLUMNS, SQL_METRIC_COLUMNS


@pytest.fixture(scope="module")
def history(apps, apps_root, tmp_path_factory):
    server = HistoryServer(str(apps_root / "logs-sql"), str(tmp_path_factory.mktemp("history")))
    server.start()
    try:
        server.wait_for(app_ids(str(apps_root), SQL_APPS).values())
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def runs(apps):
    return {name: jp.load_eventlog(apps[name]) for name in SQL_APPS + ("local", "retry")}


def rest_sql(history, app_id: str) -> list[dict]:
    url = f"{history.url}/api/v1/applications/{app_id}/sql"
    return requests.get(url, params={"details": "true", "planDescription": "true",
                                     "length": 10_000}, timeout=60).json()


@pytest.mark.parametrize("name", SQL_APPS)
def test_plans_and_metric_texts_equal_the_history_servers(name, runs, history, apps_root):
    run = runs[name]
    executions = rest_sql(history, app_ids(str(apps_root), SQL_APPS)[name])
    mine = run.sql.set_index("execution_id")
    compared = 0
    for ex in executions:
        jobs = sorted(ex["runningJobIds"] + ex["successJobIds"] + ex["failedJobIds"])
        if ex["id"] not in mine.index:
            assert not jobs, ex["id"]            # only executions that ran no job are left out
            continue
        row = mine.loc[ex["id"]]
        assert row["job_ids"] == jobs and row["description"] == ex["description"]
        assert row["status"] == ex["status"] == "COMPLETED"
        assert row["plan_text"] == ex["planDescription"]
        assert row["completion_ms"] - row["submission_ms"] == ex["duration"]
        ops = run.operators[run.operators["execution_id"] == ex["id"]].set_index("node_id")
        metrics = run.sql_metrics[run.sql_metrics["execution_id"] == ex["id"]]
        assert sorted(ops.index) == sorted(n["nodeId"] for n in ex["nodes"])
        for node in ex["nodes"]:
            op = ops.loc[node["nodeId"]]
            assert op["name"] == node["nodeName"]
            number = node["nodeName"][len("WholeStageCodegen ("):-1] \
                if node["nodeName"].startswith("WholeStageCodegen (") else None
            assert op["codegen_id"] == node.get("wholeStageCodegenId", int(number or -1))
            theirs = {m["name"]: m["value"] for m in node["metrics"]}
            ours = metrics[metrics["node_id"] == node["nodeId"]].set_index("name")["text"]
            assert ours.to_dict() == theirs, (ex["id"], node["nodeName"])
            compared += len(theirs)
        edges = sorted((e["fromId"], e["toId"]) for e in ex["edges"])
        assert sorted((child, parent) for child, parents in ops["parent_ids"].items()
                      for parent in parents) == edges
    assert compared >= 100


@pytest.mark.parametrize("name", SQL_APPS)
def test_history_servers_tables_equal_the_event_logs(name, runs, history, apps_root):
    # AQE on and off: the REST collector on the History Server and the log reader give the
    # same three tables, up to the documented differences (sqlequal.py)
    rest = jp.load_rest(history.url, app_ids(str(apps_root), SQL_APPS)[name])
    assert assert_sql_tables_equal(rest, runs[name], live=False) >= 100


def _accumulator_stages(path: str) -> dict[int, set[tuple[int, int]]]:
    """Independently of the reader: every TaskEnd parsed whole, accumulables and all."""
    lines, _, handle = open_lines(path)
    out: dict[int, set[tuple[int, int]]] = {}
    try:
        for line in lines:
            if not line.startswith(b'{"Event":"SparkListenerTaskEnd"'):
                continue
            e = orjson.loads(line)
            for acc in e["Task Info"].get("Accumulables", []):
                if acc.get("Metadata") == "sql" and "Update" in acc:
                    out.setdefault(acc["ID"], set()).add((e["Stage ID"], e["Stage Attempt ID"]))
    finally:
        handle.close()
    return out


@pytest.mark.parametrize("name", SQL_APPS)
def test_an_operators_stages_hold_those_whose_tasks_updated_its_metrics(name, runs, apps):
    # stage_attempts follow the rule REST uses too (collect/sql_stages.py: pipelines, stage
    # annotations, record counts); the log says exactly which stages' tasks updated each
    # metric, which checks that rule on real plans
    run = runs[name]
    # what the rule cannot place it says, per execution, with the count (docs/operators.md,
    # "Where Spark leaves it ambiguous"); those nodes have no stage, as they have from REST
    unplaced = {int(m.group(1)): int(m.group(2)) for w in run.warnings
                if (m := re.match(r"SQL execution (\d+): (\d+) plan node", w))}
    updated = _accumulator_stages(apps[name])
    declared = run.sql_metrics.groupby(["execution_id", "node_id"])["accumulator_id"].apply(list)
    stages = set(zip(run.stages["stage_id"], run.stages["attempt"]))
    job_stages = dict(zip(run.jobs["job_id"], run.jobs["stage_ids"]))
    exec_stages = {r.execution_id: {s for j in r.job_ids for s in job_stages[j]}
                   for r in run.sql.itertuples()}
    ops = run.operators.set_index(["execution_id", "node_id"])
    (udf,) = run.sql.loc[run.sql["description"] == "python udf", "execution_id"]
    exact = inherited = 0
    for (execution_id, node_id), op in ops.iterrows():
        ids = declared.get((execution_id, node_id), [])
        expected = {a for i in ids for a in updated.get(i, ())
                    if a[0] in exec_stages[execution_id]}
        mine = {tuple(a) for a in op["stage_attempts"]}
        assert mine <= stages
        if not mine and execution_id in unplaced:
            unplaced[execution_id] -= 1
            continue
        assert expected <= mine, (execution_id, op["name"], expected, mine)
        if execution_id == udf:        # no cache, no ambiguity: exactly its stages
            assert mine == expected or not expected, (op["name"], expected, mine)
        exact += bool(expected)
        if not expected and mine:
            inherited += 1                  # no metric of its own: its pipeline's stages
            cluster = op["cluster_id"]
            if cluster >= 0:
                assert op["stage_attempts"] == ops.loc[(execution_id, cluster), "stage_attempts"]
    assert exact >= len(run.sql) * 2 and inherited >= len(run.sql)
    assert all(n == 0 for n in unplaced.values()), unplaced       # the warnings' counts
    # BroadcastExchange runs on the driver: no stage
    assert (ops.loc[ops["name"] == "BroadcastExchange", "stage_attempts"].map(len) == 0).all()
    # where a metric's largest task ran is one of its node's stages
    m = run.sql_metrics[run.sql_metrics["max_stage_id"] >= 0]
    for r in m.itertuples():
        assert [r.max_stage_id, r.max_stage_attempt] in ops.loc[(r.execution_id, r.node_id),
                                                                 "stage_attempts"]


@pytest.mark.parametrize("name", SQL_APPS)
def test_each_workload_has_its_operators(name, runs):
    run = runs[name]
    aqe = name == "sql_aqe"
    by_description = {}
    for ex in run.sql.itertuples():
        names = set(run.operators.loc[run.operators["execution_id"] == ex.execution_id, "name"])
        by_description[ex.description] = names
    assert "SortMergeJoin" in by_description["shuffled join + aggregate"]
    assert {"BroadcastHashJoin", "BroadcastExchange"} <= by_description["broadcast join"]
    assert "InMemoryTableScan" in by_description["cached read"]
    assert "BatchEvalPython" in by_description["python udf"]
    roots = run.operators[run.operators["parent_ids"].map(len) == 0]
    if aqe:      # the final plan is the one that ran
        assert set(roots.loc[roots["name"] == "AdaptiveSparkPlan", "description"]) == {
            "AdaptiveSparkPlan isFinalPlan=true"}
        assert any("AQEShuffleRead" in names for names in by_description.values())
    else:
        assert "AdaptiveSparkPlan" not in set(run.operators["name"])
    # nodes inside a WholeStageCodegen cluster carry its number; the cluster is a node too
    inner = run.operators[run.operators["cluster_id"] >= 0]
    clusters = run.operators.set_index(["execution_id", "node_id"])["name"]
    for r in inner.itertuples():
        assert clusters[(r.execution_id, r.cluster_id)] == f"WholeStageCodegen ({r.codegen_id})"


@pytest.mark.parametrize("name", SQL_APPS)
def test_metric_values_are_normalised(name, runs):
    m = runs[name].sql_metrics
    assert list(m.columns[:len(SQL_METRIC_COLUMNS)]) == SQL_METRIC_COLUMNS
    units = dict(zip(m["metric_type"], m["unit"]))
    assert units["size"] == "bytes" and units["timing"] == "ms" and units["nsTiming"] == "ms"
    rows = m[m["name"] == "number of output rows"]
    assert (rows["unit"] == "rows").all() and (rows["value"] >= 0).all()
    # the shuffled join scans all 200,000 rows of Range(0, 200000) and 1,000 of Range(0, 1000)
    run = runs[name]
    join = run.sql.loc[run.sql["description"] == "shuffled join + aggregate", "execution_id"]
    ops = run.operators[run.operators["execution_id"] == join.iloc[0]]
    scans = rows.merge(ops[ops["name"] == "Range"], on=["execution_id", "node_id"])
    assert sorted(scans["value"]) == [1000, 200_000]
    assert sorted(scans["text"]) == ["1,000", "200,000"]
    stats = m[m["min"].notna()]
    assert len(stats) and (stats["min"] <= stats["med"]).all() and (stats["med"] <= stats["max"]).all()
    summed = stats[stats["metric_type"] != "average"]
    assert (summed["value"] >= summed["max"]).all()
    averages = m[m["metric_type"] == "average"]
    assert (averages["value"].isna() == averages["min"].notna()).all()         # no total
    ns = m[m["metric_type"] == "nsTiming"]          # shuffle write time: ns in Spark, ms here
    assert len(ns) and (ns["value"] < 60_000).all() and (ns["value"] % 1 != 0).any()


def test_rdd_only_work_has_no_sql_tables(runs):
    run = runs["retry"]                          # RDD jobs only
    assert run.sql.empty and run.operators.empty and run.sql_metrics.empty
    assert list(run.sql.columns) == SQL_COLUMNS and list(run.operators.columns) == OPERATOR_COLUMNS
    mixed = runs["local"]                        # a DataFrame query, then RDD jobs
    assert len(mixed.sql) == 1
    sql_jobs = mixed.jobs.loc[mixed.jobs["sql_execution_id"].notna(), "job_id"].tolist()
    assert mixed.sql.iloc[0]["job_ids"] == sql_jobs and len(sql_jobs) < len(mixed.jobs)


def test_sql_tables_survive_the_store(runs, tmp_path):
    from jupyter_perf.store import RunStore

    run = runs["sql_aqe"]
    store = RunStore(str(tmp_path))
    store.save(run, jp.analyze(run).summary())
    back = store.load(run.run_id)
    for table in ("sql", "operators", "sql_metrics"):
        pd.testing.assert_frame_equal(getattr(back, table), getattr(run, table),
                                      check_dtype=False)
