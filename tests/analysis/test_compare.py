"""analysis/compare.py on hand-built runs: the split adds up, shapes match, noise is honest."""
from __future__ import annotations

import pandas as pd
import pytest
from analysis_synth import make_run, task

from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.compare import (
    compare,
    config_diff,
    operator_deltas,
    setup_of,
    stage_deltas,
    wall_split,
)
from jupyter_perf.analysis.components import KEYS
from jupyter_perf.model import Run


def _run(durations, *, slots=2, gap=0.0, stage_names=("collect at <cell>:3",), **fields):
    tasks = []
    per_slot = [gap] * slots
    for i, d in enumerate(durations):
        s = min(range(slots), key=lambda k: per_slot[k])
        tasks.append(task(per_slot[s], d, index=i, executor_id="driver", **fields))
        per_slot[s] += d
    stages = [{"stage_id": 0, "attempt": 0, "status": "COMPLETE", "num_tasks": len(durations),
               "name": stage_names[0]}]
    return make_run(tasks, slots=slots, start=0.0, stages=stages)


def test_the_parts_add_up_to_the_wall_delta():
    a = analyze(_run([100, 100, 100, 100], gc_ms=20))
    b = analyze(_run([60, 60, 60, 60, 60], slots=2, gap=50.0, gc_ms=5))
    s = wall_split(a, b)
    parts = s["driver_ms"] + sum(s["components"].values()) + s["parallelism_ms"] + s["residual_ms"]
    assert parts == pytest.approx(s["wall_delta_ms"])
    assert s["wall_delta_ms"] == pytest.approx(b.wall_ms - a.wall_ms)
    assert abs(s["residual_ms"]) < 1e-6 * max(1.0, a.wall_ms)      # exact by construction
    assert s["driver_ms"] == pytest.approx(50.0)                   # B waited 50 ms first
    assert s["components"]["gc"] < 0                               # less GC per task in B
    assert set(s["components"]) == set(KEYS)


def test_more_slots_show_as_parallelism_not_as_work():
    a = analyze(_run([100] * 8, slots=2))
    b = analyze(_run([100] * 8, slots=4))
    s = wall_split(a, b)
    assert s["wall_delta_ms"] == pytest.approx(-200.0)             # 400 ms -> 200 ms
    assert all(abs(v) < 1e-9 for v in s["components"].values())    # same work
    assert s["parallelism_ms"] == pytest.approx(-200.0)
    c = compare(a, b).summary()
    assert c["predicted_vs_measured"][0]["setting"] == "slots"
    assert c["predicted_vs_measured"][0]["measured_ms"] == pytest.approx(b.wall_ms)


def test_noise_is_unknown_below_five_warm_runs_and_decides_above():
    """The one rule of analysis/series.py (issue T replaced the t(0.995) limit on 2-3 degrees
    of freedom, which passed a 4.4 s slowdown as "within noise"): B against the band of the
    warm repeats of A's code and settings, unknown below series.MIN_WARM_RUNS (5)."""
    a = analyze(_run([100, 100]))
    b = analyze(_run([104, 100]))
    assert compare(a, b).summary()["within_noise"] is None
    assert "noise unknown" in compare(a, b).summary()["sentence"]
    # three repeats were enough for the old rule; now they say how many more are needed
    few = compare(a, b, noise_groups=[[100, 103, 106]]).summary()
    assert few["within_noise"] is None and "2 more would settle it" in few["sentence"]
    # repeats that vary a few percent: a 4 % change is within noise
    assert compare(a, b, noise_groups=[[100, 103, 106, 101, 104]]).summary()["within_noise"] \
        is True
    # repeats that agree to 0.5 %: a 60 % change is beyond noise, and slower than usual (a
    # 100 ms cell's band is at least series.MIN_HALF_MS = 25 ms wide on each side)
    slower = analyze(_run([160, 150]))
    c = compare(a, slower, noise_groups=[[100, 100.5, 101, 99.5, 100]]).summary()
    assert c["within_noise"] is False and "beyond noise: slower than usual" in c["sentence"]
    assert c["noise_verdict"] == "slower"
    # one wild repeat (a cold or disturbed run) cannot widen the band: the old rule's
    # pooled SD made this "within noise" (a limit of ×34)
    wild = compare(a, slower, noise_groups=[[100, 101, 99, 100, 4600.0]]).summary()
    assert wild["within_noise"] is False
    assert wild["noise"]["high_ms"] == pytest.approx(125.0)      # the floor, not the wild run


