"""One application, three sources: the live UI's /sql, a History Server's /sql on its event
log, and the event log itself give equal SQL tables (run.sql, run.operators with their
stage_attempts, run.sql_metrics); where a source cannot say a field, the difference is the
documented one (docs/operators.md, "Event log and REST, side by side"; asserted by
tests/collect/sqlequal.py).

The application (real Spark, ``local[2]``, AQE on) runs TPC-H Q1 (scan + aggregate) and Q9
(a six-table join) on generated TPC-H data (tests/tpch.py), then the small workloads of
``sparkapps.sql_workloads``: a shuffled join + aggregate, a broadcast join, a cached
DataFrame read twice and a Python UDF.
"""
from __future__ import annotations

import pytest
import tpch
from sparkapps import logged_sql_app, sql_workloads
from sqlequal import METRIC_KEYS, assert_sql_tables_equal, indexed

import jupyter_perf as jp

QUERIES = (1, 9)


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    """{"live": UI run, "history": History Server run, "log": event-log run} of one app."""
    def body(spark):
        sc = spark.sparkContext
        tpch.register(spark)
        for number in QUERIES:
            sc.setJobDescription(f"TPC-H Q{number}")
            spark.sql(tpch.query(number)).collect()
        sql_workloads(spark)
        return jp.load_rest(sc.uiWebUrl, sc.applicationId)

    live, log, history = logged_sql_app(tmp_path_factory.mktemp("sql-equality"), body)
    return {"live": live, "history": history, "log": jp.load_eventlog(log)}


def test_the_application_ran_every_query(three):
    sql = three["log"].sql
    for name in [f"TPC-H Q{n}" for n in QUERIES] + ["shuffled join + aggregate",
                                                    "broadcast join", "cached read", "python udf"]:
        assert (sql["description"] == name).any(), name
    q9 = sql.loc[sql["description"] == "TPC-H Q9", "execution_id"].iloc[0]
    ops = three["log"].operators
    q9_ops = ops[ops["execution_id"] == q9]
    assert (q9_ops["name"].str.startswith("Scan parquet")).sum() == 6      # six tables joined
    assert q9_ops["stage_attempts"].map(len).gt(0).sum() >= 10


@pytest.mark.parametrize("source", ["live", "history"])
def test_rest_and_event_log_tables_are_equal_as_documented(three, source):
    compared = assert_sql_tables_equal(three[source], three["log"], live=source == "live")
    assert compared >= 200


def test_live_and_history_agree_on_what_both_list(three):
    # the two REST paths read the same application through the same collector
    live, history = three["live"], three["history"]
    for table, keys in (("sql", ["execution_id"]), ("operators", ["execution_id", "node_id"])):
        assert indexed(live, table, keys).equals(indexed(history, table, keys)), table
    lm, hm = indexed(live, "sql_metrics", METRIC_KEYS), indexed(history, "sql_metrics", METRIC_KEYS)
    assert lm.loc[hm.index, "text"].equals(hm["text"])


def test_every_source_places_the_same_operators(three):
    # a node the shared rule cannot place (docs/operators.md, "Where Spark leaves it
    # ambiguous") is unplaced from every source alike, and said alike
    said = [sorted(w for w in run.warnings if "could not be placed" in w)
            for run in three.values()]
    assert said[0] == said[1] == said[2]
