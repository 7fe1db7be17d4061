"""The Stragglers tab drawn from data (views/stragglers.py -> tabs/stragglers.ts): its rows are
``a.stragglers`` with the causes in words, durations through the one duration formatter, user
strings as text; a click on a row publishes the attempt's position in the task arrays (the
Timeline's highlight) and an operator selected elsewhere selects its stages' stragglers. A real
skewed join (one Spark session for this module) shows its stragglers with their causes, and its
Stages tab shows Spark's stage table."""
from __future__ import annotations

import re

import numpy as np
import pytest
from render_runs import HOSTILE, hostile_copy, skewed_join_run, synthetic, with_speculative
from viewhelpers import show_tab

from jupyter_perf import fmt
from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.stragglers import CAUSES
from jupyter_perf.render.views import ViewContext, jsonable, stages, stragglers

UI = "http://127.0.0.1:4040"
MS = re.compile(r"^(\d+ ms|\d+\.\d\d s|\d+ min \d\d s|\d+ h \d\d min)$")
BYTES = re.compile(r"^(\d+ B|\d+\.\d (KiB|MiB|GiB|TiB))$")
PANEL = ".jp-perf-panel[data-tab='stragglers']"

READ_TABLE = """(view) => {
  const t = document.querySelector(`table[data-view='${view}']`);
  const keys = [...t.querySelectorAll('thead th')].map((th) => th.dataset.col);
  return [...t.querySelectorAll('tbody tr')].map((tr) => {
    const out = {row: Number(tr.dataset.row), selected: tr.classList.contains('jp-perf-selected')};
    [...tr.children].forEach((td, k) => {
      out[keys[k]] = {text: td.textContent,
                      value: td.dataset.value === undefined ? null : td.dataset.value,
                      href: td.querySelector('a') ? td.querySelector('a').getAttribute('href') : null};
    });
    return out;
  });
}"""
# Record what the panel publishes on the report's selection bus.
LISTEN = f"""() => {{
  window.__published = [];
  document.querySelector("{PANEL}").jpBus.subscribe(
    (s, source) => window.__published.push([s, source]));
}}"""


def _open(open_report, a):
    """The report on its Stragglers tab (conftest's ``tab=`` misses its show_tab import)."""
    page = open_report(a)
    show_tab(page, "stragglers")
    return page


def _view(a):
    ctx = ViewContext.of(a)
    return ctx, jsonable(stragglers.data(a, ctx))


@pytest.fixture(scope="module")
def synth():
    run = hostile_copy(with_speculative(synthetic(3000, 16, per_stage=400)))
    run.extra["ui_url"] = UI
    a = analyze(run)
    assert (a.stragglers["kind"] == "straggler").any() and (a.stragglers["kind"] != "straggler").any()
    return a


def test_rows_are_the_analysis_stragglers_with_their_attempt_positions(synth):
    a = synth
    ctx, view = _view(a)
    s, rows = a.stragglers, view["rows"]
    assert view["n"] == len(s) == len(rows["task_id"])
    assert view["n_stragglers"] == int((s["kind"] == "straggler").sum())
    for col in ("stage_id", "stage_attempt", "task_id", "index", "attempt"):
        assert rows[col] == s[col].astype(int).tolist(), col
    assert rows["executor_id"] == s["executor_id"].astype(str).tolist()
    assert rows["duration_ms"] == s["duration_ms"].astype(float).tolist()
    assert rows["stage_median_ms"] == s["stage_median_ms"].astype(float).tolist()
    assert rows["rate_ratio"] == pytest.approx(s["rate_ratio"].astype(float).tolist())
    for kind, keys, words in zip(s["kind"], s["causes"], rows["causes"]):
        if keys:
            assert words == ", ".join(CAUSES[k] for k in keys)
        else:
            assert words == (stragglers.UNEXPLAINED if kind == "straggler" else stragglers.MORE_DATA)
    # pos: the attempt's place in the per-task arrays the Timeline draws from
    stage_ids = ctx.meta["stage_ids"]
    for i, p in enumerate(rows["pos"]):
        assert p >= 0
        assert int(ctx.arrays["tid"][p]) == rows["task_id"][i]
        assert stage_ids[int(ctx.arrays["stage"][p])] == rows["stage_id"][i]
        assert int(ctx.arrays["att"][p]) == rows["attempt"][i]


def test_table_rows_units_and_text(synth, open_report):
    _, view = _view(synth)
    rows = view["rows"]
    page = _open(open_report, synth)
    drawn = page.evaluate(READ_TABLE, "stragglers")
    assert [r["row"] for r in drawn] == list(range(view["n"]))     # the analysis' order
    for r in drawn:
        i = r["row"]
        assert r["stage_id"]["text"] == str(rows["stage_id"][i])
        assert r["stage_id"]["href"] == (f"{UI}/stages/stage/?id={rows['stage_id'][i]}"
                                         f"&attempt={rows['stage_attempt'][i]}")
        assert r["task_id"]["value"] == str(rows["task_id"][i])
        for key in ("duration_ms", "stage_median_ms"):        # one formatter, never bare
            assert float(r[key]["value"]) == rows[key][i]
            assert r[key]["text"] == fmt.ms(rows[key][i]) and MS.match(r[key]["text"]), key
        assert r["bytes_read"]["text"] == fmt.nbytes(rows["bytes_read"][i])
        assert BYTES.match(r["bytes_read"]["text"])
        assert r["causes"]["text"] == rows["causes"][i]
        assert r["kind"]["text"] == rows["kind"][i]
        assert r["executor_id"]["text"] == rows["executor_id"][i] and HOSTILE in r["host"]["text"]
    counts = page.locator(f"{PANEL} b").first.inner_text()
    assert counts == (f"{fmt.count(view['n_stragglers'], 'straggler')}, "
                      f"{fmt.count(view['n_skewed'], 'data-skewed task')}")
    assert page.locator(f"{PANEL} img").count() == 0
    assert page.evaluate("() => window.__xss") is None
    assert page.jp_errors == [] and page.jp_requests == []


