"""render/compare.py: the comparison as HTML (top first, user strings escaped, no script, no
external resource) and as text; and the ready cell under a report's hints (advice.py)."""
from __future__ import annotations

import re

import pytest
from compare_synth import cell_run

import jupyter_perf as jp
from jupyter_perf import fmt
from jupyter_perf.render.advice import ready_cell, ready_cell_html
from jupyter_perf.render.compare import comparison_fragment, comparison_html, comparison_text

HOSTILE = "<img src=x onerror=alert(1)>&\"'"


def _pair():
    a = cell_run([100] * 4, label=HOSTILE)
    b = cell_run([60] * 6, conf={"spark.sql.shuffle.partitions": "8", f"spark.x.{HOSTILE}": HOSTILE})
    return jp.compare(a, b, record=False)


def test_the_document_reads_top_first_and_stands_alone():
    c = _pair()
    s = c.summary()
    html = comparison_html(s)
    assert html.startswith("<!DOCTYPE html>") and "<meta charset='utf-8'>" in html
    # issue T: the sentence keeps each value on one line (a no-break space before its unit)
    sentence = re.sub(r"(?<=\d) (?=(ms|s|%)\b)", "\u00a0", fmt.esc(s["sentence"]))
    assert "\u00a0" in sentence and sentence.replace("\u00a0", " ") == fmt.esc(s["sentence"])
    order = [html.index(x) for x in (sentence, "Where the change comes from",
                                     "Setup and settings", "Operators", "Stages",
                                     "Data volume, stragglers and skew", "How this was compared")]
    assert order == sorted(order)
    assert "<script" not in html.lower()
    # nothing to fetch: no src=, href= or url( but the escaped user strings
    assert not re.search(r"""(src|href)\s*=\s*['"]?(https?:|//)""", html)
    assert "url(" not in html
    # the split's rows add up to the measured change, written as the report writes durations
    assert f"{fmt.ms(s['wall_delta_ms'])}</span>" in html


def test_user_strings_are_text_everywhere():
    s = _pair().summary()
    for html in (comparison_html(s), comparison_fragment(s)):
        assert HOSTILE not in html and "<img" not in html
        assert fmt.esc(HOSTILE) in html                       # the label and the setting
    assert HOSTILE in comparison_text(s)                        # plain text: as it is


def test_changed_settings_are_listed_and_the_setup_always():
    s = _pair().summary()
    html = comparison_html(s)
    assert "<code>spark.sql.shuffle.partitions</code></td><td>200</td><td>8</td>" in html
    for key in ("master", "executors", "cores (slots)", "Spark version"):
        assert f"<td>{fmt.esc(key)}</td>" in html


def test_predictions_sit_beside_the_measurement():
    a = cell_run([100] * 8, slots=2)
    b = cell_run([100] * 8, slots=4)
    c = jp.compare(a, b, record=False)
    html = comparison_html(c.summary())
    row = re.search(r"<tr><td>slots ×2 \(2 → 4\)</td><td class='num'>([^<]+)</td>"
                    r"<td class='num'>([^<]+)</td>", html)
    assert row and row.groups() == (fmt.ms(c.a.whatif(slots_factor=2.0)), fmt.ms(c.b.wall_ms))


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


def test_it_reads_cleanly_integer_stages_unbroken_values_both_descriptions():
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
    html = comparison_fragment(s)
    assert "A: hashpartitioning(k#1, 200)" in html and "B: hashpartitioning(k#7, 8)" in html
    assert "white-space:nowrap" in html
    assert "nothing for this value (1.23\u00a0s for 4)" in html or \
        f"nothing for this value ({fmt.ms(1234.0)} for 4)" in html
    text = comparison_text(s)
    assert "(stage 0 → 0)" in text and "  B: hashpartitioning(k#7, 8)" in text
