"""analysis/profile.py on hand-written collapsed stacks (issue P): no Spark, no JVM.

The stacks are real async-profiler 4.1 output of ``local[2]`` windows (Spark 3.5.9: a wide
hash aggregate, a global sort written to the noop sink), cut below ``Task.run`` and kept as
the collector stores them (``collect/profiler.profile_record``); the plan is written by hand in
the shape ``collect/sql.py`` gives it (codegen ids, stage attempts).
"""
from __future__ import annotations

import pandas as pd
import pytest

import jupyter_perf as jp
from jupyter_perf.analysis import profile as P
from jupyter_perf.collect.profiler import profile_record
from jupyter_perf.model import Run

T = "[Executor task launch worker for task 0.0 in stage 11.0 (TID 41)]"
TASK = "org/apache/spark/scheduler/Task.run;org/apache/spark/scheduler/ShuffleMapTask.runTask"
RESULT = "org/apache/spark/scheduler/Task.run;org/apache/spark/scheduler/ResultTask.runTask"
WRITE = "org/apache/spark/shuffle/ShuffleWriteProcessor.write;" \
        "org/apache/spark/shuffle/sort/BypassMergeSortShuffleWriter.write"
PIPE = "org/apache/spark/sql/execution/BufferedRowIterator.hasNext;" \
       "org/apache/spark/sql/catalyst/expressions/GeneratedClass$GeneratedIteratorForCodegenStage{n}"
AGG_MAP = (f"{T};{TASK};{WRITE};{PIPE.format(n=1)}.processNext;"
           "org/apache/spark/sql/catalyst/expressions/GeneratedClass$GeneratedIteratorForCodegenStage1"
           ".hashAgg_doAggregateWithKeys_0$;"
           "org/apache/spark/sql/execution/UnsafeFixedWidthAggregationMap."
           "getAggregationBufferFromUnsafeRow;org/apache/spark/unsafe/map/BytesToBytesMap.lookup;"
           "org/apache/spark/unsafe/map/BytesToBytesMap.safeLookup")
LZ4_WRITE = (f"{T};{TASK};{WRITE};org/apache/spark/storage/DiskBlockObjectWriter.write;"
             "org/apache/spark/sql/execution/UnsafeRowSerializerInstance$$anon$1.writeValue;"
             "java/io/BufferedOutputStream.flushBuffer;net/jpountz/lz4/LZ4BlockOutputStream.write")
READ_FINAL = (f"{T};{TASK};{WRITE};{PIPE.format(n=2)}.processNext;"
              "org/apache/spark/sql/catalyst/expressions/GeneratedClass$"
              "GeneratedIteratorForCodegenStage2.hashAgg_doAggregateWithoutKey_0$;"
              "org/apache/spark/util/CompletionIterator.next;"
              "org/apache/spark/sql/execution/UnsafeRowSerializerInstance$$anon$2$$anon$3.readSize;"
              "java/io/DataInputStream.readInt;java/io/BufferedInputStream.read")
REGEX = (f"{T};{TASK};{WRITE};{PIPE.format(n=1)}.processNext;"
         "org/apache/spark/unsafe/types/UTF8String.toString;"
         "java/util/regex/Matcher.find;java/util/regex/Pattern$BmpCharProperty.match")
SORT = (f"{T};{RESULT};{PIPE.format(n=3)}.processNext;"
        "org/apache/spark/sql/execution/UnsafeExternalRowSorter.sort;"
        "org/apache/spark/util/collection/unsafe/sort/UnsafeInMemorySorter.getSortedIterator;"
        "org/apache/spark/util/collection/unsafe/sort/RadixSort.sortKeyPrefixArrayAtByte")
SHUFFLE_SORT = (f"{T};{TASK};org/apache/spark/shuffle/sort/UnsafeShuffleWriter.write;"
                "org/apache/spark/shuffle/sort/ShuffleExternalSorter.writeSortedFile;"
                "org/apache/spark/shuffle/sort/ShuffleInMemorySorter.getSortedIterator;"
                "org/apache/spark/util/collection/unsafe/sort/RadixSort.sortKeyPrefixArray")

COLLAPSED = "\n".join([
    f"{AGG_MAP.replace('(TID 41)]', '(TID 41) tid=5660]')} 40",
    f"{LZ4_WRITE.replace('(TID 41)]', '(TID 41) tid=5660]')} 10",
    f"{READ_FINAL.replace('(TID 41)]', '(TID 41) tid=5661]')} 5",
    f"{REGEX.replace('(TID 41)]', '(TID 41) tid=5661]')} 20",
    f"{SORT.replace('(TID 41)]', '(TID 41) tid=5661]')} 15",
    f"{SHUFFLE_SORT.replace('(TID 41)]', '(TID 41) tid=5661]')} 4",
    "[C2 CompilerThre tid=5111];Compile::Compile;PhaseIdealLoop::build 30",
    "[GC Thread#0 tid=5092];G1ParTask::work 6",
    "[GC Thread#1 tid=5129];G1ParTask::work 4",
    "not a stack line",
]) + "\n"


