"""The Profile tab drawn from data (views/profile.py -> tabs/profile.ts, issue P): shown only
when the run has a profile; its icicle is the attributed task stacks (root on top, every frame
inside its parent), its hot-functions table is ``a.hot_functions``, its search marks the frames
whose name matches, the collapsed stacks download is the profile; user strings stay text."""
from __future__ import annotations

import pandas as pd
import pytest
from render_runs import HOSTILE, synthetic
from viewhelpers import show_tab

from jupyter_perf.analysis import analyze
from jupyter_perf.collect.profiler import profile_record
from jupyter_perf.render.views import ViewContext, jsonable, profile, report_data

ROOT = "[Executor task launch worker for task 1.0 in stage 0.0 (TID 7) tid=12]"
TASK = "java/lang/Thread.run;org/apache/spark/scheduler/Task.run"
CG = "org/apache/spark/sql/catalyst/expressions/GeneratedClass$GeneratedIteratorForCodegenStage1"
COLLAPSED = "\n".join([
    f"{ROOT};{TASK};{CG}.processNext;java/util/regex/Matcher.find;"
    "java/util/regex/Pattern$Branch.match 30",
    f"{ROOT};{TASK};{CG}.processNext;{CG}.hashAgg_doAggregateWithKeys_0$;"
    "org/apache/spark/unsafe/map/BytesToBytesMap.safeLookup 50",
    f"{ROOT};{TASK};{CG}.processNext 6",
    f"{ROOT};{TASK};org/apache/spark/shuffle/sort/BypassMergeSortShuffleWriter.write;"
    f"net/jpountz/lz4/LZ4BlockOutputStream.write 12",
    f"{ROOT};{TASK};{HOSTILE} 2",
    "[C2 CompilerThre tid=3];Compile::Compile 9",
])
PANEL = ".jp-perf-panel[data-tab='profile']"


def profiled_run(stacks: str = COLLAPSED):
    run = synthetic(400, 4, per_stage=100)
    stage = int(run.tasks["stage_id"].iloc[0])
    run.operators = pd.DataFrame([
        {"execution_id": 0, "node_id": 1, "parent_ids": [], "name": "HashAggregate",
         "description": "keys=[k], functions=[partial_sum(v)]", "codegen_id": 1,
         "cluster_id": -1, "stage_attempts": [[stage, 0]]},
        {"execution_id": 0, "node_id": 2, "parent_ids": [1], "name": "Filter",
         "description": f"RLIKE(s, ^a.*) {HOSTILE}", "codegen_id": 1, "cluster_id": -1,
         "stage_attempts": [[stage, 0]]},
        {"execution_id": 0, "node_id": 3, "parent_ids": [2], "name": "Exchange",
         "description": "hashpartitioning(k, 4)", "codegen_id": -1, "cluster_id": -1,
         "stage_attempts": [[stage, 0]]},
    ])
    run.extra["profile"] = profile_record(stacks, 10)
    return run


@pytest.fixture(scope="module")
def a():
    return analyze(profiled_run())


def _view(a):
    return jsonable(profile.data(a, ViewContext.of(a)))


def test_no_profile_no_tab():
    plain = analyze(synthetic(400, 4, per_stage=100))
    assert "profile" not in report_data(plain)["tabs"]
    failed = synthetic(400, 4, per_stage=100)
    failed.extra["profile"] = {"method": "none", "note": "the jar is missing"}
    assert "profile" not in report_data(analyze(failed))["tabs"]


def test_data_is_the_attributed_profile(a):
    view = _view(a)
    assert "profile" in report_data(a)["tabs"]
    s = view["summary"]
    assert s["samples"] == 100 and s["other_jvm_samples"] == 9
    assert s["sampled_cpu_ms"] == 1000.0 and s["method"] == "async-profiler"
    f = view["flame"]
    assert f["name"][0] == "all task threads" and f["n"][0] == 100 and f["depth"][0] == 0
    for i in range(1, len(f["n"])):       # every frame inside a frame one level up
        assert any(f["depth"][j] == f["depth"][i] - 1 and f["start"][j] <= f["start"][i]
                   and f["start"][i] + f["n"][i] <= f["start"][j] + f["n"][j]
                   for j in range(len(f["n"]))), f["name"][i]
    hot = a.hot_functions
    mine = hot[hot["self_samples"] > 0]
    assert view["hot"]["function"] == mine["function"].tolist()
    assert view["hot"]["self_samples"] == mine["self_samples"].tolist()
    assert view["hot"]["function"][0] == "org.apache.spark.unsafe.map.BytesToBytesMap.safeLookup"
    assert view["hot"]["operator"][0].startswith("HashAggregate")
    regex = view["hot"]["function"].index("java.util.regex.Pattern$Branch.match")
    assert view["hot"]["operator"][regex].startswith("Filter")
    # the download is the task stacks in the collapsed format, every sample in it
    lines = view["collapsed"].splitlines()
    assert sum(int(line.rsplit(" ", 1)[1]) for line in lines) == 100
    assert view["file_name"] == f"profile-{a.run.run_id}.collapsed"


