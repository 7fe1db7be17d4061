"""The Query tab of the one renderer (views/query.py's data, tabs/query.ts's drawing): the plan
graph has one box per operator of ``a.operators`` and the edges of ``plan_edges``, the
operator table holds ``a.operators``' numbers, a box and its row select each other, the
SQL executions link to the live Spark UI, user strings stay text, and a real TPC-H plan
measured on Spark draws with its operator labels."""
from __future__ import annotations

import copy
import math

import pytest
from render_runs import HOSTILE, synthetic, with_plan
from viewhelpers import show_tab

from jupyter_perf.analysis import analyze
from jupyter_perf.render.views import ViewContext, jsonable
from jupyter_perf.render.views import query as view

UI = "http://127.0.0.1:4040"

# The plan figure's renderers, read from BokehJS: boxes (one per operator, the source's row
# order), edges (segments) and each box's centre in page pixels (for clicks).
_PLAN = """() => {
  const panel = document.querySelector(".jp-perf-panel[data-tab='query']");
  for (const view of Bokeh.index) {
    if (!panel.contains(view.el)) continue;
    const find = (name) => view.model.renderers.find((r) => r.name === name);
    const boxes = find('jp-plan-boxes');
    if (!boxes) continue;
    const edges = find('jp-plan-edges');
    const d = boxes.data_source.data;
    const rect = view.el.getBoundingClientRect();
    const fx = view.frame.x_scale, fy = view.frame.y_scale;
    return {
      key: [...d.key], full_label: [...d.full_label], text: [...d.text],
      x: [...d.x], y: [...d.y], w: [...d.w],
      selected: [...boxes.data_source.selected.indices],
      edges: edges ? ['x0', 'y0', 'x1', 'y1'].map((c) => [...edges.data_source.data[c]]) : null,
      px: [...d.x].map((x) => rect.left + fx.compute(x)),
      py: [...d.y].map((y) => rect.top + fy.compute(y)),
    };
  }
  return null;
}"""

# The texts of the shown hover tooltip's values (BokehJS draws it in shadow roots).
_TOOLTIP = """() => {
  const out = [];
  const walk = (root) => {
    for (const e of root.querySelectorAll('*')) {
      if (e.shadowRoot) walk(e.shadowRoot);
      if (e.classList && e.classList.contains('bk-tooltip-row-value')) out.push(e.textContent);
    }
  };
  walk(document);
  return out;
}"""

_ROWS = """() => {
  const t = document.querySelector("table[data-view='operators']");
  const cols = [...t.querySelectorAll('thead th')].map((th) => th.dataset.col);
  return {cols, rows: [...t.querySelectorAll('tbody tr')].map((tr) => ({
    row: Number(tr.dataset.row), selected: tr.classList.contains('jp-perf-selected'),
    cells: [...tr.children].map((td) => ({text: td.textContent,
      value: td.hasAttribute('data-value') ? td.getAttribute('data-value') : null}))}))};
}"""


def _num(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _close(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))


@pytest.fixture(scope="module")
def planned():
    """A synthetic run with a 40-node plan, HTML in its descriptions and scanned paths, and a
    live Spark UI address."""
    run = with_plan(synthetic(1500, 8, per_stage=200), n_ops=40, hostile=True)
    run = copy.deepcopy(run)
    run.extra["ui_url"] = UI
    return analyze(run)


# -- data (no browser) ---------------------------------------------------------------------
def test_data_rows_are_the_operators_with_their_layout(planned):
    a = planned
    ctx = ViewContext.of(a)
    d = jsonable(view.data(a, ctx))
    ops = a.operators
    rows = d["operators"]
    assert len(rows) == len(ops) == 39                       # wrappers looked through
    assert [r["name"] for r in rows] == ops["name"].tolist()
    assert [r["full_label"] for r in rows] == ops["label"].tolist()
    assert [r["key"] for r in rows] == [f"{e}:{n}" for e, n in zip(ops["execution_id"], ops["node_id"])]
    for r, (_, op) in zip(rows, ops.iterrows()):
        t = _num(op["task_time_ms"]) or 0.0
        assert _close(r["task_time_ms"], t)
        assert _close(r["share"], _num(op["share"]) if t > 0 else 0.0)
        assert r["kind"] == (op["kind"] if t > 0 else "")
        assert _close(r["rows_out"], _num(op["rows_out"]))
        assert r["stage_list"] == [int(s) for s in op["stage_ids"]]
        # stage codes: the positions of those stages in the task arrays' stage table
        assert sorted({ctx.meta["stage_ids"][c] for c in r["stage_codes"]}) == sorted(set(r["stage_list"]))
    assert {r["kind"] for r in rows} >= {"estimated"}
    # edges: plan_edges, as row indices; producers above consumers (y grows downwards)
    keys = [(r["execution_id"], r["node_id"]) for r in rows]
    assert sorted((keys[p], keys[c]) for p, c in d["edges"]) == view.plan_edges(a, set(keys))
    assert d["edges"] and all(rows[p]["y"] < rows[c]["y"] for p, c in d["edges"])
    boxes = sorted((r["y"], r["x"], r["w"]) for r in rows)     # one layer's boxes never overlap
    for (y1, x1, w1), (y2, x2, w2) in zip(boxes, boxes[1:]):
        if y1 == y2:
            assert x1 + w1 / 2 <= x2 - w2 / 2 + 1e-6
    # colour by share: the darkest for the top operator, grey without task time
    top = max(range(len(rows)), key=lambda i: rows[i]["share"])
    assert rows[top]["color"] == d["palette"][-1]
    assert all(r["color"] == d["no_time"] for r in rows if r["task_time_ms"] <= 0)
    from bokeh.palettes import YlOrRd9
    assert d["palette"] == list(reversed(YlOrRd9))[1:]      # today's palette
    assert d["executions"] == [{"execution_id": 0, "operators": 39,
                                "description": a.run.sql["description"].iloc[0]}]


