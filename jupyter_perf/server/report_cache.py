"""The server's rendered reports: cached on disk beside their runs, bounded in bytes, rendered
one at a time, the memory of a render handed back to the system after it.

Why this shape (measured with ``benchmarks/server_memory.py``, docs/benchmarks.md): rendering
a 200k-task report allocates a few hundred MB of small Python objects (pandas, Bokeh). Freed,
they stay in the allocator's per-thread arenas, so renders in several worker threads at once
left the server at ~1.2 GB for good. Here a process-wide gate lets one render run at a time,
and after it the garbage is collected and glibc is asked to return free arena pages
(``malloc_trim``; elsewhere this is skipped), and pyarrow's memory pool to release what it
holds. Nothing rendered is kept in memory: the cache
is the ``report.html`` file in the run's directory, and the total size of those files is
bounded (``c.JupyterPerf.report_cache_mb``): the least recently served go first. They are
derived data, rebuilt on the next request.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import sys
import threading
from typing import BinaryIO, Callable

from .._version import __version__
from ..atomic import utf8_safe, write_text_atomic
from ..store import RunStore

REPORT_FILE = "report.html"
REPORT_KEY_FILE = "report.key"
DEFAULT_LIMIT_MB = 512

_render_gate = threading.Lock()          # one render at a time in this process
_run_locks: dict[str, threading.Lock] = {}
_run_locks_guard = threading.Lock()


def run_lock(key: str) -> threading.Lock:
    """One lock per run: concurrent requests for one report render it once."""
    with _run_locks_guard:
        return _run_locks.setdefault(key, threading.Lock())


def _load_libc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        return libc.malloc_trim if libc is not None else None      # glibc only
    except (OSError, AttributeError):
        return None


_malloc_trim = _load_libc_trim()


def release_memory() -> None:
    """Collect garbage and hand free allocator pages back to the system: glibc's arenas and
    pyarrow's own pool (reading tasks.parquet allocates there)."""
    gc.collect()
    if _malloc_trim is not None:
        _malloc_trim(0)
    pyarrow = sys.modules.get("pyarrow")
    if pyarrow is not None:
        pyarrow.default_memory_pool().release_unused()


def cache_key(run_dir: str) -> str:
    """What a cached report was rendered from: run.json's identity and our version.

    ``RunStore.save`` replaces a run's whole directory, so a re-saved run has a new run.json
    (new inode and mtime) and no old report beside it."""
    st = os.stat(os.path.join(run_dir, "run.json"))
    return f"{st.st_ino}:{st.st_mtime_ns}:{st.st_size}:{__version__}"


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError:
        return None


def open_cached(run_dir: str, key: str) -> BinaryIO | None:
    """The cached report of the run in ``run_dir``, opened for reading, if it was rendered
    from ``key`` (still readable if the run is deleted meanwhile)."""
    if _read(os.path.join(run_dir, REPORT_KEY_FILE)) != key:
        return None
    html_path = os.path.join(run_dir, REPORT_FILE)
    try:
        fh = open(html_path, "rb")
    except OSError:
        return None
    try:
        os.utime(html_path)                       # recently served: evicted last
    except OSError:
        pass
    return fh


def render_once(render: Callable[[], str]) -> str:
    """``render()`` behind the process-wide gate, then the memory it used handed back."""
    with _render_gate:
        try:
            return utf8_safe(render())            # lone surrogates in a label: U+FFFD
        finally:
            release_memory()


def keep(store: RunStore, run_dir: str, key: str, html: str, limit_mb: float) -> None:
    """Write the report to the cache (if the limit lets any report in), then evict the least
    recently served reports of other runs until the cache fits. Failures are not errors: the
    report is then served uncached."""
    limit = max(0.0, float(limit_mb)) * 1024 * 1024
    if len(html.encode("utf-8")) > limit:
        return
    try:
        write_text_atomic(os.path.join(run_dir, REPORT_FILE), html)
        write_text_atomic(os.path.join(run_dir, REPORT_KEY_FILE), key)
    except OSError:
        return                                    # read-only store, or the run was deleted
    evict(store, limit, keep=run_dir)


def evict(store: RunStore, limit_bytes: float, keep: str | None = None) -> int:
    """Remove cached reports, least recently served first, until they total ≤ ``limit_bytes``;
    returns how many were removed."""
    entries = []
    try:
        names = os.listdir(store.runs_dir)
    except OSError:
        return 0
    for name in names:
        path = os.path.join(store.runs_dir, name, REPORT_FILE)
        try:
            st = os.stat(path)
        except OSError:
            continue
        entries.append((st.st_mtime, st.st_size, os.path.join(store.runs_dir, name)))
    total = sum(size for _, size, _ in entries)
    removed = 0
    for _, size, run_dir in sorted(entries):
        if total <= limit_bytes:
            break
        if run_dir == keep:
            continue
        for name in (REPORT_KEY_FILE, REPORT_FILE):
            try:
                os.unlink(os.path.join(run_dir, name))
            except OSError:
                pass
        total -= size
        removed += 1
    return removed
