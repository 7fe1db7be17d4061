"""The Summary tab drawn by the renderer (labextension/src/report/tabs/summary.ts) from its data
(jupyter_perf/render/views/summary.py), in Chromium: every number it shows equals the analysis,
the breakdown bar's segments are summary()["breakdown"] and say measured or estimated, the jobs
table is the Run's jobs, user strings stay text, and the fallback report (the analysis failed)
shows its reason with the Run's own numbers. No Spark: a synthetic run with hostile strings."""
from __future__ import annotations

import copy

import pandas as pd
import pytest
from render_runs import HOSTILE, hostile_copy, synthetic, with_plan, with_skipped, with_speculative
from viewhelpers import show_tab

from jupyter_perf import fmt
from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.breakdown import task_breakdown, totals
from jupyter_perf.render.advice import ready_cell

CELL_FILE = "/tmp/ipykernel_2718281/3141592653.py"
CALL_SITE = f"collect at {CELL_FILE}:1234"
IN_CELL = f"collect at {CELL_FILE}:2"


@pytest.fixture(scope="module")
def analysis():
    """Skipped stages, failed attempts, spills, a SQL plan with a setting hint, and HTML in
    every user string: the label, the cell, job descriptions and names, warnings, the app."""
    run = hostile_copy(with_plan(with_skipped(with_speculative(synthetic(3000, 16, 400))),
                                 n_ops=40, hostile=True))
    run.kind = "cell"
    run.app_name = f"app {HOSTILE}"
    run.extra = dict(run.extra, spark_log=f"/tmp/{HOSTILE}.log")
    jobs = run.jobs.copy()
    jobs["description"] = [f"{HOSTILE} job {j}" for j in jobs["job_id"]]
    jobs.loc[jobs.index[0], "name"] = CALL_SITE          # a call site must not be cut off
    jobs.loc[jobs.index[1], "name"] = IN_CELL            # one into the cell's line 2
    run.jobs = jobs
    run.extra["cell_file"] = CELL_FILE
    return analyze(with_costly_skew(run))


def with_costly_skew(run):
    """The run with its heaviest data-skewed task in a join's stage running 10% of the run's
    task time longer: skew that costs time is named and advised on (the join's AQE settings:
    a hint with a setting), skew that costs nothing is not (stragglers.SKEW_MATTERS)."""
    a = analyze(run)
    ops = a.operators
    joins = {s for name, ids in zip(ops["name"], ops["stage_ids"])
             if str(name).startswith(("SortMergeJoin", "ShuffledHashJoin"))
             for s in ids}
    skewed = a.stragglers
    skewed = skewed[(skewed["kind"] == "data_skew") & skewed["stage_id"].isin(joins)]
    hot = skewed.loc[skewed["bytes_read"].idxmax()]
    t = run.tasks.copy()
    i = t.index[(t["task_id"] == hot["task_id"]) & (t["attempt"] == hot["attempt"])][0]
    extra = 0.1 * float(t["duration_ms"].sum())
    for col in ("duration_ms", "run_ms", "cpu_ms", "finish_ms"):
        t.at[i, col] = t.at[i, col] + extra
    run.tasks = t
    run.end_ms = max(float(run.end_ms), float(t.at[i, "finish_ms"]))
    return run


@pytest.fixture
def page(open_report, analysis):
    return open_report(analysis)