def op(ex, node, name, desc="", cg=-1, stages=()):
    return {"execution_id": ex, "node_id": node, "parent_ids": [], "name": name,
            "description": desc, "codegen_id": cg, "cluster_id": -1,
            "stage_attempts": [[s, 0] for s in stages]}


def plan_run(profile: dict | None) -> Run:
    run = Run(kind="function")
    run.operators = pd.DataFrame([
        op(1, 0, "WholeStageCodegen (2)", cg=2, stages=[12]),
        op(1, 1, "HashAggregate", "keys=[], functions=[count(1)]", 2, [12]),
        op(1, 2, "Exchange", "hashpartitioning(k, 4)", -1, [11, 12]),
        op(1, 3, "WholeStageCodegen (1)", cg=1, stages=[11]),
        op(1, 4, "HashAggregate", "keys=[k], functions=[partial_sum(id)]", 1, [11]),
        op(1, 5, "Filter", "RLIKE(s, ^a.*(1|2)3+x)", 1, [11]),
        op(1, 6, "Project", "", 1, [11]),
        op(1, 7, "Range", "(0, 4000000, step=1, splits=4)", 1, [11]),
        op(2, 0, "Sort", "[r ASC NULLS FIRST]", 3, [13]),
        op(2, 1, "Exchange", "rangepartitioning(r, 4)", -1, [12, 13]),
        # another execution with a codegen stage 1: less CPU, so not the samples' one
        op(0, 0, "HashAggregate", "keys=[], functions=[max(id)]", 1, [20]),
    ])
    run.tasks = pd.DataFrame({"task_id": [1, 2, 3, 4], "stage_id": [11, 12, 13, 20],
                              "stage_attempt": [0] * 4, "index": [0] * 4,
                              "executor_id": ["driver"] * 4, "launch_ms": [0.0] * 4,
                              "finish_ms": [1000.0] * 4, "duration_ms": [1000.0] * 4,
                              "run_ms": [900.0] * 4, "cpu_ms": [700.0, 50.0, 200.0, 5.0],
                              "deserialize_cpu_ms": [1.0] * 4, "status": ["SUCCESS"] * 4})
    if profile is not None:
        run.extra["profile"] = profile
    return run


@pytest.fixture()
def record():
    return profile_record(COLLAPSED, 10)


def test_record_keeps_task_stacks_and_groups_other_threads(record):
    stacks = dict(record["stacks"])
    assert record["method"] == "async-profiler" and record["interval_ms"] == 10
    assert sum(stacks.values()) == 40 + 10 + 5 + 20 + 15 + 4 + 30 + 6 + 4   # bad line dropped
    assert stacks["[jvm] GC Thread#"] == 10 and stacks["[jvm] C2 CompilerThre"] == 30
    assert AGG_MAP in stacks                       # thread id gone, the name kept


@pytest.mark.parametrize("stack,kind,codegen", [
    (AGG_MAP, "aggregate", 1), (LZ4_WRITE, "shuffle write", None),
    (READ_FINAL, "shuffle read", 2), (REGEX, "regex", 1), (SORT, "sort", 3),
    (SHUFFLE_SORT, "shuffle write", None),
])
def test_classify(stack, kind, codegen):
    assert P.classify(stack.split(";")) == (kind, codegen)


def test_generated_method_prefix_names_the_operator():
    frames = [T, PIPE.format(n=4) + ".processNext",
              "org/apache/spark/sql/catalyst/expressions/GeneratedClass$"
              "GeneratedIteratorForCodegenStage4.smj_findNextJoinRows_0$"]
    assert P.classify(frames) == ("join", 4)
    assert P.classify([T, PIPE.format(n=4) + ".processNext"]) == ("codegen", 4)
    assert P.classify([T, "java/lang/Thread.run"]) == ("other", None)


