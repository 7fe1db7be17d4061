"""The Timeline tab of the browser renderer (labextension/src/report/tabs/timeline.ts, the lane
figure of lanes.ts, data from render/views/timeline.py), in Chromium from the standalone page:
the bars drawn are the run's task attempts, zooming switches between single bars and per-lane
aggregates whose counts add up to the attempts in view, selections from other tabs highlight
the right attempt, user strings stay text, 100k attempts draw."""
from __future__ import annotations

import numpy as np
import pytest
from render_runs import HOSTILE, hostile_copy, synthetic, with_speculative
from viewhelpers import show_tab

from jupyter_perf.analysis import analyze
from jupyter_perf.render.views import ViewContext
from jupyter_perf.render.views import timeline as timeline_view

# A model of the report's BokehJS documents by name.
FIND = """(name) => { for (const d of Bokeh.documents) { const m = d.get_model_by_name(name);
                                                       if (m) return m; } return null; }"""
STATUS = ".jp-perf-panel[data-tab='timeline'] .jp-perf-lanes-status"


def timeline(open_report, a):
    """The report of ``a`` with its Timeline tab shown and drawn."""
    page = open_report(a)
    show_tab(page, "timeline")
    return page


def model_data(page, name: str) -> dict:
    """A ColumnDataSource's columns as lists."""
    return page.evaluate(f"""(name) => {{ const m = ({FIND})(name); const out = {{}};
        for (const [k, v] of Object.entries(m.data)) out[k] = Array.from(v); return out; }}""", name)


def status(page) -> dict:
    return page.eval_on_selector(STATUS, "e => ({...e.dataset, text: e.textContent})")


def zoom(page, x0_ms: float, x1_ms: float) -> dict:
    """Set the timeline's x range as a pan or zoom does, wait for the bars of that range."""
    page.evaluate(f"""([a, b]) => ({FIND})('jp-timeline').x_range.setv({{start: a / 1000,
                                                                         end: b / 1000}})""",
                  [x0_ms, x1_ms])
    page.wait_for_function("""([sel, a, b]) => { const e = document.querySelector(sel);
        if (!e || !e.dataset.range) return false;
        const [x0, x1] = e.dataset.range.split(',').map(Number);
        return Math.abs(x0 - a) < 1e-6 && Math.abs(x1 - b) < 1e-6; }""",
                           arg=[STATUS, x0_ms, x1_ms], timeout=60_000)
    return status(page)


def select(page, selection: dict) -> None:
    """Select through the report's selection bus, as the Query and Stragglers tabs do."""
    page.evaluate("""(s) => document.querySelector(".jp-perf-panel[data-tab='timeline']")
                              .jpBus.select(s, 'test')""", selection)


def arrays(a):
    """What the browser draws from, in array (dispatch) order: start ms from the window start,
    duration, lane, stage code, task id and attempt, straight from the run's task table."""
    tl = a.timeline
    t = a.run.tasks
    order = tl.order
    start = (t["launch_ms"].to_numpy(float) - tl.window[0])[order]
    dur = t["duration_ms"].to_numpy(float)[order]
    ctx = ViewContext.of(a)
    return {"start": start, "dur": dur, "lane": ctx.lanes.lane[order],
            "stage": tl.stage_code[order], "tid": t["task_id"].to_numpy()[order],
            "att": t["attempt"].to_numpy()[order], "ctx": ctx}


def in_view(x, x0, x1):
    s = x["ctx"].arrays["start"].astype("float64")          # the float32 starts the page has
    return (s <= x1) & (s + x["dur"] >= x0)


@pytest.fixture(scope="module")
def small():
    """600 attempts on 8 slots (detail mode at full span), speculative and killed attempts."""
    return analyze(with_speculative(synthetic(600, slots=8, per_stage=100)))


@pytest.fixture(scope="module")
def mid():
    return analyze(synthetic(3000))