def test_tab_draws_searches_and_keeps_strings_as_text(open_report, a):
    page = open_report(a)
    tabs = page.eval_on_selector_all(".jp-perf-tabbar button", "bs => bs.map(b => b.dataset.tab)")
    assert tabs[-1] == "profile"
    show_tab(page, "profile")
    panel = page.locator(PANEL)
    assert panel.locator(".jp-perf-warn", has_text="could not be drawn").count() == 0
    assert panel.locator(".jp-perf-profile-flame canvas").count() >= 1
    assert "100 samples" in panel.inner_text()
    # what one sample is, in the collector's words (thread dumps say theirs)
    assert "async-profiler, one on-CPU sample every 10 ms of a thread's CPU time." in \
        panel.inner_text()
    first = page.eval_on_selector(
        "table[data-view='profile-hot'] tbody tr td", "td => td.textContent")
    assert first == "org.apache.spark.unsafe.map.BytesToBytesMap.safeLookup"
    rows = page.eval_on_selector_all("table[data-view='profile-hot'] tbody tr", "t => t.length")
    assert rows == len(_view(a)["hot"]["function"])
    assert HOSTILE in panel.inner_text()                     # the frame's name, as text
    assert page.evaluate("window.__xss") is None and page.locator("img[src=x]").count() == 0
    page.fill(f"{PANEL} input[type=search]", "regex")
    names = _view(a)["flame"]["name"]
    want = sum("regex" in n.lower() for n in names)
    assert want >= 1
    page.wait_for_function(
        f"() => document.querySelector(\"{PANEL} .jp-perf-profile-flame\").dataset.matches"
        f" === '{want}'", timeout=10_000)
    assert panel.locator(".jp-perf-profile-download").count() == 1
    with page.expect_download() as got:
        panel.locator(".jp-perf-profile-download").click()
    path = got.value.path()
    text = open(path, encoding="utf-8").read()
    assert text == _view(a)["collapsed"]
    # the Query tab shows the operator split the samples made
    assert "sampled" in set(a.operators["kind"])
    show_tab(page, "query")
    assert "sampled" in page.inner_text(".jp-perf-panel[data-tab='query']")
    assert page.jp_errors == [] and page.jp_requests == []


def test_an_operator_selected_in_query_or_here_focuses_the_flame_graph(open_report, a):
    """The Query tab's operator selection reaches the Profile: its frames keep their colour,
    the others dim, a line says its sampled count; a click on the Profile's operators table
    publishes the same selection (key "execution:node") for the other tabs."""
    view = _view(a)
    [agg] = [o for o in view["operators"] if o["label"].startswith("HashAggregate")]
    assert agg["key"] == "0:1"
    page = open_report(a)
    show_tab(page, "profile")
    root = ".jp-perf-report"
    page.evaluate(f"""() => document.querySelector("{root}")
                   .jpBus.select({{kind: 'operator', key: '0:1', stageCodes: []}}, 'query')""")
    chart = f"{PANEL} .jp-perf-profile-flame"
    page.wait_for_function(f"() => document.querySelector(\"{chart}\").dataset.operator === '0:1'",
                           timeout=10_000)
    assert page.eval_on_selector(chart, "c => c.dataset.shownSamples") == str(agg["samples"])
    focus = page.inner_text(f"{PANEL} .jp-perf-profile-focus")
    assert focus.startswith(f"Showing {agg['label']}: ") and "(sampled)" in focus
    assert page.locator("table[data-view='profile-operators'] tr.jp-perf-selected").count() == 1
    # a click on another operator's row: the bus carries its key to the other tabs
    other = next(o for o in view["operators"] if o["key"] and o["key"] != "0:1")
    page.locator("table[data-view='profile-operators'] tbody tr",
                 has_text=other["label"]).first.click()
    got = page.evaluate(f"() => document.querySelector('{root}').jpBus.current()")
    assert got["kind"] == "operator" and got["key"] == other["key"]
    # cleared from elsewhere: every frame in its own colour again
    page.evaluate(f"""() => document.querySelector("{root}")
                   .jpBus.select({{kind: 'none'}}, 'query')""")
    page.wait_for_function(f"() => document.querySelector(\"{chart}\").dataset.operator === ''",
                           timeout=10_000)
    assert page.inner_text(f"{PANEL} .jp-perf-profile-focus") == ""
    assert page.jp_errors == []


