"""Operators ↔ stages ↔ task time on synthetic plans that follow the model's contract."""
import pytest
from analysis_synth import make_run, task
from plan_synth import attach, node

from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.operators import COLUMNS, cell_line

MiB = 1 << 20


def join_tasks(hot=400):
    """Stage 0: facts map (4 tasks), 1: dims map (2), 2: the join (4, one hot), 3: final agg."""
    t = [task(0, 100, stage=0, cpu_ms=80, shuffle_write_time_ms=10, shuffle_write_bytes=1000)
         for _ in range(4)]
    t += [task(0, 20, stage=1, cpu_ms=15, shuffle_write_time_ms=2, shuffle_write_bytes=10)
          for _ in range(2)]
    t += [task(110, d, stage=2, cpu_ms=0.7 * d, fetch_wait_ms=5, shuffle_write_time_ms=3,
               shuffle_read_bytes=b, shuffle_write_bytes=5)
          for d, b in ((100, 1000), (100, 1000), (100, 1000), (hot, 4000))]
    t += [task(600, 20, stage=3, cpu_ms=18, shuffle_read_bytes=20)]
    return t


def join_plan(smj_rows=300_000):
    return [
        node(0, "WholeStageCodegen (6)", stages=[3]),
        node(1, "HashAggregate", stages=[3], codegen=6, cluster=0,
             metrics={"number of output rows": 251}),
        node(2, "Exchange", parents=[1], stages=[2, 3],
             metrics={"shuffle bytes written": 20, "local bytes read": 20,
                      "number of partitions": 8, "data size": 40}),
        node(3, "WholeStageCodegen (5)", stages=[2]),
        node(4, "HashAggregate", parents=[2], stages=[2], codegen=5, cluster=3,
             metrics={"time in aggregation build": 300, "number of output rows": 251}),
        node(5, "Project", parents=[4], stages=[2], codegen=5, cluster=3),
        node(6, "SortMergeJoin", parents=[5], stages=[2], codegen=5, cluster=3,
             description="Inner, [k], [k]", metrics={"number of output rows": smj_rows}),
        node(7, "WholeStageCodegen (2)", stages=[2]),
        node(8, "Sort", parents=[6], stages=[2], codegen=2, cluster=7,
             metrics={"sort time": 50, "peak memory": 64 * MiB, "spill size": 0}),
        node(9, "Exchange", parents=[8], stages=[0, 2],
             metrics={"shuffle bytes written": 4000, "local bytes read": 7000,
                      "number of partitions": 8, "data size": 80 * MiB}),
        node(11, "Range", parents=[9], stages=[0], codegen=1,
             metrics={"number of output rows": 300_000}),
        node(15, "Sort", parents=[6], stages=[2], codegen=4,
             metrics={"sort time": 5, "spill size": 0}),
        node(16, "Exchange", parents=[15], stages=[1, 2],
             metrics={"shuffle bytes written": 20, "local bytes read": 1000,
                      "number of partitions": 8, "data size": 21 * MiB}),
        node(19, "Range", parents=[16], stages=[1], codegen=3,
             metrics={"number of output rows": 500}),
    ]


def join_run(**kw):
    return attach(make_run(join_tasks(), slots=4), join_plan(**kw))


def row(a, node_id, execution_id=0):
    ops = a.operators
    return ops[(ops["node_id"] == node_id) & (ops["execution_id"] == execution_id)].iloc[0]


def test_a_slow_task_on_uniform_data_does_not_make_its_operator_skewed():
    """Issue W: the skew flag follows bytes per task, not durations: the same 4× slower join
    task reading as much as the others is no data skew (its ratio of durations still shows)."""
    tasks = [t if t.get("stage_id") != 2 else {**t, "shuffle_read_bytes": 1000}
             for t in join_tasks()]
    a = analyze(attach(make_run(tasks, slots=4), join_plan()))
    assert a.skewed_stages == {}
    assert not a.operators["skew"].any()
    top = a.operators.iloc[0]
    assert top["name"] == "SortMergeJoin" and top["skew_ratio"] == 4.0
    assert not a.top_operator["skew"] and ", skewed" not in a.summary()["verdict"]