def test_data_of_a_run_without_sql_says_so():
    a = analyze(synthetic(300, 4, per_stage=50))
    d = view.data(a, ViewContext.of(a))
    assert d["operators"] == [] and d["edges"] == []
    assert d["note"].startswith("No SQL ran in this window")


# -- browser ---------------------------------------------------------------------------------
def test_graph_and_table_show_the_operators(open_report, planned):
    a = planned
    page = open_report(a)
    show_tab(page, "query")
    plan = page.evaluate(_PLAN)
    ops = a.operators
    keys = [f"{e}:{n}" for e, n in zip(ops["execution_id"], ops["node_id"])]
    assert plan["key"] == keys                               # one box per operator
    assert plan["full_label"] == ops["label"].tolist()
    # the drawn edges are plan_edges: producer's bottom to consumer's top
    at = {k: i for i, k in enumerate(keys)}
    pairs = view.plan_edges(a, {(int(e), int(n)) for e, n in zip(ops["execution_id"], ops["node_id"])})
    x0, y0, x1, y1 = plan["edges"]
    box_h = view.BOX_H
    want = sorted((plan["x"][at[f"{p[0]}:{p[1]}"]], plan["y"][at[f"{p[0]}:{p[1]}"]] - box_h / 2,
                   plan["x"][at[f"{c[0]}:{c[1]}"]], plan["y"][at[f"{c[0]}:{c[1]}"]] + box_h / 2)
                  for p, c in pairs)
    assert sorted(zip(x0, y0, x1, y1)) == want and len(want) == 36
    # box text: label, then share and task time with the one formatter's units
    top = 0
    assert plan["text"][top].startswith(ops["label"].iloc[top][:20])
    assert plan["text"][top].endswith(" s") and "%" in plan["text"][top]

    table = page.evaluate(_ROWS)
    assert table["cols"] == ["full_label", "share", "task_time_ms", "kind", "rows_out",
                             "input_bytes", "spill_bytes", "peak_memory_bytes", "skew_ratio",
                             "python_udf_ms", "driver_ms", "stages", "execution_id",
                             "description"]
    col = {c: i for i, c in enumerate(table["cols"])}
    assert [r["row"] for r in table["rows"]] == list(range(len(ops)))   # most expensive first
    for r, (_, op) in zip(table["rows"], ops.iterrows()):
        cells = r["cells"]
        t = _num(op["task_time_ms"]) or 0.0
        assert cells[col["full_label"]]["text"] == op["label"]
        assert _close(float(cells[col["task_time_ms"]]["value"]), t)
        assert _close(float(cells[col["share"]]["value"]), _num(op["share"]) if t > 0 else 0.0)
        assert cells[col["kind"]]["text"] == (op["kind"] if t > 0 else "")
        rows_out = _num(op["rows_out"])
        assert cells[col["rows_out"]]["value"] == ("" if rows_out is None else str(int(rows_out)))
        assert cells[col["execution_id"]]["value"] == str(int(op["execution_id"]))
    # the SQL execution links to its page of the live Spark UI
    link = page.query_selector(".jp-perf-panel[data-tab='query'] li[data-execution='0'] a")
    assert link.get_attribute("href") == f"{UI}/SQL/execution/?id=0"
    assert page.jp_errors == [] and page.jp_requests == []


