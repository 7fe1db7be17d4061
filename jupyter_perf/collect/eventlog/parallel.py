"""Reading a large uncompressed log with more than one core.

Most of the time spent on a large log is reading task events: parsing each TaskStart and
TaskEnd line and checking its fields. That needs no state, so worker processes do it on
byte ranges of the file (``chunks``: about :data:`CHUNK_BYTES` each, cut after a newline)
while this process folds the records they send back into the :class:`~.parser.Parser`, in the
order of the log. Everything else goes back to the parser as the line itself and is handled
as in a serial read: other events the parser needs (jobs, stages, SQL, executors), blank and
damaged lines, and any task line a worker could not read cleanly (not JSON, a lone
surrogate, a field of the wrong type...). Once what has been folded in shows no SQL
execution, ranges are sent without asking for TaskEnds' SQL metric updates; a task of a SQL
execution that starts later has its line read again here. The Run is the same as a serial
read's (``tests/collect/test_eventlog_parallel.py``).

Used for uncompressed files of at least :data:`MIN_BYTES` when there are two or more cores;
compressed logs are read serially (their byte ranges cannot be decoded apart).
"""
from __future__ import annotations

import io
import multiprocessing
import os
import threading
from array import array
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import orjson

from . import parser as _parser
from . import typed
from .parser import NUMERIC_FIELDS, START_FIELDS, Parser

CHUNK_BYTES = 16 << 20      # a worker's byte range
MIN_BYTES = 64 << 20        # smaller files are read serially (a worker's start costs more)
START_METHOD: str | None = None     # None: fork in a single-threaded process, else spawn
_RAW, _START, _END = 0, 1, 2
_TASK_START, _TASK_END = b"SparkListenerTaskStart", b"SparkListenerTaskEnd"
_KNOWN: frozenset[bytes] | None = None      # event names the parser handles


def workers() -> int:
    """Worker processes to use: one per core, at most 4; 0 (serial) on one core."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)
    return 0 if cores < 2 else min(cores, 4)


def chunks(path: str, size: int, chunk_bytes: int = CHUNK_BYTES) -> list[tuple[int, int]]:
    """Byte ranges ``[start, end)`` of ``path``'s first ``size`` bytes, about ``chunk_bytes``
    each, each ending just after a newline; bytes after the last newline are in none (the
    caller reads them)."""
    out: list[tuple[int, int]] = []
    with open(path, "rb") as fh:
        last = _last_newline(fh, 0, size)
        start = 0
        while start < last:
            at = start + chunk_bytes
            if at >= last:
                out.append((start, last))
                break
            fh.seek(at)
            while True:                # the next newline at or after ``at`` (< last)
                block = fh.read(1 << 16)
                nl = block.find(b"\n")
                if nl >= 0:
                    at += nl + 1
                    break
                at += len(block)
            out.append((start, at))
            start = at
    return out


def _last_newline(fh: Any, start: int, size: int) -> int:
    """The offset just after the last newline in ``[start, size)``, or ``start``."""
    end = size
    while end > start:
        begin = max(start, end - (1 << 16))
        fh.seek(begin)
        block = fh.read(end - begin)
        nl = block.rfind(b"\n")
        if nl >= 0:
            return begin + nl + 1
        end = begin
    return start


def decode_chunk(path: str, start: int, end: int, sql: bool = True) -> tuple:
    """Read the lines of ``path[start:end]``: (lines, events not needed, operations in line
    order, TaskStart numbers, TaskEnd numbers). An operation is ``(line offset, kind,
    payload)``: kind ``_RAW`` with the line for the parser, or ``_START`` / ``_END`` with a
    record whose numbers are the next row of the chunk's TaskStart / TaskEnd numbers.
    Without ``sql`` (no SQL execution seen so far) a TaskEnd's SQL updates are not read: its
    record has ``False`` for them and the line's place in the file, for the parser to read
    the line itself if its stage turns out to be a SQL execution's."""
    global _KNOWN
    if _KNOWN is None:
        _KNOWN = frozenset(Parser().handlers)
    known, prefix, loads, decode_error = _KNOWN, _parser._PREFIX, orjson.loads, orjson.JSONDecodeError
    with open(path, "rb") as fh:
        fh.seek(start)
        data = fh.read(end - start)
    ops: list[tuple[int, int, Any]] = []
    append = ops.append
    starts, ends = array("d"), array("d")
    cache = {}.setdefault
    unneeded = 0
    n = 0
    at = start                         # the line's offset in the file
    for n, line in enumerate(io.BytesIO(data)):
        here, at = at, at + len(line)
        if not (line.startswith(prefix) and line.endswith(b"\n")):
            if line.strip():
                append((n, _RAW, line))
            continue
        name = line[10:line.find(b'"', 10)]
        if name == _TASK_END:
            record = _task_end(line, loads, decode_error, sql, here)
            if record is None:
                append((n, _RAW, line))
            else:
                row, (strings, metrics, status, error, kind, updates, where, size) = record
                ends.extend(row)
                # repeated strings sent once (pickle keeps one copy of an object)
                append((n, _END, (cache(strings, strings), metrics, status, cache(error, error),
                                  cache(kind, kind), updates, where, size)))
        elif name == _TASK_START:
            try:
                row, strings = typed.task_start_record(line)
                starts.extend(row)
                append((n, _START, cache(strings, strings)))
                continue
            except Exception:   # noqa: BLE001 - read the old way (which names the cause)
                pass
            try:
                event = loads(line)
                if type(event) is not dict or event.get("Event") != "SparkListenerTaskStart":
                    raise ValueError   # (a second "Event" key: the parser names it)
                row, strings = _parser.task_start_record(event)
            except Exception:   # noqa: BLE001 - the parser reads it again and says why
                append((n, _RAW, line))
                continue
            starts.extend(row)
            append((n, _START, cache(strings, strings)))
        elif name in known:
            append((n, _RAW, line))
        else:
            unneeded += 1
    lines = n + 1 if data else 0
    return lines, unneeded, ops, starts, ends


