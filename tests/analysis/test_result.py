"""analyze(run) -> Analysis: summary() schema, JSON, stage aggregates, retries."""
import json

import pandas as pd
import pytest
from analysis_synth import T0, make_run, task

from jupyter_perf.analysis import Analysis, analyze
from jupyter_perf.model import Run

DESIGN_KEYS = {"app_id", "spark_version", "wall_ms", "slots", "jobs", "stages", "breakdown",
               "whatif", "stragglers", "verdict"}
STAGE_KEYS = {"stage_id", "attempt", "status", "num_tasks", "executor_run_time_ms",
              "executor_cpu_time_ms", "jvm_gc_time_ms", "shuffle_fetch_wait_ms",
              "shuffle_write_time_ms", "input_bytes", "output_bytes", "shuffle_read_bytes",
              "shuffle_write_bytes", "failed_tasks"}
WHATIF_KEYS = {"simulated_baseline_ms", "model_error", "infinite_disk_ms",
               "infinite_network_ms", "no_gc_ms", "no_stragglers_ms", "slots_x2_ms"}


def retried_run():
    # Task index 1 fails once (attempt 0) and succeeds on retry (attempt 1).
    return make_run([
        task(0, 100, index=0, gc_ms=10, fetch_wait_ms=5, shuffle_read_bytes=100),
        task(0, 40, index=1, status="FAILED", error="boom", cpu_ms=40),
        task(40, 60, index=1, attempt=1, shuffle_write_time_ms=3, shuffle_write_bytes=50),
        task(120, 30, stage=1, input_bytes=10, output_bytes=20),
    ], slots=2, start=-10, end=200,
        stages=[{"stage_id": 0, "attempt": 0, "status": "COMPLETE", "num_tasks": 2,
                 "name": "map", "parent_ids": []},
                {"stage_id": 1, "attempt": 0, "status": "COMPLETE", "num_tasks": 1,
                 "name": "reduce", "parent_ids": [0]}],
        jobs=[{"job_id": 7, "status": "SUCCEEDED", "submission_ms": T0 - 5,
               "completion_ms": T0 + 160, "stage_ids": [0, 1]}])


def test_summary_has_the_design_schema_and_is_json():
    s = analyze(retried_run()).summary()
    assert DESIGN_KEYS <= set(s)
    assert WHATIF_KEYS <= set(s["whatif"])
    for stage in s["stages"]:
        assert STAGE_KEYS <= set(stage)
    for comp in s["breakdown"].values():
        assert comp["kind"] in ("measured", "estimated")
    assert isinstance(s["verdict"], str) and s["verdict"].endswith(".")
    text = json.dumps(s, allow_nan=False)
    assert json.loads(text) == s


def test_failed_then_retried_counts_once_failed_once_success():
    a = analyze(retried_run())
    st = {r["stage_id"]: r for r in a.summary()["stages"]}
    assert st[0]["failed_tasks"] == 1 and st[0]["succeeded_tasks"] == 1 + 1
    assert st[0]["task_attempts"] == 3 and st[0]["num_tasks"] == 2


def test_stage_sums_cover_every_attempt():
    s = analyze(retried_run()).summary()["stages"][0]
    assert s["executor_run_time_ms"] == 100 + 40 + 60
    assert s["jvm_gc_time_ms"] == 10 and s["shuffle_fetch_wait_ms"] == 5
    assert s["shuffle_write_time_ms"] == 3 and s["shuffle_write_bytes"] == 50


def test_stages_seen_only_in_tasks_are_kept():
    run = retried_run()
    run.stages = run.stages[run.stages["stage_id"] == 0].reset_index(drop=True)
    ids = [r["stage_id"] for r in analyze(run).summary()["stages"]]
    assert ids == [0, 1]


def test_jobs_and_top_level_numbers():
    run = retried_run()
    run.app_id, run.spark_version = "local-1", "3.5.1"
    s = analyze(run).summary()
    assert s["app_id"] == "local-1" and s["spark_version"] == "3.5.1"
    assert s["wall_ms"] == 210.0 and s["slots"] == 2
    assert s["jobs"][0]["job_id"] == 7 and s["jobs"][0]["duration_ms"] == 165
    assert s["jobs"][0]["stage_ids"] == [0, 1]
    w = s["whatif"]
    assert w["actual_ms"] + w["driver_gap_ms"] == pytest.approx(s["wall_ms"])
    assert w["model_error"] == pytest.approx(abs(w["simulated_baseline_ms"] - w["actual_ms"])
                                             / w["actual_ms"])


def test_whatif_signature_from_the_design_contract():
    a = analyze(retried_run())
    v = a.whatif(disk=float("inf"), network=1.0, slots_factor=1.0, gc=True, stragglers=True)
    assert isinstance(v, float) and v <= a.wall_ms
    assert isinstance(a, Analysis) and isinstance(a.stragglers, pd.DataFrame)


def test_empty_run_summary():
    s = analyze(Run(start_ms=0.0, end_ms=20.0)).summary()
    assert s["stages"] == [] and s["whatif"]["model_error"] == 0.0
    assert s["whatif"]["infinite_disk_ms"] == 20.0
    json.dumps(s, allow_nan=False)


def test_rest_run_with_real_spark_shaped_fields():
    # Through the REST field map: ns CPU and write time become ms.
    from jupyter_perf.collect.rest_fields import conform_rest
    raw = [{"taskId": i, "index": i, "attempt": 0, "executorId": "driver", "host": "h",
            "status": "SUCCESS", "launchTime": f"2026-01-01T00:00:0{i}.000GMT",
            "duration": 1000, "schedulerDelay": 1,
            "taskMetrics": {"executorRunTime": 990, "executorCpuTime": 900_000_000,
                            "jvmGcTime": 50,
                            "shuffleWriteMetrics": {"writeTime": 20_000_000,
                                                    "bytesWritten": 10}}}
           for i in range(3)]
    tasks = conform_rest("tasks", raw, stage_id=0, stage_attempt=0)
    run = Run(kind="rest", tasks=tasks,
              executors=[{"executor_id": "driver", "total_cores": 1}],
              jobs=[{"job_id": 0, "submission_ms": tasks["launch_ms"].min(),
                     "completion_ms": tasks["finish_ms"].max()}])
    s = analyze(run).summary()
    assert s["wall_ms"] == 3000.0
    assert s["stages"][0]["executor_cpu_time_ms"] == pytest.approx(2700.0)
    assert s["stages"][0]["shuffle_write_time_ms"] == pytest.approx(60.0)
    assert s["breakdown"]["cpu"]["share"] > 0.85
    assert s["whatif"]["model_error"] == 0.0
