"""``jp.regressions()``, ``jupyter-perf regressions`` and ``%perfmeasure regressions`` (issue T,
item 4: a notebook-level list of the cells that regressed). The runs are hand-built
(compare_synth.py) and saved to a real store; each cell's series is judged by the one rule
(analysis/series.py) as ``jp.history`` judges it."""
from __future__ import annotations

import json

from compare_synth import cell_run, stored
from sparkhelpers import run_cell

import jupyter_perf as jp
from jupyter_perf.cli import main

SLOW_CONF = {"spark.sql.shuffle.partitions": "8"}


def _cell(cell_id, n, *, notebook="nb.ipynb", app_id="", base=100, label=""):
    """``n`` unchanged runs of one cell (tasks of about ``base`` ms)."""
    out = []
    for k in range(n):
        run = cell_run([base + k % 3, base, base, base], cell_id=cell_id, notebook=notebook,
                       label=label)
        run.app_id = app_id
        out.append(stored(run))
    return out


def _slow(cell_id, *, notebook="nb.ipynb", app_id="", label="", base=100):
    run = cell_run([4 * base] * 4, cell_id=cell_id, notebook=notebook, conf=SLOW_CONF,
                   label=label)
    run.app_id = app_id
    return stored(run)


def _store_of_four_cells():
    """A: six usual runs, then a slower setting (its latest warm run: a regression).
    B: seven usual runs. C: two runs (noise unknown). D: six usual runs, a slow one, then a
    usual one again (it regressed once, but its latest warm run did not)."""
    a = _cell("cell-a", 6, label="daily aggregate")
    a_slow = _slow("cell-a", label="daily aggregate")
    _cell("cell-b", 7, base=200)
    _cell("cell-c", 2, base=300)
    _cell("cell-d", 6, base=50)
    d_slow = _slow("cell-d", base=50)
    d_back = _cell("cell-d", 1, base=50)[0]
    return a, a_slow, d_slow, d_back


def test_one_row_per_cell_whose_latest_warm_run_regressed():
    a, a_slow, d_slow, d_back = _store_of_four_cells()
    r = jp.regressions()
    assert r["run_id"].tolist() == [a_slow], r[["cell", "run_id"]]
    row = r.iloc[0]
    assert row["cell"] == "cell-a" and row["label"] == "daily aggregate"
    assert row["runs"] == 7 and row["latest_run_id"] == a_slow
    assert row["wall_ms"] > row["expected_high_ms"] > row["median_ms"] > row["expected_low_ms"]
    assert row["slower"] == row["wall_ms"] / row["median_ms"] - 1 and row["slower"] > 1
    assert row["basis"] == "before the change" and row["noise_runs"] == 6
    # the history's words: the setting, and compare's decomposition against the last usual run
    h = jp.history(a_slow)
    assert row["change"] == h["change"].iloc[-1]
    assert "spark.sql.shuffle.partitions 200 → 8" in row["change"]
    assert f"vs run {a[-1]}" in row["change"]
    # the band is the one history gives the run
    assert row["expected_high_ms"] == h["expected_high_ms"].iloc[-1]
    # D's slow run was a regression in its history, but D's latest warm run is not
    hd = jp.history("cell-d").set_index("run_id")
    assert bool(hd.loc[d_slow, "regression"]) and not bool(hd.loc[d_back, "regression"])
    # A, B and D have a known noise; C's two runs need three more
    assert (r.attrs["cells"], r.attrs["known"], r.attrs["need_more"]) == (4, 3, 1)


def test_scoped_to_a_notebook_or_a_spark_application():
    _cell("cell-a", 6)
    a_slow = _slow("cell-a")
    _cell("cell-e", 6, notebook="other.ipynb")
    e_slow = _slow("cell-e", notebook="other.ipynb")
    assert set(jp.regressions()["run_id"]) == {a_slow, e_slow}
    mine = jp.regressions(notebook="nb.ipynb")
    assert mine["run_id"].tolist() == [a_slow] and mine.attrs["cells"] == 1
    assert jp.regressions(notebook="other.ipynb")["run_id"].tolist() == [e_slow]
    assert jp.regressions(notebook="none.ipynb").attrs["cells"] == 0
    # a kernel's Spark application: its first run of the cell is cold (never judged); the
    # warm runs of app-2 are judged against the cell's usual (learned from every application)
    _cell("cell-k", 6, app_id="app-1")
    k_slow = _slow("cell-k", app_id="app-2")        # the first in app-2: cold, not flagged
    k_warm_slow = _slow("cell-k", app_id="app-2")   # warm, slower than the usual: flagged
    scoped = jp.regressions(app_id="app-2")
    assert scoped["run_id"].tolist() == [k_warm_slow] and k_slow not in set(scoped["run_id"])
    assert scoped.attrs["scope"] == "Spark application app-2"
    # app-1 alone: its latest warm run is a usual one
    assert jp.regressions(app_id="app-1").empty


def test_cli_prints_one_line_per_cell_json_and_the_empty_sentence(capsys):
    assert main(["regressions"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.strip() == ("no cell regressed among 0 cells with a known noise; "
                                         "0 cells need more runs (every stored run)")
    _cell("cell-c", 2, base=300)
    _cell("cell-b", 7, base=200)
    assert main(["regressions"]) == 0
    assert capsys.readouterr().out.startswith(
        "no cell regressed among 1 cell with a known noise; 1 cell needs more runs")
    _, a_slow, _, _ = _store_of_four_cells()
    assert main(["regressions"]) == 0
    out = capsys.readouterr().out
    lines = [x for x in out.splitlines() if x[:8].isdigit()]
    assert len(lines) == 1 and lines[0].startswith(a_slow) and "daily aggregate" in lines[0]
    assert "spark.sql.shuffle.partitions 200 → 8" in lines[0]
    assert "1 cell of 3 cells with a known noise regressed" in out
    assert main(["regressions", "--json", "--notebook", "nb.ipynb"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [x["run_id"] for x in doc["regressions"]] == [a_slow]
    assert doc["known"] == 3 and doc["need_more"] == 1 and doc["scope"] == "notebook nb.ipynb"
    assert main(["regressions", "--app", "no-such-app"]) == 0
    assert capsys.readouterr().out.startswith("no cell regressed among 0 cells")


def test_magic_prints_the_list_for_this_notebook_all_or_the_kernel(ipshell):
    _cell("cell-a", 6)
    a_slow = _slow("cell-a")
    _cell("cell-e", 6, notebook="other.ipynb")
    e_slow = _slow("cell-e", notebook="other.ipynb")
    ipshell.user_ns["__session__"] = "other.ipynb"
    try:
        _, cap = run_cell(ipshell, "%perfmeasure regressions")
        assert e_slow in cap.stdout and a_slow not in cap.stdout      # this notebook's cells
        _, cap = run_cell(ipshell, "%perfmeasure regressions all")
        assert e_slow in cap.stdout and a_slow in cap.stdout
        _, cap = run_cell(ipshell, "%perfmeasure regressions nb.ipynb")
        assert a_slow in cap.stdout and e_slow not in cap.stdout
        _, cap = run_cell(ipshell, "%perfmeasure help")
        assert "%perfmeasure regressions" in cap.stdout
    finally:
        ipshell.user_ns.pop("__session__", None)
