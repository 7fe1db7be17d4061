"""Run history on disk: one directory per run (the truth) and a SQLite index over them.

Layout under ``home_dir()`` ($JUPYTER_PERF_HOME, else <jupyter data dir>/jupyter_perf): see
``layout.py``; a run directory's files: ``rundir.py``; the index: ``index.py``.

- A run is written under a temporary name and renamed into place, and only then indexed, so
  a reader never sees half a run and a kill mid-write leaves no row pointing at nothing.
- The index is only an index. On the first open in a process (and whenever a query finds it
  damaged) the store checks it: a missing, zero-length or damaged index is set aside
  (renamed, never deleted) and rebuilt from the run directories; run directories the index
  does not list are indexed, rows whose directory is gone are dropped, temporary
  directories no live writer can own are removed. Each repair is one line in ``notes`` and
  in the ``jupyter_perf.store`` log.
- Writers hold ``store.lock`` shared while a run directory is being written; repairs hold it
  alone, so they never touch a directory that is still being written.
- Every SQLite and OS problem is a ``StoreError`` (one line with the next step).
"""
from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import sqlite3
import threading
import time
from typing import Any, Callable, Iterator, TypeVar

from ..errors import one_line
from ..model import Run
from . import index, rundir
from .layout import (
    DELETING_PREFIX,
    INDEX_FILE,
    LOCK_FILE,
    RUN_ID_RE,
    RUNS_DIR,
    TEMP_PREFIX,
    UNLOCKED_TEMP_AGE_S,
    StoreError,
    home_dir,
    valid_run_id,
)

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no locking, no removal of temp dirs
    fcntl = None

__all__ = ["RunStore", "StoreError", "default_store", "home_dir", "valid_run_id", "RUN_ID_RE"]

log = logging.getLogger("jupyter_perf.store")
T = TypeVar("T")

