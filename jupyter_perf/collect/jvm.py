"""Start the embedded session's JVM with its output in a log file, not in the notebook.

pyspark starts the JVM (``spark-submit``) as a child process that inherits the Python
process's stdout and stderr. In a Jupyter kernel those are captured and shown under the
running cell: Ivy's dependency resolution (~60 lines), Spark's log4j warnings, Java stack
traces from the JVM's own threads, "Failed to delete … blockmgr-…" at shutdown. Here the JVM
is started through pyspark's own ``launch_gateway`` with its stdout and stderr sent to
``<store>/logs/spark-<time>-<pid>.log``; the cell shows one line instead, and a start-up
failure is read back from that file in one line.
"""
from __future__ import annotations

import os
import re
import subprocess
import time
import weakref
from typing import Any

LOG_DIR = "logs"
TAIL_BYTES = 256 * 1024    # how much of the log a start-up failure is looked for in

#: Gateway -> the log file its JVM writes to (the JVM outlives SparkContexts: pyspark keeps
#: one gateway per process, so a session started after a stop writes to the same file).
_logs: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()

# Start-up failures worth one line, best first: Ivy's, then the JVM's main thread.
_FAILURES = (re.compile(r"unresolved dependency: [^\]]+"),
             re.compile(r"Exception in thread \"main\" (.+)"),
             re.compile(r"^Error: (.+)"))


def new_log_path(home: str | None = None) -> str:
    """A fresh log file name under the store's ``logs/`` directory (created)."""
    from ..store import home_dir

    folder = os.path.join(home or home_dir(), LOG_DIR)
    os.makedirs(folder, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return os.path.join(folder, f"spark-{stamp}-{os.getpid()}.log")


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

    with open(log_path, "ab") as log:   # the child keeps its own descriptor
        gateway = launch_gateway(conf, popen_kwargs={"stdout": log,
                                                     "stderr": subprocess.STDOUT})
    _logs[gateway] = log_path
    return gateway


def log_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def failure_in_log(path: str, since: int = 0) -> str:
    """The line of the log (written after byte ``since``) that says why the JVM stopped."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(since, log_size(path) - TAIL_BYTES))
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    for pattern in _FAILURES:
        for line in lines:
            found = pattern.search(line.strip())
            if found:
                return (found.group(1) if found.groups() else found.group(0)).strip()[:300]
    return ""
