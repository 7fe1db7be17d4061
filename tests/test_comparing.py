"""``jp.compare`` and the run store: noise from repeats of the cell, the record of predictions,
``jupyter-perf compare|accuracy``, and bad input as one line with nothing lost. The runs are
hand-built (compare_synth.py) and saved to a real store; the real-Spark checks are in
test_compare_spark.py."""
from __future__ import annotations

import json
import os

import pytest
from compare_synth import cell_run, stored

import jupyter_perf as jp
from jupyter_perf.cli import main
from jupyter_perf.model import Run
from jupyter_perf.service.comparing import CompareError, export_id
from jupyter_perf.service.saving import save
from jupyter_perf.store import accuracy, default_store


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_noise_comes_from_repeats_of_the_cell_with_nothing_changed():
    # issue T: the one rule needs five warm repeats (series.MIN_WARM_RUNS), not three; these
    # hand-built runs have no application id, so their warmth is unknown and they count
    ids = [stored(cell_run([100 + k, 100, 100, 100])) for k in range(6)]
    # the same cell with other settings, and another cell: neither is a repeat of A
    stored(cell_run([300, 300], conf={"spark.sql.shuffle.partitions": "8"}))
    stored(cell_run([900, 900], source="spark.range(9).count()", cell_id="cell-2"))
    c = jp.compare(ids[4], ids[5])
    s = c.summary()
    assert s["noise"]["runs"] == 5 and s["noise"]["known"]           # ids[0..4]: B left out
    assert s["within_noise"] is True and "within noise" in s["sentence"]
    assert "5 warm runs with the code and settings of A" in s["notes"][0]


def test_without_five_warm_repeats_the_noise_is_unknown_and_nothing_is_significant():
    # issue T: the noise dict now says how many warm runs there were and how many more
    # would settle it (it was None below three runs)
    a = stored(cell_run([100, 100]))
    b = stored(cell_run([400, 400]))
    s = jp.compare(a, b).summary()
    assert s["within_noise"] is None and s["noise"]["known"] is False
    assert s["noise"]["runs"] == 1 and s["noise"]["more"] == 4
    assert "noise unknown" in s["sentence"] and "beyond" not in s["sentence"]
    assert "4 more would settle it" in s["sentence"]


def test_cold_runs_are_left_out_of_the_noise():
    """The first run of a cell's code in its Spark application is cold: never learned from."""
    ids = []
    for k in range(6):
        run = cell_run([100 + k, 100, 100, 100] if k else [900, 900, 900, 900])
        run.app_id = "app-1"
        ids.append(stored(run))
    s = jp.compare(ids[4], ids[5]).summary()
    # ids[0] (cold, 9× slower) is out; ids[1..4] are four warm runs: one short of five
    assert s["noise"]["runs"] == 4 and s["within_noise"] is None
    assert "1 cold run left out" in s["notes"][0] and "1 more would settle it" in s["sentence"]
    h = jp.history(ids[0])
    assert h["warm"].tolist() == [False] + [True] * 5
    assert h.loc[0, "cold_reason"] == "first run of this code in its Spark application"
    assert not h["regression"].any()                   # the cold run is never flagged


def test_a_cell_is_found_by_its_source_when_it_has_no_cell_id():
    ids = [stored(cell_run([100 + k, 100], cell_id="")) for k in range(5)]
    b = stored(cell_run([101, 100], cell_id=""))
    assert jp.compare(ids[-1], b).summary()["noise"]["runs"] == 5


def test_runs_and_analyses_compare_like_their_ids():
    a, b = cell_run([100, 100]), cell_run([100, 100, 100, 100], slots=4)
    by_object = jp.compare(a, jp.analyze(b), record=False).summary()
    stored(a), stored(b)
    by_id = jp.compare(a.run_id, b.run_id, record=False).summary()
    assert by_object["wall_delta_ms"] == by_id["wall_delta_ms"]
    assert by_object["config_diff"] == by_id["config_diff"] == {"cores (slots)": ["2", "4"],
                                                                 "master": ["local[2]", "local[4]"]}


def test_every_comparison_with_a_prediction_is_recorded_once(jp_home, capsys):
    a = stored(cell_run([100] * 8, slots=2))
    b = stored(cell_run([100] * 8, slots=4))
    c = jp.compare(a, b)
    [p] = c.summary()["predicted_vs_measured"]
    assert p["kind"] == "slots" and p["predicted_ms"] == pytest.approx(c.a.whatif(slots_factor=2.0))
    jp.compare(a, b)                                    # the same comparison again
    jp.compare(b, a)                                    # the other way: a prediction of its own
    rows, damaged = accuracy.read(str(jp_home))
    assert damaged == 0 and [(r["a"], r["b"]) for r in rows] == [(a, b), (b, a)]
    assert rows[0]["measured_ms"] == pytest.approx(c.b.wall_ms)
    # a torn line (a writer killed mid-write) is skipped and said, never fatal
    with open(accuracy.path_of(str(jp_home)), "a") as fh:
        fh.write('{"a": "x", "b": \n')
    code, out, err = cli(capsys, "accuracy")
    assert code == 0 and "skipped 1 damaged line" in err
    assert f"{a}   {b}" in out and "slots ×2 (2 → 4)" in out
    assert "slots: 2 predictions, median error" in out
    code, out, _ = cli(capsys, "accuracy", "--json")
    data = json.loads(out)
    assert len(data["predictions"]) == 2 and data["digest"][0]["what"] == "slots"


