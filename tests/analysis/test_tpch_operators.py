"""TPC-H (SF 0.01, tests/tpch.py) on real Spark: every task of a scan + aggregate query (Q1)
and of join-heavy ones (Q9, Q18) lands on a plan operator, the verdict names the top one,
Q9's joins carry their stages' time, and Q9's stages are named by their operators.

Broadcast joins are off so that the joins run in tasks (sort-merge): at SF 0.01 every
dimension table is small enough to broadcast, and a broadcast is driver time. Which single
operator is the top one at this scale is not asserted beyond Q1's: on a busy 2-core host the
ranking of Q9's and Q18's scans, joins and aggregates follows the host's load (most of their
task time is waiting for a core); the SF 1 comparison belongs in benchmarks/.
"""
from __future__ import annotations

import pytest
from sparkhelpers import make_spark
from tpch import query, register

import jupyter_perf as jp

pytestmark = [pytest.mark.spark4, pytest.mark.fresh_jvm]


@pytest.fixture(scope="module")
def spark():
    session = make_spark("local[2]", **{"spark.sql.shuffle.partitions": "8",
                                        "spark.sql.autoBroadcastJoinThreshold": "-1"})
    register(session)
    yield session
    session.stop()


@pytest.fixture(scope="module")
def analyses(spark):
    out = {}
    for q in (1, 9, 18):
        run = jp.measure(lambda q=q: spark.sql(query(q)).collect(), spark=spark, store=False)
        out[q] = jp.analyze(run)
    return out


@pytest.mark.parametrize("q", [1, 9, 18])
def test_every_task_lands_on_an_operator_and_the_verdict_names_the_top_one(analyses, q):
    a = analyses[q]
    total = float(a.task_breakdown.to_numpy().sum())
    assert a._operators.unattributed_ms == 0.0, a.summary()["operators_note"]
    assert a.operators["task_time_ms"].sum() == pytest.approx(total, rel=1e-9)
    top = a.summary()["top_operator"]
    assert (top["execution_id"], top["node_id"]) == tuple(
        a.operators.iloc[0][["execution_id", "node_id"]])
    assert f"top operator: {top['name']}" in a.summary()["verdict"]


def test_q1_scan_and_aggregate_has_its_aggregate_or_scan_on_top(analyses):
    a = analyses[1]
    assert not a.operators["name"].str.contains("Join").any()
    top = a.top_operator["name"]
    assert "Aggregate" in top or top.startswith("Scan"), top


def test_q9_joins_carry_the_time_of_the_stages_they_ran_in(analyses):
    ops = analyses[9].operators
    joins = ops[ops["name"].str.startswith("SortMergeJoin")]
    assert len(joins) == 5, joins["name"].tolist()        # six tables, five joins
    assert (joins["task_time_ms"] > 0).all() and joins["stage_ids"].map(len).all()
    ran = set(analyses[9].run.tasks["stage_id"])       # each in a stage that ran tasks
    assert all(set(s) & ran for s in joins["stage_ids"]), joins["stage_ids"].tolist()


def test_q9_stages_are_named_by_their_operators(analyses):
    a = analyses[9]
    named = {r["stage_id"]: r["operators"] for r in a.summary()["stages"]}
    ran = set(a.run.tasks["stage_id"])
    assert all(named[s] for s in ran), named
    assert any("Join" in named[s] for s in ran)
    assert any("Scan parquet" in named[s] for s in ran)
