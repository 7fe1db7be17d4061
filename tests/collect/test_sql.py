"""SQL executions, operators and metrics read from Spark's REST API (collect/sql.py) on real
Spark: local[2] with AQE on and off, local-cluster[2,1,1024], and a real History Server.

Cross-checks against Spark itself: every metric's ``text`` equals what the live ``/sql``
says for the same node, descriptions equal Spark's own SparkPlanGraph (py4j), and the stages
each WholeStageCodegen cluster ran in equal the clusters Spark's stage pages draw.
"""
from __future__ import annotations

import re

import pytest
import requests
import tpch
from sparkapps import HistoryServer

import jupyter_perf as jp

# Its own process (scripts/run_tests.py): test_the_history_server_gives_the_live_tables failed
# twice in the shared process (after ~20 other Spark sessions in the same JVM: SQL metric rows
# of the live UI and the History Server differed) and never alone (module and test, 3 runs);
# the cause is not found yet, and the assertion now prints the column that differs.
pytestmark = pytest.mark.fresh_jvm

HOSTILE = "<img src=x onerror=alert(1)>"


def live_sql(spark, execution_id):
    sc = spark.sparkContext
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/sql/{execution_id}"
    return requests.get(url, params={"details": "true"}, timeout=60).json()


def codegen_stages(spark, run, execution_id):
    """{codegen id: stage ids} of one execution, from the DAG of Spark's own stage pages (the
    RDD scopes it draws name the WholeStageCodegen clusters)."""
    sc = spark.sparkContext
    job_ids = set(run.sql.set_index("execution_id").loc[execution_id, "job_ids"])
    stage_ids = {int(s) for j, ss in zip(run.jobs["job_id"], run.jobs["stage_ids"])
                 if j in job_ids for s in ss}
    out: dict[int, set[int]] = {}
    for s, a, status in zip(run.stages.stage_id, run.stages.attempt, run.stages.status):
        if status == "SKIPPED" or int(s) not in stage_ids:
            continue
        page = requests.get(f"{sc.uiWebUrl}/stages/stage/", params={"id": s, "attempt": a},
                            timeout=60).text
        for cg in set(re.findall(r"WholeStageCodegen \((\d+)\)", page)):
            out.setdefault(int(cg), set()).add(int(s))
    return out


def check_against_spark(spark, run):
    """The run's SQL tables say what Spark says, execution by execution."""
    assert not run.sql.empty
    graph_store = spark._jsparkSession.sharedState().statusStore()
    for eid in run.sql["execution_id"]:
        live = live_sql(spark, eid)
        theirs = {(n["nodeId"], m["name"]): m["value"] for n in live["nodes"] for m in n["metrics"]}
        mine = run.sql_metrics[run.sql_metrics["execution_id"] == eid]
        assert {(r.node_id, r.name): r.text for r in mine.itertuples()} == theirs
        ops = run.operators[run.operators["execution_id"] == eid]
        assert sorted(ops["node_id"]) == sorted(n["nodeId"] for n in live["nodes"])
        nodes = graph_store.planGraph(int(eid)).allNodes()
        descs = {nodes.apply(i).id(): nodes.apply(i).desc() for i in range(nodes.size())}
        assert dict(zip(ops["node_id"], ops["description"])) == descs
        row = run.sql[run.sql["execution_id"] == eid].iloc[0]
        assert row["plan_text"] == live["planDescription"] and row["status"] == "COMPLETED"
        assert set(row["job_ids"]) <= set(run.jobs["job_id"])
    counts = run.sql_metrics[run.sql_metrics["metric_type"] == "sum"]
    assert (counts["value"] == counts["text"].str.replace(",", "").astype(float)).all()
    stats = run.sql_metrics[run.sql_metrics["max_stage_id"] >= 0]
    assert set(stats["max_stage_id"]) <= set(run.stages["stage_id"])
    for eid in run.sql["execution_id"]:
        ops = run.operators[run.operators["execution_id"] == eid]
        clusters = ops[ops["name"].str.startswith("WholeStageCodegen")]
        mine = {int(c): {s for s, _ in st} for c, st in zip(clusters["codegen_id"],
                                                           clusters["stage_attempts"])}
        drawn = codegen_stages(spark, run, eid)
        if spark.conf.get("spark.sql.adaptive.enabled") == "true":
            assert mine == drawn, eid
        else:
            # Without AQE the broadcast jobs start inside the consuming cluster's RDD scope,
            # so Spark's stage pages also draw that cluster around the broadcast stages,
            # where none of its code runs: there ours is a non-empty subset of what is drawn.
            assert mine.keys() == drawn.keys(), eid
            assert all(mine[c] and mine[c] <= drawn[c] for c in mine), (eid, mine, drawn)
    ran = {(int(s), int(a)) for s, a, status in zip(run.stages.stage_id, run.stages.attempt,
                                                    run.stages.status) if status != "SKIPPED"}
    for attempts in run.operators["stage_attempts"]:
        assert {tuple(sa) for sa in attempts} <= ran


@pytest.fixture(scope="module")
def spark():
    from sparkhelpers import make_spark

    session = make_spark("local[2]")
    tpch.register(session)
    yield session
    session.stop()


