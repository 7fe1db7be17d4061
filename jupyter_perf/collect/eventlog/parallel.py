"""Reading a large uncompressed log with more than one core.

Most of the time spent on a large log is reading task events: parsing each TaskStart and
TaskEnd line and checking its fields. That needs no state, so worker processes do it on
byte ranges of the file (``chunks``: about :data:`CHUNK_BYTES` each, cut after a newline)
while this process folds what they send back into the :class:`~.parser.Parser`, in the
order of the log. A range's task events come back in columns (:class:`Tasks`: a few arrays
and small tables, cheap to pickle) and are folded in bulk with numpy (:class:`Fold`) between
the lines the parser reads, which may change what a task event does. Everything else goes
back to the parser as the line itself and is handled as in a serial read: other events the
parser needs (jobs, stages, SQL, executors), blank and damaged lines, and any task line a
worker could not read cleanly (not JSON, a lone surrogate, a field of the wrong type...).
Once what has been folded in shows no SQL execution, ranges are sent without asking for
TaskEnds' SQL metric updates; a task of a SQL execution that starts later has its line read
again here. The Run is the same as a serial read's (``tests/collect/test_eventlog_parallel.py``).

Used for uncompressed files of at least :data:`MIN_BYTES` when there are two or more cores;
compressed logs are read serially (their byte ranges cannot be decoded apart).
"""
from __future__ import annotations

import bisect
import io
import multiprocessing
import os
import threading
from array import array
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from itertools import chain
from typing import Any

import numpy as np
import orjson

from . import parser as _parser
from . import typed
from .parser import NUMERIC_FIELDS, START_FIELDS, Parser
from .sql import sql_update_pairs

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


class Tasks:
    """A chunk's task events, in columns (pickled as a few buffers, folded in bulk): for each
    event in line order, its line offset in the chunk and whether it is a TaskEnd; the
    TaskStarts' numbers (rows of ``START_FIELDS``) and strings; the TaskEnds' numbers (rows of
    ``NUMERIC_FIELDS``), record (strings, has metrics, status, error, end reason: a code into
    ``records``) and SQL updates (the next ``counts[i]`` (id, update) ``pairs``, or
    ``_UNREAD``: not read, the line being ``size[i]`` bytes at ``where[i]`` in the file)."""

    __slots__ = ("offsets", "is_end", "starts", "start_codes", "strings", "ends", "end_codes",
                 "records", "counts", "pairs", "where", "size")

    def __init__(self) -> None:
        self.offsets, self.is_end = array("q"), bytearray()
        self.starts, self.start_codes, self.strings = array("d"), array("q"), []
        self.ends, self.end_codes, self.records = array("d"), array("q"), []
        self.counts, self.pairs = array("q"), array("q")
        self.where, self.size = array("q"), array("q")


_UNREAD = -1                    # a TaskEnd's SQL updates were not read (Tasks.counts)


def decode_chunk(path: str, start: int, end: int, sql: bool = True) -> tuple:
    """Read the lines of ``path[start:end]``: (lines, events not needed, lines for the parser
    as ``(offset in the chunk, line)``, the task events as :class:`Tasks`). Task lines a
    worker cannot read cleanly go to the parser as lines (it reads them again and says why);
    so do TaskEnds whose SQL updates are bad or do not fit 64 bits. Without ``sql`` (no SQL
    execution seen so far) a TaskEnd's SQL updates are not read: the parser reads the line
    itself if its stage turns out to be a SQL execution's."""
    global _KNOWN
    if _KNOWN is None:
        _KNOWN = frozenset(Parser().handlers)
    known, prefix, loads, decode_error = _KNOWN, _parser._PREFIX, orjson.loads, orjson.JSONDecodeError
    with open(path, "rb") as fh:
        fh.seek(start)
        data = fh.read(end - start)
    raw: list[tuple[int, bytes]] = []
    tasks = Tasks()
    offsets, is_end = tasks.offsets, tasks.is_end
    strings_at: dict = {}
    records_at: dict = {}
    unneeded = 0
    n = 0
    at = start                         # the line's offset in the file
    for n, line in enumerate(io.BytesIO(data)):
        here, at = at, at + len(line)
        if not (line.startswith(prefix) and line.endswith(b"\n")):
            if line.strip():
                raw.append((n, line))
            continue
        name = line[10:line.find(b'"', 10)]
        if name == _TASK_END:
            record = _task_end(line, loads, decode_error, sql)
            if record is None or not _add_end(tasks, records_at, record, here, len(line)):
                raw.append((n, line))
                continue
            offsets.append(n)
            is_end.append(1)
        elif name == _TASK_START:
            try:
                row, strings = typed.task_start_record(line)
            except Exception:   # noqa: BLE001 - read the old way (which names the cause)
                try:
                    event = loads(line)
                    if type(event) is not dict or event.get("Event") != "SparkListenerTaskStart":
                        raise ValueError   # (a second "Event" key: the parser names it)
                    row, strings = _parser.task_start_record(event)
                except Exception:   # noqa: BLE001 - the parser reads it again and says why
                    raw.append((n, line))
                    continue
            code = strings_at.get(strings)
            if code is None:
                code = strings_at[strings] = len(tasks.strings)
                tasks.strings.append(strings)
            tasks.starts.extend(row)
            tasks.start_codes.append(code)
            offsets.append(n)
            is_end.append(0)
        elif name in known:
            raw.append((n, line))
        else:
            unneeded += 1
    lines = n + 1 if data else 0
    return lines, unneeded, raw, tasks


