"""Read a whole past application from its Spark event log into a ``Run`` (kind ``eventlog``).

    run = load_eventlog("/path/to/spark-events/app-20261122015800-0001")

Accepts a single log file, a rolled log directory (``eventlog_v2_<app>``), in-progress logs
(``.inprogress``) and Spark's compressed logs (zstd, lz4, snappy, lzf). The package is split
by job:

* :mod:`.files` finds the files to read, in order (rolled and compacted logs);
* :mod:`.codecs` decodes each file as Spark wrote it, streaming, line by line;
* :mod:`.parser` turns the events into the application's raw tables;
* :mod:`.parallel` has worker processes read the task events of a large uncompressed file.

The log is never held in memory. A truncated or corrupt log is read up to the break, with a
warning naming the line; malformed events are skipped whole, each named by its line;
unknown event types are ignored.
"""
from __future__ import annotations

import gc
import os

from ...model import Run
from ..executors_lost import note_memory_losses
from . import parallel, typed
from .codecs import SUPPORTED_CODECS, codec_of, open_lines
from .files import EventLogError, in_progress, is_status_marker, log_files
from .parser import Parser


def _cannot_read(file: str, exc: OSError, next_step: str) -> EventLogError:
    return EventLogError(f"cannot read {file}: {exc.strerror or exc}; {next_step}")


def load_eventlog(path: str | os.PathLike) -> Run:
    """A whole past application from its Spark event log -> ``Run`` (kind ``eventlog``).

    ``path``: an event-log file (plain, ``.zstd``/``.zst``, ``.lz4``, ``.snappy``, ``.lzf``,
    optionally ``.inprogress``) or a rolled-log directory (``eventlog_v2_*``).
    Raises :class:`EventLogError` (one line, with the next step) when it cannot be read.
    """
    path = os.path.abspath(os.path.expanduser(os.fspath(path)))
    files, warnings = log_files(path)
    parser = Parser(typed)
    parser.warnings.extend(warnings)
    line = 0
    total_bytes = 0
    pool: parallel.Pool | None = None
    # The events make no reference cycles; the cycle collector, run again and again over
    # the task records, only costs time (unpickling one 16 MB range's records: 0.24 s with
    # it, 0.03 s without, measured at load ~12)
    collecting = gc.isenabled()
    gc.disable()
    try:
        for file in files:
            if is_status_marker(file):
                continue
            try:
                total_bytes += os.path.getsize(file)
                if parallel.usable(file, codec_of(file)):
                    pool = pool or parallel.Pool(parallel.workers())
                    line = pool.feed(parser, file, line + 1)
                    continue
                lines, stream, handle = open_lines(file)
            except OSError as exc:
                raise _cannot_read(file, exc, "check permissions") from None
            try:
                line = parser.feed(lines, line + 1)
            except OSError as exc:
                raise _cannot_read(file, exc, "check the file") from None
            finally:
                handle.close()
            if stream is not None and stream.error:
                parser.warnings.append(f"{stream.error}: events after line {line} are lost "
                                       "(truncated or corrupt file); the report covers what "
                                       "came before")
    finally:
        if collecting:
            gc.enable()
        if pool is not None:
            pool.close()
    if total_bytes == 0:
        raise EventLogError(f"{path} is empty: Spark had not written any event yet; wait for the "
                            "application to start or pick another log")
    if not parser.events:
        raise EventLogError(f"{path} holds no Spark events (not a Spark event log?); expected JSON "
                            "lines like {\"Event\":\"SparkListenerLogStart\",...}")
    skipped = parser.skipped_warning()
    if skipped:
        parser.warnings.append(skipped)
    still_writing = in_progress(path, files)
    if "app_id" not in parser.app:
        parser.warnings.append("no SparkListenerApplicationStart event: the app id is unknown and "
                               "the start is the first job or task seen (is this the beginning "
                               "of the log?)")
    if "end_ms" not in parser.app:
        running = len(parser.running)
        what = "is in progress (.inprogress)" if still_writing else \
            "has no SparkListenerApplicationEnd (truncated, or the driver died)"
        parser.warnings.append(f"the log {what}: end time taken from the last event"
                               + (f"; {running} task attempt{'' if running == 1 else 's'} still "
                                  "running included as RUNNING" if running else ""))
    run = parser.build(path)
    run.extra["in_progress"] = still_writing
    run.extra["log_bytes"] = total_bytes
    run.extra["files"] = [os.path.basename(f) for f in files]
    run.extra["skipped_lines"] = [list(s) for s in parser.skipped]
    note_memory_losses(run)
    return run


__all__ = ["EventLogError", "SUPPORTED_CODECS", "load_eventlog"]
