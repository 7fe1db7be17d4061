"""A store written by the previous version (index schema 0, see ``git show
5e4c9e4:jupyter_perf/store.py``) opens, lists and loads; older versions keep writing to and
reading from it after this version migrated it."""
from __future__ import annotations

import json
import os
import sqlite3
import time

import pandas as pd
from test_model import REST_TASK

from jupyter_perf.collect.rest_fields import conform_rest
from jupyter_perf.store import RunStore

# The previous version's schema (reflowed) and insert, verbatim.
OLD_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, created_ms REAL NOT NULL, "
    "kind TEXT, label TEXT, first_line TEXT, notebook TEXT, status TEXT, wall_ms REAL, "
    "app_id TEXT, num_jobs INTEGER, num_stages INTEGER, num_tasks INTEGER, verdict TEXT, "
    "summary TEXT); CREATE INDEX IF NOT EXISTS runs_created ON runs(created_ms DESC);")
OLD_INSERT = "INSERT OR REPLACE INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
OLD_LIST = ("SELECT run_id, created_ms, kind, label, first_line, notebook, status, wall_ms, "
            "app_id, num_jobs, num_stages, num_tasks, verdict FROM runs")


def old_save(root, run_id, label, source, extra, summary, created_ms):
    """What the previous version's ``RunStore.save`` left on disk for one run."""
    folder = os.path.join(root, "runs", run_id)
    os.makedirs(folder)
    meta = {"run_id": run_id, "kind": "cell", "label": label, "source": source,
            "notebook": "/home/me/nb.ipynb", "status": "ok", "start_ms": 1000.0,
            "end_ms": 4000.0, "app_id": "local-1", "app_name": "app", "spark_version": "3.5.9",
            "master": "local[2]", "collector": "rest", "error": "", "warnings": [],
            "extra": extra, "format": 1, "jobs": [{"job_id": 0}],
            "stages": [{"stage_id": 3, "attempt": 0}], "executors": [], "host_cpu": [],
            "summary": summary}
    with open(os.path.join(folder, "run.json"), "w", encoding="utf-8") as fh:
        json.dump(meta, fh)
    conform_rest("tasks", [REST_TASK], stage_id=3, stage_attempt=0).to_parquet(
        os.path.join(folder, "tasks.parquet"), index=False)
    pd.DataFrame({"time_ms": [1.0], "executor_id": ["driver"]}).to_parquet(
        os.path.join(folder, "memory.parquet"), index=False)
    first_line = source.splitlines()[1]
    with sqlite3.connect(os.path.join(root, "index.sqlite3")) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(OLD_SCHEMA)
        db.execute(OLD_INSERT, (run_id, created_ms, "cell", label, first_line,
                                "/home/me/nb.ipynb", "ok", 3000.0, "local-1", 1, 1, 1,
                                summary["verdict"], json.dumps(summary)))


def test_an_old_store_opens_lists_and_loads(tmp_path):
    root = str(tmp_path)
    now = time.time() * 1000
    old_save(root, "20261101-000000-aaaaaa", "first", "%%perfmeasure\ndf.count()\n",
             {"cell_id": "cell-1"}, {"verdict": "CPU-bound: x"}, now - 2000)
    old_save(root, "20261101-000001-bbbbbb", "second", "%%perfmeasure\ndf.count()\n",
             {}, {"verdict": "GC-bound: y"}, now - 1000)

    store = RunStore(root)
    rows = store.list()
    assert [r["label"] for r in rows] == ["second", "first"] and store.count() == 2
    assert rows[1]["cell_id"] == "cell-1" and rows[0]["cell_id"] is None   # filled from run.json
    assert rows[0]["source_hash"] == rows[1]["source_hash"] is not None
    assert rows[0]["verdict_category"] is None                  # old summaries have none
    assert [r["run_id"] for r in store.previous_runs("20261101-000001-bbbbbb")] == \
        ["20261101-000000-aaaaaa"]                             # no cell id: by source
    meta = store.meta("20261101-000000-aaaaaa")
    assert meta["num_tasks"] == 1 and meta["summary"] == {"verdict": "CPU-bound: x"}
    assert meta["created_ms"] == now - 2000
    run = store.load("20261101-000000-aaaaaa")
    assert run.label == "first" and len(run.tasks) == 1 and run.sql.empty
    with sqlite3.connect(store.index_path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 2
    assert not store.notes                                      # nothing needed repairing

    # an older version still writes (14 values) and lists in the migrated store ...
    old_save(root, "20261101-000002-cccccc", "from an old kernel", "%%perfmeasure\nx()\n",
             {}, {"verdict": "z"}, now)
    with sqlite3.connect(store.index_path) as db:
        assert [r[0] for r in db.execute(OLD_LIST + " ORDER BY created_ms DESC")] == [
            "20261101-000002-cccccc", "20261101-000001-bbbbbb", "20261101-000000-aaaaaa"]
    # ... and this version sees its run, and writes runs the old listing query still reads
    assert store.list(limit=1)[0]["label"] == "from an old kernel"
    new = store.load("20261101-000000-aaaaaa")
    new.run_id, new.label = "20261101-000003-dddddd", "new"
    store.save(new, summary={"verdict": "v", "verdict_category": "cpu"})
    with sqlite3.connect(store.index_path) as db:
        row = db.execute(OLD_LIST + " WHERE run_id=?", (new.run_id,)).fetchone()
    assert row[3] == "new" and row[11] == 1 and row[12] == "v"