def expected_numbers(a) -> dict:
    """Each key number the tab tags, computed here from the analysis and the Run."""
    s, run = a.summary(), a.run
    st = pd.DataFrame(s["stages"])
    ex = run.executors
    w = s["whatif"]

    def peak(col):
        v = pd.to_numeric(ex[col], errors="coerce").max()
        return None if pd.isna(v) else float(v)

    skipped = int((st["status"] == "SKIPPED").sum())
    out = {
        "wall_ms": s["wall_ms"], "actual_ms": a.actual_ms, "driver_gap_ms": a.driver_gap_ms,
        "jobs": len(run.jobs), "stages_ran": len(st) - skipped, "stages_skipped": skipped,
        "task_attempts": len(run.tasks), "failed_tasks": int(st["failed_tasks"].fillna(0).sum()),
        "slots": run.slots, "task_time_ms": s["task_time_ms"],
        "model_error": w["model_error"], "simulated_baseline_ms": w["simulated_baseline_ms"],
        "whatif_actual_ms": w["actual_ms"], "stragglers": s["stragglers"]["count"],
        "data_skew": s["stragglers"]["data_skew_count"],
    }
    for key in ("input_bytes", "output_bytes", "shuffle_write_bytes", "shuffle_read_bytes",
                "shuffle_remote_bytes", "memory_spilled_bytes", "disk_spilled_bytes"):
        out[key] = float(st[key].fillna(0).sum())
    for key in ("peak_jvm_heap_bytes", "jvm_heap_limit_bytes", "peak_on_heap_execution_bytes",
                "max_memory_bytes"):
        out[key] = peak(key)
    for key in ("infinite_disk_ms", "infinite_network_ms", "no_gc_ms", "no_stragglers_ms",
                "slots_x2_ms"):
        out[key] = w[key]
    return out


def python_text(value, f: str) -> str:
    """What fmt.py writes for the number (the browser's formatter matches it to the character)."""
    if value is None:
        return fmt.UNKNOWN
    if f == "ms":
        return fmt.ms(value)
    if f == "bytes":
        return fmt.nbytes(value)
    if f == "int":
        return f"{int(round(value)):,}"
    if f == "pct":
        return f"{100 * value:.1f}%"
    raise AssertionError(f)


def shown_numbers(page, root: str = "table[data-view='key-numbers']") -> dict:
    return page.evaluate(
        """(root) => Array.from(document.querySelectorAll(`${root} [data-key][data-value]`))
             .map(e => [e.dataset.key, e.dataset.value, e.dataset.format, e.textContent])""",
        root)


def test_key_numbers_equal_the_analysis(page, analysis):
    want = expected_numbers(analysis)
    shown = shown_numbers(page)
    keys = [k for k, *_ in shown]
    assert len(keys) == len(set(keys))
    assert set(keys) == set(want), set(keys) ^ set(want)
    for key, value, f, text in shown:
        expected = want[key]
        if expected is None:
            assert value == "" and text == "–", key
            continue
        assert float(value) == pytest.approx(float(expected), rel=1e-9, abs=1e-9), key
        assert text == python_text(float(value), f), (key, text)
    row = page.inner_text("table[data-view='key-numbers'] tr[data-key='whatif']")
    assert "(upper bound)" in row and "(estimated)" in row
    assert "(measured)" in page.inner_text("table[data-view='key-numbers'] tr[data-key='wall']")
    assert page.jp_errors == [] and page.jp_requests == []


def test_breakdown_bar_is_the_summary_breakdown(page, analysis):
    bd = analysis.summary()["breakdown"]
    want = [k for k, v in bd.items() if v["ms"] > 0]
    src = page.evaluate("""() => { for (const d of Bokeh.documents) {
        const m = d.get_model_by_name('jp-breakdown-source');
        if (m) { const o = {}; for (const [k, v] of m.data instanceof Map ? m.data : Object.entries(m.data))
                   o[k] = Array.from(v); return o; } } return null; }""")
    assert src is not None, "the breakdown bar was not drawn"
    assert src["key"] == want
    for i, key in enumerate(src["key"]):
        assert src["ms"][i] == pytest.approx(bd[key]["ms"])
        assert src["right"][i] - src["left"][i] == pytest.approx(bd[key]["ms"] / 1000.0)
        assert src["kind"][i] == bd[key]["kind"]
        assert (src["hatch"][i].strip() != "") == (bd[key]["kind"] == "estimated"), key
        assert src["alpha"][i] < 1.0 if bd[key]["kind"] == "estimated" else src["alpha"][i] == 1.0
    assert src["left"][0] == 0 and all(src["left"][i + 1] == pytest.approx(src["right"][i])
                                       for i in range(len(want) - 1))
    legend = page.evaluate("""() => Array.from(document.querySelectorAll(
        '.jp-perf-breakdown-legend [data-key]')).map(e => [e.dataset.key, e.dataset.kind,
        Number(e.dataset.value), e.textContent])""")
    assert [k for k, *_ in legend] == want
    kinds = {bd[k]["kind"] for k in want}
    assert kinds == {"measured", "estimated"}          # the run has both: both are labelled
    for key, kind, ms, text in legend:
        assert kind == bd[key]["kind"] and ms == pytest.approx(bd[key]["ms"])
        assert fmt.ms(bd[key]["ms"]) in text
        assert ("(measured)" in text) == (kind == "measured")
        assert ("estimated" in text) == (kind == "estimated")