def test_config_diff_lists_only_what_differs_and_ignores_session_ids():
    a, b = _run([10]), _run([10])
    a.extra["spark_conf"] = {"spark.sql.shuffle.partitions": "200", "spark.app.id": "x",
                             "spark.driver.port": "1", "spark.executor.memory": "1g"}
    b.extra["spark_conf"] = {"spark.sql.shuffle.partitions": "8", "spark.app.id": "y",
                             "spark.driver.port": "2", "spark.executor.memory": "1g"}
    assert config_diff(a, b) == {"spark.sql.shuffle.partitions": ["200", "8"]}


def test_config_diff_shows_a_recorded_default_where_a_run_did_not_set_the_setting():
    a, b = _run([10]), _run([10])
    a.extra["spark_conf"] = {"spark.executor.memory": "1g"}
    a.extra["spark_defaults"] = {"spark.sql.shuffle.partitions": "200"}
    b.extra["spark_conf"] = {"spark.executor.memory": "1g", "spark.sql.shuffle.partitions": "8",
                             "spark.sql.adaptive.enabled": "false"}
    b.extra["spark_defaults"] = {}
    assert config_diff(a, b) == {"spark.sql.adaptive.enabled": [None, "false"],
                                 "spark.sql.shuffle.partitions": ["200 (default)", "8"]}
    assert config_diff(b, a)["spark.sql.shuffle.partitions"] == ["8", "200 (default)"]


def test_a_run_compared_with_itself_changes_nothing():
    a = analyze(_run([100, 50, 70]))
    c = compare(a, a).summary()
    assert c["wall_delta_ms"] == 0 and c["config_diff"] == {}
    assert all(v == 0 for v in c["components"].values())
    assert all(r["matched"] for r in c["stages"])


def test_runs_without_tasks_compare_without_error():
    empty = analyze(Run(start_ms=0.0, end_ms=500.0))           # no job ran in A
    full = analyze(_run([100, 100]))
    c = compare(empty, full).summary()
    assert c["wall_delta_ms"] == pytest.approx(full.wall_ms - 500.0)
    parts = c["driver_ms"] + sum(c["components"].values()) + c["parallelism_ms"] + c["residual_ms"]
    assert parts == pytest.approx(c["wall_delta_ms"])


class _Ops:
    """An Analysis stand-in with only an ``operators`` table (what operator_deltas reads)."""

    def __init__(self, rows):
        self.operators = pd.DataFrame(rows)


def test_operators_match_by_shape_not_by_id():
    a = _Ops([
        {"execution_id": 3, "node_id": 0, "name": "HashAggregate",
         "description": "HashAggregate(keys=[k#12], functions=[sum(v#13)])", "task_time_ms": 500},
        {"execution_id": 3, "node_id": 1, "name": "Scan parquet",
         "description": "FileScan parquet [k#12,v#13]", "task_time_ms": 300}])
    b = _Ops([
        {"execution_id": 9, "node_id": 0, "name": "HashAggregate",
         "description": "HashAggregate(keys=[k#40], functions=[sum(v#41)])", "task_time_ms": 200},
        {"execution_id": 9, "node_id": 1, "name": "Filter", "description": "Filter (v#41 > 0)",
         "task_time_ms": 50},
        {"execution_id": 9, "node_id": 2, "name": "Scan parquet",
         "description": "FileScan parquet [k#40,v#41]", "task_time_ms": 100}])
    rows = {r["name"]: r for r in operator_deltas(a, b)}
    assert rows["HashAggregate"]["matched"] and rows["HashAggregate"]["task_time_ms"]["delta"] == -300
    assert rows["Scan parquet"]["matched"] and (rows["Scan parquet"]["a_node"],
                                                 rows["Scan parquet"]["b_node"]) == (1, 2)
    assert not rows["Filter"]["matched"] and rows["Filter"]["a_node"] is None