def _add_end(tasks: Tasks, records_at: dict, record: tuple, where: int, size: int) -> bool:
    """Add a TaskEnd (:func:`_task_end`'s record) to ``tasks``; False (nothing added) if its
    record cannot be kept in the table (an unhashable end reason: the parser reads it)."""
    row, fields, pairs = record
    try:
        code = records_at.get(fields)
        if code is None:
            code = records_at[fields] = len(tasks.records)
            tasks.records.append(fields)
    except TypeError:
        return False
    tasks.ends.extend(row)
    tasks.end_codes.append(code)
    if pairs is None:
        tasks.counts.append(_UNREAD)
        tasks.where.append(where)
        tasks.size.append(size)
    else:
        tasks.counts.append(len(pairs) >> 1)
        tasks.pairs.extend(pairs)
        tasks.where.append(0)
        tasks.size.append(0)
    return True


def _task_end(line: bytes, loads: Any, decode_error: Any, sql: bool = True) -> tuple | None:
    """A TaskEnd line's (numbers, record: strings, has metrics, status, error, end reason,
    SQL updates as int64 (id, update) pairs, or None when ``sql`` is False: not read), or
    None when the parser is to read the line: anything about it not clean, its SQL updates
    bad or past 64 bits (it then says why, if that matters)."""
    try:
        stripped, accumulables = _parser.split_accumulables(line)
        row = info = None
        if accumulables is not None:
            try:
                row, fields = typed.task_end_record(stripped)
            except Exception:   # noqa: BLE001 - read the old way (which names the cause)
                pass
        if row is None:
            try:
                event = loads(stripped)
            except decode_error:
                accumulables = None
                event = loads(line)
            if type(event) is not dict or event.get("Event") != "SparkListenerTaskEnd":
                return None
            row, fields = _parser.task_end_record(event, accumulables)
            fields, info = fields[:5], fields[7]
        if not sql:
            return row, fields, None
        if accumulables is not None:
            return row, fields, sql_update_pairs(accumulables)
        return row, fields, array("q", chain.from_iterable(_parser.task_updates(None, info)))
    except Exception:   # noqa: BLE001 - the parser reads it again and says why
        return None


def apply_chunk(parser: Parser, result: tuple, first_line: int, fd: int = -1) -> int:
    """Fold one decoded chunk into ``parser``, in line order; return the next line number.
    ``fd``: the file, open, for TaskEnd lines whose SQL updates were not read."""
    lines, unneeded, raw, tasks = result
    parser.events += unneeded
    fold = Fold(parser, tasks, first_line, fd)
    for offset, line in raw:
        fold.until(offset)
        parser.feed(iter((line,)), first_line + offset)
    fold.until(lines)
    return first_line + lines


