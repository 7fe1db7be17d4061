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