def test_the_join_is_the_top_operator_and_carries_the_skew_flag():
    a = analyze(join_run())
    ops = a.operators
    assert list(ops.columns) == COLUMNS
    top = ops.iloc[0]
    assert top["name"] == "SortMergeJoin" and bool(top["skew"]) and top["skew_ratio"] == 4.0
    assert top["kind"] == "estimated" and top["stage_ids"] == [2]
    assert a.top_operator["name"] == "SortMergeJoin"
    s = a.summary()
    assert s["top_operator"]["node_id"] == 6
    assert "top operator: SortMergeJoin (" in s["verdict"] and ", skewed" in s["verdict"]
    assert [r["node_id"] for r in s["operators"]] == ops["node_id"].tolist()
    # wrappers are not operators
    assert not ops["name"].str.startswith("WholeStageCodegen").any()


def test_every_ms_of_task_time_lands_on_one_operator():
    a = analyze(join_run())
    total = float(a.task_breakdown.to_numpy().sum())
    assert a.operators["task_time_ms"].sum() == pytest.approx(total)
    assert a._operators.unattributed_ms == 0.0
    assert a.operators["share"].sum() == pytest.approx(1.0)
    assert a.operators_note == ""


def test_measured_components_go_to_the_operators_that_do_that_work():
    a = analyze(join_run())
    facts_exchange = row(a, 9)
    # map side: all of stage 0's shuffle write (4 x 10 ms); read side: stage 2's fetch wait
    # (4 x 5 ms) split by bytes read, 7000 : 1000 with the dims exchange
    assert facts_exchange["breakdown"]["shuffle_write"] == pytest.approx(40.0)
    assert facts_exchange["breakdown"]["shuffle_fetch_wait"] == pytest.approx(20.0 * 7 / 8)
    assert row(a, 16)["breakdown"]["shuffle_fetch_wait"] == pytest.approx(20.0 * 1 / 8)
    assert facts_exchange["stage_ids"] == [0, 2]
    # Spark's sort time is the Sort's, measured
    sort = row(a, 8)
    assert sort["task_time_ms"] == pytest.approx(50.0) and sort["kind"] == "measured"
    # a map stage's compute goes to its scan
    assert row(a, 11)["task_time_ms"] == pytest.approx(4 * 100 - 40)
    assert row(a, 11)["kind"] == "estimated"


def test_two_executions_and_an_unmapped_stage():
    run = join_run()
    run.tasks = run.tasks.copy()
    extra = make_run([task(700, 50, stage=7, cpu_ms=50), task(700, 50, stage=9, cpu_ms=50)])
    import pandas as pd
    tasks = pd.concat([run.tasks, extra.tasks.assign(task_id=extra.tasks["task_id"] + 100)],
                      ignore_index=True)
    run.tasks = tasks
    attach(run, [node(1, "Scan parquet", stages=[7], description="[file:/data/t]",
                      metrics={"number of output rows": 10, "size of files read": 4096})],
           execution_id=1)
    a = analyze(run)
    assert set(a.operators["execution_id"]) == {0, 1}
    scan = row(a, 1, execution_id=1)
    assert scan["task_time_ms"] == pytest.approx(50.0) and scan["input_bytes"] == 4096
    assert scan["source"] == "parquet: [file:/data/t]"
    assert a._operators.unattributed_ms == pytest.approx(50.0)      # stage 9: no operator
    assert "ran in stages no SQL operator lists" in a.operators_note


def test_rdd_only_run_has_no_operators_and_says_so():
    a = analyze(make_run([task(0, 100, cpu_ms=90)], slots=1))
    assert a.operators.empty and list(a.operators.columns) == COLUMNS
    s = a.summary()
    assert s["operators"] == [] and s["top_operator"] is None
    assert s["operators_note"].startswith("No SQL ran in this window: RDD work has no query plan")
    assert "top operator" not in s["verdict"]


