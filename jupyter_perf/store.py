"""Run history on disk: a SQLite index plus one directory of data per run.

Layout under ``home_dir()`` ($JUPYTER_PERF_HOME, else <jupyter data dir>/jupyter_perf)::

    index.sqlite3            one row per run (WAL mode: many kernels, one server)
    runs/<run_id>/run.json   metadata, jobs, stages, executors, warnings
    runs/<run_id>/tasks.parquet, memory.parquet

A run directory is written under a temporary name and renamed into place, and
only then indexed, so a reader never sees half a run and a kill mid-write
leaves no index row pointing at nothing.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import sqlite3
import tempfile
import time
from typing import Any, Iterator

import pandas as pd

from .model import Run

RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id      TEXT PRIMARY KEY,
    created_ms  REAL NOT NULL,
    kind        TEXT, label TEXT, first_line TEXT, notebook TEXT, status TEXT,
    wall_ms     REAL, app_id TEXT, num_jobs INTEGER, num_stages INTEGER,
    num_tasks   INTEGER, verdict TEXT, summary TEXT
);
CREATE INDEX IF NOT EXISTS runs_created ON runs(created_ms DESC);
"""
_FRAMES = ("jobs", "stages", "executors", "host_cpu")


class StoreError(RuntimeError):
    """A clear, one-line problem with the run store."""


def home_dir() -> str:
    env = os.environ.get("JUPYTER_PERF_HOME")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    try:
        from jupyter_core.paths import jupyter_data_dir
        base = jupyter_data_dir()
    except Exception:  # pragma: no cover - jupyter_core is a dependency
        base = os.path.join(os.path.expanduser("~"), ".local", "share", "jupyter")
    return os.path.join(base, "jupyter_perf")


def valid_run_id(run_id: str) -> bool:
    return bool(RUN_ID_RE.match(run_id or "")) and ".." not in run_id


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, float) and math.isnan(value):
        return None
    return str(value)


def _frame_to_records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return json.loads(df.to_json(orient="records", default_handler=str))


