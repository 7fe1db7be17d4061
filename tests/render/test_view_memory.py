"""The Memory tab drawn by the renderer (labextension/src/report/tabs/memory.ts) from its data
(jupyter_perf/render/views/memory.py), in Chromium: for a real Spark run with memory samples,
the chart's series are the Run's samples (running peaks and current values labelled so), its
limits the executors' limits, the per-executor table the executors' peaks (one unit per
column); switching executors redraws; hostile executor ids stay text; a run without samples
says so. One real Spark session (local[2]) for the module."""
from __future__ import annotations

import copy
import re

import numpy as np
import pandas as pd
import pytest
from render_runs import HOSTILE, hostile_copy, skewed_join_run, synthetic, with_speculative
from viewhelpers import show_tab

from jupyter_perf import fmt
from jupyter_perf.analysis import analyze

SERIES = {"peak_jvm_heap_bytes": "running peak", "peak_on_heap_execution_bytes": "running peak",
          "used_on_heap_storage_bytes": "current", "peak_process_rss_bytes": "running peak"}
LIMITS = ("jvm_heap_limit_bytes", "max_memory_bytes")
BYTES = re.compile(r"^(\d+ B|\d+\.\d (KiB|MiB|GiB|TiB)|–)$")


@pytest.fixture(scope="module")
def real_run():
    from sparkhelpers import make_spark
    spark = make_spark("local[2]", **{"spark.sql.autoBroadcastJoinThreshold": "-1",
                                      "spark.sql.adaptive.enabled": "false"})
    try:
        yield skewed_join_run(spark)
    finally:
        spark.stop()


def show(page):
    """The Memory tab of an opened report, drawn."""
    show_tab(page, "memory")
    return page


def two_executors(run):
    """The run as if a second executor ("exec-2", twice the memory) had sampled too."""
    r = copy.deepcopy(run)
    mem = r.memory.copy()
    other = mem.copy()
    other["executor_id"] = "exec-2"
    for col in SERIES:
        other[col] = pd.to_numeric(other[col], errors="coerce") * 2
    r.memory = pd.concat([mem, other], ignore_index=True)
    ex = r.executors.copy()
    ex2 = ex.iloc[:1].copy()
    ex2["executor_id"] = "exec-2"
    for col in ("peak_jvm_heap_bytes", *LIMITS):
        ex2[col] = pd.to_numeric(ex2[col], errors="coerce") * 2
    r.executors = pd.concat([ex, ex2], ignore_index=True)
    return r


def chart_state(page) -> dict:
    """Every data source of the Memory chart shown now, by name; the legend's labels."""
    return page.evaluate("""() => { for (const d of Bokeh.documents) {
        const fig = d.get_model_by_name('jp-memory');
        if (!fig) continue;
        const out = {sources: {}, legend: []};
        for (const r of fig.renderers) {
          const s = r.data_source; if (!s || !s.name) continue;
          const o = {}; for (const [k, v] of (s.data instanceof Map ? s.data : Object.entries(s.data)))
            o[k] = Array.from(v, x => (typeof x === 'number' && !Number.isFinite(x)) ? null : x);
          out.sources[s.name] = o; }
        for (const l of fig.center.filter(m => m.type === 'Legend'))
          for (const it of l.items) out.legend.push(it.label.value);
        return out; } return null; }""")


def expected_series(run, executor: str, lo: float) -> dict:
    mem = run.memory[run.memory["executor_id"].astype(str) == executor].sort_values("time_ms")
    out = {"t": ((mem["time_ms"].astype(float) - lo) / 1000.0).tolist()}
    for col in SERIES:
        v = pd.to_numeric(mem[col], errors="coerce").to_numpy(dtype=float)
        out[col] = [None if not np.isfinite(x) else float(x) for x in v]
    return out


def table_rows(page) -> list[dict]:
    return page.evaluate("""() => { const t = document.querySelector("table[data-view='memory-executors']");
        const cols = Array.from(t.querySelectorAll('th')).map(th => th.dataset.col);
        return Array.from(t.querySelectorAll('tbody tr')).map(tr => { const o = {};
          Array.from(tr.children).forEach((td, i) => { o[cols[i]] = [td.dataset.value ?? null,
            td.textContent]; }); return o; }); }""")