#: Stores checked (and swept) by this process: root -> identity of the index file checked.
#: A replaced index file (new inode) is checked again.
_checked: dict[str, tuple[int, int]] = {}
_checked_guard = threading.Lock()
#: How long a repair waits for writers to finish, and writers wait for a repair (s).
LOCK_WAIT_S = 120.0
#: How long the sweep on open waits for the store to be quiet before leaving it to later.
SWEEP_WAIT_S = 2.0


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class RunStore:
    def __init__(self, root: str | None = None):
        self.root = os.path.abspath(root or home_dir())
        self.runs_dir = os.path.join(self.root, RUNS_DIR)
        self.index_path = os.path.join(self.root, INDEX_FILE)
        self.lock_path = os.path.join(self.root, LOCK_FILE)
        #: What this store repaired since it was opened, one line each.
        self.notes: list[str] = []
        self._ready = False

    def run_dir(self, run_id: str) -> str:
        if not valid_run_id(run_id):
            raise StoreError(f"not a valid run id: {str(run_id)[:80]!r}")
        return os.path.join(self.runs_dir, run_id)

    # -- locking ------------------------------------------------------------------------
    @contextlib.contextmanager
    def _lock(self, exclusive: bool, wait_s: float) -> Iterator[bool | None]:
        """``store.lock`` held shared or alone: yields True; False when others held it for
        all of ``wait_s``; None when there is no lock to take (no flock here, read-only)."""
        if fcntl is None:
            yield None
            return
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0),
                         0o666)
        except OSError:
            yield None
            return
        try:
            op = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
            deadline = time.monotonic() + wait_s
            locked: bool | None = False
            while True:
                try:
                    fcntl.flock(fd, op)
                    locked = True
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        break
                    time.sleep(0.05)
                except OSError:                    # no locks on this file system
                    locked = None
                    break
            try:
                yield locked
            finally:
                if locked:
                    fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    # -- opening, checking, repairing ---------------------------------------------------
    def _note(self, line: str) -> None:
        self.notes.append(line)
        log.warning("%s", line)

    def _file_problem(self) -> str | None:
        """'missing' or 'empty (0 bytes)' from the file alone, else None."""
        try:
            size = os.stat(self.index_path).st_size
        except FileNotFoundError:
            return "missing"
        except OSError as exc:
            raise StoreError(f"cannot read the run index {self.index_path}: "
                             f"{exc.strerror or exc}; check its permissions") from exc
        return "empty (0 bytes)" if size == 0 else None

    def _problem(self) -> str | None:
        problem = self._file_problem()
        if problem is None:
            detail = index.check(self.index_path)
            if detail:
                problem = f"damaged ({one_line(Exception(detail), with_type=False, limit=120)})"
        return problem

    def _ensure_ready(self) -> None:
        """Open the store: create it, or check its index once per process (see module doc)."""
        if self._ready:
            return
        try:
            os.makedirs(self.runs_dir, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot open the run store at {self.root}: "
                             f"{exc.strerror or exc}; set JUPYTER_PERF_HOME to a writable "
                             "directory") from exc
        problem = self._file_problem()
        with _checked_guard:
            known = _checked.get(self.root)
        if problem is None and known is not None and known == _identity(self.index_path):
            self._ready = True
            return
        try:
            if problem is None:
                problem = self._problem()
            if problem is not None:
                self._repair(problem)
            else:
                self._sweep()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the run index {self.index_path}: "
                             f"{one_line(exc, with_type=False)}; try again, or rebuild it with "
                             "`jupyter-perf runs --rebuild-index`") from exc
        except OSError as exc:
            raise StoreError(f"cannot open the run store at {self.root}: "
                             f"{exc.strerror or exc}; set JUPYTER_PERF_HOME to a writable "
                             "directory") from exc
        with _checked_guard:
            ident = _identity(self.index_path)
            if ident is not None:
                _checked[self.root] = ident
        self._ready = True

    def _run_dirs(self) -> list[str]:
        return sorted(name for name in os.listdir(self.runs_dir)
                      if valid_run_id(name) and not name.startswith(".")
                      and os.path.isfile(os.path.join(self.runs_dir, name, rundir.RUN_JSON)))

    def _row_of(self, run_id: str) -> dict[str, Any] | None:
        """The index row of a run directory, from its files; None if they cannot be read."""
        folder = os.path.join(self.runs_dir, run_id)
        try:
            meta = rundir.read_meta(folder)
            meta["run_id"] = run_id                    # the directory's name is the id
            return rundir.index_facts(meta, rundir.count_tasks(folder), rundir.stored_ms(folder))
        except Exception:  # broad: an unreadable run is left out, never fatal
            return None

    def _set_aside(self, kind: str) -> str | None:
        """Rename the index (and its -wal/-shm) to ``index.sqlite3.<kind>-<time>``; returns
        the new name, or None when there was no index file."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        name = f"{INDEX_FILE}.{kind}-{stamp}"
        while any(os.path.lexists(os.path.join(self.root, name + s)) for s in ("", "-wal", "-shm")):
            name = f"{INDEX_FILE}.{kind}-{stamp}-{secrets.token_hex(2)}"
        moved = None
        for suffix in ("", "-wal", "-shm"):
            try:
                os.rename(self.index_path + suffix, os.path.join(self.root, name + suffix))
                if suffix == "":
                    moved = name
            except FileNotFoundError:
                pass
        return moved

    def _repair(self, problem: str, asked: bool = False) -> str | None:
        """Set the index aside and rebuild it from the run directories (alone on the store).
        Without ``asked``, first checks again: another process may have repaired it."""
        with self._lock(exclusive=True, wait_s=LOCK_WAIT_S) as alone:
            if alone is False:
                raise StoreError(f"the run store at {self.root} is busy (another process holds "
                                 f"{LOCK_FILE}); try again in a minute")
            if not asked:
                problem = self._problem()
                if problem is None:
                    return None
            ids = self._run_dirs()
            rows = [row for row in map(self._row_of, ids) if row is not None]
            tmp = os.path.join(self.root, f".{INDEX_FILE}.rebuild-{secrets.token_hex(4)}")
            try:
                index.build(tmp, rows)
                kind = "damaged" if problem.startswith("damaged") else \
                    "empty" if problem.startswith("empty") else "replaced"
                aside = self._set_aside(kind) if problem != "missing" else self._set_aside("orphan")
                os.replace(tmp, self.index_path)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
            self._sweep_temps(alone=bool(alone))
        if problem == "missing" and not ids and not asked:
            return None                                       # a new store
        skipped = len(ids) - len(rows)
        line = (f"the run index {self.index_path} was {problem}"
                + (f"; kept it as {aside}" if aside and problem != "missing" else "")
                + f"; rebuilt it from {len(rows)} run director{'y' if len(rows) == 1 else 'ies'}"
                + (f" ({skipped} unreadable, left on disk)" if skipped else ""))
        if asked:
            self.notes.append(line)              # the caller says it (jupyter-perf runs)
        else:
            self._note(line)
        return line

    def _sweep_temps(self, alone: bool = True) -> int:
        """Remove temporary directories no live writer can own: with the lock held alone,
        those of writers that take the lock (none is alive); any that are old enough."""
        removed = 0
        now = time.time()
        for name in os.listdir(self.runs_dir):
            path = os.path.join(self.runs_dir, name)
            if not name.startswith(".") or not os.path.isdir(path) or os.path.islink(path):
                continue
            locked_kind = name.startswith((TEMP_PREFIX, DELETING_PREFIX))
            older_kind = "." in name[1:] and valid_run_id(name[1:].rsplit(".", 1)[0])
            if not (locked_kind or older_kind):
                continue
            if not (locked_kind and alone):           # no lock proves it dead: go by its age
                try:
                    if now - os.stat(path).st_mtime < UNLOCKED_TEMP_AGE_S:
                        continue
                except OSError:
                    continue
            shutil.rmtree(path, ignore_errors=True)
            removed += not os.path.exists(path)
        return removed

    def _sweep(self) -> None:
        """Directories are the truth: index the unindexed ones, drop rows without one, fill
        facts an older version did not write, remove dead temporary directories. Runs only
        when no writer is mid-write (else it is left to a later open)."""
        with self._lock(exclusive=True, wait_s=SWEEP_WAIT_S) as alone:
            if alone is False:
                return                                # a writer is busy: a later open sweeps
            removed = self._sweep_temps(alone=bool(alone))
            on_disk = set(self._run_dirs())
            conn = index.connect(self.index_path)
            try:
                indexed = index.ids(conn)
                added = 0
                for run_id in sorted(on_disk - indexed):
                    row = self._row_of(run_id)
                    if row is not None:
                        index.upsert(conn, row)
                        added += 1
                dropped = 0
                for run_id in indexed - on_disk:
                    if not os.path.exists(os.path.join(self.runs_dir, run_id)):
                        dropped += index.delete(conn, run_id)
                for run_id in index.without_facts(conn):
                    row = self._row_of(run_id)
                    if row is not None:
                        index.put_facts(conn, row)
                conn.commit()
            finally:
                conn.close()
        parts = []
        if added:
            parts.append(f"indexed {added} run director{'y' if added == 1 else 'ies'} the index "
                         "did not list")
        if dropped:
            parts.append(f"dropped {dropped} index row{'' if dropped == 1 else 's'} whose run "
                         "directory is gone")
        if removed:
            parts.append(f"removed {removed} unfinished run director{'y' if removed == 1 else 'ies'}"
                         " left by stopped writers")
        if parts:
            self._note(f"run store {self.root}: " + "; ".join(parts))

    def rebuild_index(self) -> str:
        """Set the current index aside and rebuild it from the run directories (asked for:
        ``jupyter-perf runs --rebuild-index``); returns the line saying what happened."""
        try:
            os.makedirs(self.runs_dir, exist_ok=True)
            problem = self._file_problem()
            if problem is None:
                problem = self._problem() or "replaced on request"
            line = self._repair(problem, asked=True)
        except sqlite3.Error as exc:
            raise StoreError(f"could not rebuild the run index {self.index_path}: "
                             f"{one_line(exc, with_type=False)}") from exc
        except OSError as exc:
            raise StoreError(f"could not rebuild the run index {self.index_path}: "
                             f"{exc.strerror or exc}; check the folder is writable") from exc
        with _checked_guard:
            _checked.pop(self.root, None)
        self._ready = False
        return line or ""

    def _query(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn(connection)`` on the index, committed; a damaged or missing index found here
        is repaired and ``fn`` runs again once."""
        self._ensure_ready()
        for attempt in (0, 1):
            try:
                conn = index.connect(self.index_path)
                try:
                    result = fn(conn)
                    conn.commit()
                    return result
                finally:
                    conn.close()
            except sqlite3.Error as exc:
                problem = self._file_problem() or (
                    f"damaged ({one_line(exc, with_type=False, limit=120)})"
                    if index.is_damage(exc) else None)
                if attempt == 0 and problem is not None:
                    try:
                        self._repair(problem)
                    except (sqlite3.Error, OSError) as again:
                        raise StoreError(f"the run index {self.index_path} is {problem} and "
                                         f"could not be rebuilt: {one_line(again)}") from again
                    continue
                raise StoreError(f"the run index {self.index_path} could not be used: "
                                 f"{one_line(exc, with_type=False)}; try again, or rebuild it "
                                 "with `jupyter-perf runs --rebuild-index`") from exc
            except OSError as exc:
                raise StoreError(f"cannot use the run store at {self.root}: "
                                 f"{exc.strerror or exc}; set JUPYTER_PERF_HOME to a writable "
                                 "directory") from exc
        raise AssertionError("unreachable")  # pragma: no cover

    # -- write --------------------------------------------------------------------------
    def save(self, run: Run, summary: dict[str, Any] | None = None) -> str:
        """Write ``run`` atomically and index it; returns its directory. Any failure is a
        ``StoreError`` (nothing else escapes), and leaves no half-written run behind."""
        try:
            return self._save(run, summary)
        except StoreError:
            raise
        except Exception as exc:  # broad: odd data or a bug: still one line, run kept in memory
            raise StoreError(f"could not save run {getattr(run, 'run_id', '?')}: "
                             f"{one_line(exc)}; the run is only in memory "
                             "(jupyter_perf.last_run())") from exc

    def _save(self, run: Run, summary: dict[str, Any] | None) -> str:
        final = self.run_dir(run.run_id)
        self._ensure_ready()
        stored_ms = time.time() * 1000.0
        with self._lock(exclusive=False, wait_s=LOCK_WAIT_S):
            try:
                tmp = os.path.join(self.runs_dir, f"{TEMP_PREFIX}{run.run_id}-{secrets.token_hex(4)}")
                os.mkdir(tmp, 0o700)
            except OSError as exc:
                raise StoreError(f"cannot write runs under {self.root}: {exc.strerror or exc}; "
                                 "set JUPYTER_PERF_HOME to a writable directory") from exc
            try:
                meta = rundir.write(tmp, run, summary)
                num_tasks = len(run.tasks)
                self._replace_dir(tmp, final, run.run_id)
            except OSError as exc:
                shutil.rmtree(tmp, ignore_errors=True)
                raise StoreError(f"could not save run {run.run_id} to {self.root}: "
                                 f"{exc.strerror or exc}; free some space or set "
                                 "JUPYTER_PERF_HOME") from exc
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
        row = rundir.index_facts(meta, num_tasks, stored_ms)
        self._query(lambda conn: index.upsert(conn, row))
        return final

    def _replace_dir(self, tmp: str, final: str, run_id: str) -> None:
        """Move ``tmp`` to ``final``; a run saved again replaces its old directory."""
        old = None
        if os.path.lexists(final):
            old = os.path.join(self.runs_dir, f"{DELETING_PREFIX}{run_id}-{secrets.token_hex(4)}")
            os.rename(final, old)
        os.rename(tmp, final)
        if old:
            shutil.rmtree(old, ignore_errors=True)

    def delete(self, run_id: str) -> bool:
        """Remove a run: its directory is renamed away first (readers then get KeyError, not
        a half-deleted run), then its row goes, then the files."""
        path = self.run_dir(run_id)
        self._ensure_ready()
        gone = os.path.join(self.runs_dir, f"{DELETING_PREFIX}{run_id}-{secrets.token_hex(4)}")
        with self._lock(exclusive=False, wait_s=LOCK_WAIT_S):
            try:
                os.rename(path, gone)
                moved = True
            except FileNotFoundError:
                moved = False
            except OSError as exc:
                raise StoreError(f"could not delete run {run_id}: {exc.strerror or exc}; "
                                 "check the store is writable") from exc
        rows = self._query(lambda conn: index.delete(conn, run_id))
        if moved:
            shutil.rmtree(gone, ignore_errors=True)
        return bool(rows or moved)

    # -- read: the index ------------------------------------------------------------------
    def list(self, limit: int = 50, offset: int = 0, text: str = "",
             notebook: str = "") -> list[dict[str, Any]]:
        """Index rows, newest first; ``text`` is a literal substring (``%``, ``_`` included)
        of the label, first line, run id or verdict; ``notebook`` matches exactly."""
        return self._query(lambda c: index.list_rows(c, limit, offset, text, notebook))

    def count(self, text: str = "", notebook: str = "") -> int:
        """How many runs ``list`` would give with the same filters and no paging."""
        return self._query(lambda c: index.count(c, text, notebook))

    def get(self, run_id: str) -> dict[str, Any] | None:
        """The index row of one run, or None."""
        self.run_dir(run_id)
        return self._query(lambda c: index.row(c, run_id))

    def cell_runs(self, cell_id: str | None = None, source: str | None = None,
                  notebook: str = "", before_ms: float | None = None,
                  exclude: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
        """Runs of one notebook cell, newest first: by JupyterLab's cell id when any run has
        it, else by the hash of the cell's source within the same notebook."""
        digest = rundir.source_hash(source) if source else None
        return self._query(lambda c: index.cell_rows(c, cell_id or None, digest, notebook or "",
                                                     before_ms, exclude, limit))

    def previous_runs(self, run_id: str, limit: int = 20) -> list[dict[str, Any]]:
        """The runs of the same cell as ``run_id`` stored before it, newest first
        (``KeyError`` if the run is not in the index)."""
        row = self.get(run_id)
        if row is None:
            raise KeyError(run_id)
        return self._query(lambda c: index.cell_rows(
            c, row.get("cell_id"), row.get("source_hash"), row.get("notebook") or "",
            row.get("created_ms"), run_id, limit))

    # -- read: a run directory --------------------------------------------------------------
    def _damaged(self, run_id: str, exc: BaseException) -> StoreError:
        return StoreError(f"run {run_id} is damaged ({one_line(exc, limit=160)}); delete it with "
                          f"`jupyter-perf runs --delete {run_id}`")

    def _read(self, run_id: str, fn: Callable[[str], T]) -> T:
        """``fn(run directory)``: ``KeyError`` if the run is not there (also while it is being
        deleted), ``StoreError`` "damaged" if its files cannot be read."""
        folder = self.run_dir(run_id)

        def gone() -> bool:
            return not os.path.exists(os.path.join(folder, rundir.RUN_JSON))

        if gone():
            raise KeyError(run_id)
        try:
            return fn(folder)
        except Exception as exc:  # broad: JSON, parquet, OS and type errors alike
            if gone():
                raise KeyError(run_id) from None
            raise self._damaged(run_id, exc) from exc

    def meta(self, run_id: str) -> dict[str, Any]:
        """A run's metadata without its task data: ``rundir.PUBLIC_META`` fields, the index
        facts (counts, created_ms, verdict, category, headline, cell id, source hash) and the
        analysis summary (None if the analysis failed). ``KeyError`` if there is no such run."""
        row = self.get(run_id)

        def read(folder: str) -> tuple[dict[str, Any], dict[str, Any]]:
            raw = rundir.read_meta(folder)
            raw["run_id"] = run_id
            if row is not None:
                return raw, rundir.index_facts(raw, row["num_tasks"] or 0, row["created_ms"])
            return raw, rundir.index_facts(raw, rundir.count_tasks(folder),
                                           rundir.stored_ms(folder))

        raw, facts = self._read(run_id, read)      # a wrongly typed run.json: "damaged"
        out = {k: raw.get(k) for k in rundir.PUBLIC_META}
        out.update({k: facts[k] for k in rundir.DERIVED_META})
        out["summary"] = raw.get("summary")
        return out

    def summary(self, run_id: str) -> dict[str, Any] | None:
        """The analysis summary stored with the run (None if the analysis failed)."""
        summary = self._read(run_id, lambda folder: rundir.read_meta(folder).get("summary"))
        return summary if isinstance(summary, dict) else None

    def load(self, run_id: str) -> Run:
        """The whole Run (``KeyError`` if there is none, also when it is being deleted)."""
        return self._read(run_id, rundir.read_run)


def default_store() -> RunStore:
    return RunStore()
