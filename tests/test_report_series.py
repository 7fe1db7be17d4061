"""The History tab in every surface that writes a stored run's report (issue T): the
standalone export (``jupyter-perf report``, ``%perfmeasure export``) and the server's cached
report page (``GET runs/{id}/report``) carry the cell's series as the notebook's report does
(``service/history.report_series``), and the server draws its cached page again when the cell
gets another run. Hand-built runs (compare_synth.py) saved to a real store; the page drawn in
Chromium is tests/ui/test_history_export_ui.py."""
from __future__ import annotations

import re

from compare_synth import cell_run, stored
from sparkhelpers import run_cell

from jupyter_perf.cli import main
from jupyter_perf.constants import REPORT_MIME_TYPE
from jupyter_perf.render.views import decode_data
from jupyter_perf.server import runs_service
from jupyter_perf.store import default_store

SLOW = {"spark.sql.shuffle.partitions": "8"}


def _data(html: str) -> dict:
    import json
    (text,) = re.findall(rf'<script type="{re.escape(REPORT_MIME_TYPE)}">(.*?)</script>', html,
                         re.S)
    return decode_data(json.loads(text)["data"])


def _seed(n: int = 6) -> list[str]:
    ids = [stored(cell_run([100 + k, 100, 100, 100], label="daily")) for k in range(n)]
    return ids + [stored(cell_run([400] * 4, label="daily", conf=SLOW))]


def _history_tab(data: dict, ids: list[str]) -> dict:
    tab = data["tabs"]["history"]
    assert [r["run_id"] for r in tab["rows"]] == ids
    return tab


def test_the_export_carries_the_cells_series(tmp_path, capsys):
    ids = _seed()
    out = tmp_path / "slow.html"
    assert main(["report", ids[-1], "-o", str(out)]) == 0
    data = _data(out.read_text(encoding="utf-8"))
    tab = _history_tab(data, ids)
    assert tab["run_id"] == ids[-1] and tab["regression"] == [False] * 6 + [True]
    assert tab["context"].startswith("7th run of this cell: slower than the 6 warm runs")
    rows = {r["key"]: r for r in data["tabs"]["summary"]["key_numbers"]}
    assert rows["series"]["items"][0]["t"].startswith("7th run of this cell: slower")
    # an earlier run's export: the same series, that run marked
    assert main(["report", ids[2], "-o", str(tmp_path / "third.html")]) == 0
    tab = _history_tab(_data((tmp_path / "third.html").read_text(encoding="utf-8")), ids)
    assert tab["run_id"] == ids[2] and tab["index"] == 2
    # a run with no other run of its cell: no History tab, as in the notebook
    alone = stored(cell_run([100, 100], label="alone", cell_id="cell-alone"))
    assert main(["report", alone, "-o", str(tmp_path / "alone.html")]) == 0
    assert "history" not in _data((tmp_path / "alone.html").read_text(encoding="utf-8"))["tabs"]
    capsys.readouterr()


def test_the_magics_export_carries_it(ipshell, tmp_path):
    ids = _seed()
    out = tmp_path / "magic.html"
    _, cap = run_cell(ipshell, f"%perfmeasure export {ids[-1]} {out}")
    assert "report written to" in cap.stdout, cap.stderr
    assert _history_tab(_data(out.read_text(encoding="utf-8")), ids)["regression"][-1] is True


def test_the_servers_report_page_carries_it_and_is_drawn_again_for_a_new_run():
    ids = _seed()
    html, cached = runs_service.report_html(None, ids[-1])
    assert not cached and _history_tab(_data(html), ids)["regression"][-1] is True
    html, cached = runs_service.report_html(None, ids[-1])
    assert cached and _history_tab(_data(html), ids)          # the cached page, same series
    # the cell gets another run: the cached page of an older run is drawn again with it
    newer = stored(cell_run([400] * 4, label="daily", conf=SLOW))
    html, cached = runs_service.report_html(None, ids[-1])
    assert not cached
    tab = _history_tab(_data(html), ids + [newer])
    assert tab["run_id"] == ids[-1] and tab["index"] == len(ids) - 1
    # a past application's load (not a cell's run) has no series, even with the same label
    run = cell_run([100, 100], label="daily")
    run.kind = "eventlog"
    default_store().save(run)
    html, _ = runs_service.report_html(None, run.run_id)
    assert "history" not in _data(html)["tabs"]
