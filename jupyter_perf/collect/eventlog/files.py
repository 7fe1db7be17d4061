"""Finding an event log's files: a single file, or a rolled ``eventlog_v2_*`` directory.

A rolled log is read in the numeric order of its ``events_<N>_*`` files, its ``appstatus_*``
marker skipped; when compaction wrote ``.compact`` files, reading starts at the newest one, as
Spark does. ``.inprogress`` on a file (or on the ``appstatus_*`` marker) means the application
was still writing.
"""
from __future__ import annotations

import os
import re

from ...errors import JupyterPerfError

INPROGRESS = ".inprogress"
COMPACT = ".compact"
_EVENTS_RE = re.compile(r"^events_(\d+)_")


class EventLogError(JupyterPerfError):
    """An event log could not be read; the one-line message says what to do next."""


def log_files(path: str) -> tuple[list[str], list[str]]:
    """(files to replay in order, warnings) for a log file or a rolled ``eventlog_v2_*`` dir."""
    if not os.path.exists(path):
        raise EventLogError(f"no event log at {path}: check the path (Spark writes logs to "
                            "spark.eventLog.dir, e.g. /tmp/spark-events)")
    if os.path.isfile(path):
        return [path], []
    names = sorted(os.listdir(path))
    events = [(int(m.group(1)), n) for n in names if (m := _EVENTS_RE.match(n))]
    if not events:
        logs = [n for n in names if not n.startswith(".")][:5]
        hint = f"; pass one of: {', '.join(logs)}" if logs else ""
        raise EventLogError(f"{path} is a directory without events_N_* files, not a rolled "
                            f"event log (eventlog_v2_*){hint}")
    events.sort()
    warnings: list[str] = []
    compact = [i for i, (_, n) in enumerate(events) if n.endswith(COMPACT)]
    if compact:
        start = compact[-1]
        warnings.append(f"{os.path.basename(path)} is compacted (spark.eventLog.rolling + "
                        "compaction): Spark dropped events of finished jobs before "
                        f"{events[start][1]}; their tasks are missing")
        events = events[start:]
    return [os.path.join(path, n) for _, n in events], warnings


def in_progress(path: str, files: list[str]) -> bool:
    """Whether the application was still writing the log (``.inprogress`` file or marker)."""
    if any(f.endswith(INPROGRESS) for f in files):
        return True
    return os.path.isdir(path) and any(
        n.startswith("appstatus_") and n.endswith(INPROGRESS) for n in os.listdir(path))


def is_status_marker(file: str) -> bool:
    """A rolled log's ``appstatus_*`` marker: no events inside."""
    return os.path.basename(file).startswith("appstatus_")