class Fold:
    """Folds a chunk's :class:`Tasks` into the parser in bulk (arrays, not a call per event),
    up to each line the parser reads (a stage submitted, a SQL execution started... changes
    what a task event does). The parser ends as if it had handled the events one by one
    (``Parser._task_start`` / ``_task_end``; the Runs are compared in
    ``tests/collect/test_eventlog_parallel.py``)."""

    def __init__(self, parser: Parser, tasks: Tasks, first_line: int, fd: int) -> None:
        self.parser, self.tasks, self.first_line, self.fd = parser, tasks, first_line, fd
        self.done = 0
        k_end, k_start = len(NUMERIC_FIELDS), len(START_FIELDS)
        self.k_end, self.k_start = k_end, k_start
        end = np.frombuffer(tasks.is_end, dtype=np.uint8).astype(bool)
        n = len(end)
        starts = np.frombuffer(tasks.starts, dtype=np.float64).reshape(-1, k_start)
        ends = np.frombuffer(tasks.ends, dtype=np.float64).reshape(-1, k_end)
        at_end, at_start = np.flatnonzero(end), np.flatnonzero(~end)
        self.end, self.ends = end, ends
        self.row_of = np.empty(n, dtype=np.int64)     # its row among the starts or the ends
        self.row_of[at_end] = np.arange(len(at_end))
        self.row_of[at_start] = np.arange(len(at_start))

        def column(i_end: int, i_start: int) -> np.ndarray:
            out = np.empty(n, dtype=np.float64)
            out[at_end] = ends[:, i_end]
            out[at_start] = starts[:, i_start]
            return out
        # ids are whole numbers within 2**53 (parser._numbers)
        self.task = column(_parser._TASK, _parser._START_TASK).astype(np.int64)
        self.stage = column(_parser._STAGE, _parser._START_STAGE).astype(np.int64)
        self.attempt = column(_parser._ATTEMPT, _parser._START_ATTEMPT).astype(np.int64)
        self.index = column(_parser._INDEX, _parser._START_INDEX).astype(np.int64)
        self.time = column(_parser._FINISH, _parser._START_LAUNCH)  # launched / finished
        counts = np.frombuffer(tasks.counts, dtype=np.int64)
        self.counts = counts
        self.unread = np.zeros(n, dtype=bool)        # a TaskEnd whose SQL updates were not read
        self.unread[at_end] = counts == _UNREAD
        self.first_update = np.concatenate([[0], np.cumsum(np.maximum(counts, 0))])
        pairs = np.frombuffer(tasks.pairs, dtype=np.int64).reshape(-1, 2)
        self.acc_ids, self.values = pairs[:, 0], pairs[:, 1]
        self.codes = np.frombuffer(tasks.end_codes, dtype=np.int64)
        records = tasks.records
        # each record's (executor, host, locality, status, error) as the parser's code
        self.text_codes = np.array([parser.text_code((*r[0][:3], r[2], r[3])) for r in records],
                                   dtype=np.int64)
        self.kind = [r[4] for r in records]
        self.flags = np.array([[bool(r[1]), bool(r[0][3])] for r in records],
                              dtype=np.int8).reshape(-1, 2)
        self.won = np.array([r[2] == "SUCCESS" for r in records], dtype=bool)
        self.resubmitted = np.array([r[4] == "Resubmitted" for r in records], dtype=bool)
        self.unsuccessful = np.zeros(n, dtype=bool)  # a TaskEnd whose reason is not Success
        self.unsuccessful[at_end] = np.array([r[4] != "Success" for r in records],
                                             dtype=bool)[self.codes]

    def until(self, offset: int) -> None:
        """Fold the events on lines before ``offset`` (in the chunk)."""
        a = self.done
        b = bisect.bisect_left(self.tasks.offsets, offset, a)
        if a >= b:
            return
        sql_stages = self.parser.sql.sql_stages
        if sql_stages:
            # a TaskEnd of a SQL execution's stage whose updates were not read: its line is
            # read again by the parser, in its place
            unread = self.unread[a:b]
            if unread.any():
                unread &= np.isin(self.stage[a:b], np.fromiter(sql_stages, dtype=np.int64))
                for j in (np.flatnonzero(unread) + a).tolist():
                    self._bulk(a, j)
                    e = int(self.row_of[j])
                    self.parser.feed(iter((reread(self.fd, self.tasks.where[e],
                                                  self.tasks.size[e]),)),
                                     self.first_line + self.tasks.offsets[j])
                    a = j + 1
        self._bulk(a, b)
        self.done = b

    def _bulk(self, a: int, b: int) -> None:
        if a >= b:
            return
        parser = self.parser
        parser.events += b - a
        end, task, stage = self.end[a:b], self.task[a:b], self.stage[a:b]
        row = self.row_of[a:b]
        if parser.sql.sql_stages:
            self._sql(a, b)
        # attempts running: a TaskStart adds its task, a TaskEnd removes it; a resubmitted
        # attempt whose task is not running is not taken
        running = parser.running
        keep = end.copy()
        k_start, starts, strings, codes = (self.k_start, self.tasks.starts, self.tasks.strings,
                                           self.tasks.start_codes)

        def start_of(r: int) -> tuple:      # a running task's TaskStart: its row and strings
            return starts[r * k_start:(r + 1) * k_start], strings[codes[r]]
        if self.resubmitted.any() and self.resubmitted[self.codes[row[end]]].any():
            for j, (t, is_end, r) in enumerate(zip(task.tolist(), end.tolist(), row.tolist())):
                if not is_end:
                    running[t] = r
                elif self.resubmitted[self.codes[r]] and t not in running:
                    keep[j] = False
                else:
                    running.pop(t, None)
            for t in task[~end].tolist():  # still running
                r = running.get(t)
                if type(r) is int:
                    running[t] = start_of(r)
        else:
            # one after another, the last event of each task decides: after a TaskEnd it is
            # not running, after a TaskStart it is, with that start's row and strings
            ids, back = np.unique(task[::-1], return_index=True)
            last = len(task) - 1 - back
            started = ~end[last]
            if running:
                held = np.fromiter(running, dtype=np.int64, count=len(running))
                for t in held[np.isin(held, ids[~started])].tolist():
                    del running[t]
            for t, r in zip(ids[started].tolist(), row[last[started]].tolist()):
                running[t] = start_of(r)
        self._add(row[keep])
        # the times seen, the stages' first launch
        seen = self.time[a:b][~end | keep]
        seen = seen[~np.isnan(seen)]
        if len(seen):
            top = float(seen.max())
            if top > parser.last_time:
                parser.last_time = top
            seen = seen[seen > 0]
            if len(seen) and float(seen.min()) < parser.first_time:
                parser.first_time = float(seen.min())
        start = ~end
        if start.any():
            launched, attempt = self.time[a:b], self.attempt[a:b]
            for key in set(zip(stage[start].tolist(), attempt[start].tolist())):
                st = parser.stages.get(key)
                if st is not None:
                    first = float(launched[start & (stage == key[0]) & (attempt == key[1])].min())
                    if not st["first_task_launched_ms"] <= first:
                        st["first_task_launched_ms"] = first
        # failed and killed attempts counted on their jobs
        taken = keep & self.unsuccessful[a:b]
        for s, r in zip(stage[taken].tolist(), row[taken].tolist()):
            parser._count_on_jobs(s, self.kind[self.codes[r]])

    def _add(self, rows: np.ndarray) -> None:
        """Parser._add_task for these TaskEnds' rows, in order."""
        if not len(rows):
            return
        parser = self.parser
        first, last = int(rows[0]), int(rows[-1])
        if last - first + 1 == len(rows):
            parser.numbers.extend(self.tasks.ends[first * self.k_end:(last + 1) * self.k_end])
        else:
            parser.numbers.frombytes(self.ends[rows].tobytes())
        codes = self.codes[rows]
        flags = self.flags[codes]
        parser.has_metrics.frombytes(flags[:, 0].tobytes())
        parser.speculative.frombytes(flags[:, 1].tobytes())
        parser.text_codes.frombytes(self.text_codes[codes].tobytes())

    def _sql(self, a: int, b: int) -> None:
        """SqlListener.task_start / task_end of the events of SQL executions' stages."""
        sql = self.parser.sql
        stage, end = self.stage[a:b], self.end[a:b]
        for s in np.unique(stage).tolist():
            st = sql.stage_metrics.get(s)
            if st is None or s not in sql.sql_stages:
                continue
            live = s in sql.live_stages
            mine = (stage == s) & (self.attempt[a:b] == st.attempt)
            if not live:
                mine &= ~end              # a TaskEnd counts only while its execution is live
            if not mine.any():
                continue
            st.task_index.update(zip(self.task[a:b][mine].tolist(),
                                     self.index[a:b][mine].tolist()))
            if not live:
                continue
            ended = mine & end
            if not ended.any():
                continue
            rows = self.row_of[a:b][ended]
            counts = self.counts[rows]
            # the positions of these TaskEnds' update pairs, in order
            at = np.repeat(self.first_update[rows] - np.cumsum(counts) + counts, counts) + \
                np.arange(int(counts.sum()))
            st.update_many(self.task[a:b][ended], self.index[a:b][ended],
                           self.won[self.codes[rows]], counts, self.acc_ids[at],
                           self.values[at])


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