def test_detail_mode_draws_each_attempt_once_at_its_start_for_its_duration(open_report, small):
    page = timeline(open_report, small)
    x = arrays(small)
    n = len(x["start"])
    st = status(page)
    assert st["mode"] == "detail"
    assert (int(st["visible"]), int(st["total"]), int(st["bars"])) == (n, n, n)
    assert st["text"].startswith(f"{n:,} of {n:,} task attempts in view, drawn as {n:,} single bars")
    box = model_data(page, "jp-timeline-box")
    rows = np.asarray(box["row"])
    assert sorted(rows.tolist()) == list(range(n))                  # every attempt, once
    np.testing.assert_allclose(np.asarray(box["left"]) * 1000, x["start"][rows], atol=0.01)
    np.testing.assert_allclose((np.asarray(box["right"]) - np.asarray(box["left"])) * 1000,
                               x["dur"][rows], atol=0.01)
    np.testing.assert_allclose(np.asarray(box["bottom"]), x["lane"][rows] + 0.08)
    # hover text names the attempt (task id, attempt) the bar stands for
    want = {f"{tid} " for tid in x["tid"].tolist()}
    assert {s.split("(")[0] for s in box["task"]} == want
    # the component segments of each attempt tile its bar exactly
    seg = model_data(page, "jp-timeline-seg")
    srows = np.asarray(seg["row"])
    width = np.bincount(srows, weights=np.asarray(seg["right"]) - np.asarray(seg["left"]),
                        minlength=n)
    np.testing.assert_allclose(width * 1000, x["dur"], atol=0.02)
    # colours come from the data's components, never from the tab
    colours = {c["color"] for c in x["ctx"].meta["components"]}
    assert set(seg["color"]) <= colours
    # failed/killed and speculative markers sit at the end of exactly those attempts
    flags = x["ctx"].arrays["flags"]
    for kind, mask in (("failed", (flags & 3) > 0), ("speculative", (flags & 4) > 0)):
        m = model_data(page, f"jp-timeline-{kind}")
        assert sorted(m["pos"]) == np.flatnonzero(mask).tolist() and m["pos"]
        p = np.asarray(m["pos"])
        np.testing.assert_allclose(np.asarray(m["x"]) * 1000, x["start"][p] + x["dur"][p], atol=0.01)
    # the stage track: one bar per stage attempt spanning its attempts
    track = model_data(page, "jp-timeline-track")
    for code, left, right in zip(track["code"], track["left"], track["right"]):
        sel = x["stage"] == code
        assert left * 1000 == pytest.approx(x["start"][sel].min(), abs=0.01)
        assert right * 1000 == pytest.approx((x["start"] + x["dur"])[sel].max(), abs=0.01)
    assert page.jp_errors == [] and page.jp_requests == []


def test_aggregates_count_the_attempts_in_view_and_zooming_switches_modes(open_report, mid):
    page = timeline(open_report, mid)
    x = arrays(mid)
    n = len(x["start"])
    st = status(page)
    assert st["mode"] == "aggregate" and int(st["visible"]) == n == int(st["total"])
    agg = model_data(page, "jp-timeline-agg")
    assert sum(agg["count"]) == n and len(agg["count"]) == int(st["bars"])
    assert "aggregate bars" in st["text"] and f"{n:,} of {n:,}" in st["text"]
    span = timeline_view.span_ms(mid)
    # a range with more than DETAIL_LIMIT attempts: still aggregates, counting exactly those
    x0, x1 = 0.05 * span, 0.95 * span
    want = int(in_view(x, x0, x1).sum())
    assert want > timeline_view.DETAIL_LIMIT
    st = zoom(page, x0, x1)
    assert st["mode"] == "aggregate" and int(st["visible"]) == want
    assert sum(model_data(page, "jp-timeline-agg")["count"]) == want
    assert model_data(page, "jp-timeline-box")["row"] == []
    # zoomed in: single bars, exactly the attempts overlapping the range
    x0, x1 = 0.40 * span, 0.41 * span
    want = np.flatnonzero(in_view(x, x0, x1))
    assert 0 < len(want) <= timeline_view.DETAIL_LIMIT
    st = zoom(page, x0, x1)
    assert st["mode"] == "detail" and int(st["visible"]) == len(want) == int(st["bars"])
    assert sorted(model_data(page, "jp-timeline-box")["row"]) == want.tolist()
    assert model_data(page, "jp-timeline-agg")["count"] == []
    # and out again
    st = zoom(page, -0.01 * span, 1.01 * span)
    assert st["mode"] == "aggregate" and sum(model_data(page, "jp-timeline-agg")["count"]) == n
    assert page.jp_errors == []


