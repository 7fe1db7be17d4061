"""``GET runs`` carries each listed run's sparkline (issue T, part 2): its cell's wall times up
to it and the one noise rule's flags, through a real Jupyter server; authenticated like every
route."""
from __future__ import annotations

import json

import pytest
from compare_synth import cell_run, stored
from tornado.httpclient import HTTPClientError

API = ("jupyter-perf", "api")


async def test_runs_carry_their_cells_sparkline(jp_fetch, perf_home):
    ids = [stored(cell_run([100 + k, 100, 100, 100], label="spark <b>line</b>"))
           for k in range(6)]
    slow = stored(cell_run([400, 400, 400, 400], label="spark <b>line</b>",
                           conf={"spark.sql.shuffle.partitions": "8"}))
    lonely = stored(cell_run([50, 50], label="lonely", cell_id="cell-9"))
    data = json.loads((await jp_fetch(*API, "runs")).body)
    by_id = {r["run_id"]: r for r in data["runs"]}
    assert by_id[lonely]["series"] is None and by_id[ids[0]]["series"] is None
    line = by_id[slow]["series"]
    assert line["run_id"] == ids + [slow]
    assert line["wall_ms"] == [by_id[i]["wall_ms"] for i in ids + [slow]]
    assert line["regression"] == [False] * 6 + [True]
    assert by_id[ids[3]]["series"]["run_id"] == ids[:4]
    assert not any(by_id[ids[3]]["series"]["regression"])
    # the same page again: the same answer (from the caches)
    again = json.loads((await jp_fetch(*API, "runs")).body)
    assert again["runs"] == data["runs"]


async def test_the_list_with_its_sparklines_needs_the_token(jp_fetch, perf_home):
    stored(cell_run([100, 100], label="x"))
    with pytest.raises(HTTPClientError) as err:
        await jp_fetch(*API, "runs", headers={"Authorization": ""})
    assert err.value.code in (401, 403)


async def test_the_regressed_filter_lists_each_regressed_cells_latest_run(jp_fetch, perf_home):
    """``GET runs?regressed=1`` (the sidebar's "Regressed" filter): only the latest warm run of
    each cell the one noise rule flags (``jp.regressions``), with its sparkline; the text
    filter and paging apply; a bad flag is one 400 line."""
    steady = [stored(cell_run([100 + k, 100, 100, 100], label="steady", cell_id="c-1"))
              for k in range(6)]
    base = [stored(cell_run([100 + k, 100, 100, 100], label="slowed <b>x</b>", cell_id="c-2"))
            for k in range(6)]
    slow = stored(cell_run([400, 400, 400, 400], label="slowed <b>x</b>", cell_id="c-2",
                           conf={"spark.sql.shuffle.partitions": "8"}))
    other = [stored(cell_run([200 + k, 200, 200, 200], label="other", cell_id="c-3"))
             for k in range(6)]
    other_slow = stored(cell_run([900, 900, 900, 900], label="other", cell_id="c-3",
                                 conf={"spark.sql.shuffle.partitions": "8"}))
    everything = json.loads((await jp_fetch(*API, "runs")).body)
    assert everything["total"] == len(steady + base + other) + 2
    data = json.loads((await jp_fetch(*API, "runs", params={"regressed": "1"})).body)
    assert [r["run_id"] for r in data["runs"]] == [other_slow, slow]     # most slowed first
    assert data["total"] == 2
    assert all(r["series"]["regression"][-1] for r in data["runs"])
    assert data["runs"][1]["label"] == "slowed <b>x</b>"                  # data, not markup
    found = json.loads((await jp_fetch(*API, "runs", params={"regressed": "1",
                                                              "q": "slowed"})).body)
    assert [r["run_id"] for r in found["runs"]] == [slow] and found["total"] == 1
    page = json.loads((await jp_fetch(*API, "runs", params={"regressed": "1", "limit": "1",
                                                             "offset": "1"})).body)
    assert [r["run_id"] for r in page["runs"]] == [slow] and page["total"] == 2
    off = json.loads((await jp_fetch(*API, "runs", params={"regressed": "0"})).body)
    assert off["total"] == everything["total"]
    with pytest.raises(HTTPClientError) as err:
        await jp_fetch(*API, "runs", params={"regressed": "maybe"})
    assert err.value.code == 400
