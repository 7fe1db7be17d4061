"""The what-if checked by the series (issue T, item 6): when a later run of a cell changed only
what the previous warm run's what-if predicted (the slots, or a setting one of its hints
advised), ``jp.history`` shows the prediction beside the measured wall time and records it in
the store's record of predictions, once, so ``jupyter-perf accuracy`` aggregates it.

The first tests use hand-built runs saved to a real store (compare_synth.py: a slots change
needs a second Spark application); the last runs a real cell on real Spark (local[2]) through
the real magic, with spark.sql.shuffle.partitions far above what the product's partitions hint
advises, then at the advised value."""
from __future__ import annotations

import json
import math
import os

import pytest
from compare_synth import cell_run, stored

import jupyter_perf as jp
from jupyter_perf.cli import main
from jupyter_perf.service.history import history_text
from jupyter_perf.store import accuracy, default_store


def _accuracy_json(capsys) -> dict:
    assert main(["accuracy", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _conf(slots: int) -> dict:
    # as a session records it: spark.master moves with the slots
    return {"spark.sql.shuffle.partitions": "200", "spark.master": f"local[{slots}]"}


def test_a_slots_change_is_checked_against_the_earlier_runs_whatif(jp_home, capsys):
    before = [stored(cell_run([100] * 8, slots=2, conf=_conf(2))) for _ in range(3)]
    after = stored(cell_run([100] * 8, slots=4, conf=_conf(4)))
    h = jp.history(after)
    assert h["run_id"].tolist() == before + [after]
    # the unchanged repeats predicted nothing
    assert h["predicted_by"].iloc[:3].tolist() == ["", "", ""]
    assert h["predicted_ms"].iloc[:3].isna().all()
    last = h.iloc[-1]
    assert last["predicted_by"] == before[-1]
    assert last["predicted_what"] == "slots ×2 (2 → 4)"
    expected = jp.analyze(default_store().load(before[-1])).whatif(slots_factor=2.0)
    assert last["predicted_ms"] == pytest.approx(expected)
    assert last["prediction_error"] == pytest.approx(
        (expected - last["wall_ms"]) / last["wall_ms"])
    # the terminal says it on the run's line
    line = next(x for x in history_text(h).splitlines() if x.startswith(after))
    assert f"by run {before[-1]} for slots ×2 (2 → 4)" in line
    # recorded once, however often the history is asked for
    jp.history(after)
    jp.history(before[0])
    with open(accuracy.path_of(str(jp_home))) as fh:
        assert len(fh.read().splitlines()) == 1
    data = _accuracy_json(capsys)
    assert [(p["a"], p["b"], p["kind"]) for p in data["predictions"]] == \
        [(before[-1], after, "slots")]
    assert data["predictions"][0]["predicted_ms"] == pytest.approx(expected)
    assert data["digest"][0]["what"] == "slots" and data["digest"][0]["predicted"] == 1


def test_a_change_no_prediction_covers_is_not_checked(jp_home):
    a = stored(cell_run([100] * 4))
    # a setting no hint of A advised; then the code changed with the slots (the same cell
    # id): neither is a prediction's to check
    b = stored(cell_run([100] * 4, conf={"spark.sql.shuffle.partitions": "200",
                                         "spark.sql.ansi.enabled": "true"}))
    c = stored(cell_run([100] * 4, source="spark.range(5).count()", slots=4))
    h = jp.history(c)
    assert h["run_id"].tolist() == [a, b, c]
    assert h["predicted_by"].tolist() == ["", "", ""] and h["predicted_ms"].isna().all()
    assert accuracy.read(str(jp_home)) == ([], 0)


def test_a_store_whose_record_cannot_be_written_is_a_note(jp_home):
    a = stored(cell_run([100] * 8, slots=2))
    b = stored(cell_run([100] * 8, slots=4))
    os.makedirs(accuracy.path_of(str(jp_home)))     # a directory where the file goes
    h = jp.history(b)
    assert h.iloc[-1]["predicted_by"] == a and math.isfinite(h.iloc[-1]["predicted_ms"])
    assert any("not recorded" in n for n in h.attrs["notes"]), h.attrs["notes"]
    assert "not recorded" in history_text(h)


# -- real Spark: a partitions hint followed -------------------------------------------------------
CELL = """%%perfmeasure --label groupby-predictions
spark.range(0, 400_000, 1, 4).selectExpr("id % 1000 AS k", "id AS v").groupBy("k").sum("v").collect()
"""
KEY = "spark.sql.shuffle.partitions"
#: Far above what the partitions hint advises for this shuffle on 2 slots (a few KiB: one
#: partition per slot, analysis/hints.py shuffle_partitions), so the hint fires.
MANY = 40


@pytest.fixture(scope="module")
def shell(ipshell, spark_local):
    ipshell.user_ns["spark"] = spark_local
    return ipshell


def _set(shell, partitions) -> None:
    from sparkhelpers import run_cell

    # AQE off: Spark would coalesce the partitions itself (and the hint stays quiet)
    result, cap = run_cell(shell, 'spark.conf.set("spark.sql.adaptive.enabled", "false")\n'
                                  f'spark.conf.set("{KEY}", "{partitions}")')
    assert result.error_in_exec is None, cap.stderr


def _measure(shell) -> tuple[str, dict | None]:
    from sparkhelpers import measure_shown

    return measure_shown(shell, CELL)


def test_following_a_partitions_hint_is_checked_by_the_series(shell, jp_home, capsys):
    _set(shell, MANY)
    ids = [_measure(shell)[0] for _ in range(3)]               # the first is cold
    store = default_store()
    [hint] = [x for x in jp.analyze(store.load(ids[-1])).hints if x["setting"] == KEY]
    advised = hint["value"]
    assert advised is not None and int(advised) < MANY, hint["text"]
    _set(shell, advised)
    last, shown = _measure(shell)

    h = jp.history("groupby-predictions")
    assert h["run_id"].tolist() == ids + [last]
    assert h["warm"].tolist() == [False, True, True, True]
    assert h["predicted_by"].iloc[:3].tolist() == ["", "", ""]
    row = h.iloc[-1]
    assert row["predicted_by"] == ids[-1]                       # the previous warm run
    assert row["predicted_what"].startswith(f"{KEY}={advised}")
    if hint["predicted_ms"] is None:                            # a suggestion, not simulated
        assert math.isnan(row["predicted_ms"]) and math.isnan(row["prediction_error"])
        assert "not simulated" in row["predicted_what"]
    else:
        assert row["predicted_ms"] == pytest.approx(hint["predicted_ms"])
        assert row["prediction_error"] == pytest.approx(
            (hint["predicted_ms"] - row["wall_ms"]) / row["wall_ms"])
    line = next(x for x in history_text(h).splitlines() if x.startswith(last))
    assert ids[-1] in line and f"{KEY}={advised}" in line

    # the report the cell showed: the History tab's row says the same
    assert shown is not None
    tab = shown["tabs"]["history"]
    assert tab["rows"][-1]["run_id"] == last and ids[-1] in tab["rows"][-1]["prediction"]
    assert [r["prediction"] for r in tab["rows"][:3]] == ["", "", ""]
    assert "predicted (estimated)" in [c["title"] for c in tab["columns"]]

    # recorded once: by the report, read back by each history
    jp.history("groupby-predictions")
    data = _accuracy_json(capsys)
    mine = [p for p in data["predictions"] if (p["a"], p["b"]) == (ids[-1], last)]
    assert [(p["kind"], p["setting"], p["value"]) for p in mine] == [("setting", KEY, advised)]
    assert mine[0]["measured_ms"] == pytest.approx(row["wall_ms"])
    with open(accuracy.path_of(str(jp_home))) as fh:
        assert sum(f'"b": "{last}"' in x for x in fh.read().splitlines()) == 1
    assert any(d["what"] == KEY for d in data["digest"])


def test_a_cold_run_after_the_change_is_not_checked_the_next_warm_one_is():
    """A new master is a new Spark application: its first run of the cell is cold (a warm-up
    no what-if has), so the check waits for the next warm run, against the same earlier run."""
    ids = []
    for app, slots in [("app-1", 2)] * 3 + [("app-2", 4)] * 2:
        run = cell_run([100] * 8, slots=slots, conf=_conf(slots))
        run.app_id = app
        ids.append(stored(run))
    h = jp.history(ids[-1])
    assert h["warm"].tolist() == [False, True, True, False, True]
    assert h["predicted_by"].tolist() == ["", "", "", "", ids[2]]
    assert h.iloc[-1]["predicted_what"] == "slots ×2 (2 → 4)"
    assert math.isfinite(h.iloc[-1]["predicted_ms"])
