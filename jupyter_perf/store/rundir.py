"""One run's directory: the truth the index is built from.

    run.json        metadata (META_FIELDS), the small frames (jobs, stages, executors,
                    host_cpu, listener_stages) as records, and the analysis summary
    sql.json        the SQL tables (sql, operators, sql_metrics) as records; absent in
                    runs stored before they existed (read as empty tables)
    tasks.parquet   one row per task attempt
    memory.parquet  memory samples
    stage_memory.json  per stage attempt and executor, its memory peaks, as records; absent
                    when empty and in runs stored before it existed (read as an empty table;
                    a file of its own: versions up to 0.1.0 fail on a run.json key they do
                    not know)

Strings are written as JSON with ASCII escapes, so any Unicode (lone surrogates included)
round-trips exactly. Keys a newer version wrote and this one does not know are kept aside in
``run.extra["unknown_fields"]`` instead of failing the load. run.json keeps the keys of
format 1, so the versions before this one still read what this one writes.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import types
from typing import Any

import numpy as np
import pandas as pd

from ..atomic import utf8_safe
from ..model import Run, cell_body, conform, window_of

FORMAT = 1
META_FIELDS = ("run_id", "kind", "label", "source", "notebook", "status", "start_ms",
               "end_ms", "app_id", "app_name", "spark_version", "master", "collector",
               "error", "warnings", "extra")
#: The metadata a reader gets without the task data (``RunStore.meta``), and what it adds.
PUBLIC_META = tuple(k for k in META_FIELDS if k != "extra")
DERIVED_META = ("first_line", "wall_ms", "created_ms", "num_jobs", "num_stages", "num_tasks",
                "verdict", "verdict_category", "verdict_headline", "top_operator", "cell_id",
                "source_hash")
FRAMES = ("jobs", "stages", "executors", "host_cpu")
SQL_FRAMES = ("sql", "operators", "sql_metrics")
RUN_JSON, SQL_JSON, TASKS, MEMORY = "run.json", "sql.json", "tasks.parquet", "memory.parquet"
STAGE_MEMORY_JSON = "stage_memory.json"
UNKNOWN_KEY = "unknown_fields"
_RUN_FIELDS = {f.name for f in dataclasses.fields(Run)}


# -- values to JSON and back ---------------------------------------------------------------
def plain(value: Any) -> Any:
    """``value`` as plain JSON-able Python: numpy scalars and arrays unboxed, NaN → None."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or value is pd.NaT or value is pd.NA:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [plain(r) for r in df.to_dict(orient="records")]


def dumps(data: Any) -> str:
    """JSON with ASCII escapes: lone surrogates and any other code point survive."""
    return json.dumps(plain(data), ensure_ascii=True)


# -- derived facts (the same for save and rebuild) --------------------------------------------
def first_line(source: str) -> str:
    """The first line a user reads in the cell (``Run.first_line``, from the source alone)."""
    return Run.first_line.fget(types.SimpleNamespace(source=source or ""))


def source_hash(source: str) -> str | None:
    """sha256 of the cell body; None when there is no body (runs of an event log)."""
    body = cell_body(source)
    if not body.strip():
        return None
    return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()


def cell_id(extra: Any) -> str | None:
    """JupyterLab's id of the cell that ran (kept by the magic in ``run.extra``), or None."""
    value = extra.get("cell_id") if isinstance(extra, dict) else None
    return utf8_safe(value) if isinstance(value, str) and value else None


def summary_text(summary: Any, key: str) -> str | None:
    value = summary.get(key) if isinstance(summary, dict) else None
    if isinstance(value, dict):                # e.g. a top operator given as a row
        value = value.get("label") or value.get("name")
    return utf8_safe(value) if isinstance(value, str) and value else None


def index_facts(meta: dict[str, Any], num_tasks: int, stored_ms: float) -> dict[str, Any]:
    """The index row of a run from its run.json content: what ``save`` writes and a rebuild
    recomputes, so both give the same row."""
    summary = meta.get("summary")

    def text(key: str) -> str:
        value = meta.get(key)
        return utf8_safe(value) if isinstance(value, str) else ""

    def number(key: str) -> float:
        try:
            return float(meta.get(key) or 0.0)
        except (TypeError, ValueError):
            return 0.0

    return {
        "run_id": meta["run_id"], "created_ms": float(stored_ms),
        "kind": text("kind"), "label": text("label"),
        "first_line": utf8_safe(first_line(text("source"))), "notebook": text("notebook"),
        "status": text("status"), "wall_ms": window_of(text("kind"), number("start_ms"), number("end_ms"),
                                                conform("jobs", meta.get("jobs") or [])).wall_ms,
        "app_id": text("app_id"), "num_jobs": len(meta.get("jobs") or []),
        "num_stages": len(meta.get("stages") or []), "num_tasks": int(num_tasks),
        "verdict": summary_text(summary, "verdict") or "",
        "cell_id": cell_id(meta.get("extra")),
        "source_hash": source_hash(text("source")),
        "verdict_category": summary_text(summary, "verdict_category"),
        "verdict_headline": summary_text(summary, "verdict_headline"),
        "top_operator": summary_text(summary, "top_operator"),
    }