def test_a_box_and_its_row_select_each_other(open_report, planned):
    a = planned
    page = open_report(a)
    show_tab(page, "query")
    info = ".jp-perf-panel[data-tab='query'] .jp-perf-query-info"
    assert "Click an operator" in page.inner_text(info)
    # click the second box: its row is selected, the others not
    i = 1
    page.evaluate("""(i) => { const p = document.querySelector('[data-view=plan]');
        p.scrollLeft = 0; p.scrollTop = 0; }""", i)
    plan = page.evaluate(_PLAN)
    page.evaluate("""([x, y]) => { const p = document.querySelector('[data-view=plan]');
        const r = p.getBoundingClientRect();
        p.scrollLeft = x - r.left - r.width / 2; p.scrollTop = y - r.top - r.height / 2; }""",
                  [plan["px"][i], plan["py"][i]])
    plan = page.evaluate(_PLAN)
    page.mouse.click(plan["px"][i], plan["py"][i])
    page.wait_for_function("() => document.querySelector("
                           "\"table[data-view='operators'] tr.jp-perf-selected\") !== null")
    rows = page.evaluate(_ROWS)["rows"]
    assert [r["row"] for r in rows if r["selected"]] == [i]
    assert page.evaluate(_PLAN)["selected"] == [i]
    # the line under the header names the operator, its stages and their task attempts
    op = a.operators.iloc[i]
    stages = sorted({int(s) for s in op["stage_ids"]})
    n = int(a.run.tasks["stage_id"].isin(stages).sum())
    text = page.inner_text(info)
    assert text.startswith(op["label"])
    assert f"ran in stage{'s' if len(stages) > 1 else ''} {', '.join(map(str, stages))}:" in text
    assert f"its {n:,} task attempt" in text
    # a click on another row selects that box; a second click on it clears the selection
    page.click("table[data-view='operators'] tr[data-row='3']")
    assert page.evaluate(_PLAN)["selected"] == [3]
    assert [r["row"] for r in page.evaluate(_ROWS)["rows"] if r["selected"]] == [3]
    page.click("table[data-view='operators'] tr[data-row='3']")
    assert page.evaluate(_PLAN)["selected"] == []
    assert not any(r["selected"] for r in page.evaluate(_ROWS)["rows"])
    assert "Click an operator" in page.inner_text(info)
    assert page.jp_errors == []


def test_hostile_operator_strings_stay_text(open_report, planned):
    page = open_report(planned)
    show_tab(page, "query")
    panel = ".jp-perf-panel[data-tab='query']"
    assert page.query_selector_all(f"{panel} img") == []
    assert HOSTILE in page.inner_text(f"{panel} table[data-view='operators']")
    plan = page.evaluate(_PLAN)
    hostile = [i for i, t in enumerate(plan["text"]) if "<img src=x" in t]
    assert hostile                                          # scanned paths, on the canvas
    # the hover of a box with HTML in its description: shown, never run
    i = hostile[0]
    page.evaluate("""([x, y]) => { const p = document.querySelector('[data-view=plan]');
        const r = p.getBoundingClientRect();
        p.scrollLeft = x - r.left - r.width / 2; p.scrollTop = y - r.top - r.height / 2; }""",
                  [plan["px"][i], plan["py"][i]])
    plan = page.evaluate(_PLAN)
    page.mouse.move(plan["px"][i] - 4, plan["py"][i] - 2)
    page.mouse.move(plan["px"][i], plan["py"][i], steps=3)
    page.wait_for_function(f"() => ({_TOOLTIP})().some((t) => t.includes('<img src=x'))")
    rows = page.evaluate(_TOOLTIP)
    assert any(t.startswith(plan["full_label"][i]) for t in rows)       # the operator
    assert any(HOSTILE in t for t in rows)                              # its description
    assert page.evaluate("window.__xss") is None
    assert page.jp_errors == [] and page.jp_requests == []


def test_a_run_without_sql_says_so_in_one_line(open_report):
    page = open_report(analyze(synthetic(300, 4, per_stage=50)))
    show_tab(page, "query")
    text = page.inner_text(".jp-perf-panel[data-tab='query']").strip()
    assert text.startswith("Query No SQL ran in this window") and "\n" not in text
    assert page.query_selector_all(".jp-perf-panel[data-tab='query'] table") == []


def test_tpch_plan_on_real_spark_draws_with_its_operator_labels(open_report, spark_local):
    """TPC-H Q9 (SF 0.01, tests/tpch.py: joins of six tables and an aggregate) measured on
    real local[2] Spark: one box per operator, scans named by their table, a connected plan,
    the operator table equal to a.operators, a link to the execution in the live UI."""
    import tpch

    import jupyter_perf as jp

    tpch.register(spark_local)
    run = jp.measure(lambda: spark_local.sql(tpch.query(9)).collect(), spark=spark_local,
                     store=False)
    a = analyze(run)
    ops = a.operators
    assert len(ops) > 20
    page = open_report(a)
    show_tab(page, "query")
    plan = page.evaluate(_PLAN)
    assert plan["full_label"] == ops["label"].tolist()
    labels = set(plan["full_label"])
    assert {f"Scan parquet {t}" for t in ("part", "supplier", "lineitem", "partsupp", "orders",
                                          "nation")} <= labels
    n_exec = ops["execution_id"].nunique()
    assert len(plan["edges"][0]) >= len(ops) - n_exec            # a connected plan per execution
    table = page.evaluate(_ROWS)
    col = table["cols"].index("task_time_ms")
    got = [float(r["cells"][col]["value"]) for r in table["rows"]]
    assert got == pytest.approx(ops["task_time_ms"].fillna(0).tolist())
    assert sum(got) > 0
    ui = a.run.extra.get("ui_url")                               # the live run's UI
    assert ui and ui.startswith("http")
    ex = int(ops["execution_id"].iloc[0])
    link = page.query_selector(f".jp-perf-panel[data-tab='query'] li[data-execution='{ex}'] a")
    assert link.get_attribute("href") == f"{ui}/SQL/execution/?id={ex}"
    assert page.jp_errors == [] and page.jp_requests == []
