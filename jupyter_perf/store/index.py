"""The SQLite index over the run directories: schema and migrations, queries, health check.

The index only answers questions fast; every row can be rebuilt from a run directory
(``rundir.index_facts``), so a damaged index is set aside and rebuilt, never trusted.

Schema history (``PRAGMA user_version``):

- 0: ``runs`` only (the first version). Versions up to then insert 14 values into it, so
  it keeps exactly those columns; ``summary`` is no longer written (run.json holds it).
- 2: ``run_facts``, one row per run: cell id, source hash, verdict category and headline,
  top operator. Created on the first connection of this version; rows for runs written by an
  older version are filled from their run.json by the store's sweep.

Connections open the file with ``mode=rw``: a missing index is never created implicitly
(that would hide that it is missing); only ``build`` creates one.
"""
from __future__ import annotations

import os
import sqlite3
import urllib.parse
from typing import Any, Iterable

SCHEMA_VERSION = 2
RUN_COLUMNS = ("run_id", "created_ms", "kind", "label", "first_line", "notebook", "status",
               "wall_ms", "app_id", "num_jobs", "num_stages", "num_tasks", "verdict", "summary")
FACT_COLUMNS = ("cell_id", "source_hash", "verdict_category", "verdict_headline",
                "top_operator")
#: What a listing row holds (the index row without the old ``summary`` column).
ROW_COLUMNS = tuple(c for c in RUN_COLUMNS if c != "summary") + FACT_COLUMNS
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id      TEXT PRIMARY KEY,
    created_ms  REAL NOT NULL,
    kind        TEXT, label TEXT, first_line TEXT, notebook TEXT, status TEXT,
    wall_ms     REAL, app_id TEXT, num_jobs INTEGER, num_stages INTEGER,
    num_tasks   INTEGER, verdict TEXT, summary TEXT
);
CREATE INDEX IF NOT EXISTS runs_created ON runs(created_ms DESC);
CREATE TABLE IF NOT EXISTS run_facts (
    run_id TEXT PRIMARY KEY,
    cell_id TEXT, source_hash TEXT, verdict_category TEXT, verdict_headline TEXT,
    top_operator TEXT
);
CREATE INDEX IF NOT EXISTS run_facts_cell ON run_facts(cell_id);
CREATE INDEX IF NOT EXISTS run_facts_source ON run_facts(source_hash);
"""
_SELECT = ("SELECT " + ", ".join(f"r.{c}" for c in ROW_COLUMNS if c not in FACT_COLUMNS)
           + ", " + ", ".join(f"f.{c}" for c in FACT_COLUMNS)
           + " FROM runs r LEFT JOIN run_facts f ON f.run_id = r.run_id")
#: SQLite's primary result codes that mean "this file is not a sound database".
_DAMAGE_CODES = {11, 26}     # SQLITE_CORRUPT, SQLITE_NOTADB


def connect(path: str, create: bool = False, wal: bool = True) -> sqlite3.Connection:
    """A connection to the index at ``path`` with the current schema (``sqlite3.Error`` if
    it cannot be opened: missing, damaged, unreadable)."""
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + ("?mode=rwc" if create
                                                                   else "?mode=rw")
    conn = sqlite3.connect(uri, uri=True, timeout=30.0)
    try:
        conn.execute("PRAGMA busy_timeout=30000")
        if wal:
            conn.execute("PRAGMA journal_mode=WAL")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version < SCHEMA_VERSION or not _has_facts(conn):
            conn.executescript(_SCHEMA)
            if version < SCHEMA_VERSION:       # never lower a newer version's number
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                conn.commit()
    except BaseException:
        conn.close()
        raise
    return conn


def _has_facts(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='run_facts'"
                        ).fetchone() is not None


def is_damage(exc: BaseException) -> bool:
    """Whether a ``sqlite3`` error says the file itself is damaged (not busy, not absent)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _DAMAGE_CODES
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


def check(path: str) -> str | None:
    """None when the index at ``path`` is sound; otherwise what is wrong, in a few words."""
    try:
        conn = connect(path)
    except sqlite3.DatabaseError as exc:
        if is_damage(exc):
            return str(exc)
        raise
    try:
        rows = [r[0] for r in conn.execute("PRAGMA quick_check(3)")]
        if rows != ["ok"]:
            return "; ".join(str(r) for r in rows)
        return None
    except sqlite3.DatabaseError as exc:
        if is_damage(exc):
            return str(exc)
        raise
    finally:
        conn.close()