def test_tab_without_task_samples_says_so(open_report):
    run = profiled_run("[GC Thread#0 tid=2];G1ParTask::work 5")
    page = open_report(analyze(run), tab="profile")
    assert "No task thread was on CPU" in page.inner_text(PANEL)
    assert page.jp_errors == []


# -- filters by stage, operator and executor, and the search's sample count (issue P item 4) --
SMALL = (f"{ROOT};{TASK};org/apache/spark/sql/execution/python/PythonUDFRunner.compute;"
         "java/io/DataInputStream.readInt 1")


def executors_run():
    """The same profile taken in two executor JVMs (agent): executor 1 ran the aggregate and
    the regex, executor 2 the shuffle write and one sample of a rare frame; the exchange ran
    in two stages."""
    run = profiled_run()
    stages = sorted(set(run.tasks["stage_id"].astype(int)))
    ops = run.operators.copy()
    ops.at[2, "stage_attempts"] = [[stages[0], 0], [stages[1], 0]]
    run.operators = ops
    lines = COLLAPSED.splitlines()
    one = profile_record("\n".join(lines[:2] + lines[4:]), 10, method="async-profiler (agent)")
    two = profile_record("\n".join([lines[2], lines[3], SMALL]), 10)
    run.extra["profile"] = {
        "method": "async-profiler (agent)", "interval_ms": 10,
        "stacks": [r + ["1"] for r in one["stacks"]] + [r + ["2"] for r in two["stacks"]],
        "executors": {"1": 82, "2": 19}}
    return run, stages


def test_local_samples_carry_the_driver_and_their_operators_stages(a):
    """local[N]: every task ran in the driver's JVM, whose executor id Spark calls driver; a
    group is an operator on an executor, with the operator's stages."""
    view = _view(a)
    g = view["groups"]
    assert set(g["executor"]) == {"driver"}
    assert set(view["hot"]["executors"]) == {"driver"}
    assert all(ids == ["driver"] for ids in a.hot_functions["executor_ids"])
    assert a.hot_functions.columns[-1] == "executor_ids"
    stages = {o["label"]: o["stages"] for o in view["operators"]}
    for op, st in zip(g["operator"], g["stages"]):
        assert ", ".join(map(str, st)) == stages[op]


def test_payload_cells_add_up_to_the_icicle_and_the_hot_functions():
    run, stages = executors_run()
    a = analyze(run)
    assert a.summary()["profile"]["samples"] == 101
    view = _view(a)
    g, f = view["groups"], view["flame"]
    assert sorted(set(g["executor"])) == ["1", "2"]
    exchange = g["operator"].index(next(o for o in g["operator"] if o.startswith("Exchange")))
    assert g["stages"][exchange] == stages[:2] and g["executor"][exchange] == "2"
    # every node's width is the sum of its groups' cells, its parent one level up
    c = f["cells"]
    for i in range(len(f["n"])):
        mine = [k for k, node in enumerate(c["node"]) if node == i]
        assert sum(c["n"][k] for k in mine) == f["n"][i]
        assert sum(c["own"][k] for k in mine) == f["own"][i]
        p = f["parent"][i]
        assert (p == -1) == (i == 0)
        if p >= 0:
            assert f["depth"][p] == f["depth"][i] - 1
            assert f["start"][p] <= f["start"][i] <= f["start"][i] + f["n"][i] \
                <= f["start"][p] + f["n"][p]
    # the root's cells are each group's samples: per executor, what the profile recorded
    by_ex: dict[str, int] = {}
    for k in [k for k, node in enumerate(c["node"]) if node == 0]:
        by_ex[g["executor"][c["group"][k]]] = by_ex.get(g["executor"][c["group"][k]], 0) \
            + c["n"][k]
    assert by_ex == {"1": 82, "2": 19}
    # one sample of 101 (< 0.2 %? no: 1 %) — a frame of one group's share stays drawable
    assert "java.io.DataInputStream.readInt" in f["name"]
    # the hot functions' cells: per function, the sums are a.hot_functions'
    hot = a.hot_functions.set_index("function")
    h = view["hot_cells"]
    for fn in set(h["function"]):
        ks = [k for k, x in enumerate(h["function"]) if x == fn]
        assert sum(h["self"][k] for k in ks) == hot.at[fn, "self_samples"]
        assert sum(h["total"][k] for k in ks) == hot.at[fn, "total_samples"]
    assert hot.at["net.jpountz.lz4.LZ4BlockOutputStream.write", "executor_ids"] == ["2"]
    assert view["hot"]["executors"][view["hot"]["function"].index(
        "java.util.regex.Pattern$Branch.match")] == "1"