def _task_end(line: bytes, loads: Any, decode_error: Any, sql: bool = True,
              where: int = 0) -> tuple | None:
    """A TaskEnd line's record with its SQL updates read (None: bad updates; False: not read,
    and the line is ``where`` in the file), or None when anything about the line is not clean
    (the parser then reads it and says why)."""
    try:
        stripped, accumulables = _parser.split_accumulables(line)
        if accumulables is not None:
            try:
                row, fields = typed.task_end_record(stripped)
            except Exception:   # noqa: BLE001 - read the old way (which names the cause)
                pass
            else:
                return _task_end_result(row, fields, accumulables, None, sql, where, line)
        try:
            event = loads(stripped)
        except decode_error:
            accumulables = None
            event = loads(line)
        if type(event) is not dict or event.get("Event") != "SparkListenerTaskEnd":
            return None
        row, fields = _parser.task_end_record(event, accumulables)
        return _task_end_result(row, fields[:5], accumulables, fields[7], sql, where, line)
    except Exception:   # noqa: BLE001 - the parser reads it again and says why
        return None


def _task_end_result(row: array, fields: tuple, accumulables: bytes | None, info: Any,
                     sql: bool, where: int, line: bytes) -> tuple:
    if not sql:
        return row, fields + (False, where, len(line))
    try:
        updates = _parser.task_updates(accumulables, info)
    except _parser.BadEvent:
        updates = None             # the parser says so if its stage is a SQL one's
    return row, fields + (updates, None, None)