class RunStore:
    def __init__(self, root: str | None = None):
        self.root = os.path.abspath(root or home_dir())
        self.runs_dir = os.path.join(self.root, "runs")
        self.index_path = os.path.join(self.root, "index.sqlite3")

    # -- plumbing -----------------------------------------------------------
    @contextlib.contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        try:
            os.makedirs(self.runs_dir, exist_ok=True)
            conn = sqlite3.connect(self.index_path, timeout=30.0)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the run store at {self.root}: {exc}; "
                             "set JUPYTER_PERF_HOME to a writable directory") from exc
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA busy_timeout=30000")
            conn.executescript(_SCHEMA)
            yield conn
            conn.commit()
        finally:
            conn.close()

    def run_dir(self, run_id: str) -> str:
        if not valid_run_id(run_id):
            raise StoreError(f"not a valid run id: {run_id!r}")
        return os.path.join(self.runs_dir, run_id)

    # -- write --------------------------------------------------------------
    def save(self, run: Run, summary: dict[str, Any] | None = None) -> str:
        """Write ``run`` atomically and index it. Returns the run directory."""
        final = self.run_dir(run.run_id)
        try:
            os.makedirs(self.runs_dir, exist_ok=True)
            tmp = tempfile.mkdtemp(prefix=f".{run.run_id}.", dir=self.runs_dir)
        except OSError as exc:
            raise StoreError(f"cannot write runs under {self.root}: {exc.strerror or exc}; "
                             "set JUPYTER_PERF_HOME to a writable directory") from exc
        try:
            meta = {k: getattr(run, k) for k in (
                "run_id", "kind", "label", "source", "notebook", "status", "start_ms",
                "end_ms", "app_id", "app_name", "spark_version", "master", "collector",
                "error", "warnings", "extra")}
            meta["format"] = 1
            for name in _FRAMES:
                meta[name] = _frame_to_records(getattr(run, name))
            if run.listener_stages is not None:
                meta["listener_stages"] = _frame_to_records(run.listener_stages)
            if summary is not None:
                meta["summary"] = summary
            with open(os.path.join(tmp, "run.json"), "w", encoding="utf-8") as fh:
                json.dump(meta, fh, default=_json_default)
                fh.flush()
                os.fsync(fh.fileno())
            run.tasks.to_parquet(os.path.join(tmp, "tasks.parquet"), index=False)
            memory = run.memory.copy()
            for col in memory.columns:
                if memory[col].dtype == object and col != "executor_id":
                    memory[col] = pd.to_numeric(memory[col], errors="coerce")
            memory["executor_id"] = memory["executor_id"].astype(str)
            memory.to_parquet(os.path.join(tmp, "memory.parquet"), index=False)
            if os.path.exists(final):
                shutil.rmtree(final)
            os.rename(tmp, final)
        except OSError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            raise StoreError(f"could not save run {run.run_id} to {self.root}: "
                             f"{exc.strerror or exc}; free some space or set JUPYTER_PERF_HOME") from exc
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self._index(run, summary)
        return final

    def _index(self, run: Run, summary: dict[str, Any] | None) -> None:
        row = (run.run_id, time.time() * 1000.0, run.kind, run.label, run.first_line,
               run.notebook, run.status, run.wall_ms, run.app_id, len(run.jobs),
               len(run.stages), len(run.tasks), (summary or {}).get("verdict", ""),
               json.dumps(summary, default=_json_default) if summary else None)
        with self._db() as db:
            db.execute("INSERT OR REPLACE INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", row)

    def delete(self, run_id: str) -> bool:
        path = self.run_dir(run_id)
        with self._db() as db:
            gone = db.execute("DELETE FROM runs WHERE run_id=?", (run_id,)).rowcount
        shutil.rmtree(path, ignore_errors=True)
        return bool(gone)

    # -- read ---------------------------------------------------------------
    def list(self, limit: int = 50, offset: int = 0, text: str = "",
             notebook: str = "") -> list[dict[str, Any]]:
        sql = ("SELECT run_id, created_ms, kind, label, first_line, notebook, status, wall_ms, "
               "app_id, num_jobs, num_stages, num_tasks, verdict FROM runs")
        where, args = [], []
        if text:
            where.append("(label LIKE ? OR first_line LIKE ? OR run_id LIKE ? OR verdict LIKE ?)")
            args += [f"%{text}%"] * 4
        if notebook:
            where.append("notebook = ?")
            args.append(notebook)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_ms DESC LIMIT ? OFFSET ?"
        args += [int(limit), int(offset)]
        with self._db() as db:
            db.row_factory = sqlite3.Row
            return [dict(r) for r in db.execute(sql, args)]

    def count(self) -> int:
        with self._db() as db:
            return int(db.execute("SELECT COUNT(*) FROM runs").fetchone()[0])

    def summary(self, run_id: str) -> dict[str, Any] | None:
        self.run_dir(run_id)
        with self._db() as db:
            row = db.execute("SELECT summary FROM runs WHERE run_id=?", (run_id,)).fetchone()
        if row is None:
            raise KeyError(run_id)
        return json.loads(row[0]) if row[0] else None

    def load(self, run_id: str) -> Run:
        path = self.run_dir(run_id)
        meta_path = os.path.join(path, "run.json")
        if not os.path.exists(meta_path):
            raise KeyError(run_id)
        try:
            with open(meta_path, encoding="utf-8") as fh:
                meta = json.load(fh)
            tasks = pd.read_parquet(os.path.join(path, "tasks.parquet"))
            memory = pd.read_parquet(os.path.join(path, "memory.parquet"))
        except (OSError, ValueError) as exc:
            raise StoreError(f"run {run_id} is damaged ({exc}); delete it with "
                             f"`jupyter-perf runs --delete {run_id}`") from exc
        meta.pop("format", None)
        meta.pop("summary", None)
        listener = meta.pop("listener_stages", None)
        frames = {name: pd.DataFrame(meta.pop(name, [])) for name in _FRAMES}
        run = Run(**meta, **frames, tasks=tasks, memory=memory)
        if listener is not None:
            run.listener_stages = pd.DataFrame(listener)
        return run


def default_store() -> RunStore:
    return RunStore()