def test_a_task_selection_outlines_that_attempt_and_zooms_to_it(open_report, small):
    page = timeline(open_report, small)
    x = arrays(small)
    ctx = x["ctx"]
    rows = ctx.extras["straggler_rows"]
    assert len(rows)
    pos = int(ctx.extras["pos"][rows[-1]])                 # the last straggler of the table
    select(page, {"kind": "task", "pos": pos})
    hl = model_data(page, "jp-timeline-highlight")
    assert len(hl["left"]) == 1
    assert hl["left"][0] * 1000 == pytest.approx(x["start"][pos], abs=0.01)
    assert hl["right"][0] * 1000 == pytest.approx(x["start"][pos] + x["dur"][pos], abs=0.01)
    assert hl["bottom"][0] == pytest.approx(x["lane"][pos] + 0.02)
    x0, x1 = (float(v) for v in status(page)["range"].split(","))
    assert x0 < x["start"][pos] and x["start"][pos] + x["dur"][pos] < x1
    assert x1 - x0 < 0.5 * timeline_view.span_ms(small)                # zoomed in
    assert pos in model_data(page, "jp-timeline-box")["row"]
    info = page.locator(".jp-perf-timeline-selected")
    assert f"Task attempt {x['tid'][pos]} " in info.inner_text()
    assert ctx.meta["lanes"][x["lane"][pos]] in info.inner_text()
    # an operator selection: its stages' attempts full, the others faded, its span shown
    code = int(x["stage"][0])
    select(page, {"kind": "operator", "key": "op", "stageCodes": [code]})
    assert model_data(page, "jp-timeline-highlight")["left"] == []
    mine = np.flatnonzero(x["stage"] == code)
    lo, hi = x["start"][mine].min(), (x["start"] + x["dur"])[mine].max()
    x0, x1 = (float(v) for v in status(page)["range"].split(","))
    assert x0 < lo and hi < x1
    seg = model_data(page, "jp-timeline-seg")
    alpha = np.asarray(seg["alpha"])
    focus = x["stage"][np.asarray(seg["row"])] == code
    assert focus.any() and (~focus).any()
    assert (alpha[focus] >= 0.45).all() and (alpha[~focus] <= 0.15).all()
    track = model_data(page, "jp-timeline-track")
    assert [a == 1.0 for a in track["alpha"]] == [c == code for c in track["code"]]
    assert page.locator(".jp-perf-timeline-selected").get_attribute("data-count") == str(len(mine))
    select(page, {"kind": "none"})
    assert set(model_data(page, "jp-timeline-track")["alpha"]) == {1.0}
    assert page.jp_errors == []


BAR_XY = """([name, i]) => {
  const FIND = %s;
  const src = FIND(name);
  const fig = FIND('jp-timeline');
  let pv = null;
  for (const rv of Bokeh.index.roots) pv = pv || rv.owner.find_one(fig);
  const rect = pv.canvas_view.el.getBoundingClientRect();
  const d = src.data;
  const x = (d.left[i] + d.right[i]) / 2, y = (d.bottom[i] + d.top[i]) / 2;
  return [rect.left + pv.frame.x_scale.compute(x), rect.top + pv.frame.y_scale.compute(y)];
}""" % FIND


MARK_XY = BAR_XY.replace("(d.left[i] + d.right[i]) / 2", "d.x[i]").replace(
    "(d.bottom[i] + d.top[i]) / 2", "d.y[i]")


