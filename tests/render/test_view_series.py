"""A cell's runs as a series in the report (issue T, part 2): ``service/history.cell_series``
from a real run store (hand-built runs, compare_synth.py), the History tab's data
(``render/views/series.py``), the Summary's context line, and the sidebar's sparklines; the
judgement is ``jp.history``'s, row for row."""
from __future__ import annotations

import math

import pytest
from compare_synth import cell_run, stored

import jupyter_perf as jp
from jupyter_perf.render.views import decode_data, mime_payload, report_data
from jupyter_perf.render.views.series import context_text, ordinal, series_data
from jupyter_perf.service.history import cell_series, report_series, sparklines
from jupyter_perf.store import default_store


def _series_of(run_id):
    store = default_store()
    return cell_series(store, store.get(run_id))


def _warm_then_slow(label="hist-view"):
    ids = [stored(cell_run([100 + k, 100, 100, 100], label=label)) for k in range(6)]
    slow = stored(cell_run([400, 400, 400, 400], label=label,
                           conf={"spark.sql.shuffle.partitions": "8"}))
    return ids, slow


def test_ordinals():
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]


def test_a_run_with_no_earlier_run_has_no_series_no_tab_and_no_line():
    rid = stored(cell_run([100, 100], label="alone"))
    assert _series_of(rid) is None
    run = default_store().load(rid)
    data = report_data(jp.analyze(run), report_series(run))
    assert "history" not in data["tabs"]
    assert "series" not in [r["key"] for r in data["tabs"]["summary"]["key_numbers"]]


def test_the_series_is_jp_history_row_for_row_and_flags_the_regression():
    ids, slow = _warm_then_slow()
    s = _series_of(slow)
    h = jp.history(slow)
    r = s["runs"]
    assert r["run_id"] == h["run_id"].tolist() == ids + [slow]
    assert r["wall_ms"] == h["wall_ms"].tolist()
    assert r["regression"] == h["regression"].tolist() == [False] * 6 + [True]
    for mine, theirs in zip(r["high_ms"], h["expected_high_ms"].tolist()):
        assert (math.isnan(mine) and math.isnan(theirs)) or mine == pytest.approx(theirs)
    assert s["index"] == 6 and s["ordinal"] == 7 and s["total"] == 7
    # the band the slow run was judged against: the five warm runs before the change
    assert s["judged"]["basis"] == "before the change" and s["judged"]["regression"]
    assert s["noise"]["known"] and s["noise"]["runs"] == 6
    assert s["noise"]["high_ms"] == pytest.approx(r["high_ms"][-1])
    assert "spark.sql.shuffle.partitions 200 → 8" in s["judged"]["change"]
    assert r["same"] == [False] * 6 + [True]           # other settings than the slow run's

    line = context_text(s)
    assert line.startswith("7th run of this cell: slower than the 6 warm runs before the "
                           "change by ")
    assert "(a regression; median " in line and "expected " in line
    assert "spark.sql.shuffle.partitions 200 → 8" in line


def test_within_noise_and_unknown_lines():
    ids = [stored(cell_run([100 + k, 100, 100, 100], label="quiet")) for k in range(7)]
    assert context_text(_series_of(ids[1])) == (
        "2nd run of this cell: noise unknown: 4 more warm runs with this code and settings "
        "would settle it (1 so far)")
    line = context_text(_series_of(ids[6]))
    assert line.startswith("7th run of this cell: within noise of its last 6 warm runs "
                           "(median ")
    s = _series_of(ids[6])
    assert not any(s["runs"]["regression"]) and not any(s["runs"]["improvement"])


def test_a_cold_run_is_said_to_be_cold():
    ids = []
    for k in range(3):
        run = cell_run([100 + k, 100, 100, 100], label="cold-one")
        run.app_id = "app-7"
        ids.append(stored(run))
    s = _series_of(ids[0])
    assert s["runs"]["warm"] == [False, True, True]
    assert context_text(s) == ("1st run of this cell: a cold run (first run of this code in "
                               "its Spark application): not judged against the noise and not "
                               "learned from")
    tab = series_data(s)
    assert [r["warm_text"] for r in tab["rows"]] == ["cold", "warm", "warm"]


def test_the_payload_carries_the_tab_and_the_context_row_escaped_as_text():
    label = "<img src=x onerror=alert(1)> & co"
    ids, slow = _warm_then_slow(label=label)
    run = default_store().load(slow)
    data = decode_data(mime_payload(report_data(jp.analyze(run), report_series(run)))["data"])
    tab = data["tabs"]["history"]
    assert tab["run_id"] == slow and tab["index"] == 6 and tab["x"] == list(range(1, 8))
    assert tab["regression"] == [False] * 6 + [True]
    assert [r["run_id"] for r in tab["rows"]] == ids + [slow]
    assert tab["rows"][-1]["flag"] == "regression"
    assert tab["rows"][0]["expected"] == "unknown"
    assert tab["rows"][-1]["expected"].endswith("(before the change)")
    assert tab["context"] == context_text(report_series(run))
    assert "4 robust SDs" in tab["labels"]["band"]
    assert {c["key"] for c in tab["columns"]} >= {"run_id", "wall_ms", "expected", "flag"}
    rows = data["tabs"]["summary"]["key_numbers"]
    keys = [r["key"] for r in rows]
    assert keys.index("series") == keys.index("wall") + 1
    items = rows[keys.index("series")]["items"]
    assert items[0]["c"] == "err" and items[0]["t"].startswith("7th run of this cell: slower")
    assert [i["key"] for i in items if isinstance(i, dict) and "key" in i] == [
        "series_median_ms", "series_low_ms", "series_high_ms"]


def test_sparklines_end_at_each_listed_run_and_flag_it():
    ids, slow = _warm_then_slow(label="spark-line")
    other = stored(cell_run([50, 50], label="lonely", cell_id="cell-9"))
    store = default_store()
    rows = store.list(limit=50)
    lines = sparklines(store, rows)
    assert other not in lines                          # a cell's only run: no sparkline
    assert lines[slow]["run_id"] == ids + [slow]
    assert lines[slow]["regression"][-1] is True and not any(lines[slow]["regression"][:-1])
    assert lines[ids[2]]["run_id"] == ids[:3]          # up to that run
    assert ids[0] not in lines                         # one point is no line