def _two_stage_run(names, durations=(100, 100), line=3):
    tasks = [task(0.0, durations[0], stage=0, index=0, executor_id="driver"),
             task(durations[0], durations[1], stage=1, index=0, executor_id="driver")]
    stages = [{"stage_id": i, "attempt": 0, "status": "COMPLETE", "num_tasks": 1,
               "name": n.format(line=line), "submission_ms": float(i)} for i, n in enumerate(names)]
    return make_run(tasks, slots=1, start=0.0, stages=stages)


def test_stages_match_by_call_site_without_file_or_line_and_pair_changed_shapes():
    a = analyze(_two_stage_run(["count at /tmp/ipykernel_1/123.py:{line}",
                                "collect at /tmp/ipykernel_1/123.py:{line}"], line=3))
    b = analyze(_two_stage_run(["count at /tmp/ipykernel_9/777.py:{line}",
                                "toPandas at /tmp/ipykernel_9/777.py:{line}"], (100, 300), line=5))
    rows = stage_deltas(a, b)
    assert [(r["a_stage"], r["b_stage"], r["same_shape"]) for r in rows] == \
        [("0", "0", True), ("1", "1", False)]    # issue T: integers, not "0.0" (read as floats)
    assert [(r["a_stage_id"], r["a_attempt"]) for r in rows] == [(0, 0), (1, 0)]
    assert rows[1]["executor_run_time_ms"]["delta"] == pytest.approx(rows[1]["executor_run_time_ms"]["b"]
                                                                     - rows[1]["executor_run_time_ms"]["a"])
    assert rows[1]["a_name"].startswith("collect") and rows[1]["b_name"].startswith("toPandas")


def test_setup_is_always_shown_and_the_config_diff_only_what_differs():
    a, b = _run([10]), _run([10], slots=4)
    a.master = b.master = "local[*]"
    setup = setup_of(a, b)
    assert setup["master"] == ["local[*]", "local[*]"]
    assert setup["cores (slots)"] == ["2", "4"]
    assert config_diff(a, b) == {"cores (slots)": ["2", "4"]}


def test_advice_outcome_needs_noise_to_say_whether_it_helped():
    a_run, b_run = _run([100, 100, 100, 100]), _run([50, 50, 50, 50])
    a_run.extra["spark_conf"] = {"spark.sql.shuffle.partitions": "200"}
    b_run.extra["spark_conf"] = {"spark.sql.shuffle.partitions": "8"}
    a, b = analyze(a_run), analyze(b_run)
    # what A advised (an Analysis caches its hints: set them as the analysis would have)
    a.__dict__["hints"] = [{"operator": "Exchange (#3)", "text": "use 8 partitions",
                            "setting": "spark.sql.shuffle.partitions", "value": "8",
                            "predicted_ms": None, "cause": None}]
    unknown = compare(a, b).summary()
    assert unknown["advice"]["verdict"] == "unknown"
    [p] = unknown["predicted_vs_measured"]
    assert (p["setting"], p["predicted_ms"], p["measured_ms"]) == \
        ("spark.sql.shuffle.partitions", None, pytest.approx(b.wall_ms))
    # five warm repeats of A (the one rule needs five; three were enough for the old one)
    helped = compare(a, b, noise_groups=[[a.wall_ms * f for f in (1, 1.01, 0.99, 1.0, 1.005)]])
    assert helped.summary()["advice"]["verdict"] == "helped"
    # B did not apply it: no prediction, no advice verdict
    b_run.extra["spark_conf"] = {"spark.sql.shuffle.partitions": "200"}
    other = compare(a, analyze(b_run)).summary()
    assert other["advice"] is None and other["predicted_vs_measured"] is None
