"""Comparing a run on local-cluster[1,1,1024] with the same job on local-cluster[2,1,1024]:
separate executor JVMs, one then two. A's slots what-if for B's slots is shown beside B's
measured time and kept in the store's record of predictions (issue J, "predicted vs
measured"). Which way the error goes is not asserted: that is what the record measures."""
from __future__ import annotations

import pytest
from sparkhelpers import make_spark

import jupyter_perf as jp
from jupyter_perf.render.compare import comparison_text
from jupyter_perf.store import accuracy, default_store

pytestmark = pytest.mark.spark4


def _job(spark):
    return lambda: (spark.range(0, 2_000_000, 1, 8).selectExpr("id % 500 AS k", "id AS v")
                    .groupBy("k").sum("v").collect())


def _run_on(master: str):
    spark = make_spark(master, **{"spark.executor.memory": "512m"})
    try:
        run = jp.measure(_job(spark), spark=spark, label=master)
    finally:
        spark.stop()
    assert run.status == "ok"
    return run


def test_one_executor_then_two_shows_the_slots_prediction_beside_the_measurement(jp_home):
    a = _run_on("local-cluster[1,1,1024]")
    b = _run_on("local-cluster[2,1,1024]")
    assert (a.slots, b.slots) == (1, 2)

    s = jp.compare(a.run_id, b.run_id).summary()
    assert s["setup"]["master"] == ["local-cluster[1,1,1024]", "local-cluster[2,1,1024]"]
    assert s["setup"]["executors"] == ["1", "2"]
    assert s["setup"]["cores (slots)"] == ["1", "2"]
    [p] = s["predicted_vs_measured"]
    assert p["kind"] == "slots" and p["what"] == "slots ×2 (1 → 2)"
    # the prediction is A's own what-if for twice the slots; the measurement is B's wall time
    assert p["predicted_ms"] == pytest.approx(jp.analyze(a).whatif(slots_factor=2.0))
    assert p["measured_ms"] == pytest.approx(b.wall_ms)
    assert p["signed_error"] == pytest.approx((p["predicted_ms"] - b.wall_ms) / b.wall_ms)
    # the parts add up to the measured change (the residual is shown, whatever it is)
    parts = s["driver_ms"] + sum(s["components"].values()) + s["parallelism_ms"]
    assert parts + s["residual_ms"] == pytest.approx(s["wall_delta_ms"], abs=1.0)
    # the stages match by shape across the two applications
    assert s["stages"] and all(r["matched"] for r in s["stages"])
    # shown in the text, and kept in the store's record: once, however often it is compared
    assert "predicted vs measured: slots ×2 (1 → 2)" in comparison_text(s)
    jp.compare(a.run_id, b.run_id)
    rows, damaged = accuracy.read(default_store().root)
    assert damaged == 0
    assert [(r["a"], r["b"], r["kind"]) for r in rows] == [(a.run_id, b.run_id, "slots")]
    assert rows[0]["predicted_ms"] == pytest.approx(p["predicted_ms"])
    assert rows[0]["measured_ms"] == pytest.approx(b.wall_ms)
