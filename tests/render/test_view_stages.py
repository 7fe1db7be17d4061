"""The Stages tab drawn from data (views/stages.py -> labextension/src/report/tabs/stages.ts):
its rows are ``a.stage_table()`` (Spark's REST /stages sums) with task-time quantiles equal to
numpy's over the run's own task attempts and a breakdown whose measured components equal
Spark's stage sums; every column reads in one formatter; user strings stay text; skipped
stages fold; the Spark UI links; an operator selected elsewhere selects its stages' rows."""
from __future__ import annotations

import re

import numpy as np
import pytest
from render_runs import (
    HOSTILE,
    hostile_copy,
    synthetic,
    with_plan,
    with_skipped,
    with_speculative,
)
from viewhelpers import show_tab

from jupyter_perf import fmt
from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.components import COMPONENTS
from jupyter_perf.render.views import ViewContext, jsonable, stages

UI = "http://127.0.0.1:4040"
LOCAL = ("file:", "data:", "blob:", "about:")
QUANTILES = dict(stages.QUANTILES)
FORMATS = {
    "ms": re.compile(r"^(\d+ ms|\d+\.\d\d s|\d+ min \d\d s|\d+ h \d\d min)$"),
    "bytes": re.compile(r"^(\d+ B|\d+\.\d (KiB|MiB|GiB|TiB))$"),
    "pct": re.compile(r"^\d+\.\d%$"),
    "int": re.compile(r"^\d{1,3}(,\d{3})*$"),
}
MS_COLS = ["task_time_ms", *QUANTILES]
CELL_FILE = "/tmp/ipykernel_4242/2750918563.py"
CELL_SOURCE = "%%perfmeasure\ndf = spark.range(10)\nrows = df.collect()  # <b>line</b>\n"
BYTES_COLS = list(stages.BYTES)

# The drawn table: headers (key, title, tooltip, class) and rows (source row, cells).
READ_TABLE = """(view) => {
  const t = document.querySelector(`table[data-view='${view}']`);
  const cols = [...t.querySelectorAll('thead th')].map((th) => ({
    key: th.dataset.col, title: th.textContent, help: th.title, cls: th.className}));
  const rows = [...t.querySelectorAll('tbody tr')].map((tr) => ({
    row: Number(tr.dataset.row), selected: tr.classList.contains('jp-perf-selected'),
    cells: [...tr.children].map((td) => ({
      text: td.textContent, value: td.dataset.value === undefined ? null : td.dataset.value,
      href: td.querySelector('a') ? td.querySelector('a').getAttribute('href') : null,
      fits: [...td.querySelectorAll('.jp-perf-wrap')].every((s) => s.scrollWidth <= s.clientWidth + 1),
      hover: td.querySelector('.jp-perf-callsite[title]')
        ? td.querySelector('.jp-perf-callsite').getAttribute('title') : null
    }))}));
  return {cols, rows};
}"""


def _run():
    run = with_plan(hostile_copy(with_skipped(with_speculative(synthetic(1500, 8, per_stage=200)),
                                              n=2)), n_ops=30, hostile=True)
    stages_ = run.stages.copy()
    long_site = "collect at /very/long/path/" + "segment/" * 30 + f"notebook.py:42 {HOSTILE}"
    stages_.loc[stages_.index[1], "name"] = long_site
    # the first stage's action is on line 3 of the measured cell (the kernel's file for it)
    stages_.loc[stages_.index[0], "name"] = f"collect at {CELL_FILE}:3"
    run.stages = stages_
    run.kind, run.source = "cell", CELL_SOURCE
    run.extra["cell_file"] = CELL_FILE
    run.extra["ui_url"] = UI
    return run


@pytest.fixture(scope="module")
def analysis():
    return analyze(_run())


@pytest.fixture(scope="module")
def view(analysis):
    return jsonable(stages.data(analysis, ViewContext.of(analysis)))


