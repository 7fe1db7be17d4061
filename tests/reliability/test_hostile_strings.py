"""Hostile strings from a live session (issue U4): a job description and a column name carrying
a NUL, a bidi override, markup and 100 kB, read back through Spark's REST API (the cell's
window and a whole-application load), kept as they are, stored and reloaded, escaped in the
report. (A lone UTF-16 surrogate cannot reach a live JVM — py4j refuses to encode it — so it
is covered where it can occur: event logs, tests/collect/test_eventlog.py, and cell sources,
tests/reliability/test_store_faults.py.)"""
from __future__ import annotations

import pytest

import jupyter_perf as jp
from jupyter_perf.store import RunStore

pytestmark = [pytest.mark.spark4]

HOSTILE = "a\x00b\u202ec<img src=x onerror=alert(1)>" + "y" * 100_000
COLUMN = "k\u202e<b>x</b>"


def query(spark):
    spark.sparkContext.setJobDescription(HOSTILE)
    try:
        return (spark.range(0, 2000, 1, 2).selectExpr(f"id % 7 AS `{COLUMN}`")
                .groupBy(COLUMN).count().collect())
    finally:
        spark.sparkContext.setJobDescription(None)


def test_hostile_job_descriptions_and_column_names_are_kept_and_escaped(spark_local, tmp_path):
    run = jp.measure(lambda: query(spark_local), spark=spark_local, store=False)
    assert len(run.jobs) and (run.jobs["description"] == HOSTILE).all()
    assert any(COLUMN in str(d) for d in run.operators["description"]), run.operators
    summary = jp.analyze(run).summary()
    store = RunStore(str(tmp_path / "store"))
    store.save(run, summary)
    back = store.load(run.run_id)
    assert (back.jobs["description"] == HOSTILE).all()
    assert back.operators["description"].tolist() == run.operators["description"].tolist()
    html = jp.report_html(run)
    assert "<img src=x" not in html and "<b>x</b>" not in html
    # the page carries them as data (the renderer writes them as text: tests/render's browser
    # tests): kept whole in the report's data, never as markup in the page
    from reportpage import page_data
    data = page_data(html)
    jobs = data["tabs"]["summary"]["jobs"]
    descriptions = [j["description"] for j in jobs]
    assert descriptions and all(d == HOSTILE for d in descriptions)


def test_a_whole_application_read_over_rest_keeps_them(spark_local):
    query(spark_local)
    sc = spark_local.sparkContext
    app = jp.load_rest(sc.uiWebUrl, sc.applicationId)
    assert app.app_id == sc.applicationId
    assert (app.jobs["description"] == HOSTILE).any()
