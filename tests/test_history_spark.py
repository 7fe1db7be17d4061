"""``jp.history`` of a real Spark cell (local[2], %%perfmeasure in a real IPython shell), issue T:
the first run of the cell in its Spark application is marked cold; ten warm unchanged runs
are flagged only where they leave their band; the same cell with
spark.sql.shuffle.partitions 8 → 2000 (set outside the cell, so the code is the same and only
the settings differ) is a regression, with the
setting and the decomposition of compare in its ``change``; ``jp.compare`` never calls it
"within noise"; ``jupyter-perf history`` and ``%perfmeasure history`` print the series."""
from __future__ import annotations

import pytest
from sparkhelpers import measure_shown, run_cell

import jupyter_perf as jp
from jupyter_perf.cli import main
from jupyter_perf.kernel.handoff import wait_pending

CELL = """%%perfmeasure --label groupby-history
spark.range(0, 1_500_000, 1, 4).selectExpr("id % 1000 AS k", "id AS v").groupBy("k").sum("v").collect()
"""
WARM_RUNS = 10
#: The slower setting. The issue's 8 → 200 costs 2–4 s here, but on this shared 2-core host
#: warm runs of the 8-partition cell varied from 0.86 s to 1.9 s (load average 15), so the
#: band of ten warm runs is wider than that; 2000 reduce tasks cost far more than the noise
#: (each task's scheduling, deserialization and result, on 2 slots) on any host.
SLOW_PARTITIONS = 2000


@pytest.fixture(scope="module")
def shell(ipshell, spark_local):
    ipshell.user_ns["spark"] = spark_local
    return ipshell


def _settings(shell, partitions: int) -> None:
    # stated explicitly: the first session of a test process sets JVM-wide defaults; AQE off
    # so Spark does not coalesce the 200 partitions back to a few
    result, cap = run_cell(shell, 'spark.conf.set("spark.sql.adaptive.enabled", "false")\n'
                                  f'spark.conf.set("spark.sql.shuffle.partitions", "{partitions}")')
    assert result.error_in_exec is None, cap.stderr


def _measure(shell) -> str:
    return _measure_shown(shell)[0]


def _measure_shown(shell) -> tuple[str, dict | None]:
    return measure_shown(shell, CELL)


def test_a_cells_series_cold_warm_and_the_regression(shell, capsys):
    _settings(shell, 8)
    ids = [_measure(shell) for _ in range(1 + WARM_RUNS)]      # the first is cold
    _settings(shell, SLOW_PARTITIONS)
    slow, shown = _measure_shown(shell)
    h = jp.history("groupby-history")
    assert h["run_id"].tolist() == ids + [slow]
    walls = str(h["wall_ms"].round().tolist())
    # the first run of this code in the Spark application: cold, never learned from or flagged
    assert h.loc[0, "warm"] is False or h.loc[0, "warm"] == False   # noqa: E712
    assert h.loc[0, "cold_reason"] == "first run of this code in its Spark application"
    assert h["warm"].iloc[1:].tolist() == [True] * (WARM_RUNS + 1)
    # ten warm unchanged runs (the band is known from the 6th warm run on): a run is flagged
    # exactly when it left its band. Whether a busy host's hiccup leaves it is this machine's
    # noise, not behaviour: the false-alarm rate is measured in benchmarks (docs/compare.md)
    unchanged = h.iloc[:1 + WARM_RUNS]
    assert unchanged["expected_low_ms"].notna().sum() == WARM_RUNS - 5
    judged = unchanged[unchanged["expected_low_ms"].notna()]
    assert (judged["regression"] == (judged["wall_ms"] > judged["expected_high_ms"])).all(), walls
    assert (judged["improvement"] == (judged["wall_ms"] < judged["expected_low_ms"])).all(), walls
    assert not unchanged[unchanged["expected_low_ms"].isna()][["regression", "improvement"]] \
        .any().any(), walls                                    # noise unknown: never flagged
    # 2000 partitions: a regression, judged against the usual before the change
    assert bool(h["regression"].iloc[-1]) is True, walls
    last = h.iloc[-1]
    assert last["basis"] == "before the change" and last["wall_ms"] > last["expected_high_ms"]
    assert last["settings"] != h.loc[1, "settings"] and last["code"] == h.loc[1, "code"]
    assert f"spark.sql.shuffle.partitions 8 → {SLOW_PARTITIONS}" in last["change"]
    assert f"vs run {ids[-1]}" in last["change"]                 # compare's decomposition
    # the components add up to the wall time (driver gaps + each component at the parallelism)
    parts = last[[c for c in h.columns if c.endswith("_ms") and not c.startswith(
        ("wall", "expected"))]].astype(float).sum()
    assert parts == pytest.approx(last["wall_ms"], rel=0.05)

    # compare: the same rule, never "within noise" for the slower setting
    s = jp.compare(ids[-1], slow, record=False).summary()
    assert s["within_noise"] is False and s["noise_verdict"] == "slower", s["sentence"]
    assert "within noise" not in s["sentence"] and s["noise"]["runs"] == WARM_RUNS
    assert "1 cold run left out" in " ".join(s["notes"])

    # the shell and the magic print the same series
    assert main(["history", slow]) == 0
    out = capsys.readouterr().out
    assert slow in out and "SLOW" in out and "cold" in out
    _, cap = run_cell(shell, "%perfmeasure history groupby-history")
    assert slow in cap.stdout and "SLOW" in cap.stdout
    assert main(["history", "no-such-label"]) == 2
    assert "no stored run has the run id, label or cell id" in capsys.readouterr().err

    # the report the slow cell showed (issue T, part 2): the History tab's data, the cell's
    # twelve runs with the first cold and the slow one a regression, and the Summary's
    # context line in the same words
    assert shown is not None and shown["run_id"] == slow
    tab = shown["tabs"]["history"]
    n = 2 + WARM_RUNS
    assert tab["run_id"] == slow and tab["index"] == n - 1 and tab["x"] == list(range(1, n + 1))
    assert [r["run_id"] for r in tab["rows"]] == ids + [slow]
    assert tab["warm"] == [False] + [True] * (n - 1)
    # the tab flags what the series flags (a warm run that left its band on a busy host is
    # this machine's noise, asserted above by the rule, not by position); the slow one is flagged
    assert tab["regression"] == [bool(x) for x in h["regression"]], walls
    assert tab["regression"][-1] is True and tab["regression"][0] is False, walls
    assert tab["context"].startswith(f"{n}th run of this cell: slower than the {WARM_RUNS} "
                                     "warm runs before the change by "), tab["context"]
    assert f"spark.sql.shuffle.partitions 8 → {SLOW_PARTITIONS}" in tab["context"]
    assert tab["rows"][0]["warm_text"] == "cold" and tab["rows"][-1]["flag"] == "regression"
    assert tab["high_ms"][-1] == pytest.approx(last["expected_high_ms"])
    rows = {r["key"]: r for r in shown["tabs"]["summary"]["key_numbers"]}
    assert rows["series"]["items"][0]["t"].startswith(f"{n}th run of this cell: slower")