def test_no_prediction_no_record(jp_home):
    a, b = stored(cell_run([100, 100])), stored(cell_run([120, 100]))
    jp.compare(a, b)
    assert accuracy.read(str(jp_home)) == ([], 0)


def test_cli_compare_text_json_and_html(capsys, tmp_path):
    a = stored(cell_run([100] * 4, label="<b>before</b>"))
    b = stored(cell_run([60] * 4, conf={"spark.sql.shuffle.partitions": "8"}))
    code, out, err = cli(capsys, "compare", a, b)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("A: <b>before</b>") and "less than A" in lines[3]
    assert "setting spark.sql.shuffle.partitions: 200 → 8" in out
    code, out, _ = cli(capsys, "compare", a, b, "--json", "--no-record")
    s = json.loads(out)
    assert (s["a"], s["b"]) == (a, b)
    assert s["config_diff"]["spark.sql.shuffle.partitions"] == ["200", "8"]
    parts = s["driver_ms"] + sum(s["components"].values()) + s["parallelism_ms"] + s["residual_ms"]
    assert parts == pytest.approx(s["wall_delta_ms"])
    target = tmp_path / "cmp.html"
    code, out, _ = cli(capsys, "compare", a, b, "--html", str(target))
    assert code == 0 and out.strip() == f"wrote {target}"
    html = target.read_text(encoding="utf-8")
    # the renderer's page: the label is in the payload, escaped (drawn as text in the browser)
    assert "\\u003cb\\u003ebefore\\u003c/b\\u003e" in html and "<b>before</b>" not in html
    assert html.rstrip().endswith(f"<!-- jupyter-perf export of run {export_id(a, b)} -->")
    # an earlier export of the same pair is replaced; another file is refused in one line
    assert cli(capsys, "compare", a, b, "--html", str(target))[0] == 0
    other = tmp_path / "mine.html"
    other.write_text("my notes")
    code, _, err = cli(capsys, "compare", a, b, "--html", str(other))
    assert code == 2 and len(err.strip().splitlines()) == 1 and other.read_text() == "my notes"


def _store_listing():
    store = default_store()
    return [r["run_id"] for r in store.list(limit=100)]


@pytest.mark.parametrize("case", ["unknown", "invalid", "itself", "no-jobs", "damaged"])
def test_bad_input_is_one_line_and_nothing_is_lost(case, capsys):
    good = stored(cell_run([100, 100]))
    other = stored(cell_run([120, 100]))
    if case == "unknown":
        pair, words = (good, "20990101-000000-abcdef"), "no run 20990101-000000-abcdef"
    elif case == "invalid":
        pair, words = (good, "../etc"), "is not a run id"
    elif case == "itself":
        pair, words = (good, good), "are the same run"
    elif case == "no-jobs":
        empty = Run(kind="cell", source="x = 1", start_ms=0.0, end_ms=10.0, status="no-jobs")
        save(empty)
        pair, words = (empty.run_id, good), "ran no Spark jobs"
    else:
        folder = os.path.join(default_store().runs_dir, other)
        with open(os.path.join(folder, "tasks.parquet"), "wb") as fh:
            fh.write(b"not parquet at all")
        pair, words = (good, other), "is damaged"
    before = _store_listing()
    with pytest.raises(CompareError) as exc:
        jp.compare(*pair)
    assert words in str(exc.value) and "\n" not in str(exc.value)
    code, out, err = cli(capsys, "compare", *pair)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("jupyter-perf: error: ") and words in err
    assert _store_listing() == before                       # nothing lost, nothing added
    assert os.path.isdir(os.path.join(default_store().runs_dir, other))


def test_history_cli_prints_the_series_and_json(capsys):
    """``jupyter-perf history`` (issue T): by a run id or a label; a regression flagged after
    five warm runs, with the setting that changed; --json carries the same rows."""
    ids = [stored(cell_run([100 + k, 100, 100, 100], label="hist")) for k in range(6)]
    slow = stored(cell_run([400, 400, 400, 400], label="hist",
                           conf={"spark.sql.shuffle.partitions": "8"}))
    code, out, err = cli(capsys, "history", ids[0])
    assert code == 0 and err == ""
    lines = [x for x in out.splitlines() if x.startswith(tuple(ids + [slow]))]
    assert [x.split()[0] for x in lines] == ids + [slow]
    assert "SLOW" in lines[-1] and "spark.sql.shuffle.partitions 200 → 8" in lines[-1]
    assert not any("SLOW" in x or "FAST" in x for x in lines[:-1])
    code, out, _ = cli(capsys, "history", "hist", "--json")
    rows = json.loads(out)["runs"]
    assert code == 0 and [r["run_id"] for r in rows] == ids + [slow]
    assert [r["regression"] for r in rows] == [False] * 6 + [True]
    assert rows[-1]["basis"] == "before the change" and rows[0]["expected_low_ms"] is None
    code, _, err = cli(capsys, "history", "nothing-like-this")
    assert code == 2 and err.count("\n") == 1 and "jupyter-perf runs" in err
