"""render/compare.py: the comparison's page drawn by the one renderer (report/compare.ts;
top first, user strings text, no network), its short static fallback for viewers without the
extension, the notebook's MIME bundle, and the text; and the ready cell under a report's hints
(advice.py)."""
from __future__ import annotations

import json
import re

import pytest
from compare_synth import cell_run
from comparetext import DRAWN, SECTIONS_JS, open_comparison

import jupyter_perf as jp
from jupyter_perf import fmt
from jupyter_perf.constants import COMPARE_MIME_TYPE
from jupyter_perf.render.advice import ready_cell, ready_cell_html
from jupyter_perf.render.compare import (
    compare_payload,
    comparison_fallback,
    comparison_html,
    comparison_text,
)

HOSTILE = "<img src=x onerror=alert(1)>&\"'"
ORDER = ["head", "Where the change comes from", "Setup and settings", "Operators", "Stages",
         "Data volume, stragglers and skew", "How this was compared"]


def _pair():
    a = cell_run([100] * 4, label=HOSTILE)
    b = cell_run([60] * 6, conf={"spark.sql.shuffle.partitions": "8", f"spark.x.{HOSTILE}": HOSTILE})
    return jp.compare(a, b, record=False)


@pytest.fixture
def drawn(jp_browser, tmp_path):
    """``drawn(summary) -> (page, sections)``: the page opened offline and read."""
    pages = []

    def _open(summary):
        page = open_comparison(jp_browser, tmp_path / f"cmp-{len(pages)}.html", summary)
        pages.append(page)
        return page, page.evaluate(SECTIONS_JS)

    yield _open
    for p in pages:
        p.close()


def _lines(sections, title):
    return [s for s in sections if s["title"] == title][0]["lines"]


def test_the_page_is_the_renderer_and_the_payload_offline(drawn):
    s = _pair().summary()
    html = comparison_html(s)
    assert html.startswith("<!DOCTYPE html>") and "<meta charset='utf-8'>" in html
    payload = re.search(rf'<script type="{re.escape(COMPARE_MIME_TYPE)}">(.*?)</script>', html, re.S)
    assert json.loads(payload.group(1)) == json.loads(json.dumps(compare_payload(s)))
    # two scripts: the payload and the renderer (no BokehJS: the comparison draws none);
    # the sections are drawn in the browser, not written here
    assert html.count("<script") == 2 and html.count("</script>") == 2
    assert "Where the change comes from" not in re.sub(r"<script.*?</script>", "", html, flags=re.S)
    assert not re.search(r"""(src|href)\s*=\s*['"]?(https?:|//)""", html)
    page, sections = drawn(s)
    assert page.jp_requests == [] and page.jp_errors == []
    assert [x["title"] for x in sections] == ORDER            # no prediction: no such section
    # issue T: the sentence keeps each value on one line (a no-break space before its unit)
    sentence = page.locator(".jp-cmp-sentence").text_content()
    assert "\u00a0" in sentence and sentence.replace("\u00a0", " ") == s["sentence"]
    # the split's rows add up to the measured change, written as the report writes durations
    total = page.locator("tr.total [data-key='sum_of_parts_ms']")
    assert abs(float(total.get_attribute("data-value")) - s["wall_delta_ms"]) < 1e-6
    assert total.text_content().lstrip("+") == fmt.ms(s["wall_delta_ms"])
    assert page.locator("[data-key='wall_b_ms']").text_content() == fmt.ms(s["wall_b_ms"])


def test_user_strings_are_text_everywhere(drawn):
    c = _pair()
    s = c.summary()
    html = comparison_html(s)
    assert HOSTILE not in html and "<img" not in html          # the payload is escaped JSON
    page, sections = drawn(s)
    text = page.locator(DRAWN).text_content()
    assert text.count(HOSTILE) >= 3                            # the label, the setting's key, its value
    assert page.locator("img").count() == 0 and page.jp_dialogs == []
    assert page.evaluate("() => document.querySelectorAll('.jp-perf-cmp *').length") > 50
    fallback = comparison_fallback(s)
    assert HOSTILE not in fallback and "<img" not in fallback
    assert fmt.esc(HOSTILE) in fallback                          # A's label
    assert HOSTILE in comparison_text(s)                        # plain text: as it is
    bundle = c._repr_mimebundle_()
    assert set(bundle) == {COMPARE_MIME_TYPE, "text/html", "text/plain"}
    assert bundle[COMPARE_MIME_TYPE] == compare_payload(s) and bundle["text/plain"] == s["sentence"]
    assert "needs the jupyter-perf extension" in bundle["text/html"]


def test_the_fallback_is_short_and_adds_up():
    s = _pair().summary()
    fallback = comparison_fallback(s)
    assert "Where the change comes from" in fallback and "Operators" not in fallback
    sentence = re.sub(r"(?<=\d) (?=(ms|s|%)\b)", "\u00a0", fmt.esc(s["sentence"]))
    assert sentence in fallback
    total = s["driver_ms"] + sum(s["components"].values()) + s["parallelism_ms"] + s["residual_ms"]
    assert fmt.ms(total) in fallback and abs(total - s["wall_delta_ms"]) < 1e-6
    assert "<script" not in fallback.lower()