def test_samples_map_to_operators_and_stages(record):
    a = jp.analyze(plan_run(record))
    prof = a.summary()["profile"]
    assert prof["samples"] == 94 and prof["other_jvm_samples"] == 40
    assert prof["sampled_cpu_ms"] == 940.0
    assert prof["spark_cpu_ms"] == pytest.approx(959.0)
    by_label = {o["label"]: o for o in prof["operators"]}
    partial = [o for o in prof["operators"] if o["node_id"] == 4 and o["execution_id"] == 1]
    assert partial[0]["samples"] == 40 and partial[0]["stage_ids"] == [11]
    assert partial[0]["kind"] == "sampled"
    regex = [o for o in prof["operators"] if o["name"] == "Filter"]
    assert regex[0]["samples"] == 20 and regex[0]["kinds"] == {"regex": 20}
    sort = [o for o in prof["operators"] if o["name"] == "Sort"]
    assert sort[0]["samples"] == 15 and sort[0]["stage_ids"] == [13]
    exchanges = [o for o in prof["operators"] if o["name"] == "Exchange"]
    assert sum(o["samples"] for o in exchanges) == 10 + 5 + 4
    assert sum(o["samples"] for o in prof["operators"]) == prof["samples"]
    assert len(by_label) == len(prof["operators"])


def test_hot_functions(record):
    hot = jp.analyze(plan_run(record)).hot_functions
    assert list(hot.columns[:5]) == ["function", "self_samples", "total_samples", "share",
                                     "operator"]
    top = hot.iloc[0]
    assert top["function"] == "org.apache.spark.unsafe.map.BytesToBytesMap.safeLookup"
    assert top["self_samples"] == 40 and top["operator"].startswith("HashAggregate")
    assert list(top["stage_ids"]) == [11]
    regex = hot[hot["function"] == "java.util.regex.Pattern$BmpCharProperty.match"].iloc[0]
    assert regex["operator"].startswith("Filter") and regex["kind"] == "regex"
    # a frame on many stacks: total counts each stack once, self only where it is the leaf
    task = hot[hot["function"] == "org.apache.spark.scheduler.Task.run"].iloc[0]
    assert task["total_samples"] == 94 and task["self_samples"] == 0
    assert (hot["self_samples"] <= hot["total_samples"]).all()
    assert hot["self_samples"].sum() == 94


def test_codegen_stage_of_another_execution_is_told_apart(record):
    # execution 0 also has a codegen stage 1, but its stages used little CPU
    prof = jp.analyze(plan_run(record)).summary()["profile"]
    assert all(o["execution_id"] != 0 for o in prof["operators"])


def test_no_plan_no_operator(record):
    run = plan_run(record)
    run.operators = pd.DataFrame()
    prof = jp.analyze(run).summary()["profile"]
    assert [o["label"] for o in prof["operators"]] == ["(no operator)"]
    assert prof["samples"] == 94


def test_without_profile_and_unavailable():
    a = jp.analyze(plan_run(None))
    assert a.summary()["profile"] is None and a.hot_functions.empty
    b = jp.analyze(plan_run({"method": "none", "note": "the jar is missing"}))
    assert b.summary()["profile"]["note"] == "the jar is missing"
    assert b.summary()["profile"]["samples"] == 0 and b.hot_functions.empty
    # damaged rows are skipped, never raised on
    c = jp.analyze(plan_run({"method": "async-profiler", "interval_ms": 10,
                             "stacks": [["x"], [AGG_MAP, "n"], [None, 3], [AGG_MAP, 2]]}))
    assert c.summary()["profile"]["samples"] == 2


def test_flame_tree_and_collapsed(record):
    result = P.profile_of(plan_run(record))
    rows = P.flame_tree(result.stacks)
    assert rows[0][:5] == [0, 0, 94, 0, "all task threads"]
    # every frame lies inside a frame one level up
    for depth, start, n, _own, name, _ in rows[1:]:
        parents = [r for r in rows if r[0] == depth - 1 and r[1] <= start
                   and start + n <= r[1] + r[2]]
        assert parents, name
    leaf = [r for r in rows if r[4].endswith("BytesToBytesMap.safeLookup")]
    assert leaf and leaf[0][2] == 40 and leaf[0][3] == 40 and leaf[0][5].startswith("HashAgg")
    # narrow frames are left out above a share
    assert len(P.flame_tree(result.stacks, min_share=0.3)) < len(rows)
    text = P.collapsed_text(result.stacks)
    assert text.count("\n") == 6 and text.splitlines()[0].endswith(" 40")