def test_a_click_publishes_the_attempt_and_an_operator_selects_its_stragglers(synth, open_report):
    a = synth
    ctx, view = _view(a)
    rows = view["rows"]
    page = _open(open_report, a)
    page.evaluate(LISTEN)
    for i in (len(rows["task_id"]) - 1, 0):
        page.click(f"{PANEL} table[data-view='stragglers'] tbody tr[data-row='{i}']")
        assert page.get_attribute(PANEL, "data-selected-pos") == str(rows["pos"][i])
        published = page.evaluate("() => window.__published")
        assert published[-1] == [{"kind": "task", "pos": rows["pos"][i]}, "stragglers"]
        drawn = page.evaluate(READ_TABLE, "stragglers")
        assert [r["row"] for r in drawn if r["selected"]] == [i]
        info = page.locator(f"{PANEL} .jp-perf-selected-info").inner_text()
        assert f"Task attempt {rows['task_id'][i]} (stage {rows['stage_id'][i]}" in info
        assert fmt.ms(float(ctx.arrays["dur"][rows["pos"][i]])) in info
    # the Timeline highlights the last one clicked (drawn now, it reads the bus's selection)
    show_tab(page, "timeline")
    tl_selected = page.locator(".jp-perf-panel[data-tab='timeline'] .jp-perf-timeline-selected")
    assert tl_selected.get_attribute("data-pos") == str(rows["pos"][0])
    assert f"Task attempt {rows['task_id'][0]} " in tl_selected.inner_text()
    show_tab(page, "stragglers")
    # an operator of two stages: their stragglers are selected, nothing is published back
    stage_ids = ctx.meta["stage_ids"]
    codes = sorted({stage_ids.index(s) for s in rows["stage_id"]})[:2]
    want = {stage_ids[c] for c in codes}
    n_published = len(page.evaluate("() => window.__published"))
    page.evaluate(f"""(codes) => document.querySelector("{PANEL}").jpBus.select(
                        {{kind: 'operator', key: 'op', stageCodes: codes}}, 'query')""", codes)
    drawn = page.evaluate(READ_TABLE, "stragglers")
    assert [r["row"] for r in drawn if r["selected"]] == \
        [i for i, s in enumerate(rows["stage_id"]) if s in want]
    assert len(page.evaluate("() => window.__published")) == n_published + 1   # the query's own
    assert page.get_attribute(PANEL, "data-selected-pos") is None


@pytest.fixture(scope="module")
def real():
    from sparkhelpers import make_spark
    spark = make_spark("local[2]", **{"spark.sql.autoBroadcastJoinThreshold": "-1",
                                      "spark.sql.adaptive.enabled": "false"})
    try:
        yield analyze(skewed_join_run(spark))
    finally:
        spark.stop()


def test_a_real_skewed_join_shows_its_stragglers_with_causes_and_its_stages(real, open_report):
    a = real
    s = a.stragglers
    assert len(s) > 0, "the hot key made no straggler or data-skewed task"
    page = _open(open_report, a)
    drawn = page.evaluate(READ_TABLE, "stragglers")
    assert len(drawn) == len(s)
    for r, (_, row) in zip(drawn, s.iterrows()):
        assert int(r["task_id"]["value"]) == int(row["task_id"])
        assert r["causes"]["text"] == stragglers.cause_text(row["kind"], row["causes"])
        assert r["causes"]["text"] and MS.match(r["duration_ms"]["text"])
        assert r["kind"]["text"] == ("straggler" if row["kind"] == "straggler" else "data skew")

    show_tab(page, "stages")
    st = a.stage_table()
    t = a.run.tasks
    dur = a.timeline.duration
    drawn = page.evaluate(READ_TABLE, "stages")
    ran = st[st["status"] != "SKIPPED"].reset_index(drop=True)
    assert sorted(int(r["stage_id"]["text"]) for r in drawn) == sorted(ran["stage_id"].astype(int))
    for r in drawn:
        rec = st.iloc[r["row"]]
        mask = ((t["stage_id"] == rec["stage_id"]) & (t["stage_attempt"] == rec["attempt"])).to_numpy()
        assert int(r["task_attempts"]["value"]) == int(rec["task_attempts"]) == int(mask.sum())
        for name, q in stages.QUANTILES:
            assert float(r[name]["value"]) == pytest.approx(np.quantile(dur[mask], q), rel=1e-9)
        assert float(r["shuffle_read_bytes"]["value"]) == float(rec["shuffle_read_bytes"])
    assert page.jp_errors == []
