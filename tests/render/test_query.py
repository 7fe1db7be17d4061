"""The Query tab: the plan as a top-down graph of a.operators, coloured by share of task time,
sharing its data with the operator table; user strings stay text."""
import json
import re

import pytest
from bokeh.models import DataTable
from render_runs import HOSTILE, synthetic, with_plan

from jupyter_perf.analysis import analyze
from jupyter_perf.render import report, report_html
from jupyter_perf.render.tabs import query


@pytest.fixture(scope="module")
def planned():
    return analyze(with_plan(synthetic(1500, 8, per_stage=200), n_ops=40, hostile=True))


def test_operator_labels_name_what_a_scan_reads():
    assert query.operator_label("Scan parquet", "FileScan parquet [a#1] Location: "
                                "InMemoryFileIndex(1 paths)[file:/d/tpch/lineitem.parquet]") \
        == "Scan parquet lineitem"
    assert query.operator_label("Scan parquet", "FileScan parquet spark_catalog.db.orders[o#1] "
                                "Location: InMemoryFileIndex(1 paths)[file:/w/orders]") \
        == "Scan parquet db.orders"
    assert query.operator_label("Filter", "Filter (x > 1)") == "Filter"
    assert len(query.operator_label("X" * 80, "")) == query.LABEL_MAX


def test_graph_boxes_are_the_operator_table_and_data_flows_down(planned):
    a = planned
    panel, parts = query.query_tab(a)
    src = parts.source
    assert len(src.data["label"]) == len(a.operators) == 39     # wrappers left out
    assert not any(n.startswith(("WholeStageCodegen", "InputAdapter", "AdaptiveSparkPlan"))
                   for n in src.data["name"])
    keys = list(zip(src.data["execution_id"], src.data["node_id"]))
    edges = query.plan_edges(a, set(keys))
    # every operator feeds its consumer, also through the InputAdapters in between; only
    # those feeding the plan's root (AdaptiveSparkPlan, left out) have no edge
    feeds_root = {k for k in keys if a.plan[k].parents == [0]}
    assert {p for p, _ in edges} == set(keys) - feeds_root
    y = dict(zip(keys, src.data["y"]))
    assert all(y[p] > y[c] for p, c in edges)                  # producers above consumers
    # boxes of one layer never overlap
    boxes = sorted(zip(src.data["y"], src.data["x"], src.data["w"]))
    for (y1, x1, w1), (y2, x2, w2) in zip(boxes, boxes[1:]):
        if y1 == y2:
            assert x1 + w1 / 2 <= x2 - w2 / 2 + 1e-6
    # the darkest colour is the top operator's; no task time is grey
    top = max(range(len(keys)), key=lambda i: src.data["share"][i])
    assert src.data["color"][top] == query.PALETTE[-1]
    assert all(c == query.NO_TIME for c, t in zip(src.data["color"], src.data["task_time_ms"]) if t <= 0)
    table = next(iter(panel.select({"type": DataTable, "name": "jp-operators"})))
    assert table.source is src and table.sortable and table.selectable


def test_user_strings_in_the_plan_are_text_in_every_view(planned):
    html = report_html(planned)
    divs = re.findall(r'"name":"Div".*?"text":"(.*?)(?<!\\)"', html)
    assert divs and all("<img src=x" not in d.replace("\\u003c", "<") for d in divs)
    assert "@description{safe}" not in html and "{safe}" not in html     # hovers write text
    doc = report.report_document(planned)
    src = doc.get_model_by_name("jp-operators-source")
    assert any(HOSTILE in d for d in src.data["description"])          # kept, as data
    assert any("<img src=x" in lab for lab in src.data["label"])        # the scanned path


def test_stages_and_the_stage_track_name_their_operators(planned):
    doc = report.report_document(planned)
    stages = doc.get_model_by_name("jp-stages-source")
    ops = planned.stage_operators
    assert stages.data["operators"] == [ops.get(s, "") for s in stages.data["stage_id"]]
    assert any(" → " in o for o in stages.data["operators"])
    track = doc.get_model_by_name("jp-stage-track")
    assert all(o == (ops.get(s) or "– (no SQL operator)")
               for s, o in zip(track.data["stage_id"], track.data["ops"]))


def test_a_run_without_sql_says_so():
    a = analyze(synthetic(300, 4, per_stage=50))
    panel, parts = query.query_tab(a)
    assert parts.source is None
    text = json.dumps(panel.child.children[0].text)
    assert "No SQL ran in this window" in text


def test_tpch_q9_on_real_spark_draws_its_plan_and_names_its_stages(spark_local):
    """TPC-H Q9 (SF 0.01, tests/tpch.py) measured on real local[2] Spark with AQE: one box per
    operator of a.operators carrying its numbers, scans named by the table they read, data
    flowing down, and the stages that ran named by their operators."""
    import tpch

    import jupyter_perf as jp

    tpch.register(spark_local)
    spark_local.conf.set("spark.sql.adaptive.enabled", "true")
    run = jp.measure(lambda: spark_local.sql(tpch.query(9)).collect())
    a = analyze(run)
    panel, parts = query.query_tab(a)
    src = parts.source
    ops = a.operators
    assert len(src.data["label"]) == len(ops) > 20
    assert src.data["name"] == ops["name"].tolist()

    def same(x, y):
        return x == y or (x != x and y != y)           # NaN on both sides: Spark gave none

    assert all(same(x, float(y)) for x, y in zip(src.data["rows_out"], ops["rows_out"]))
    assert sum(src.data["task_time_ms"]) == pytest.approx(ops["task_time_ms"].fillna(0).sum())
    scans = {lab for lab, n in zip(src.data["label"], src.data["name"]) if n == "Scan parquet"}
    assert {f"Scan parquet {t}" for t in ("part", "supplier", "lineitem", "partsupp", "orders",
                                          "nation")} <= scans
    keys = list(zip(src.data["execution_id"], src.data["node_id"]))
    y = dict(zip(keys, src.data["y"]))
    edges = query.plan_edges(a, set(keys))
    assert len(edges) >= len(keys) - len(set(src.data["execution_id"]))  # a connected plan
    assert all(y[p] > y[c] for p, c in edges)
    top = max(range(len(keys)), key=lambda i: src.data["share"][i])
    assert src.data["color"][top] == query.PALETTE[-1]
    doc = report.report_document(a)
    st = doc.get_model_by_name("jp-stages-source").data
    ran = [o for o, status in zip(st["operators"], st["status"]) if status != "SKIPPED"]
    assert ran and all(ran), st["operators"]
    assert any(o.startswith("Scan parquet") for o in ran)