def test_samples_split_a_codegen_stage(record):
    with_profile = jp.analyze(plan_run(record)).operators
    rule = jp.analyze(plan_run(None)).operators
    assert "samples" not in rule.columns and set(rule["kind"]) == {"estimated"}
    # the total is kept; inside codegen stage 1 of execution 1 the rule gave all of its time to
    # the aggregate, the samples give the regex Filter its part (20 of the 60 samples)
    assert with_profile["task_time_ms"].sum() == pytest.approx(rule["task_time_ms"].sum())

    def row(t, ex, node):
        return t[(t["execution_id"] == ex) & (t["node_id"] == node)].iloc[0]

    pool = row(rule, 1, 4)["task_time_ms"] + row(rule, 1, 5)["task_time_ms"]
    agg, flt = row(with_profile, 1, 4), row(with_profile, 1, 5)
    assert row(rule, 1, 5)["task_time_ms"] == 0
    assert (agg["kind"], agg["samples"]) == ("sampled", 40)
    assert flt["kind"] == "sampled" and flt["task_time_ms"] == pytest.approx(pool / 3)
    assert agg["task_time_ms"] == pytest.approx(2 * pool / 3)
    assert sum(flt["breakdown"].values()) == pytest.approx(flt["task_time_ms"])
    # too few samples (Sort: 15 < MIN_SPLIT_SAMPLES): the rule stays
    assert row(with_profile, 2, 0)["kind"] == "estimated"
    assert row(with_profile, 2, 0)["task_time_ms"] == row(rule, 2, 0)["task_time_ms"]
    # another execution's operators are untouched
    assert row(with_profile, 0, 0)["task_time_ms"] == row(rule, 0, 0)["task_time_ms"]


def test_profile_is_kept_with_the_stored_run(record, tmp_path):
    from jupyter_perf.store import RunStore

    store = RunStore(str(tmp_path))
    run = plan_run(record)
    store.save(run, jp.analyze(run).summary())
    back = store.load(run.run_id)
    assert back.extra["profile"] == record
    a, b = jp.analyze(run), jp.analyze(back)
    pd.testing.assert_frame_equal(a.hot_functions, b.hot_functions)
    assert a.summary()["profile"] == b.summary()["profile"]
    # a run stored before profiles existed loads with none
    old = plan_run(None)
    store.save(old, None)
    assert jp.analyze(store.load(old.run_id)).summary()["profile"] is None


def test_spark4_idle_task_thread_names_are_task_threads():
    """Spark 4 renames a pooled task thread "Executor task idle worker" between tasks — its
    name when the window's profile is dumped — so its stacks are task stacks, as Spark 3.5's
    "Executor task launch worker for task …" (found: every Spark 4 profile had 0 task samples)."""
    task = "java/lang/Thread.run;org/apache/spark/scheduler/Task.run;x/Y.hot"
    rec = profile_record("\n".join([
        f"[Executor task idle worker#68 tid=101];{task} 7",
        f"[Executor task launch worker for task 0.0 in stage 1.0 (TID 3) tid=102];{task} 5",
        "[C2 CompilerThread0 tid=9];Compile::Compile 4"]), 10)
    tasks = [s for s in rec["stacks"] if not s[0].startswith("[jvm]")]
    assert sum(n for _, n in tasks) == 12
    assert all(P.is_task_stack(s.split(";")) for s, _ in tasks)
    assert not P.is_task_stack(["[jvm] C2 CompilerThre"])


def test_thread_dump_samples_go_to_the_stage_their_task_ran_in():
    """A thread dump names each sample's task at the dump (collect/profiler.dump_stacks): its
    stage picks among the operators, here the codegen stage 1 of execution 0, which the CPU
    weight alone would not choose (test_codegen_stage_of_another_execution_is_told_apart)."""
    dump_root = "[Executor task launch worker in stage {}.0]"
    prof = {"method": "thread dumps (every 1000 ms)", "interval_ms": 1003.5,
            "requested_interval_ms": 1000, "fallback": "no jcmd (JDK) to load async-profiler",
            "stacks": [[AGG_MAP.replace(T, dump_root.format(20)), 3, "1"],
                       [AGG_MAP.replace(T, dump_root.format(11)), 2, "0"]],
            "executors": {"0": 2, "1": 3}}
    a = jp.analyze(plan_run(prof))
    s = a.summary()["profile"]
    assert s["method"] == "thread dumps (every 1000 ms)"
    assert s["fallback"].startswith("no jcmd") and s["samples"] == 5
    assert s["sampled_cpu_ms"] == pytest.approx(5 * 1003.5)
    got = {(o["execution_id"], o["node_id"]): o["samples"] for o in s["operators"]}
    assert got == {(0, 0): 3, (1, 4): 2}
    # a stage no operator ran in: the rule without it
    prof["stacks"] = [[AGG_MAP.replace(T, dump_root.format(99)), 4, "1"]]
    s = jp.analyze(plan_run(prof)).summary()["profile"]
    assert [(o["execution_id"], o["node_id"]) for o in s["operators"]] == [(1, 4)]


@pytest.mark.parametrize("root, stage", [
    ("[Executor task launch worker in stage 20.1]", 20),
    (T, None),                                         # async-profiler: named at the end
    ("[Executor task idle worker-3]", None), ("[jvm] GC Thread#", None),
])
def test_task_stage_of_a_root(root, stage):
    assert P.task_stage(root) == stage
