"""spark.ui.enabled=false: no REST API, so the report comes from the listener alone and says so."""
from __future__ import annotations

import pytest
from sparkhelpers import make_spark

import jupyter_perf as jp


@pytest.fixture(scope="module")
def spark():
    session = make_spark("local[2]", **{"spark.ui.enabled": "false"})
    yield session
    session.stop()


def test_listener_only_report(spark):
    run = jp.measure(lambda: spark.range(0, 50_000, 1, 4).selectExpr("id % 5 AS k")
                     .groupBy("k").count().collect(), spark=spark)
    assert run.collector == "sparkmeasure"
    assert any("spark.ui.enabled=false" in w for w in run.warnings)
    assert len(run.jobs) >= 1 and len(run.tasks) >= 4
    # the listener's task rows add up to its own stage metrics
    sums = run.tasks.groupby("stage_id")["run_ms"].sum()
    listener = run.listener_stages.groupby("stageId")["executorRunTime"].sum()
    assert sums.to_dict() == listener.astype(float).to_dict()
    a = jp.analyze(run)
    assert a.summary()["verdict"] and a.model_error <= 0.25
    # the report says so: the warning travels in the report's data (the Summary shows it)
    from reportpage import page_data
    data = page_data(jp.report_html(a))
    assert any("spark.ui.enabled=false" in w for w in data["tabs"]["summary"]["warnings"])