#: The drift: the cell's data grows by DRIFT per run over DRIFT_RUNS warm runs (×1.98 in all),
#: the same code (the row count is a variable set outside the cell, so the code fingerprint,
#: the sha-256 of the cell's body, stays the same) and the same settings. Each row sleeps
#: ROW_SLEEP_MS in the executor (``reflect``: JVM only, no Python worker), so the data sets a
#: floor under the wall time that a busy host can only add to: the drift is the designed
#: effect, the host's load the noise. 2 partitions on local[2]: 2 s, growing to 3.9 s.
DRIFT = 0.05
DRIFT_RUNS = 14
DRIFT_ROWS = 400
ROW_SLEEP_MS = 10
DRIFT_CELL = ("%%perfmeasure --label drift-history\n"
              "spark.range(0, n_rows, 1, 2).selectExpr(\n"
              f"    \"reflect('java.lang.Thread', 'sleep', CAST({ROW_SLEEP_MS} AS BIGINT))\").collect()\n")


def test_a_gradual_drift_is_found_by_the_change_points(shell):
    """Issue T, Must show: a gradual drift over a series found. Each run is a little slower
    than the one before, so the band of the runs before it moves with it; the change-point test
    over the warm runs finds where the level rose: the level after it is above the level
    before, and ``change`` says what moved (no setting, no code: the data)."""
    from jupyter_perf.analysis.series import MIN_SEGMENT, change_points

    ids = []
    for k in range(1 + DRIFT_RUNS):                             # the first is cold
        n = round(DRIFT_ROWS * (1 + DRIFT) ** max(0, k - 1))
        shell.user_ns["n_rows"] = n
        result, cap = run_cell(shell, DRIFT_CELL)
        assert result.error_in_exec is None, cap.stderr
        wait_pending()
        run = jp.last_run()
        assert run.status == "ok", run.error
        ids.append(run.run_id)
    h = jp.history("drift-history")
    walls = str(h["wall_ms"].round().tolist())
    assert h["run_id"].tolist() == ids
    # one code, one setting: the data is all that changed
    assert h["code"].nunique() == 1 and h["settings"].nunique() == 1
    assert h["warm"].tolist() == [False] + [True] * DRIFT_RUNS
    # the change points: jp.history's are the rule's on the warm runs' measured wall times
    warm = h[h["warm"] == True]                                  # noqa: E712
    points = h.attrs["change_points"]
    assert [p["index"] for p in points] == [p["index"] for p in
                                            change_points(warm["wall_ms"].tolist())]
    assert h["change_point"].sum() == len(points)
    # the drift is found: a level starts at a later run, higher than the level before it
    assert points, f"no change point in the warm runs {walls}"
    up = [p for p in points if p["after_ms"] > p["before_ms"]]
    assert up, f"no upward change point: {points} in {walls}"
    first = up[0]
    assert MIN_SEGMENT <= first["index"] <= DRIFT_RUNS - MIN_SEGMENT
    row = h[h["run_id"] == first["run_id"]].iloc[0]
    assert bool(row["change_point"]) and bool(row["warm"])
    # what moved there: compare's decomposition against the previous warm run, no setting or
    # code named (neither changed)
    assert "vs run " in row["change"] and "code changed" not in row["change"]
    assert "spark." not in row["change"], row["change"]
    # the notebook-level list (jp.regressions, %perfmeasure regressions kernel) agrees with the
    # history: the cell is listed exactly when its latest warm run was flagged
    flagged = bool(h["regression"].iloc[-1])
    listed = jp.regressions(app_id=jp.last_run().app_id)
    assert listed["run_id"].tolist() == ([ids[-1]] if flagged else [])
    assert (listed.attrs["cells"], listed.attrs["known"]) == (1, 1)
    _, cap = run_cell(shell, "%perfmeasure regressions kernel")
    assert (ids[-1] in cap.stdout) == flagged and "1 cell" in cap.stdout, cap.stdout
