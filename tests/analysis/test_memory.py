"""analysis/memory.py on hand-built Runs (no Spark): per-stage peaks and the operator that
held memory, this window's peaks and how they were obtained, limits approached, GC pressure,
and the sizing answer with its values and evidence."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from analysis_synth import T0, make_run, task

from jupyter_perf.analysis import analyze
from jupyter_perf.analysis import memory as m
from jupyter_perf.model import Run, conform

MiB, GiB = 1 << 20, 1 << 30


def cluster_run(tasks, *, heap=4 * GiB, conf=None, stage_memory=(), memory=(), executors=None,
                version="3.5.1"):
    """A local-cluster run: executors "1" and "2" (one core each) and the driver."""
    executors = executors or [
        {"executor_id": "driver", "host": "h", "total_cores": 0, "max_memory_bytes": 400 * MiB,
         "jvm_heap_limit_bytes": GiB, "peak_jvm_heap_bytes": 300 * MiB},
        {"executor_id": "1", "host": "h", "total_cores": 1, "max_memory_bytes": 2 * GiB,
         "jvm_heap_limit_bytes": heap, "peak_jvm_heap_bytes": 3 * GiB},
        {"executor_id": "2", "host": "h", "total_cores": 1, "max_memory_bytes": 2 * GiB,
         "jvm_heap_limit_bytes": heap, "peak_jvm_heap_bytes": 3 * GiB}]
    run = make_run(tasks, executors=executors)
    run.master = "local-cluster[2,1,4096]"
    run.spark_version = version
    run.extra["spark_conf"] = dict(conf or {})
    run.stage_memory = list(stage_memory)
    run.memory = list(memory)
    return run


def peaks(stage, executor, heap, **more):
    return {"stage_id": stage, "attempt": 0, "executor_id": executor,
            "peak_jvm_heap_bytes": heap, "peak_process_rss_bytes": heap + 200 * MiB, **more}


def operators(*rows):
    cols = {"execution_id": 0, "description": "", "task_time_ms": 1.0, "peak_memory_bytes": 0.0}
    return pd.DataFrame([{**cols, "label": f"{name} (#{nid})", "name": name, "node_id": nid,
                          "stage_ids": stages, **more} for name, nid, stages, more in rows])


# -- per stage and operator -----------------------------------------------------------------
def test_stage_rows_name_the_operator_holding_memory_and_their_tasks():
    run = cluster_run([task(0, 100, stage=0, executor_id="1", memory_spilled_bytes=5 * MiB,
                            peak_execution_memory_bytes=30 * MiB, gc_ms=10),
                       task(0, 100, stage=0, executor_id="2"),
                       task(200, 50, stage=1, executor_id="1")],
                      stage_memory=[peaks(0, "1", GiB), peaks(0, "2", 2 * GiB),
                                    peaks(1, "1", 500 * MiB)])
    ops = operators(("Project", 1, [0], {}),
                    ("HashAggregate", 2, [0], {"peak_memory_bytes": 10.0 * MiB}),
                    ("Sort", 3, [0], {"peak_memory_bytes": 40.0 * MiB}),
                    ("InMemoryTableScan", 4, [1], {}))
    st = m.stage_table(run, ops).set_index(["stage_id", "executor_id"])
    # the sort held the most memory in stage 0 (Spark's peak memory metric)
    assert st.loc[(0, "1"), "operator"] == "Sort (#3)"
    assert st.loc[(0, "1"), "operator_kind"] == "sort"
    assert st.loc[(1, "1"), "operator_kind"] == "cache"
    assert st.loc[(0, "1"), "memory_spilled_bytes"] == 5 * MiB
    assert st.loc[(0, "1"), "peak_task_execution_bytes"] == 30 * MiB
    assert st.loc[(0, "2"), "memory_spilled_bytes"] == 0
    assert st.loc[(0, "2"), "heap_share"] == pytest.approx(0.5)
    assert st.loc[(0, "1"), "gc_ms"] == 10


@pytest.mark.parametrize("name,kind", [
    ("ArrowEvalPython", "Python eval"), ("FlatMapGroupsInPandas", "Python eval"),
    ("ObjectHashAggregate", "aggregate"), ("SortAggregate", "aggregate"),
    ("ShuffledHashJoin", "join build"), ("BroadcastHashJoin", "join build"),
    ("SortMergeJoin", "sort"), ("Sort", "sort"), ("InMemoryTableScan", "cache"),
    ("Project", ""), ("Exchange", ""), ("SortX", "")])
def test_operator_kinds(name, kind):
    assert m.operator_kind(name) == kind


def test_a_run_without_per_stage_peaks_has_an_empty_stage_table():
    run = cluster_run([task(0, 100, executor_id="1")])
    st = m.stage_table(run)
    assert st.empty and list(st.columns)[:3] == ["stage_id", "attempt", "executor_id"]
    summary = analyze(run).summary()["memory"]
    assert summary["stages"] == [] and summary["per_stage"] is False
    json.dumps(summary)


# -- this window, not the JVM's past -------------------------------------------------------
def sample(t, executor, heap, **more):
    return {"time_ms": T0 + t, "executor_id": executor, "peak_jvm_heap_bytes": heap, **more}


def test_window_peaks_come_from_stage_peaks_then_samples_then_since_start():
    run = cluster_run(
        [task(0, 100, stage=0, executor_id="1"), task(0, 100, stage=0, executor_id="2")],
        stage_memory=[peaks(0, "1", 700 * MiB)],          # executor 2's stage peaks are absent
        memory=[sample(0, "2", GiB), sample(500, "2", GiB),           # flat: set earlier
                sample(0, "driver", 100 * MiB), sample(500, "driver", 250 * MiB)])  # rose
    ex = m.executor_table(run, m.stage_table(run)).set_index("executor_id")
    # executor 1: its stage peak, not the 3 GiB running peak an earlier cell set
    assert ex.loc["1", "basis"] == "stage peaks"
    assert ex.loc["1", "window_heap_bytes"] == 700 * MiB
    assert ex.loc["1", "peak_jvm_heap_bytes"] == 3 * GiB
    assert ex.loc["1", "peak_stage_id"] == 0
    # executor 2: the running peak did not rise in the window: at most that
    assert ex.loc["2", "basis"] == "at most" and ex.loc["2", "window_heap_bytes"] == GiB
    assert ex.loc["2", "heap_rise_bytes"] == 0
    # the driver's running peak rose during the window: set in it
    assert ex.loc["driver", "basis"] == "sampled rise"
    assert ex.loc["driver", "window_heap_bytes"] == 250 * MiB
    assert ex.loc["driver", "heap_rise_bytes"] == 150 * MiB
    assert ex.loc["driver", "peak_stage_id"] == -1
    for basis in ex["basis"]:
        assert basis in m.LABELS


def test_no_samples_no_stage_peaks_is_since_start():
    run = cluster_run([task(0, 100, executor_id="1")])
    ex = m.executor_table(run, m.stage_table(run)).set_index("executor_id")
    assert (ex["basis"] == "since start").all()
    assert ex.loc["1", "window_heap_bytes"] == 3 * GiB


def test_limits_approached_and_gc_pressure_are_flagged():
    run = cluster_run(
        [task(0, 1000, stage=0, executor_id="1", gc_ms=200),
         task(0, 1000, stage=0, executor_id="2", gc_ms=50)],
        stage_memory=[peaks(0, "1", int(0.95 * 4 * GiB)),
                      peaks(0, "2", GiB, peak_on_heap_execution_bytes=int(1.9 * GiB))])
    ex = m.executor_table(run, m.stage_table(run)).set_index("executor_id")
    assert ex.loc["1", "near_limit"] and ex.loc["1", "heap_share"] == pytest.approx(0.95)
    assert ex.loc["2", "near_limit"] and ex.loc["2", "unified_share"] == pytest.approx(0.95)
    assert not ex.loc["driver", "near_limit"]
    assert ex.loc["1", "gc_pressure"] and not ex.loc["2", "gc_pressure"]
    flags = m.summary(run, ex.reset_index(), m.stage_table(run), [])["flags"]
    assert any("executor 1" in f and "95%" in f for f in flags)
    assert any("executor 1" in f and "GC" in f for f in flags)


# -- sizing ---------------------------------------------------------------------------------
def sized(run):
    a = analyze(run)
    return a.memory_sizing, a.summary()["memory"]


def test_oversized_executors_get_a_smaller_heap_with_headroom():
    # the example: peak heap 1.1 GiB of 4 GiB and no spill -> 2g keeps 40 % headroom
    run = cluster_run([task(0, 100, executor_id="1"), task(0, 100, executor_id="2")],
                      conf={"spark.executor.memory": "4g"},
                      stage_memory=[peaks(0, "1", int(1.1 * GiB)), peaks(0, "2", GiB)])
    out, summary = sized(run)
    [h] = out
    assert (h["setting"], h["value"], h["kind"]) == ("spark.executor.memory", "2g", "measured")
    assert "1.1 GiB of 4.0 GiB" in h["text"] and "executor 1" in h["evidence"]
    assert summary["sizing_line"] == h["text"]


def test_a_smaller_heap_is_never_below_what_spark_accepts():
    run = cluster_run([task(0, 100, executor_id="1")], heap=GiB,
                      stage_memory=[peaks(0, "1", 80 * MiB)])
    [h] = sized(run)[0]
    assert (h["setting"], h["value"]) == ("spark.executor.memory", "512m")   # not 128m


def test_heap_near_its_limit_is_raised_under_gc_pressure():
    run = cluster_run([task(0, 100, executor_id="1", gc_ms=30)], heap=GiB,
                      stage_memory=[peaks(0, "1", int(0.97 * GiB))])
    [h] = sized(run)[0]
    assert (h["setting"], h["value"]) == ("spark.executor.memory", "2g")
    assert "within 3%" in h["text"] and "GC took 30% of its task time" in h["text"]
    # heap used counts garbage not yet collected: near the limit with little GC is no need
    # (and no room to lower it either)
    run.tasks = run.tasks.assign(gc_ms=2.0)
    assert sized(run)[0] == []


def test_a_spill_is_sized_estimated_by_stage_and_operator():
    # a task needing 300 MiB (peak 100 + spilled 200), 1 core per executor, default
    # fraction 0.6: 300 MiB / 0.6 + 300 MiB = 800 MiB -> 896m (128 MiB steps) > 512m now
    big = dict(peak_execution_memory_bytes=100 * MiB, memory_spilled_bytes=200 * MiB,
               disk_spilled_bytes=50 * MiB)
    run = cluster_run([task(0, 100, stage=3, executor_id="1", **big)], heap=GiB,
                      conf={"spark.executor.memory": "512m"},
                      stage_memory=[peaks(3, "1", 400 * MiB)])
    out = m.spill_sizing(run, m.stage_table(run, operators(
        ("HashAggregate", 7, [3], {"peak_memory_bytes": 100.0 * MiB}))), local=False)
    [h] = out
    assert (h["setting"], h["value"], h["kind"]) == ("spark.executor.memory", "896m",
                                                     "estimated")
    assert h["stage_id"] == 3 and h["operator"] == "HashAggregate (#7)"
    assert "stage 3 (HashAggregate (#7)) spilled 200.0 MiB" in h["text"]
    assert "800.0 MiB" in h["text"]


def test_a_lowered_memory_fraction_is_restored_first():
    big = dict(peak_execution_memory_bytes=100 * MiB, memory_spilled_bytes=50 * MiB)
    run = cluster_run([task(0, 100, stage=0, executor_id="1", **big)],
                      conf={"spark.executor.memory": "1g", "spark.memory.fraction": "0.1"})
    [h] = m.spill_sizing(run, m.stage_table(run), local=False)
    assert (h["setting"], h["value"]) == ("spark.memory.fraction", "0.6")
    # 150 MiB / 0.1 + 300 MiB > 1 GiB, 150 MiB / 0.6 + 300 MiB = 550 MiB fits
    assert "550.0 MiB needed of 1.0 GiB" in h["text"]


def test_a_heap_big_enough_in_total_splits_the_work_finer():
    # 600 MiB per task (peak 300 + spilled 300) / 0.6 + 300 MiB = 1.3 GiB -> 2g, the heap it
    # has; but each task is guaranteed only half its share of the pool: (2 GiB - 300 MiB) x
    # 0.6 / 1 core / 2 = 524 MiB < 600 MiB -> 2 x 600 / 524 -> 3 shuffle partitions
    big = dict(peak_execution_memory_bytes=300 * MiB, memory_spilled_bytes=300 * MiB)
    run = cluster_run([task(0, 100, stage=0, index=0, executor_id="1", **big),
                       task(0, 100, stage=0, index=1, executor_id="2", **big)],
                      conf={"spark.executor.memory": "2g", "spark.sql.shuffle.partitions": "2"})
    a = analyze(run)
    [h] = [h for h in a.hints if h.get("kind") == "estimated"]
    assert (h["setting"], h["value"]) == ("spark.sql.shuffle.partitions", "3")
    assert "524.4 MiB" in h["text"] and "now 2 (set in the session)" in h["text"]
    # the stage's partitions came from the code, not the setting: said, not set
    run.extra["spark_conf"]["spark.sql.shuffle.partitions"] = "200"
    [h] = [h for h in analyze(run).hints if h.get("kind") == "estimated"]
    assert h["setting"] is None and "about 3 partitions instead of 2" in h["text"]


def test_python_workers_above_the_overhead_raise_it():
    # the example: Python workers at 1.3 GiB RSS above a 384 MiB overhead
    run = cluster_run([task(0, 100, executor_id="1")],
                      conf={"spark.executor.memory": "2g"},
                      stage_memory=[peaks(0, "1", GiB,
                                          peak_python_rss_bytes=int(1.3 * GiB))])
    out, _ = sized(run)
    [h] = [x for x in out if x["setting"] == "spark.executor.memoryOverhead"]
    assert h["value"] == "3g" and h["kind"] == "measured"     # 1.3 GiB / 0.6 = 2.2 GiB
    assert "1.3 GiB RSS" in h["text"] and "384.0 MiB memory overhead" in h["text"]


def test_small_python_workers_need_no_overhead_change():
    run = cluster_run([task(0, 100, executor_id="1")],
                      stage_memory=[peaks(0, "1", GiB, peak_python_rss_bytes=50 * MiB)])
    assert m.overhead_sizing(run, m.executor_table(run, m.stage_table(run)), False) == []


def test_the_drivers_heap_is_raised_when_results_filled_it():
    run = cluster_run([task(0, 100, executor_id="1", result_size_bytes=900 * MiB)],
                      memory=[sample(0, "driver", 200 * MiB),
                              sample(900, "driver", int(0.95 * GiB))])
    ex = m.executor_table(run, m.stage_table(run))
    [h] = m.driver_sizing(run, ex, local=False)
    assert (h["setting"], h["value"]) == ("spark.driver.memory", "2g")
    assert "900.0 MiB of results" in h["text"] and "sampled rise" not in h["text"]
    assert "measured" in h["evidence"]


def test_local_master_sizes_the_driver_memory_and_never_lowers_it():
    run = make_run([task(0, 100, executor_id="driver")],
                   executors=[{"executor_id": "driver", "host": "h", "total_cores": 2,
                               "max_memory_bytes": GiB, "jvm_heap_limit_bytes": GiB}])
    run.master, run.spark_version = "local[2]", "3.5.1"
    run.stage_memory = [peaks(0, "driver", 200 * MiB)]
    assert sized(run)[0] == []              # the driver's heap also holds the driver's work
    run.stage_memory = [peaks(0, "driver", 1000 * MiB)]
    run.tasks = run.tasks.assign(gc_ms=20.0)         # under GC pressure (20% of task time)
    [h] = sized(run)[0]
    assert (h["setting"], h["value"]) == ("spark.driver.memory", "2g")


def test_summary_is_json_and_labels_every_basis():
    run = cluster_run([task(0, 100, executor_id="1")],
                      stage_memory=[peaks(0, "1", GiB)])
    summary = analyze(run).summary()["memory"]
    text = json.dumps(summary)
    assert "NaN" not in text
    for rec in summary["executors"]:
        assert rec["basis"] in summary["labels"]
    assert summary["labels"]["estimated"].startswith("estimated")


def test_a_stored_run_without_stage_memory_loads_empty(tmp_path):
    from jupyter_perf.store import rundir

    run = cluster_run([task(0, 100, executor_id="1")], stage_memory=[peaks(0, "1", GiB)])
    folder = tmp_path / "run"
    folder.mkdir()
    rundir.write(str(folder), run, None)
    back = rundir.read_run(str(folder))
    pd.testing.assert_frame_equal(back.stage_memory, run.stage_memory)
    assert "stage_memory" not in json.loads((folder / "run.json").read_text())
    (folder / rundir.STAGE_MEMORY_JSON).unlink()      # a run stored before the table existed
    old = rundir.read_run(str(folder))
    assert old.stage_memory.empty and list(old.stage_memory.columns) == list(
        conform("stage_memory").columns)
    assert isinstance(old, Run) and np.isfinite(analyze(old).wall_ms)


# -- the sizing is the hints' memory advice (one source) ----------------------------------
def test_sizing_answers_are_hints_with_their_kind_and_evidence():
    run = cluster_run([task(0, 100, executor_id="1"), task(0, 100, executor_id="2")],
                      conf={"spark.executor.memory": "4g"},
                      stage_memory=[peaks(0, "1", int(1.1 * GiB)), peaks(0, "2", GiB)])
    a = analyze(run)
    [sized] = a.memory_sizing
    [h] = [h for h in a.hints if h["setting"] == "spark.executor.memory"]
    assert h == sized and h["kind"] == "measured" and h["settings"] == [
        ["spark.executor.memory", "2g"]]
    for key in ("operator", "text", "setting", "value", "predicted_ms", "cause", "settings"):
        assert key in h                              # the shape of every other hint
    assert analyze(run).summary()["hints"][a.hints.index(h)]["kind"] == "measured"


def test_a_spill_and_a_full_heap_make_one_hint_for_the_heap():
    # the spill needs 300 MiB / 0.6 + 300 MiB = 896m; the heap's peak at 97% of 1 GiB under
    # GC pressure needs 1 GiB / 0.6 -> 2g: one hint for spark.executor.memory, the larger
    big = dict(peak_execution_memory_bytes=100 * MiB, memory_spilled_bytes=200 * MiB,
               gc_ms=50)
    run = cluster_run([task(0, 100, stage=0, executor_id="1", **big)], heap=GiB,
                      conf={"spark.executor.memory": "512m"},
                      stage_memory=[peaks(0, "1", int(0.97 * GiB))])
    a = analyze(run)
    proposed = [k for h in a.hints for k, _ in h["settings"]]
    assert proposed.count("spark.executor.memory") == 1
    [h] = [h for h in a.hints if h["setting"] == "spark.executor.memory"]
    assert h["value"] == "2g" and h["kind"] == "measured"
    assert [s["setting"] for s in a.memory_sizing] == ["spark.executor.memory"]


def test_no_hint_proposes_the_value_the_application_had():
    # an event log's run: the application's settings (run.extra["properties"]) are in effect
    big = dict(peak_execution_memory_bytes=100 * MiB, memory_spilled_bytes=200 * MiB)
    run = cluster_run([task(0, 100, stage=0, executor_id="1", **big)], heap=GiB,
                      stage_memory=[peaks(0, "1", 400 * MiB)])
    run.extra["properties"] = {"spark.executor.memory": "896m"}
    a = analyze(run)
    [s] = [s for s in a.memory_sizing if s["kind"] == "estimated"]
    # 896m holds the tasks' 300 MiB: not "896m" again, but finer work, named as it is now
    assert s["setting"] != "spark.executor.memory" and "finer" in s["text"]
    assert "896m (the application's setting)" in s["text"]
    assert all(k != "spark.executor.memory" for h in a.hints for k, _ in h["settings"])


def test_python_overhead_is_no_hint_on_a_local_master():
    run = make_run([task(0, 100, executor_id="driver")],
                   executors=[{"executor_id": "driver", "host": "h", "total_cores": 2,
                               "max_memory_bytes": GiB, "jvm_heap_limit_bytes": GiB}])
    run.master, run.spark_version = "local[2]", "3.5.1"
    run.stage_memory = [peaks(0, "driver", 200 * MiB, peak_python_rss_bytes=GiB)]
    a = analyze(run)
    [s] = [s for s in a.memory_sizing if s["setting"] == "spark.executor.memoryOverhead"]
    assert "a local master has no container limit" in s["text"]
    assert not [h for h in a.hints if h["setting"] == "spark.executor.memoryOverhead"]
    run.master = "local-cluster[1,2,1024]"          # executors in containers of their own
    run.executors = pd.concat([run.executors.assign(total_cores=0), conform("executors", [
        {"executor_id": "1", "host": "h", "total_cores": 2, "jvm_heap_limit_bytes": GiB}])])
    run.stage_memory = [peaks(0, "1", 200 * MiB, peak_python_rss_bytes=GiB)]
    run.tasks = run.tasks.assign(executor_id="1")
    assert [h for h in analyze(run).hints if h["setting"] == "spark.executor.memoryOverhead"]


def test_an_executor_lost_to_memory_never_gets_a_smaller_heap():
    """Its last peaks may be far below the limit it ran out of (the allocation that failed is
    never reported): the oversized-executor answer would shrink the heap that was too small."""
    run = cluster_run([task(0, 100, executor_id="1"), task(0, 100, executor_id="2")],
                      conf={"spark.executor.memory": "4g"},
                      stage_memory=[peaks(0, "1", int(1.1 * GiB)), peaks(0, "2", GiB)])
    assert [h["setting"] for h in sized(run)[0]] == ["spark.executor.memory"]    # lowered
    run.extra["lost_to_memory"] = [{"executor_id": "2", "memory": "heap", "exit_code": 52,
                                    "reason": "Command exited with code 52"}]
    out, summary = sized(run)
    assert out == [] and summary["sizing_line"].startswith(
        "No sizing answer from the peaks: executor 2 was lost to memory")
    [lost] = summary["lost_to_memory"]
    assert (lost["executor_id"], lost["exit_code"], lost["heap_bytes"], lost["heap_limit_bytes"],
            lost["setting"]) == ("2", 52, 3 * GiB, 4 * GiB, None)
    assert json.loads(json.dumps(analyze(run).summary()["memory"]["lost_to_memory"],
                                 allow_nan=False, default=str))


def test_a_heap_above_a_local_cluster_workers_memory_proposes_the_master_string_too():
    """local-cluster[N,C,MiB]: an executor asking more than its worker's MiB never starts."""
    run = cluster_run([task(0, 100, executor_id="1", gc_ms=30)], heap=GiB,
                      stage_memory=[peaks(0, "1", int(0.97 * GiB))])
    run.master = "local-cluster[2,1,1024]"
    [h] = sized(run)[0]
    assert (h["setting"], h["value"]) == ("spark.executor.memory", "2g")
    assert h["settings"] == [["spark.executor.memory", "2g"],
                             ["spark.master", "local-cluster[2,1,2048]"]]
    assert ("On local-cluster[2,1,1024] each executor's worker has 1024 MiB: an executor asking "
            "more never starts, so the master string's MiB must rise with it: "
            "spark.master=local-cluster[2,1,2048]") in h["text"]
    [advice] = [x for x in analyze(run).hints if x["setting"] == "spark.executor.memory"]
    assert advice["settings"] == h["settings"]            # the advice re-run applies both
    # within the worker's memory (or on another master) the answer is the heap alone
    for master in ("local-cluster[2,1,2048]", "spark://h:7077"):
        run.master = master
        [h] = sized(run)[0]
        assert h["settings"] == [["spark.executor.memory", "2g"]] and "worker" not in h["text"]
    assert m.local_cluster(" local-cluster[ 3 , 2 , 512 ] ") == (3, 2, 512)
    assert m.local_cluster("local[2]") is None