def test_rows_are_the_stage_table_with_quantiles_and_breakdown(analysis, view):
    a, rows = analysis, view["rows"]
    st = a.stage_table()
    assert len(st) == view["n_stages"] == len(rows["stage_id"])
    assert rows["stage_id"] == st["stage_id"].astype(int).tolist()
    assert rows["attempt"] == st["attempt"].astype(int).tolist()
    assert rows["status"] == st["status"].astype(str).tolist()
    assert rows["name"] == st["name"].astype(str).tolist()
    assert rows["operators"] == [a.stage_operators.get(s, "") for s in rows["stage_id"]]
    assert any("<img src=x" in ops for ops in rows["operators"])   # markup, to stay text
    assert rows["task_attempts"] == st["task_attempts"].astype(int).tolist()
    assert rows["failed_tasks"] == st["failed_tasks"].astype(int).tolist()
    for col in BYTES_COLS:
        assert rows[col] == st[col].astype(float).tolist(), col
    skipped = [s == "SKIPPED" for s in rows["status"]]
    assert rows["skipped"] == skipped and view["n_skipped"] == 2 == sum(skipped)

    t = a.run.tasks
    dur = (t["finish_ms"] - t["launch_ms"]).to_numpy(float)    # every attempt finished here
    by_name = {c.key: c for c in COMPONENTS}
    spark_sums = {"cpu": "executor_cpu_time_ms", "gc": "jvm_gc_time_ms",
                  "shuffle_fetch_wait": "shuffle_fetch_wait_ms",
                  "shuffle_write": "shuffle_write_time_ms"}
    for i, (sid, att) in enumerate(zip(rows["stage_id"], rows["attempt"])):
        mask = ((t["stage_id"] == sid) & (t["stage_attempt"] == att)).to_numpy()
        if skipped[i]:
            assert not mask.any() and rows["p50"][i] == 0 and rows["task_time_ms"][i] == 0
            continue
        for name, q in QUANTILES.items():
            assert rows[name][i] == pytest.approx(np.quantile(dur[mask], q), rel=1e-9), (sid, name)
        bd = {k: rows[f"bd_{k}"][i] for k in by_name}
        assert rows["task_time_ms"][i] == pytest.approx(sum(bd.values()), rel=1e-9)
        per_task = a.task_breakdown[mask]
        for key in by_name:
            assert bd[key] == pytest.approx(float(per_task[key].sum()), rel=1e-9, abs=1e-9)
        for key, col in spark_sums.items():          # measured: Spark's own stage sums
            assert bd[key] == pytest.approx(float(st[col].iloc[i]), rel=1e-9, abs=1e-6), (sid, key)
        in_run = [c.key for c in COMPONENTS if c.in_run]
        shares = [rows[f"share_{k}"][i] for k in in_run] + [rows["share_overhead"][i]]
        assert sum(shares) == pytest.approx(1.0, rel=1e-9)
    # the bars: the stages that ran, by stage id (no more than MAX_BAR_STAGES)
    ran = [i for i, s in enumerate(skipped) if not s]
    assert view["bar_rows"] == ran
    assert {c["key"] for c in view["components"]} == set(by_name)


def test_bars_keep_the_stages_with_the_most_task_time():
    a = analyze(synthetic(4000, 8, per_stage=60))
    view = jsonable(stages.data(a, ViewContext.of(a)))
    rows = view["rows"]
    assert view["n_ran"] > stages.MAX_BAR_STAGES
    picked = view["bar_rows"]
    assert len(picked) == stages.MAX_BAR_STAGES
    assert [rows["stage_id"][i] for i in picked] == sorted(rows["stage_id"][i] for i in picked)
    least_kept = min(rows["task_time_ms"][i] for i in picked)
    dropped = [rows["task_time_ms"][i] for i in range(len(rows["stage_id"])) if i not in picked]
    assert max(dropped) <= least_kept


@pytest.fixture(scope="module")
def page(analysis, jp_browser, tmp_path_factory):
    """One page for the browser tests of this module (they do not change what they read
    before they look, except where they undo it)."""
    from jupyter_perf.render.standalone import report_page
    from jupyter_perf.render.views import report_payload
    path = tmp_path_factory.mktemp("stages") / "report.html"
    path.write_text(report_page(report_payload(analysis)), encoding="utf-8")
    pg = jp_browser.new_page(viewport={"width": 1100, "height": 900})
    pg.jp_errors = []
    pg.on("pageerror", lambda e: pg.jp_errors.append(str(e)))
    pg.on("console", lambda m: m.type == "error" and pg.jp_errors.append(m.text))
    pg.route("**/*", lambda r: r.continue_() if r.request.url.startswith(LOCAL) else r.abort())
    pg.goto(path.as_uri())
    pg.wait_for_selector(".jp-perf-report[data-jp-ready='1']", timeout=60_000)
    show_tab(pg, "stages")
    yield pg
    pg.close()


def _cells(table: dict) -> list[dict]:
    keys = [c["key"] for c in table["cols"]]
    return [{"row": r["row"], "selected": r["selected"], **dict(zip(keys, r["cells"]))}
            for r in table["rows"]]