def test_hostile_lane_host_and_stage_strings_stay_text(open_report, small):
    run = hostile_copy(small.run)
    t = run.tasks.copy()
    t.loc[t["status"].isin(["FAILED", "KILLED"]), "error"] = f"{HOSTILE} boom"
    run.tasks = t
    a = analyze(run)
    page = timeline(open_report, a)
    # lane labels: plain text (BokehJS PlainText, never parsed for markup or TeX)
    labels = page.evaluate(f"""() => {{ const f = ({FIND})('jp-timeline');
        return [...f.left[0].major_label_overrides.values()].map(v => v.text); }}""")
    assert any(HOSTILE in lab for lab in labels)
    # a bar's hover: executor and host as text
    page.mouse.move(*page.evaluate(BAR_XY, ["jp-timeline-box", 0]))
    page.get_by_text(f"{HOSTILE}host", exact=False).filter(visible=True).first.wait_for()
    # a stage bar's hover: the call site as text
    page.mouse.move(*page.evaluate(BAR_XY, ["jp-timeline-track", 0]))
    page.get_by_text(f"{HOSTILE} stage", exact=False).filter(visible=True).first.wait_for()
    # a failed attempt's marker: its error as text
    page.mouse.move(*page.evaluate(MARK_XY, ["jp-timeline-failed", 0]))
    page.get_by_text(f"{HOSTILE} boom", exact=False).filter(visible=True).first.wait_for()
    assert page.evaluate("window.__xss") is None
    assert page.locator("img[src=x]").count() == 0
    assert page.jp_errors == [] and page.jp_requests == []


def test_stages_link_to_the_spark_ui_when_it_is_live(open_report, small):
    import copy
    run = copy.deepcopy(small.run)
    run.extra["ui_url"] = "http://127.0.0.1:4040"
    page = timeline(open_report, analyze(run))
    links = page.locator(".jp-perf-timeline-ui a")
    got = [links.nth(i).get_attribute("href") for i in range(links.count())]
    st = run.tasks[["stage_id", "stage_attempt"]].drop_duplicates()
    want = sorted(f"http://127.0.0.1:4040/stages/stage/?id={s}&attempt={t}"
                  for s, t in zip(st["stage_id"], st["stage_attempt"]))
    assert sorted(got) == want
    assert page.jp_requests == []                          # nothing fetched from it
    page = timeline(open_report, small)              # no live UI: no links
    assert page.locator(".jp-perf-timeline-ui a").count() == 0


def test_100k_attempts_draw_as_aggregates_counting_every_attempt(open_report):
    a = analyze(synthetic(100_000))
    page = timeline(open_report, a)
    st = status(page)
    assert st["mode"] == "aggregate"
    assert int(st["visible"]) == int(st["total"]) == 100_000
    assert st["text"].startswith("100,000 of 100,000 task attempts in view")
    assert sum(model_data(page, "jp-timeline-agg")["count"]) == 100_000
    assert page.jp_errors == []


def test_lag_note_and_a_run_without_attempts(open_report, small):
    """Attempts launched before their core's previous finish stamp are counted in the note; a
    window without task attempts draws an empty timeline that says so."""
    import copy

    from jupyter_perf import fmt
    run = copy.deepcopy(small.run)
    t = run.tasks.copy()
    idx = t.index[50::97]                      # launched 4 ms earlier: overlaps on a full executor
    t.loc[idx, "launch_ms"] -= 4.0
    t.loc[idx, "duration_ms"] += 4.0
    run.tasks = t
    a = analyze(run)
    lanes = ViewContext.of(a).lanes
    assert lanes.lagged > 0
    page = timeline(open_report, a)
    text = page.locator(".jp-perf-panel[data-tab='timeline']").inner_text()
    assert (f"{lanes.lagged:,} attempts launched up to {fmt.ms(lanes.max_lag_ms)} before the "
            "previous attempt on the same core") in text
    assert "launched up to" not in timeline(open_report, small).locator(
        ".jp-perf-panel[data-tab='timeline']").inner_text()
    empty = copy.deepcopy(small.run)
    empty.tasks = empty.tasks.iloc[:0]
    page = timeline(open_report, analyze(empty))
    st = status(page)
    assert (st["visible"], st["total"], st["bars"]) == ("0", "0", "0")
    assert st["text"].startswith("0 of 0 task attempts in view")
    assert page.jp_errors == []