def apply_chunk(parser: Parser, result: tuple, first_line: int, fd: int = -1) -> int:
    """Fold one decoded chunk into ``parser``, in line order; return the next line number.
    ``fd``: the file, open, for TaskEnd lines whose SQL updates were not read."""
    lines, unneeded, ops, starts, ends = result
    parser.events += unneeded
    k_end, k_start = len(NUMERIC_FIELDS), len(START_FIELDS)
    i_end = i_start = 0
    task_start, task_end, fail = parser._task_start, parser._task_end, parser.fail
    sql_stages, stage_at = parser.sql.sql_stages, _parser._STAGE
    for offset, kind, payload in ops:
        lineno = first_line + offset
        if kind == _RAW:
            parser.feed(iter((payload,)), lineno)
            continue
        if kind == _END:
            row = ends[i_end:i_end + k_end]
            i_end += k_end
            if payload[5] is False and int(row[stage_at]) in sql_stages:
                # a SQL execution's task whose updates were not read: the parser reads it
                parser.feed(iter((reread(fd, payload[6], payload[7]),)), lineno)
                continue
        parser.events += 1
        try:
            if kind == _END:
                task_end(row, payload)
            else:
                row = starts[i_start:i_start + k_start]
                i_start += k_start
                task_start(row, payload)
        except _parser.HANDLER_ERRORS as exc:
            fail(lineno, "TaskEnd" if kind == _END else "TaskStart", exc)
    return first_line + lines


def reread(fd: int, where: int, size: int) -> bytes:
    """The line of ``size`` bytes at ``where`` in the open file ``fd``."""
    return os.pread(fd, size, where)


class Pool:
    """Worker processes for one ``load_eventlog``; closed by :meth:`close`."""

    def __init__(self, n: int) -> None:
        # fork when this process runs one thread (the CLI): workers start at once with what
        # is already imported; otherwise (a kernel's threads) start them afresh
        method = START_METHOD or ("fork" if threading.active_count() == 1 and
                                  "fork" in multiprocessing.get_all_start_methods() else "spawn")
        self.n = n
        self.broken = False
        self.executor: ProcessPoolExecutor | None = None
        try:
            self.executor = ProcessPoolExecutor(n, mp_context=multiprocessing.get_context(method))
        except (OSError, ImportError, NotImplementedError, ValueError):
            self.broken = True         # no processes here (no /dev/shm, say): read it all here

    def feed(self, parser: Parser, path: str, first_line: int) -> int:
        """Read the file at ``path`` into ``parser`` (as :meth:`Parser.feed`): its byte ranges
        by the workers, whatever follows the last whole line (a file still being written) by
        this process. Returns the number of the last line read."""
        ranges = chunks(path, os.path.getsize(path))
        with open(path, "rb") as fh:
            return self._feed(parser, path, ranges, first_line, fh)

    def _feed(self, parser: Parser, path: str, ranges: list[tuple[int, int]], first_line: int,
              fh: Any) -> int:
        pending: deque = deque()       # futures of ranges[i], ranges[i + 1], ...
        submitted = 0
        line = first_line
        done = 0
        for start, end in ranges:
            while not self.broken and submitted < len(ranges) and len(pending) < 2 * self.n + 1:
                # SQL updates are read, unless what has been folded in (something has) had
                # no SQL execution's stage: a log of RDD jobs
                sql = done == 0 or bool(parser.sql.sql_stages)
                try:
                    pending.append(self.executor.submit(decode_chunk, path,
                                                        *ranges[submitted], sql))
                    submitted += 1
                except Exception:      # noqa: BLE001 - cannot start a worker: read it here
                    self._break(pending)
            result = None
            if pending:
                try:
                    result = pending.popleft().result()
                except Exception:      # noqa: BLE001 - a worker died: read it here (this
                    self._break(pending)   # raises again if the file itself is the trouble)
            if result is None:         # no worker left: read the range here
                result = decode_chunk(path, start, end)
            line = apply_chunk(parser, result, line, fh.fileno())
            done = end
        fh.seek(done)                  # after the last newline, and anything written since
        return parser.feed(fh, line)

    def _break(self, pending: deque) -> None:
        self.broken = True
        pending.clear()

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)


def usable(path: str, codec: str | None) -> bool:
    """Whether ``path`` is worth reading in parallel."""
    try:
        return codec is None and workers() > 0 and os.path.getsize(path) >= MIN_BYTES
    except OSError:
        return False