def test_flame_keeps_each_groups_resolution():
    """A frame too narrow for the whole profile is kept where it is wide within its group
    (so a filter to that group shows it); the widest max_nodes are kept, parents first."""
    big = "\n".join(f"{ROOT};{TASK};{CG}.processNext;f{i} 1000" for i in range(3))
    run = profiled_run(big + "\n" + f"{ROOT};{TASK};org/apache/spark/shuffle/sort/"
                       "BypassMergeSortShuffleWriter.write;rare/Frame.run 1")
    a = analyze(run)
    view = _view(a)
    assert "rare.Frame.run" in view["flame"]["name"]
    index, _ = profile._groups(a.profile.stacks)
    few = profile.flame(a.profile.stacks, index, max_nodes=4)
    assert len(few["n"]) == 4 and few["parent"][0] == -1
    assert all(0 <= p < i for i, p in enumerate(few["parent"]) if i)


def test_filters_narrow_the_flame_and_the_hot_functions(open_report):
    run, stages = executors_run()
    a = analyze(run)
    view = _view(a)
    page = open_report(a, tab="profile")
    chart = f"{PANEL} .jp-perf-profile-flame"

    def shown_samples():
        return int(page.eval_on_selector(chart, "c => c.dataset.samples"))

    def hot_functions():
        return page.eval_on_selector_all(
            "table[data-view='profile-hot'] tbody tr td:first-child",
            "tds => tds.map(td => td.textContent)")

    assert shown_samples() == 101
    # executor 2: its samples only, and its functions
    page.select_option(f"{PANEL} select.jp-perf-profile-executor", label="executor 2")
    page.wait_for_function(f"() => document.querySelector(\"{chart}\").dataset.samples === '19'",
                           timeout=10_000)
    assert "Filtered: 19 samples (sampled) of 101" in page.inner_text(PANEL)
    assert set(hot_functions()) == {"net.jpountz.lz4.LZ4BlockOutputStream.write",
                                    "java.io.DataInputStream.readInt", CG.replace("/", ".")
                                    + ".processNext"}
    # and stage 2 on top: only the exchange ran there
    page.select_option(f"{PANEL} select.jp-perf-profile-stage", label=f"stage {stages[1]}")
    exchange = next(o for o in view["operators"] if o["label"].startswith("Exchange"))
    want = exchange["samples"]
    page.wait_for_function(
        f"() => document.querySelector(\"{chart}\").dataset.samples === '{want}'",
        timeout=10_000)
    assert hot_functions() == ["net.jpountz.lz4.LZ4BlockOutputStream.write"]
    # the search counts within the filter: frames and samples (sampled)
    page.fill(f"{PANEL} input[type=search]", "lz4")
    page.wait_for_function(
        f"() => document.querySelector(\"{chart}\").dataset.matchSamples === '{want}'",
        timeout=10_000)
    assert f"1 frame match: {want} samples (sampled)" in page.inner_text(
        f"{PANEL} .jp-perf-profile-found")
    # the operator filter offers each operator once; the hostile frame's name stays text
    opts = page.eval_on_selector_all(f"{PANEL} select.jp-perf-profile-operator option",
                                     "os => os.map(o => o.textContent)")
    assert opts == ["every operator"] + list(dict.fromkeys(view["groups"]["operator"]))
    page.select_option(f"{PANEL} select.jp-perf-profile-executor", label="executor 1")
    page.wait_for_function(f"() => document.querySelector(\"{chart}\").dataset.samples === '0'",
                           timeout=10_000)     # executor 1 did not run stage 2
    page.select_option(f"{PANEL} select.jp-perf-profile-stage", index=0)
    page.wait_for_function(f"() => document.querySelector(\"{chart}\").dataset.samples === '82'",
                           timeout=10_000)
    assert HOSTILE in hot_functions()
    # every filter off: the whole profile
    page.select_option(f"{PANEL} select.jp-perf-profile-stage", index=0)
    page.select_option(f"{PANEL} select.jp-perf-profile-executor", index=0)
    page.wait_for_function(f"() => document.querySelector(\"{chart}\").dataset.samples === '101'",
                           timeout=10_000)
    assert len(hot_functions()) == len(view["hot"]["function"])
    assert page.evaluate("window.__xss") is None and page.locator("img[src=x]").count() == 0
    assert page.jp_errors == [] and page.jp_requests == []