def test_broadcast_exchange_is_driver_time_not_task_time():
    tasks = [task(0, 100, stage=0, cpu_ms=90) for _ in range(2)] + [task(0, 10, stage=4, cpu_ms=9)]
    plan = [node(1, "BroadcastHashJoin", stages=[0], codegen=1,
                 metrics={"number of output rows": 1000}),
            node(2, "BroadcastExchange", parents=[1], stages=[4],
                 metrics={"time to collect": 120, "time to build": 30, "time to broadcast": 50,
                          "data size": 2 * MiB}),
            node(3, "Range", parents=[2], stages=[4], codegen=2,
                 metrics={"number of output rows": 500}),
            node(4, "Range", parents=[1], stages=[0], codegen=1,
                 metrics={"number of output rows": 300_000})]
    a = analyze(attach(make_run(tasks, slots=2), plan))
    bx = row(a, 2)
    assert bx["task_time_ms"] == 0.0 and bx["driver_ms"] == 200.0
    assert row(a, 1)["task_time_ms"] == pytest.approx(200.0)      # the join's stage
    assert row(a, 3)["task_time_ms"] == pytest.approx(10.0)       # the broadcast's input


def python_run(metrics):
    tasks = [task(0, 1000, stage=0, cpu_ms=100) for _ in range(2)]
    plan = [node(1, "HashAggregate", stages=[0], codegen=2, metrics={"number of output rows": 2}),
            node(2, "BatchEvalPython", parents=[1], stages=[0], metrics=metrics),
            node(3, "Range", parents=[2], stages=[0], codegen=1,
                 metrics={"number of output rows": 200})]
    return attach(make_run(tasks, slots=2), plan)


def test_python_time_spark_measured_is_the_python_udf_component():
    # Spark 4.2+: "time to execute Python code" on the Python evaluation node
    a = analyze(python_run({"time to execute Python code": 1500,
                            "data sent to Python workers": 300, "number of output rows": 200}))
    bd = a.summary()["breakdown"]
    assert bd["python_udf"]["ms"] == pytest.approx(1500.0) and bd["python_udf"]["kind"] == "measured"
    assert bd["other_wait_est"]["ms"] == pytest.approx(2 * 900 - 1500)
    py = row(a, 2)
    assert py["python_udf_ms"] == 1500 and py["kind"] == "measured"
    # the rest of the wait (starting the workers, moving rows) is the Python node's too
    assert py["task_time_ms"] == pytest.approx(2 * 900)
    assert row(a, 1)["task_time_ms"] == pytest.approx(2 * 100)      # the JVM's CPU
    assert a.top_operator["name"] == "BatchEvalPython"
    assert any(h["setting"] == "spark.sql.execution.pythonUDF.arrow.enabled" for h in a.hints)


def test_spark_3_5_reports_no_python_time_and_the_wait_is_estimated():
    a = analyze(python_run({"data sent to Python workers": 300,
                            "data returned from Python workers": 200,
                            "number of output rows": 200}))
    assert a.summary()["breakdown"]["python_udf"]["ms"] == 0.0
    py = row(a, 2)
    assert py["python_udf_ms"] is None or py["python_udf_ms"] != py["python_udf_ms"]
    # the JVM thread waited on the worker: Spark's unexplained time is put on the node
    assert py["task_time_ms"] == pytest.approx(2 * 900) and py["kind"] == "estimated"
    assert row(a, 1)["task_time_ms"] == pytest.approx(2 * 100)      # the JVM's CPU


