"""Plan node descriptions read from Spark's SQL execution page (collect/sql.py) on the pyspark
this environment has: Spark 3.5's page keeps them in ``<div id="plan-meta-data-N">``; Spark
4.x's (4.3) has no such divs and keeps them as node tooltips in the plan graph's DOT and in a
node-details JSON. Whatever the layout, the descriptions REST runs get are never empty, equal
the event log's (its plan nodes' ``simpleString``) node for node, hostile text included, and
no "could not be read" warning is given. Runs in both legs (``make test-spark4`` for 4.x).
"""
from __future__ import annotations

import pyspark
import pytest
import requests
import tpch
from sparkapps import logged_sql_app

import jupyter_perf as jp
from jupyter_perf.collect import sql

pytestmark = pytest.mark.spark4

HOSTILE = '<img src=x onerror=alert(1)> "q" \\ back\\slash {b} [c]; x=y |p| \t\n ünï'
SPARK4 = int(pyspark.__version__.split(".")[0]) >= 4
KEYS = ["execution_id", "node_id"]


def test_page_descriptions_equal_the_event_logs(tmp_path):
    def body(spark):
        tpch.register(spark)
        df = spark.createDataFrame([(1, HOSTILE), (2, "b")], ["id", HOSTILE])
        run = jp.measure(lambda: (
            spark.sql(tpch.query(9)).collect(),
            df.where(df[HOSTILE] == HOSTILE).groupBy(HOSTILE).count().collect()))
        ui = spark.sparkContext.uiWebUrl
        return run, {int(e): requests.get(f"{ui}/SQL/execution/", params={"id": e},
                                          timeout=60).text for e in run.sql["execution_id"]}

    (run, pages), path, history = logged_sql_app(tmp_path, body)
    log = jp.load_eventlog(path)
    assert len(run.sql) == 2
    for source in (run, history):
        assert not [w for w in source.warnings if "could not be read" in w], source.warnings
    mine = run.operators.set_index(KEYS).sort_index()
    theirs = log.operators.set_index(KEYS).sort_index().loc[mine.index]
    assert len(mine) >= 20 and (mine["description"].str.len() > 0).all()
    differ = mine["description"] != theirs["description"]
    assert not differ.any(), list(zip(mine.index[differ], mine["description"][differ],
                                      theirs["description"][differ]))
    assert (mine["name"] == theirs["name"]).all()
    assert any(HOSTILE in d for d in mine["description"])
    past = history.operators.set_index(KEYS).sort_index()
    past = past.loc[past.index.isin(mine.index)]
    assert list(past.index) == list(mine.index)
    assert past["description"].equals(mine["description"])

    # each layout the page has says the same on its own; which ones it has is the version's
    for eid, page in pages.items():
        want = dict(zip(mine.loc[eid].index, mine.loc[eid, "description"]))
        layouts = {name: descs for name, descs in sql.page_layouts(page).items() if descs}
        assert set(layouts) == ({"details", "dot"} if SPARK4 else {"divs"}), set(layouts)
        for name, descs in layouts.items():
            assert descs == want, name


def test_unreadable_pages_give_no_descriptions():
    # Pages a real Spark does not write on demand (an empty plan block, broken JSON, a DOT
    # node without tooltip): no descriptions, which fetch_sql turns into its one-line warning.
    assert sql.node_descriptions("<html><div id='plan-viz-metadata'></div></html>") == {}
    assert sql.node_descriptions('<div class="node-details">{not json</div>') == {}
    assert sql.page_layouts('<div class="dot-file">digraph G { 0 [id="node0"]; }</div>') == {
        "divs": {}, "details": {}, "dot": {}}