def test_jobs_table_is_the_runs_jobs(page, analysis):
    run, s = analysis.run, analysis.summary()
    rows = page.evaluate("""() => { const t = document.querySelector("table[data-view='jobs']");
        const cols = Array.from(t.querySelectorAll('th')).map(th => th.dataset.col);
        return Array.from(t.querySelectorAll('tbody tr')).map(tr => {
          const o = {}; Array.from(tr.children).forEach((td, i) => {
            o[cols[i]] = td.dataset.value !== undefined ? td.dataset.value : td.textContent; });
          return o; }); }""")
    assert len(rows) == len(run.jobs)
    assert sum(r["call_site"] == "collect at cell line 2" for r in rows) == 1
    assert set(rows[0]) == {"job_id", "description", "call_site", "status", "duration_ms", "stages",
                            "skipped", "attempts"}
    jobs = {int(j["job_id"]): j for j in s["jobs"]}
    status = {int(r["stage_id"]): r["status"] for r in s["stages"]}
    by_id = {int(r["job_id"]): r for r in run.jobs.to_dict("records")}
    for row in rows:
        jid = int(row["job_id"])
        rec = by_id[jid]
        # a call site into the cell reads as its line (issue W); any other: Spark's name, whole
        shown = "collect at cell line 2" if rec["name"] == IN_CELL else str(rec["name"])
        assert row["description"] == rec["description"] and row["call_site"] == shown
        assert row["status"] == str(rec["status"])
        assert float(row["duration_ms"]) == pytest.approx(jobs[jid]["duration_ms"])
        listed = set(int(x) for x in jobs[jid]["stage_ids"])
        assert int(row["skipped"]) == sum(1 for x in listed if status.get(x) == "SKIPPED")
    ran = {sid for sid, st in status.items() if st != "SKIPPED"}
    assert sum(int(r["stages"]) for r in rows) == len(ran)
    assert sum(int(r["attempts"]) for r in rows) == len(run.tasks)


def test_user_strings_stay_text(page, analysis):
    run = analysis.run
    assert page.evaluate("() => window.__xss") is None
    report = page.locator(".jp-perf-report")
    assert report.locator("img").count() == 0
    text = page.inner_text(".jp-perf-panel[data-tab='summary']")
    assert run.source in page.inner_text("pre.jp-perf-source")
    for s in (f"warning {HOSTILE}", f"{HOSTILE} job 0", f"app {HOSTILE}", f"/tmp/{HOSTILE}.log",
              f"{HOSTILE} name"):
        assert s in text, s
    # the hint's ready cell: the cell advice.ready_cell writes, as text, with its Copy button
    hints = [h for h in analysis.summary()["hints"] if h.get("setting")]
    assert hints
    cells = page.evaluate("""() => Array.from(document.querySelectorAll(
        'details.jp-ready-cell pre')).map(p => p.textContent)""")
    assert cells == [ready_cell(run, h) for h in hints if ready_cell(run, h)]
    assert HOSTILE in cells[0]
    assert page.locator("details.jp-ready-cell button.jp-ready-cell-copy").count() == len(cells)
    assert page.jp_errors == []


def test_call_site_is_not_cut_at_notebook_sidebar_width(open_report, analysis):
    page = open_report(analysis, width=420)
    cell = page.locator("table[data-view='jobs'] tbody tr td:nth-child(3)", has_text="ipykernel")
    assert cell.count() == 1
    assert cell.inner_text().replace("\n", "") == CALL_SITE
    # the whole cell lies inside the visible panel: nothing hidden past its right edge
    assert page.evaluate("""() => { const td = Array.from(document.querySelectorAll(
        "table[data-view='jobs'] tbody td")).find(t => t.textContent.includes('ipykernel'));
        const panel = document.querySelector(".jp-perf-panel[data-tab='summary']");
        return td.getBoundingClientRect().right <= panel.getBoundingClientRect().right + 1
          && td.scrollWidth <= td.clientWidth + 1; }""")