def test_table_shows_every_stage_that_ran_in_one_format_per_column(page, view):
    rows = view["rows"]
    assert sum(x == "collect at cell line 3" for x in rows["call_site"]) == 1
    table = page.evaluate(READ_TABLE, "stages")
    cols = {c["key"]: c for c in table["cols"]}
    drawn = _cells(table)
    ran = [i for i, s in enumerate(rows["skipped"]) if not s]
    assert sorted(r["row"] for r in drawn) == ran
    for r in drawn:
        i = r["row"]
        assert r["stage_id"]["text"] == str(rows["stage_id"][i])
        assert r["stage_id"]["href"] == (f"{UI}/stages/stage/?id={rows['stage_id'][i]}"
                                         f"&attempt={rows['attempt'][i]}")
        # the call site: the cell's line where it points into the cell, else Spark's name
        # (hostile: text, whole)
        assert r["call_site"]["text"] == rows["call_site"][i]
        in_cell = rows["name"][i] == f"collect at {CELL_FILE}:3"
        assert r["call_site"]["text"] == (
            "collect at cell line 3" if in_cell else rows["name"][i])
        assert r["call_site"]["fits"], "the call site is cut off"
        assert r["call_site"]["hover"] == (
            "cell line: rows = df.collect()  # <b>line</b>" if in_cell else None)
        assert r["status"]["text"] == rows["status"][i]
        assert r["operators"]["text"] == rows["operators"][i] and r["operators"]["fits"]
        for key in MS_COLS:
            assert float(r[key]["value"]) == rows[key][i]
            assert r[key]["text"] == fmt.ms(rows[key][i]), key
            assert FORMATS["ms"].match(r[key]["text"]), (key, r[key]["text"])
        for key in BYTES_COLS:
            assert r[key]["text"] == fmt.nbytes(rows[key][i]), key
            assert FORMATS["bytes"].match(r[key]["text"]), (key, r[key]["text"])
        for key in ("task_attempts", "failed_tasks"):
            assert r[key]["text"] == f"{rows[key][i]:,}" and FORMATS["int"].match(r[key]["text"])
        for c in COMPONENTS:
            if c.in_run:
                cell = r[f"share_{c.key}"]
                assert float(cell["value"]) == rows[f"share_{c.key}"][i]
                assert FORMATS["pct"].match(cell["text"]), cell["text"]
    for c in COMPONENTS:                  # each share column says measured or estimated
        if c.in_run:
            col = cols[f"share_{c.key}"]
            assert col["title"] == c.short
            assert c.kind in col["help"] and c.spark_metric in col["help"]
            assert ("jp-perf-est" in col["cls"]) == c.estimated
    assert all(k in cols["share_overhead"]["help"] for k in ("scheduler delay", "measured"))
    panel = page.locator(".jp-perf-panel[data-tab='stages']")
    assert page.evaluate("() => window.__xss") is None
    assert panel.locator("img").count() == 0
    assert HOSTILE in panel.inner_text()
    assert page.locator(".jp-perf-panel[data-tab='stages'] .jp-perf-stage-bars canvas").count() >= 1
    assert page.jp_errors == []


def test_breakdown_in_ms_and_skipped_stages_on_request(page, view):
    rows = view["rows"]
    panel = ".jp-perf-panel[data-tab='stages']"
    label = page.locator(f"{panel} label", has_text="skipped stage").inner_text()
    assert "show the 2 skipped stages" in label
    page.check(f"{panel} input[name='jp-stages-ms']")
    page.check(f"{panel} input[name='jp-stages-skipped']")
    try:
        drawn = _cells(page.evaluate(READ_TABLE, "stages"))
        assert sorted(r["row"] for r in drawn) == list(range(len(rows["stage_id"])))
        for r in drawn:
            i = r["row"]
            for c in COMPONENTS:
                if c.in_run:
                    cell = r[f"bd_{c.key}"]
                    assert float(cell["value"]) == rows[f"bd_{c.key}"][i]
                    assert cell["text"] == fmt.ms(rows[f"bd_{c.key}"][i])
            if rows["skipped"][i]:
                assert r["p50"]["text"] == "0 ms" and r["status"]["text"] == "SKIPPED"
    finally:
        page.uncheck(f"{panel} input[name='jp-stages-ms']")
        page.uncheck(f"{panel} input[name='jp-stages-skipped']")


def test_an_operator_or_a_task_selection_selects_its_stages(page, analysis, view):
    rows = view["rows"]
    stage_ids = analysis.timeline.stage_keys[:, 0].tolist()
    codes = [1, 3]
    want = {stage_ids[c] for c in codes}
    publish = """([codes]) => document.querySelector(".jp-perf-panel[data-tab='stages']")
                   .jpBus.select({kind: 'operator', key: 'x', stageCodes: codes}, 'query')"""
    page.evaluate(publish, [codes])
    drawn = _cells(page.evaluate(READ_TABLE, "stages"))
    assert {rows["stage_id"][r["row"]] for r in drawn if r["selected"]} == want
    assert page.get_attribute(".jp-perf-panel[data-tab='stages']", "data-selected-stages") == \
        ",".join(str(s) for s in sorted(want))
    # a task attempt selected (a straggler, a timeline bar): its stage's row
    ctx = ViewContext.of(analysis)
    pos = len(ctx.arrays["stage"]) // 2
    sid = stage_ids[int(ctx.arrays["stage"][pos])]
    page.evaluate("""(pos) => document.querySelector(".jp-perf-panel[data-tab='stages']")
                     .jpBus.select({kind: 'task', pos}, 'stragglers')""", pos)
    drawn = _cells(page.evaluate(READ_TABLE, "stages"))
    assert [rows["stage_id"][r["row"]] for r in drawn if r["selected"]] == [sid]
    page.evaluate("""() => document.querySelector(".jp-perf-panel[data-tab='stages']")
                     .jpBus.select({kind: 'none'}, 'query')""")
    drawn = _cells(page.evaluate(READ_TABLE, "stages"))
    assert not any(r["selected"] for r in drawn)