# -- the Python UDF workers' samples (py-spy, issue P item 3) ----------------------------------
def python_run(py_counts: dict, jvm: str = COLLAPSED, note: str = ""):
    """A profiled run whose record also holds Python workers' samples, merged as the window
    merges them (``profiler.merge_python``; a hostile function name stays text)."""
    from jupyter_perf.collect import pyprofiler
    from jupyter_perf.collect.profiler import merge_python

    run = profiled_run(jvm)
    run.operators = pd.concat([run.operators, pd.DataFrame([
        {"execution_id": 0, "node_id": 4, "parent_ids": [3], "name": "BatchEvalPython",
         "description": "[burn_rows(id)]", "codegen_id": -1, "cluster_id": -1,
         "stage_attempts": run.operators["stage_attempts"].iloc[0]}])], ignore_index=True)
    part = dict(pyprofiler.not_sampled("unused"), method=pyprofiler.METHOD, note=note,
                counts={(";".join([pyprofiler.PY_ROOT] + f.split(";")), "driver"): n
                        for f, n in py_counts.items()})
    part["samples"] = sum(py_counts.values())
    run.extra["profile"] = merge_python(run.extra["profile"], part)
    return run


PY_STACKS = {"main (pyspark/worker.py:1200);burn_rows (/nb/cell.py:3)": 40,
             f"main (pyspark/worker.py:1200);{HOSTILE} (/nb/cell.py:9)": 2}


def test_python_samples_are_in_the_payload_apart_from_the_task_threads():
    a = analyze(python_run(PY_STACKS))
    d = _view(a)
    assert d["python"]["samples"] == 42 and d["python"]["method"] == "py-spy"
    assert d["python"]["sampled_cpu_ms"] == pytest.approx(42 * d["python"]["interval_ms"])
    assert d["summary"]["samples"] == a.profile.samples      # the JVM's, unchanged
    hot = dict(zip(d["hot"]["function"], d["hot"]["operator"]))
    assert hot["burn_rows (/nb/cell.py:3)"].startswith("BatchEvalPython")
    # a run whose JVM profile has no task samples but whose Python workers have: still a tab
    only = _view(analyze(python_run(PY_STACKS, jvm="[GC Thread#0 tid=2];G1ParTask::work 5")))
    assert only is not None and only["python"]["samples"] == 42


def test_tab_names_the_python_workers_samples_as_text(open_report):
    a = analyze(python_run(PY_STACKS, note=f"some Python workers not sampled: {HOSTILE}"))
    page = open_report(a, tab="profile")
    line = page.locator(f"{PANEL} [data-view='profile-python']")
    text = line.inner_text()
    assert text.startswith("Python UDF workers: 42 samples, ")
    assert "(sampled; py-spy: one sample every 10 ms" in text and HOSTILE in text
    assert page.locator(f"{PANEL} img").count() == 0                 # the note stays text
    # without JVM task samples the tab draws the Python workers' flame graph
    b = analyze(python_run(PY_STACKS, jvm="[GC Thread#0 tid=2];G1ParTask::work 5"))
    page = open_report(b, tab="profile")
    assert "No task thread was on CPU" not in page.inner_text(PANEL)
    assert page.locator(f"{PANEL} [data-view='profile-python']").inner_text().startswith(
        "Python UDF workers: 42 samples")
    assert page.jp_errors == []