def test_fallback_shows_its_reason_and_the_runs_numbers(open_report, analysis, monkeypatch):
    import jupyter_perf.analysis as analysis_module

    def broken(run, **kw):
        raise RuntimeError(f"no analysis {HOSTILE}")

    run = copy.deepcopy(analysis.run)
    monkeypatch.setattr(analysis_module, "analyze", broken)
    page = open_report(run)
    assert page.locator(".jp-perf-tabbar button").count() == 1       # Summary only
    warn = page.inner_text(".jp-perf-report > .jp-perf-warn")
    assert f"analysis failed: RuntimeError: no analysis {HOSTILE}" in warn
    assert page.evaluate("() => window.__xss") is None
    split = totals(task_breakdown(run))
    st = run.stage_table()
    shown = {k: (v, f, text) for k, v, f, text in shown_numbers(page)}
    assert float(shown["task_time_ms"][0]) == pytest.approx(sum(v["ms"] for v in split.values()))
    assert float(shown["wall_ms"][0]) == pytest.approx(run.wall_ms)
    assert int(float(shown["task_attempts"][0])) == len(run.tasks)
    assert int(float(shown["stages"][0])) == len(run.stages)
    assert float(shown["input_bytes"][0]) == pytest.approx(float(st["input_bytes"].sum()))
    for v, f, text in shown.values():
        assert text == python_text(float(v) if v != "" else None, f)
    legend = page.evaluate("""() => Array.from(document.querySelectorAll(
        '.jp-perf-breakdown-legend [data-key]')).map(e => [e.dataset.key, Number(e.dataset.value)])""")
    assert legend == [[k, pytest.approx(v["ms"])] for k, v in split.items() if v["ms"] > 0]
    stage_rows = page.locator("table[data-view='stages-basic'] tbody tr")
    assert stage_rows.count() == len(st)
    assert f"{HOSTILE} stage" in page.inner_text("table[data-view='stages-basic']")
    assert page.jp_errors == [] and page.jp_requests == []


def test_summary_after_memory_keeps_its_own_height(open_report, analysis):
    """The report is as tall as the tab shown, not the tallest one visited."""
    page = open_report(analysis)
    before = page.evaluate("() => document.querySelector('.jp-perf-report').offsetHeight")
    show_tab(page, "memory")
    show_tab(page, "summary")
    after = page.evaluate("() => document.querySelector('.jp-perf-report').offsetHeight")
    assert abs(after - before) <= 1


def test_memory_row_shows_the_sizing_line_with_its_kind(page, analysis):
    """The key numbers' memory row ends with summary()["memory"]'s sizing line, as text, and
    its kind styled as estimated (the fixture's spill: a what-if)."""
    mem = analysis.summary()["memory"]
    assert mem["sizing"] and mem["sizing_kind"] == "estimated"
    row = page.locator("table[data-view='key-numbers'] tr[data-key='memory']")
    text = row.inner_text()
    assert "sizing: " + mem["sizing_line"] in text
    assert row.locator(".jp-perf-est").inner_text() == "(estimated)"


def test_memory_row_without_a_sizing_has_no_sizing_words():
    from jupyter_perf.render.views.summary import memory_row

    ex = pd.DataFrame({"peak_jvm_heap_bytes": [1.0], "jvm_heap_limit_bytes": [2.0]})
    for memory in (None, {"sizing": [], "sizing_line": "No sizing change: no spill."}):
        items = memory_row(ex, memory)["items"]
        assert not [i for i in items if isinstance(i, str) and "sizing" in i]
    row = memory_row(ex, {"sizing": [{}], "sizing_line": "peak heap …: x=2g.",
                          "sizing_kind": "measured"})
    assert row["items"][-3:] == ["peak heap …: x=2g.", " ", "(measured)"]