def test_changed_settings_are_listed_and_the_setup_always(drawn):
    s = _pair().summary()
    _, sections = drawn(s)
    lines = _lines(sections, "Setup and settings")
    assert "spark.sql.shuffle.partitions | 200 | 8" in lines
    for key in ("master", "executors", "cores (slots)", "Spark version"):
        assert any(line.startswith(f"{key} | ") for line in lines), key


def test_predictions_sit_beside_the_measurement(drawn):
    a = cell_run([100] * 8, slots=2)
    b = cell_run([100] * 8, slots=4)
    c = jp.compare(a, b, record=False)
    _, sections = drawn(c.summary())
    row = [x for x in _lines(sections, "Predicted vs measured") if x.startswith("slots ×2 (2 → 4) |")]
    assert row and row[0].split(" | ")[1:3] == [fmt.ms(c.a.whatif(slots_factor=2.0)),
                                               fmt.ms(c.b.wall_ms)]


def test_a_hint_with_a_setting_becomes_a_ready_cell_marked_with_the_advised_run():
    run = cell_run([100, 100], label="my 'query'")
    run.source = "%%perfmeasure --label x\ndf = spark.range(10)\ndf.count()\n"
    hint = {"setting": "spark.sql.shuffle.partitions", "value": "8", "text": "use 8"}
    cell = ready_cell(run, hint)
    assert cell.splitlines() == [
        f"%%perfmeasure --advised-by {run.run_id} --label 'my '\"'\"'query'\"'\"''",
        f"# jupyter-perf advice of run {run.run_id}: spark.sql.shuffle.partitions=8",
        "spark.conf.set('spark.sql.shuffle.partitions', '8')",
        "df = spark.range(10)", "df.count()"]
    static = ready_cell(run, {"setting": "spark.executor.memory", "value": "4g"})
    assert "spark.conf.set" not in static and "restart the session" in static
    assert ready_cell(run, {"setting": None, "text": "no setting"}) is None
    run.kind = "eventlog"
    assert ready_cell(run, hint) is None                     # no cell to re-run


def test_the_ready_cell_in_the_report_is_escaped():
    run = cell_run([100, 100])
    run.source = f"x = '{HOSTILE}'\nspark.range(3).count()"
    html = ready_cell_html(run, {"setting": "spark.sql.shuffle.partitions", "value": "8"})
    assert "<img" not in html and fmt.esc(f"x = '{HOSTILE}'") in html
    assert html.count("<pre>") == 1 and "Copy cell" in html


@pytest.mark.parametrize("source", ["", "   \n"])
def test_no_cell_no_ready_cell(source):
    run = cell_run([100])
    run.source = source
    assert ready_cell_html(run, {"setting": "spark.sql.shuffle.partitions", "value": "8"}) == ""


def test_a_cell_that_sets_the_setting_itself_gets_the_value_there():
    run = cell_run([100])
    run.source = ('spark.conf.set("spark.sql.shuffle.partitions", "200")\n'
                  "spark.conf.set('spark.sql.adaptive.enabled', 'false')\nq.collect()")
    cell = ready_cell(run, {"setting": "spark.sql.shuffle.partitions", "value": "8"})
    assert cell.splitlines()[1:] == [
        f"# jupyter-perf advice of run {run.run_id}: spark.sql.shuffle.partitions=8 "
        "(changed where the cell sets it)",
        "spark.conf.set(\"spark.sql.shuffle.partitions\", '8')",
        "spark.conf.set('spark.sql.adaptive.enabled', 'false')", "q.collect()"]


def test_it_reads_cleanly_integer_stages_unbroken_values_both_descriptions(drawn):
    """Issue T item 5: stage ids as integers, values that never wrap, both sides' descriptions
    of a matched operator, and the prediction row for a setting B changed to another value."""
    s = _pair().summary()
    assert [r["a_stage"] for r in s["stages"]] == ["0"]              # not "0.0"
    s["operators"] = [{"name": "Exchange", "description": "hashpartitioning(k#1, 200)",
                       "a_description": "hashpartitioning(k#1, 200)",
                       "b_description": "hashpartitioning(k#7, 8)", "a_node": 1, "b_node": 1,
                       "matched": True, "matched_by": "name",
                       "task_time_ms": {"a": 900.0, "b": 100.0, "delta": -800.0},
                       "rows_out": {"a": 10.0, "b": 10.0, "delta": 0.0}}]
    s["predicted_vs_measured"] = [{
        "what": "spark.sql.shuffle.partitions=8 (A advised 4)", "kind": "setting",
        "setting": "spark.sql.shuffle.partitions", "value": "8", "exact": False,
        "advised_value": "4", "advised_predicted_ms": 1234.0, "predicted_ms": None,
        "measured_ms": 999.0, "error": None, "signed_error": None}]
    page, sections = drawn(s)
    ops = _lines(sections, "Operators")
    assert any("A: hashpartitioning(k#1, 200)B: hashpartitioning(k#7, 8)" in x for x in ops)
    assert page.locator(".jp-perf-cmp td.num").first.evaluate(
        "el => getComputedStyle(el).whiteSpace") == "nowrap"
    preds = _lines(sections, "Predicted vs measured")
    assert f"nothing for this value ({fmt.ms(1234.0)} for 4)" in preds[-1]
    text = comparison_text(s)
    assert "(stage 0 → 0)" in text and "  B: hashpartitioning(k#7, 8)" in text
