"""Start the embedded session's JVM with its output in a log file, not in the notebook.

pyspark starts the JVM (``spark-submit``) as a child process that inherits the Python
process's stdout and stderr. In a Jupyter kernel those are captured and shown under the
running cell: Ivy's dependency resolution (~60 lines), Spark's log4j warnings, Java stack
traces from the JVM's own threads, "Failed to delete … blockmgr-…" at shutdown. Here the JVM
is started through pyspark's own ``launch_gateway`` with its stdout and stderr sent to
``<store>/logs/spark-<time>-<pid>.log``; the cell shows one line instead, and a start-up
failure is read back from that file in one line.

The folder stays bounded (docs/reliability.md, "Soak"):

* **Old logs** — when a new JVM starts, the logs of JVMs that are gone (the kernel whose pid
  is in the name is not running) are pruned: the newest :data:`KEEP_LOGS` are kept as long
  as they total at most :data:`LOGS_MAX_BYTES`; the rest are deleted. A log whose kernel is
  alive is never deleted (another kernel sharing the store may still be writing it).
* **A running JVM's log** — the JVM appends through the descriptor it inherited (opened
  ``O_APPEND``), so the file can be cut while it runs: a daemon thread
  (``jupyter-perf-log-cap``, one per process) looks every :data:`CHECK_S` seconds, and a log
  past :data:`LOG_MAX_BYTES` (env ``JUPYTER_PERF_LOG_MAX_BYTES``) is copied to ``<log>.1``
  (replacing the previous part) and truncated to zero; the JVM's next line lands at the new
  start. As with logrotate's ``copytruncate``, a line written between the copy and the cut
  can be lost. So one running JVM keeps at most about 2 × LOG_MAX_BYTES on disk.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
import weakref
from typing import Any

LOG_DIR = "logs"
TAIL_BYTES = 256 * 1024    # how much of the log a start-up failure is looked for in

#: Logs of finished JVMs kept when a new one starts (newest first) ...
KEEP_LOGS = 20
#: ... as long as they total at most this many bytes (their ``.1`` parts included).
LOGS_MAX_BYTES = 64 * 2**20
#: A running JVM's log is cut (its content moved to ``<log>.1``) past this size.
LOG_MAX_BYTES = 8 * 2**20
LOG_MAX_ENV = "JUPYTER_PERF_LOG_MAX_BYTES"
#: How often the running JVMs' logs are looked at (s).
CHECK_S = 10.0
#: The names this module gives logs, and the parts it cuts from them (``.1``; ``.1.tmp``
#: while a part is being written).
LOG_NAME = re.compile(r"^spark-\d{8}-\d{6}-(\d+)\.log$")
PART_SUFFIXES = (".1", ".1.tmp")

#: Gateway -> the log file its JVM writes to (the JVM outlives SparkContexts: pyspark keeps
#: one gateway per process, so a session started after a stop writes to the same file).
_logs: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()
_watcher: threading.Thread | None = None
_watcher_guard = threading.Lock()

# Start-up failures worth one line, best first: Ivy's, then the JVM's main thread.
_FAILURES = (re.compile(r"unresolved dependency: [^\]]+"),
             re.compile(r"Exception in thread \"main\" (.+)"),
             re.compile(r"^Error: (.+)"))


def new_log_path(home: str | None = None) -> str:
    """A fresh log file name under the store's ``logs/`` directory (created); the logs of
    finished JVMs beyond the bounds are pruned first (:func:`prune_logs`)."""
    from ..store import home_dir

    folder = os.path.join(home or home_dir(), LOG_DIR)
    os.makedirs(folder, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = os.path.join(folder, f"spark-{stamp}-{os.getpid()}.log")
    prune_logs(folder, keep_also=path)
    return path


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:          # EPERM: a process of another user has that pid
        return True
    return True


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _mtime(path: str) -> float:
    try:
        return os.path.getmtime(path)
    except OSError:
        return 0.0


def prune_logs(folder: str, keep: int = KEEP_LOGS, max_bytes: int = LOGS_MAX_BYTES,
               keep_also: str = "") -> list[str]:
    """Delete the logs of finished JVMs in ``folder`` beyond the newest ``keep`` or beyond
    ``max_bytes`` in all; returns the paths deleted.

    A log counts with its cut-off parts (``<log>.1``). Kept whatever the bounds: ``keep_also``,
    the logs this process's JVMs write, and every log whose kernel (the pid in its name) is
    running — this process's own logs only while a gateway of this process writes them.
    Files that are not this module's logs are never touched. Never raises: another kernel
    pruning the same folder at once is expected.
    """
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    live = set(_logs.values())
    groups: dict[str, list[str]] = {}
    for name in names:
        base = name
        for suffix in PART_SUFFIXES:
            if name.endswith(suffix):
                base = name[: -len(suffix)]
                break
        if LOG_NAME.match(base):
            groups.setdefault(base, []).append(os.path.join(folder, name))
    finished = []
    for base, paths in groups.items():
        path = os.path.join(folder, base)
        pid = int(LOG_NAME.match(base).group(1))
        if path == keep_also or path in live:
            continue
        if pid != os.getpid() and _pid_alive(pid):
            continue
        finished.append((max(_mtime(p) for p in paths), base, paths))
    finished.sort(reverse=True)               # newest first (the name breaks ties)
    deleted, count, total = [], 0, 0
    for _, _, paths in finished:
        size = sum(_size(p) for p in paths)
        if count < keep and total + size <= max_bytes:
            count, total = count + 1, total + size
            continue
        for p in paths:
            try:
                os.remove(p)
                deleted.append(p)
            except OSError:
                pass
    return deleted


def log_limit() -> int:
    """The size past which a running JVM's log is cut (:data:`LOG_MAX_ENV`, else the default)."""
    try:
        value = int(os.environ.get(LOG_MAX_ENV, "") or LOG_MAX_BYTES)
    except ValueError:
        return LOG_MAX_BYTES
    return max(value, 4096)