def build(path: str, rows: Iterable[dict[str, Any]]) -> None:
    """Create a new index file at ``path`` holding ``rows`` (``path`` must not exist)."""
    conn = connect(path, create=True, wal=False)
    try:
        for row in rows:
            upsert(conn, row)
        conn.commit()
    finally:
        conn.close()
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


# -- writes ----------------------------------------------------------------------------------
def upsert(conn: sqlite3.Connection, row: dict[str, Any]) -> None:
    values = [row.get(c) for c in RUN_COLUMNS]          # summary: None (run.json holds it)
    conn.execute(f"INSERT OR REPLACE INTO runs ({', '.join(RUN_COLUMNS)}) "
                 f"VALUES ({', '.join('?' * len(RUN_COLUMNS))})", values)
    put_facts(conn, row)


def put_facts(conn: sqlite3.Connection, row: dict[str, Any]) -> None:
    conn.execute(f"INSERT OR REPLACE INTO run_facts (run_id, {', '.join(FACT_COLUMNS)}) "
                 f"VALUES (?{', ?' * len(FACT_COLUMNS)})",
                 [row["run_id"]] + [row.get(c) for c in FACT_COLUMNS])


def delete(conn: sqlite3.Connection, run_id: str) -> int:
    gone = conn.execute("DELETE FROM runs WHERE run_id=?", (run_id,)).rowcount
    conn.execute("DELETE FROM run_facts WHERE run_id=?", (run_id,))
    return gone


# -- reads -----------------------------------------------------------------------------------
def _rows(conn: sqlite3.Connection, sql: str, args: Iterable[Any]) -> list[dict[str, Any]]:
    cursor = conn.execute(sql, list(args))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, values)) for values in cursor]


def ids(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT run_id FROM runs")}


def without_facts(conn: sqlite3.Connection) -> list[str]:
    """Runs indexed by an older version (no ``run_facts`` row yet)."""
    return [r[0] for r in conn.execute(
        "SELECT r.run_id FROM runs r LEFT JOIN run_facts f ON f.run_id = r.run_id "
        "WHERE f.run_id IS NULL")]


def like_pattern(text: str) -> str:
    """``%text%`` for ``LIKE … ESCAPE '\\'``, with ``%``, ``_`` and ``\\`` taken literally."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _where(text: str, notebook: str) -> tuple[str, list[Any]]:
    where, args = [], []
    if text:
        fields = ("r.label", "r.first_line", "r.run_id", "r.verdict", "f.verdict_headline")
        where.append("(" + " OR ".join(f"{f} LIKE ? ESCAPE '\\'" for f in fields) + ")")
        args += [like_pattern(text)] * len(fields)
    if notebook:
        where.append("r.notebook = ?")
        args.append(notebook)
    return (" WHERE " + " AND ".join(where)) if where else "", args


def list_rows(conn: sqlite3.Connection, limit: int, offset: int, text: str = "",
              notebook: str = "") -> list[dict[str, Any]]:
    where, args = _where(text, notebook)
    return _rows(conn, f"{_SELECT}{where} ORDER BY r.created_ms DESC, r.run_id DESC "
                       "LIMIT ? OFFSET ?", args + [int(limit), int(offset)])


def count(conn: sqlite3.Connection, text: str = "", notebook: str = "") -> int:
    where, args = _where(text, notebook)
    sql = "SELECT COUNT(*) FROM runs r LEFT JOIN run_facts f ON f.run_id = r.run_id" + where
    return int(conn.execute(sql, args).fetchone()[0])


def row(conn: sqlite3.Connection, run_id: str) -> dict[str, Any] | None:
    found = _rows(conn, f"{_SELECT} WHERE r.run_id = ?", [run_id])
    return found[0] if found else None


def cell_rows(conn: sqlite3.Connection, cell_id: str | None, source_hash: str | None,
              notebook: str, before_ms: float | None, exclude: str | None,
              limit: int) -> list[dict[str, Any]]:
    """Runs of one cell, newest first: those with ``cell_id`` if any has it, else those of
    the same notebook whose source hashes to ``source_hash``."""
    common, args = "", []
    if before_ms is not None:
        common += " AND r.created_ms < ?"
        args.append(float(before_ms))
    if exclude:
        common += " AND r.run_id <> ?"
        args.append(exclude)
    order = " ORDER BY r.created_ms DESC, r.run_id DESC LIMIT ?"
    if cell_id:
        found = _rows(conn, f"{_SELECT} WHERE f.cell_id = ?{common}{order}",
                      [cell_id] + args + [int(limit)])
        if found:
            return found
    if source_hash:
        return _rows(conn, f"{_SELECT} WHERE f.source_hash = ? AND r.notebook = ?{common}{order}",
                     [source_hash, notebook or ""] + args + [int(limit)])
    return []