def test_aqe_notes_in_the_verdict():
    tasks = [task(0, 100, stage=0, cpu_ms=90, shuffle_write_bytes=10) for _ in range(2)]
    tasks += [task(120, 30, stage=1, cpu_ms=25, shuffle_read_bytes=20)]
    plan = [node(1, "HashAggregate", stages=[1], codegen=2),
            node(2, "AQEShuffleRead", parents=[1], stages=[1], description="coalesced",
                 metrics={"number of partitions": 1, "number of coalesced partitions": 1}),
            node(3, "Exchange", parents=[2], stages=[0, 1],
                 metrics={"number of partitions": 200, "shuffle bytes written": 20}),
            node(4, "HashAggregate", parents=[3], stages=[0], codegen=1)]
    s = analyze(attach(make_run(tasks, slots=2), plan)).summary()
    assert "AQE coalesced 200 shuffle partitions into 1" in s["verdict"]
    plan[1]["metrics"] = {"number of partitions": 12, "number of skewed partitions": 1,
                          "number of skewed partition splits": 6}
    s = analyze(attach(make_run(tasks, slots=2), plan)).summary()
    assert "AQE split 1 skewed shuffle partition into 6 tasks" in s["verdict"]


def test_hints_carry_values_from_the_measured_data():
    a = analyze(join_run())
    by = {h["setting"]: h for h in a.hints if h["setting"]}
    # the dims side measured 21 MiB: a threshold 25% above it broadcasts it
    b = by["spark.sql.autoBroadcastJoinThreshold"]
    assert b["value"] == "27m" and b["operator"] == "SortMergeJoin (#6)"
    assert "21.0 MiB" in b["text"] and b["predicted_ms"] is None
    assert "Suggestion, not simulated." in b["text"]
    # the hot task read 4000 B, 4.0x the median: AQE (on by default) splits it only with a
    # factor below 4, a threshold below 4000 B and an advisory size below it
    [skew] = [h for h in a.hints if h["operator"] == "SortMergeJoin (#6)" and h["settings"]
              and "skewJoin" in h["setting"]]
    assert "4.0× its stage's median" in skew["text"]
    assert dict(skew["settings"]) == {
        "spark.sql.adaptive.skewJoin.skewedPartitionFactor": "3",
        "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "2000b",
        "spark.sql.adaptive.advisoryPartitionSizeInBytes": "1000b"}
    assert "spark.sql.adaptive.enabled=true" not in skew["text"]      # already on
    for h in a.hints:
        assert set(h) == {"operator", "text", "setting", "value", "predicted_ms", "cause",
                          "settings"}
    assert a.summary()["hints"] == a.hints


def test_shuffle_partitions_from_bytes_shuffled():
    tasks = [task(0, 100, stage=0, cpu_ms=90, shuffle_write_bytes=10) for _ in range(2)]
    tasks += [task(120, 30, stage=1, cpu_ms=25, shuffle_read_bytes=20) for _ in range(200)]
    plan = [node(1, "HashAggregate", stages=[1], codegen=2),
            node(3, "Exchange", parents=[1], stages=[0, 1],
                 metrics={"number of partitions": 200, "shuffle bytes written": 300 * MiB}),
            node(4, "HashAggregate", parents=[3], stages=[0], codegen=1)]
    a = analyze(attach(make_run(tasks, slots=2), plan))
    [h] = [h for h in a.hints if h["setting"] == "spark.sql.shuffle.partitions"]
    assert h["value"] == "3" and h["operator"] == "Exchange (#3)"     # 300 MiB / 128 MiB


def test_memory_hint_when_an_operator_spilled():
    tasks = [task(0, 100, stage=0, cpu_ms=90, memory_spilled_bytes=512 * MiB,
                  peak_execution_memory_bytes=256 * MiB) for _ in range(2)]
    plan = [node(1, "Sort", stages=[0], codegen=1,
                 metrics={"sort time": 20, "spill size": 1024 * MiB, "peak memory": 512 * MiB})]
    run = attach(make_run(tasks, slots=2, executors=[
        {"executor_id": "driver", "host": "h", "total_cores": 2, "max_memory_bytes": 400 * MiB}]),
        plan)
    [h] = [h for h in analyze(run).hints if h["setting"] == "spark.driver.memory"]
    # (256 + 512) MiB per task x 2 cores / 0.6 + 300 MiB -> 2.8 GiB -> 3g
    assert h["value"] == "3g" and "spilled 1.0 GiB" in h["text"]