@pytest.mark.parametrize("aqe", ["true", "false"])
@pytest.mark.parametrize("number,names", [
    (1, {"HashAggregate", "Exchange", "Scan parquet"}),
    (9, {"HashAggregate", "Exchange", "Scan parquet", "BroadcastExchange",
         "BroadcastHashJoin"}),
    (18, {"TakeOrderedAndProject", "HashAggregate", "Scan parquet"}),
])
def test_tpch_plans_equal_what_spark_says(spark, aqe, number, names):
    spark.conf.set("spark.sql.adaptive.enabled", aqe)
    run = jp.measure(lambda: spark.sql(tpch.query(number)).collect())
    check_against_spark(spark, run)
    assert names <= set(run.operators["name"])
    assert ("AdaptiveSparkPlan" in set(run.operators["name"])) == (aqe == "true")
    if aqe == "true":     # the final plan is the one that ran
        assert all("isFinalPlan=true" in t for t in run.sql["plan_text"])
    joins = run.operators[run.operators["name"].str.contains("Join")]
    if number != 1:
        assert len(joins) and all(d.startswith(n) for n, d in zip(joins["name"],
                                                                  joins["description"]))
    scans = run.operators[run.operators["name"] == "Scan parquet"]
    assert all("lineitem" in d or "Location" in d for d in scans["description"])
    broadcasts = run.operators[run.operators["name"] == "BroadcastExchange"]
    assert all(st == [] for st in broadcasts["stage_attempts"])   # driver side


def test_two_queries_in_one_window_are_two_executions(spark):
    spark.conf.set("spark.sql.adaptive.enabled", "true")
    run = jp.measure(lambda: (spark.sql(tpch.query(6)).collect(),
                              spark.table("nation").groupBy("n_regionkey").count().collect()))
    assert len(run.sql) == 2 and run.sql["execution_id"].is_unique
    check_against_spark(spark, run)


def test_a_window_of_rdd_work_has_no_plan(spark):
    sc = spark.sparkContext
    run = jp.measure(lambda: sc.parallelize(range(1000), 2).map(lambda x: (x % 3, 1))
                     .reduceByKey(lambda a, b: a + b).collect())
    assert not run.jobs.empty
    assert run.sql.empty and run.operators.empty and run.sql_metrics.empty
    assert any(w.startswith("no SQL plan: this window ran RDD work only") for w in run.warnings)


def test_hostile_names_and_literals_stay_text(spark):
    df = spark.createDataFrame([(1, HOSTILE), (2, "b")], ["id", HOSTILE])
    run = jp.measure(lambda: df.where(df[HOSTILE] == HOSTILE).groupBy(HOSTILE).count().collect())
    check_against_spark(spark, run)
    assert any(HOSTILE in d for d in run.operators["description"])
    assert any(HOSTILE in t for t in run.sql["plan_text"])


def test_the_history_server_gives_the_live_tables(tmp_path):
    """Whole application: live UI and a History Server replaying its event log agree."""
    from sparkhelpers import make_spark

    logs = tmp_path / "logs"
    logs.mkdir()
    # AQE on, stated: the first session of a test process sets JVM-wide defaults, and with AQE
    # off (test_profile_real's session, when it came first) the live UI's and the History
    # Server's texts of a few shuffle metrics differ (recorded in issue Q's note)
    session = make_spark("local[2]", **{"spark.sql.adaptive.enabled": "true",
                                        "spark.eventLog.enabled": "true",
                                        "spark.eventLog.dir": str(logs)})
    try:
        tpch.register(session)
        session.sql(tpch.query(9)).collect()
        session.sql(tpch.query(1)).collect()
        sc = session.sparkContext
        sc._jsc.sc().listenerBus().waitUntilEmpty(15_000)
        app_id = sc.applicationId
        live = jp.load_rest(sc.uiWebUrl, app_id)
    finally:
        session.stop()
    server = HistoryServer(str(logs), str(tmp_path / "hs"))
    server.start()
    try:
        server.wait_for([app_id])
        past = jp.load_rest(server.url, app_id)
    finally:
        server.stop()
    assert len(live.sql) >= 2 and not live.operators.empty
    assert past.operators.equals(live.operators)
    # A metric no task ever changed from zero is in the live UI but not in the History
    # Server: event logs do not carry zero accumulator updates. Everything else is equal.
    key = ["execution_id", "node_id", "name"]
    both = live.sql_metrics.merge(past.sql_metrics, on=key, how="left", indicator=True,
                                  suffixes=("", "_hs"))
    live_only = both[both["_merge"] == "left_only"]
    assert len(past.sql_metrics) + len(live_only) == len(live.sql_metrics)
    assert (live_only["value"].fillna(0) == 0).all(), live_only[["name", "text"]]
    kept = live.sql_metrics.merge(past.sql_metrics[key], on=key)
    other = past.sql_metrics.merge(live.sql_metrics[key], on=key)
    differ = [c for c in kept.columns if not kept[c].equals(other[c])]
    assert not differ, {c: (kept.loc[kept[c].ne(other[c]), key + [c]].head(5).to_dict("records"),
                            other.loc[kept[c].ne(other[c]), key + [c]].head(5).to_dict("records"))
                        for c in differ}
    cols = ["execution_id", "description", "plan_text", "job_ids", "status", "submission_ms"]
    assert past.sql[cols].equals(live.sql[cols])
    assert not [w for w in past.warnings if "SQL" in w or "plan" in w]


# -- local-cluster last: make_spark stops the module's local session ------------------------
def test_local_cluster_plans_equal_what_spark_says():
    from sparkhelpers import make_spark

    session = make_spark("local-cluster[2,1,1024]", **{"spark.executor.memory": "768m"})
    try:
        tpch.register(session)
        run = jp.measure(lambda: session.sql(tpch.query(9)).collect())
        check_against_spark(session, run)
        assert {"BroadcastHashJoin", "Exchange"} <= set(run.operators["name"])
    finally:
        session.stop()
