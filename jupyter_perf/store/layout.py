"""Where a run store keeps things on disk, which names are valid, and its one error type.

    <root>/index.sqlite3          the index: one row per run (rebuildable from runs/)
    <root>/store.lock             flock: writers share it, maintenance takes it alone
    <root>/runs/<run_id>/         one directory per run: the truth (see rundir.py)
    <root>/runs/.tmp-<run_id>-*   a run being written (renamed into place when complete)
    <root>/runs/.deleting-*       a run being deleted (renamed away first, then removed)
"""
from __future__ import annotations

import os
import re

from ..errors import JupyterPerfError

RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
INDEX_FILE = "index.sqlite3"
LOCK_FILE = "store.lock"
RUNS_DIR = "runs"
TEMP_PREFIX = ".tmp-"            # a run directory being written by a writer holding the lock
DELETING_PREFIX = ".deleting-"   # a run directory being removed
#: Temporary directories of versions before the lock existed (``.<run_id>.<random>``): no
#: lock protects them, so they are removed only when this old (seconds).
UNLOCKED_TEMP_AGE_S = 3600.0


class StoreError(JupyterPerfError):
    """A clear, one-line problem with the run store (every SQLite and OS error becomes one)."""


def home_dir() -> str:
    env = os.environ.get("JUPYTER_PERF_HOME")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    from jupyter_core.paths import jupyter_data_dir

    return os.path.join(jupyter_data_dir(), "jupyter_perf")


def valid_run_id(run_id: str) -> bool:
    return isinstance(run_id, str) and bool(RUN_ID_RE.match(run_id)) and ".." not in run_id