# -- write ----------------------------------------------------------------------------------
def run_meta(run: Run, summary: dict[str, Any] | None) -> dict[str, Any]:
    """run.json's content for ``run``."""
    meta: dict[str, Any] = {k: getattr(run, k) for k in META_FIELDS}
    meta["format"] = FORMAT
    for name in FRAMES:
        meta[name] = records(getattr(run, name))
    if run.listener_stages is not None:
        meta["listener_stages"] = records(run.listener_stages)
    if summary is not None:
        meta["summary"] = summary
    return plain(meta)


def _write_file(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def _to_parquet(df: pd.DataFrame, path: str) -> None:
    try:
        df.to_parquet(path, index=False)
    except (UnicodeEncodeError, ValueError):      # lone surrogates in a text column
        safe = df.copy()
        for col in safe.columns:
            if safe[col].dtype == object:
                safe[col] = safe[col].map(lambda v: utf8_safe(v) if isinstance(v, str) else v)
        safe.to_parquet(path, index=False)


def write(folder: str, run: Run, summary: dict[str, Any] | None) -> dict[str, Any]:
    """Write every file of ``run`` into ``folder`` (fsynced); returns run.json's content."""
    meta = run_meta(run, summary)
    _write_file(os.path.join(folder, RUN_JSON), dumps(meta))
    sql = {name: records(getattr(run, name)) for name in SQL_FRAMES}
    if any(sql.values()):
        _write_file(os.path.join(folder, SQL_JSON), dumps(sql))
    if len(run.stage_memory):
        _write_file(os.path.join(folder, STAGE_MEMORY_JSON), dumps(records(run.stage_memory)))
    _to_parquet(run.tasks, os.path.join(folder, TASKS))
    memory = run.memory.copy()
    for col in memory.columns:
        if memory[col].dtype == object and col != "executor_id":
            memory[col] = pd.to_numeric(memory[col], errors="coerce")
    memory["executor_id"] = memory["executor_id"].astype(str)
    _to_parquet(memory, os.path.join(folder, MEMORY))
    return meta


# -- read -----------------------------------------------------------------------------------
def read_meta(folder: str) -> dict[str, Any]:
    """run.json's content (``FileNotFoundError`` if there is none; ``ValueError`` if it is
    not a JSON object)."""
    with open(os.path.join(folder, RUN_JSON), encoding="utf-8") as fh:
        meta = json.load(fh)
    if not isinstance(meta, dict) or not isinstance(meta.get("run_id"), str):
        raise ValueError("run.json is not a run")
    return meta


def stored_ms(folder: str) -> float:
    """When the run was stored, for a run the index does not know: run.json's mtime."""
    return os.stat(os.path.join(folder, RUN_JSON)).st_mtime * 1000.0


def count_tasks(folder: str) -> int:
    """Task attempts in tasks.parquet, from its footer (no data is read)."""
    import pyarrow.parquet as pq

    return int(pq.read_metadata(os.path.join(folder, TASKS)).num_rows)


def split_known(meta: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the Run fields, the keys this version does not know)."""
    known = {k: v for k, v in meta.items() if k in _RUN_FIELDS}
    unknown = {k: v for k, v in meta.items()
               if k not in _RUN_FIELDS and k not in ("format", "summary")}
    return known, unknown


def read_run(folder: str) -> Run:
    """The Run stored in ``folder`` (``FileNotFoundError``/``ValueError``/``TypeError`` on
    a missing or damaged file)."""
    meta = read_meta(folder)
    tasks = pd.read_parquet(os.path.join(folder, TASKS))
    memory = pd.read_parquet(os.path.join(folder, MEMORY))
    try:
        with open(os.path.join(folder, SQL_JSON), encoding="utf-8") as fh:
            sql = json.load(fh)
    except FileNotFoundError:
        sql = {}
    if not isinstance(sql, dict):
        raise ValueError("sql.json is not an object")
    known, unknown = split_known(meta)
    listener = known.pop("listener_stages", None)
    for name in FRAMES + SQL_FRAMES:
        rows = sql.get(name) if name in SQL_FRAMES else known.get(name)
        known[name] = pd.DataFrame(rows if isinstance(rows, list) else [])
    extra = known.get("extra")
    known["extra"] = dict(extra) if isinstance(extra, dict) else {}
    if unknown:
        known["extra"][UNKNOWN_KEY] = unknown
    if not isinstance(known.get("warnings"), list):
        known["warnings"] = []
    try:
        with open(os.path.join(folder, STAGE_MEMORY_JSON), encoding="utf-8") as fh:
            stage_memory = json.load(fh)
    except FileNotFoundError:
        stage_memory = []
    if not isinstance(stage_memory, list):
        raise ValueError("stage_memory.json is not a list")
    run = Run(**known, tasks=tasks, memory=memory, stage_memory=pd.DataFrame(stage_memory))
    if isinstance(listener, list):
        run.listener_stages = pd.DataFrame(listener)
    return run