def test_memory_chart_is_the_runs_samples(open_report, real_run):
    run = real_run
    assert len(run.memory) > 0, "the real run collected no memory samples"
    a = analyze(run)
    page = show(open_report(a))
    options = page.evaluate("""() => Array.from(document.querySelectorAll(
        "select[data-view='memory-executor'] option")).map(o => o.value)""")
    ids = [str(e) for e in run.memory["executor_id"].dropna().unique()]
    assert set(ids) <= set(options)
    shown = page.get_attribute(".jp-perf-memory-chart", "data-executor")
    assert shown in ids
    state = chart_state(page)
    assert state is not None, "no Memory chart"
    lo = float(a.timeline.window[0]) if a.timeline.has_times else float(run.start_ms)
    want = expected_series(run, shown, lo)
    drawn = [c for c in SERIES if f"jp-memory-{c}" in state["sources"]]
    assert drawn, "no memory series drawn"
    for col in SERIES:
        if all(v is None for v in want[col]):
            assert f"jp-memory-{col}" not in state["sources"]
            continue
        src = state["sources"][f"jp-memory-{col}"]
        assert src["x"] == pytest.approx(want["t"])
        assert [None if v is None else pytest.approx(v) for v in want[col]] == src["bytes"]
        assert src["y"] == pytest.approx([None if v is None else v / 2**20 for v in want[col]])
        assert src["text"] == [fmt.nbytes(v) for v in want[col]]
    labels = set(state["legend"])
    for col in drawn:
        assert any(("(running peak)" if SERIES[col] == "running peak" else "(current)") in lab
                   for lab in labels), col
    ex = run.executors[run.executors["executor_id"].astype(str) == shown]
    for col in LIMITS:
        v = pd.to_numeric(ex[col], errors="coerce").max() if len(ex) else np.nan
        if pd.notna(v) and v > 0:
            assert state["sources"][f"jp-memory-limit-{col}"]["bytes"] == [pytest.approx(float(v))]
        else:
            assert f"jp-memory-limit-{col}" not in state["sources"]
    assert any("limit" in lab for lab in labels)
    assert page.jp_errors == [] and page.jp_requests == []


def test_executor_table_is_the_executors_peaks(open_report, real_run):
    run = with_speculative(real_run)        # some attempts spilled 1 MiB in memory
    page = show(open_report(analyze(run)))
    rows = table_rows(page)
    ex = run.executors
    assert len(rows) == len(ex) > 0
    tasks = run.tasks
    for row, rec in zip(rows, ex.to_dict("records")):
        assert row["executor_id"][1] == str(rec["executor_id"])
        for col in ("peak_jvm_heap_bytes", "jvm_heap_limit_bytes", "peak_on_heap_execution_bytes",
                    "peak_on_heap_storage_bytes", "max_memory_bytes", "peak_process_rss_bytes"):
            v = pd.to_numeric(rec.get(col), errors="coerce")
            value, text = row[col]
            if pd.isna(v):
                assert value == "" and text == "–", col
            else:
                assert float(value) == pytest.approx(float(v)) and text == fmt.nbytes(float(v))
        mine = tasks["executor_id"].astype(str) == str(rec["executor_id"])
        for col in ("memory_spilled_bytes", "disk_spilled_bytes"):
            total = float(tasks.loc[mine, col].fillna(0).sum())
            assert float(row[col][0]) == pytest.approx(total)
            assert row[col][1] == fmt.nbytes(total)
    assert sum(float(r["memory_spilled_bytes"][0]) for r in rows) > 0
    # one unit per column: every byte cell carries its unit ("0 B", never "0.0")
    for row in rows:
        for key, (value, text) in row.items():
            if value is not None:
                assert BYTES.match(text), (key, text)
    # the spilled attempts are marked on the chart at their finish
    spills = chart_state(page)["sources"].get("jp-memory-spills")
    assert spills is not None
    n = int(((tasks["memory_spilled_bytes"].fillna(0) + tasks["disk_spilled_bytes"].fillna(0)) > 0).sum())
    assert len(spills["x"]) == n
    assert page.jp_errors == []