def cut_if_large(path: str, limit: int | None = None) -> bool:
    """If ``path`` is past ``limit`` bytes: copy it to ``<path>.1`` (replacing the previous
    part), truncate it to zero and say so in its first line. True when it was cut.

    Safe while a process appends to it through an ``O_APPEND`` descriptor (the JVM's
    stdout and stderr, :func:`launch`): its next write lands at the new end of file.
    """
    limit = log_limit() if limit is None else limit
    size = _size(path)
    if size <= limit:
        return False
    part, tmp = path + ".1", path + ".1.tmp"
    try:
        with open(path, "rb") as src, open(tmp, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
            while True:             # what the JVM wrote during the copy, then cut at once
                more = src.read(1 << 20)
                if not more:
                    break
                dst.write(more)
            os.truncate(path, 0)
        os.replace(tmp, part)
        with open(path, "ab") as fh:
            fh.write((f"jupyter-perf: {time.strftime('%Y-%m-%d %H:%M:%S')} this log passed "
                      f"{limit} bytes; its earlier part is {os.path.basename(part)}\n")
                     .encode())
    except OSError:
        try:
            os.remove(tmp)
        except OSError:
            pass
        return False
    return True


def _watch() -> None:
    while True:
        time.sleep(CHECK_S)
        try:
            paths = list(_logs.values())
        except RuntimeError:         # a gateway came or went meanwhile: look next time
            continue
        for path in paths:
            try:
                cut_if_large(path)
            except Exception:        # never let the watcher die: the next look tries again
                pass


def _start_watcher() -> None:
    global _watcher
    with _watcher_guard:
        if _watcher is None or not _watcher.is_alive():
            _watcher = threading.Thread(target=_watch, name="jupyter-perf-log-cap", daemon=True)
            _watcher.start()


def running_gateway():
    """pyspark's gateway to this process's JVM, or None before the first session.

    pyspark keeps it on the SparkContext class (``_gateway``); reading it is the only way to
    know whether a new session will start a JVM or reuse the one already running.
    """
    from pyspark import SparkContext

    return SparkContext._gateway


def current_log() -> str:
    """The log file of the running JVM ('' if none, or if jupyter-perf did not start it)."""
    gateway = running_gateway()
    return _logs.get(gateway, "") if gateway is not None else ""


def launch(conf, log_path: str):
    """Start the JVM (``spark-submit`` with ``conf``) writing its output to ``log_path``.

    Raises what pyspark raises when the JVM exits early (e.g. Ivy could not resolve a
    package): its reason is in the log, see :func:`failure_in_log`.
    """
    from pyspark.java_gateway import launch_gateway

    # "ab" is O_APPEND, which the child inherits: the log can be cut while the JVM runs
    with open(log_path, "ab") as log:   # the child keeps its own descriptor
        gateway = launch_gateway(conf, popen_kwargs={"stdout": log,
                                                     "stderr": subprocess.STDOUT})
    _logs[gateway] = log_path
    _start_watcher()
    return gateway


def log_size(path: str) -> int:
    return _size(path)


def failure_in_log(path: str, since: int = 0) -> str:
    """The line of the log (written after byte ``since``) that says why the JVM stopped."""
    try:
        size = log_size(path)
        with open(path, "rb") as fh:
            fh.seek(max(since if since <= size else 0, size - TAIL_BYTES))   # cut since?
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    for pattern in _FAILURES:
        for line in lines:
            found = pattern.search(line.strip())
            if found:
                return (found.group(1) if found.groups() else found.group(0)).strip()[:300]
    return ""