def test_cause_hints_carry_their_what_if():
    run = make_run([task(0, 100, cpu_ms=10, gc_ms=80)], slots=1)
    a = analyze(run)
    [gc] = [h for h in a.hints if h["cause"] == "gc"]
    assert gc["predicted_ms"] == pytest.approx(a.whatif(gc=False)) and gc["operator"] is None


def test_the_cell_line_the_call_site_points_to():
    run = join_run()
    run.kind = "cell"
    run.source = "df = spark.table('t')\nrows = df.join(dims, 'k').collect()\n"
    run.sql.loc[0, "description"] = "collect at /tmp/ipykernel_7/11.py:3"
    assert cell_line(run, 0) == {"line": 3, "text": "rows = df.join(dims, 'k').collect()"}
    s = analyze(run).summary()
    assert "cell line 3: rows = df.join(dims, 'k').collect()" in s["verdict"]
    assert s["top_operator"]["line"]["line"] == 3
    # a call site in another file, or a line that does not call the action, is not claimed
    run.sql.loc[0, "description"] = "collect at /home/u/lib.py:3"
    assert cell_line(run, 0) is None
    run.sql.loc[0, "description"] = "count at /tmp/ipykernel_7/11.py:3"
    assert cell_line(run, 0) is None


def test_summary_with_operators_is_json():
    import json
    s = analyze(join_run()).summary()
    assert json.loads(json.dumps(s, allow_nan=False)) == s
    assert s["top_operator"]["breakdown"]["cpu"] > 0


def test_stages_are_named_by_their_operators_from_input_to_output():
    a = analyze(join_run())
    names = a.stage_operators
    assert names[0] == "Range → Exchange"
    assert names[2] == "Exchange → Exchange → Sort → Sort → SortMergeJoin → …"
    assert names[3] == "Exchange → HashAggregate"
    s = a.summary()
    assert {r["stage_id"]: r["operators"] for r in s["stages"]}[1] == "Range → Exchange"
    assert analyze(make_run([task(0, 10)])).summary()["stages"][0]["operators"] == ""


def test_a_thread_waiting_on_an_untimed_python_worker_is_not_waiting_for_a_core():
    # Spark 3.5 on a saturated host: the stage's unexplained time stays the Python node's
    import numpy as np
    import pandas as pd
    run = python_run({"number of output rows": 200})
    t = np.arange(-100.0, 1200.0, 50.0)
    run.host_cpu = pd.DataFrame({"time_ms": 1_700_000_000_000.0 + t,
                                 "busy_core_ms": (t - t[0]) * 2.0, "cores": 2})
    a = analyze(run)
    assert a.core_wait_share.min() == 1.0                # every core busy all the time
    assert a.summary()["breakdown"]["core_wait_est"]["ms"] == 0.0
    assert row(a, 2)["task_time_ms"] == pytest.approx(2 * 900)


def test_aqe_notes_of_the_same_kind_are_said_once_with_their_count():
    # a skew join splits the hot partition on both of its shuffle reads: one clause, counted
    tasks = [task(0, 100, stage=0, cpu_ms=90, shuffle_write_bytes=10) for _ in range(2)]
    tasks += [task(120, 30, stage=1, cpu_ms=25, shuffle_read_bytes=20)]
    split = {"number of partitions": 12, "number of skewed partitions": 1,
             "number of skewed partition splits": 6}
    plan = [node(1, "SortMergeJoin", stages=[1], codegen=2),
            node(2, "AQEShuffleRead", parents=[1], stages=[1], metrics=dict(split)),
            node(3, "Exchange", parents=[2], stages=[0, 1], metrics={"number of partitions": 8}),
            node(4, "AQEShuffleRead", parents=[1], stages=[1], metrics=dict(split)),
            node(5, "Exchange", parents=[4], stages=[0, 1], metrics={"number of partitions": 8})]
    a = analyze(attach(make_run(tasks, slots=2), plan))
    clause = "AQE split 1 skewed shuffle partition into 6 tasks"
    assert f"{clause} (2 shuffles)" in a._operators.notes
    assert a.summary()["verdict"].count(clause) == 1
