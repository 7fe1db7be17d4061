"""Executors added and removed mid-cell (dynamic allocation on local-cluster, two worker JVMs)."""
from __future__ import annotations

import time

import pytest
import requests
from sparkhelpers import make_spark

import jupyter_perf as jp

SLOW = "java_method('java.lang.Thread', 'sleep', cast(5 as bigint))"


@pytest.fixture(scope="module")
def spark():
    session = make_spark("local-cluster[2,1,1024]", **{
        "spark.executor.memory": "512m",
        "spark.dynamicAllocation.enabled": "true",
        "spark.dynamicAllocation.shuffleTracking.enabled": "true",
        "spark.dynamicAllocation.initialExecutors": "0",
        "spark.dynamicAllocation.minExecutors": "0",
        "spark.dynamicAllocation.maxExecutors": "2",
        "spark.dynamicAllocation.schedulerBacklogTimeout": "1s",
        "spark.dynamicAllocation.executorIdleTimeout": "2s",
        "spark.dynamicAllocation.shuffleTracking.timeout": "1s",
    })
    yield session
    session.stop()


def live_executors(spark) -> list[str]:
    sc = spark.sparkContext
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/executors"
    return sorted(e["id"] for e in requests.get(url, timeout=30).json() if e["id"] != "driver")


def wait_for(condition, seconds: float = 90.0) -> None:
    deadline = time.time() + seconds
    while not condition():
        assert time.time() < deadline, "Spark's executors did not change in time"
        time.sleep(0.2)


def test_executors_added_and_removed_mid_cell(spark):
    wait_for(lambda: live_executors(spark) == [])     # idle executors are released
    seen = {}

    def body():
        spark.range(0, 400, 1, 8).selectExpr(SLOW).collect()    # executors are added for this
        seen["first"] = set(live_executors(spark))
        wait_for(lambda: len(live_executors(spark)) < len(seen["first"]))   # idle: removed
        spark.range(0, 400, 1, 8).selectExpr(SLOW).collect()    # and added again

    run = jp.measure(body, spark=spark)
    ex = run.executors.set_index("executor_id").drop(index="driver")
    assert (ex["add_ms"] > run.start_ms).all()                   # every executor added mid-cell
    gone = ex[ex["remove_ms"].astype(float) > 0]
    assert not gone["is_active"].any() and (gone["remove_ms"] > run.start_ms).all()
    # the body waited for the first executors to go; the second ones may go idle and be
    # removed while the window is being collected, after the cell
    assert (gone["remove_ms"] < run.end_ms).sum() >= 1
    assert 1 <= run.slots <= 2                                   # the most cores alive at once
    assert set(run.tasks["executor_id"]) <= set(ex.index)
    a = jp.analyze(run)
    # Executors arrived mid-cell: the replay gives each group the slots they really had over
    # time (analysis/timeline.slot_windows), so the model error is as on static runs.
    windows = [w for w in a.timeline.slot_windows if w is not None]
    assert windows, "executors came and went: the replay must use their slot windows"
    assert all(len(begin) == len(end) >= 1 for begin, end in windows)
    assert a.model_error <= 0.10, (a.model_error, a.summary()["whatif"])
    assert a.summary()["whatif"]["model_error"] == a.model_error