def test_switching_executor_redraws_its_series(open_report, real_run):
    run = two_executors(real_run)
    a = analyze(run)
    page = show(open_report(a))
    lo = float(a.timeline.window[0]) if a.timeline.has_times else float(run.start_ms)
    first = page.get_attribute(".jp-perf-memory-chart", "data-executor")
    docs = page.evaluate("() => Bokeh.documents.length")
    page.select_option("select[data-view='memory-executor']", "exec-2")
    page.wait_for_selector(".jp-perf-memory-chart[data-executor='exec-2']")
    state = chart_state(page)
    want = expected_series(run, "exec-2", lo)
    heap = state["sources"]["jp-memory-peak_jvm_heap_bytes"]["bytes"]
    assert heap == [None if v is None else pytest.approx(v) for v in want["peak_jvm_heap_bytes"]]
    # one chart at a time: the previous executor's views are gone
    assert page.locator(".jp-perf-memory-chart > .bk-Figure").count() == 1
    assert page.evaluate("() => Bokeh.documents.length") == docs
    page.select_option("select[data-view='memory-executor']", first)
    page.wait_for_selector(f".jp-perf-memory-chart[data-executor='{first}']")
    back = chart_state(page)["sources"]["jp-memory-peak_jvm_heap_bytes"]["bytes"]
    assert back == [None if v is None else pytest.approx(v)
                    for v in expected_series(run, first, lo)["peak_jvm_heap_bytes"]]
    assert page.jp_errors == []


def test_hostile_executor_ids_stay_text(open_report, real_run):
    run = hostile_copy(real_run)
    page = show(open_report(analyze(run)))
    assert page.evaluate("() => window.__xss") is None
    assert page.locator(".jp-perf-report img").count() == 0
    options = page.evaluate("""() => Array.from(document.querySelectorAll(
        "select[data-view='memory-executor'] option")).map(o => o.textContent)""")
    assert options and all(HOSTILE in o for o in options)
    assert HOSTILE in page.inner_text("table[data-view='memory-executors']")
    assert page.jp_errors == []


def test_no_samples_is_said(open_report):
    run = synthetic(600, 4, per_stage=100)          # executors, no memory samples, no spill
    assert run.memory.empty
    page = show(open_report(analyze(run)))
    assert page.locator("[data-view='memory-no-samples']").count() == 1
    assert "no memory samples were collected" in page.inner_text(".jp-perf-panel[data-tab='memory']")
    assert "0 samples" in page.inner_text(".jp-perf-panel[data-tab='memory']")
    bare = copy.deepcopy(run)
    bare.executors = bare.executors.iloc[0:0]
    page = show(open_report(analyze(bare)))
    assert "No executor memory was collected for this run." in page.inner_text(
        ".jp-perf-panel[data-tab='memory']")
    assert page.jp_errors == []


def test_report_height_follows_the_shown_tab(open_report, real_run):
    """After Memory (a chart) was shown, the Summary takes only its own height again."""
    page = open_report(analyze(real_run))
    height = "() => document.querySelector('.jp-perf-report').offsetHeight"
    before = page.evaluate(height)
    show_tab(page, "memory")
    memory = page.evaluate(height)
    show_tab(page, "summary")
    assert abs(page.evaluate(height) - before) <= 1
    assert memory != before


def test_an_executor_lost_to_memory_is_named_above_the_sizing(open_report):
    """Issue V4/V6: the Memory tab says which executor the window lost to memory, in the
    verdict's words (with its last peaks, measured); a run that lost none shows no such line."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))
    from test_verdict import OOM, lost_run

    s = analyze(lost_run([OOM])).summary()
    page = show(open_report(analyze(lost_run([OOM]))))
    lines = page.locator("[data-view='memory-lost']")
    assert lines.count() == 1
    assert lines.first.inner_text() == f"⚠ {s['verdict_headline_text']}"
    assert "executor 1 was lost (exit 52" in lines.first.inner_text()
    page = show(open_report(analyze(lost_run(None))))
    assert page.locator("[data-view='memory-lost']").count() == 0
    assert page.jp_errors == []
