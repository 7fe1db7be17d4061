"""Read a whole past application from its Spark event log into a ``Run`` (kind ``eventlog``).

    run = load_eventlog("/path/to/spark-events/app-20261122015800-0001")

Accepts a single log file, a rolled log directory (``eventlog_v2_<app>``: its ``events_N_*``
files in order, the ``appstatus_*`` marker skipped, replay starting at the newest ``.compact``
file as Spark does), in-progress logs (``.inprogress``) and compressed logs, chosen by file
extension:

=========  ==================================================  ==========================
codec      Spark's on-disk format                               decoded with
=========  ==================================================  ==========================
zstd       zstd frames (zstd-jni)  ``.zstd`` / ``.zst``         ``zstandard``
lz4        lz4-java ``LZ4BlockOutputStream`` blocks ``.lz4``    ``cramjam`` (raw lz4 block)
snappy     xerial ``SnappyOutputStream`` chunks ``.snappy``     ``cramjam`` (raw snappy)
lzf        ning ``LZFOutputStream`` chunks ``.lzf``             ``lzf`` if installed, else
                                                                a built-in decoder (slower)
=========  ==================================================  ==========================

The log is streamed line by line and never held in memory; only the events the analysis needs
are parsed (with ``orjson``; the stdlib ``json`` when it is missing), and task attempts are
accumulated column by column in typed arrays (8 bytes a number) — see
``benchmarks/eventlog_scale.py``. Units are not touched here: the raw Spark field names go to
:func:`jupyter_perf.model.normalize_tasks`, the one place units are normalised.

A truncated or corrupt log is read up to the break, with a warning naming the line; lines
that are not JSON are skipped with a warning; unknown event types are ignored.
"""
from __future__ import annotations

import io
import os
import re
import struct
from array import array
from typing import Any, Callable, Iterator

import numpy as np
import pandas as pd

from ..model import EVENTLOG_TASK_FIELDS, Run, normalize_tasks

try:  # orjson is a dependency; keep a working fallback for odd platforms
    import orjson as _orjson

    _loads: Callable[[bytes], Any] = _orjson.loads
    JSONError: tuple[type[BaseException], ...] = (_orjson.JSONDecodeError, ValueError)
    JSON_PARSER = "orjson"
except ImportError:  # pragma: no cover - exercised only without orjson
    import json as _json

    _loads = _json.loads
    JSONError = (ValueError, UnicodeDecodeError)
    JSON_PARSER = "json"

SUPPORTED_CODECS = ("zstd", "lz4", "snappy", "lzf")
CODEC_EXTENSIONS = {".zstd": "zstd", ".zst": "zstd", ".lz4": "lz4", ".snappy": "snappy",
                    ".lzf": "lzf"}
INPROGRESS = ".inprogress"
COMPACT = ".compact"
MAX_LINE_WARNINGS = 5
_READ = 1 << 20
_ZSTD_READ = 1 << 17


class EventLogError(ValueError):
    """An event log could not be read; the one-line message says what to do next."""


# ---------------------------------------------------------------------------
# Decompression: each codec yields decompressed chunks; a reader turns them into lines.
# ---------------------------------------------------------------------------
class _Stream:
    """Decompressed byte chunks of one file; ``error`` says where decoding broke, if it did."""

    def __init__(self, path: str, codec: str | None):
        self.path, self.codec = path, codec
        self.error = ""
        self.compressed_bytes = 0

    def chunks(self) -> Iterator[bytes]:
        with open(self.path, "rb") as fh:
            if self.codec is None:
                while True:
                    block = fh.read(_READ)
                    if not block:
                        return
                    self.compressed_bytes += len(block)
                    yield block
            decode = {"zstd": self._zstd, "lz4": self._lz4, "snappy": self._snappy,
                      "lzf": self._lzf}[self.codec]
            yield from decode(fh)

    def _broken(self, what: str) -> None:
        self.error = (f"{os.path.basename(self.path)}: {self.codec} stream {what} after "
                      f"{self.compressed_bytes} compressed bytes")

    def _zstd(self, fh) -> Iterator[bytes]:
        import zstandard

        reader = zstandard.ZstdDecompressor().stream_reader(fh, read_across_frames=True)
        while True:
            try:   # zstd blocks are <= 128 KiB: small reads keep what precedes a corrupt block
                block = reader.read(_ZSTD_READ)
            except zstandard.ZstdError as exc:
                self._broken(f"is corrupt ({exc})")
                return
            if not block:
                self.compressed_bytes = fh.tell()
                # a zstd stream cut mid-frame just ends: detect it by the frame not closing
                return
            self.compressed_bytes = fh.tell()
            yield block

    def _lz4(self, fh) -> Iterator[bytes]:
        # lz4-java LZ4BlockOutputStream: "LZ4Block" token(1) compressedLen(4 LE)
        # decompressedLen(4 LE) checksum(4 LE) + data; token high nibble 0x10 raw, 0x20 lz4.
        import cramjam

        decompress = cramjam.lz4.decompress_block
        while True:
            head = fh.read(21)
            if not head:
                return
            if len(head) < 21 or head[:8] != b"LZ4Block":
                self._broken("is truncated" if len(head) < 21 else "has a bad block header")
                return
            method = head[8] & 0xF0
            clen, ulen, _check = struct.unpack("<iii", head[9:21])
            if ulen == 0:      # end marker (stream closed cleanly); more may follow when appended
                self.compressed_bytes += 21
                continue
            data = fh.read(clen)
            if len(data) < clen:
                self._broken("is truncated")
                return
            self.compressed_bytes += 21 + clen
            try:
                yield data if method == 0x10 else bytes(decompress(data, output_len=ulen))
            except Exception as exc:  # cramjam.DecompressionError
                self._broken(f"is corrupt ({exc})")
                return

    def _snappy(self, fh) -> Iterator[bytes]:
        # xerial SnappyOutputStream: 16-byte header (magic \x82SNAPPY\0, version, compatible
        # version), then chunks of compressedLen(4 BE) + raw snappy block.
        import cramjam

        head = fh.read(16)
        if head[:8] != b"\x82SNAPPY\x00":
            self._broken("has no xerial snappy header (expected Spark's SnappyOutputStream)")
            return
        self.compressed_bytes = 16
        decompress = cramjam.snappy.decompress_raw
        while True:
            size = fh.read(4)
            if not size:
                return
            if len(size) < 4:
                self._broken("is truncated")
                return
            (clen,) = struct.unpack(">i", size)
            data = fh.read(clen)
            if len(data) < clen or clen < 0:
                self._broken("is truncated")
                return
            self.compressed_bytes += 4 + clen
            try:
                yield bytes(decompress(data))
            except Exception as exc:
                self._broken(f"is corrupt ({exc})")
                return

    def _lzf(self, fh) -> Iterator[bytes]:
        # ning compress-lzf LZFOutputStream: "ZV" type(1); type 0: len(2 BE) + raw bytes;
        # type 1: compressedLen(2 BE) uncompressedLen(2 BE) + LZF data.
        try:
            import lzf as _lzf_mod

            def decompress(data: bytes, size: int) -> bytes:
                out = _lzf_mod.decompress(data, size)
                if out is None:
                    raise ValueError("bad LZF block")
                return out
        except ImportError:
            decompress = _lzf_decompress
        while True:
            head = fh.read(3)
            if not head:
                return
            if len(head) < 3 or head[:2] != b"ZV":
                self._broken("is truncated" if len(head) < 3 else "has a bad chunk header")
                return
            if head[2] == 0:
                size = fh.read(2)
                if len(size) < 2:
                    self._broken("is truncated")
                    return
                (n,) = struct.unpack(">H", size)
                data = fh.read(n)
                if len(data) < n:
                    self._broken("is truncated")
                    return
                self.compressed_bytes += 5 + n
                yield data
            else:
                sizes = fh.read(4)
                if len(sizes) < 4:
                    self._broken("is truncated")
                    return
                clen, ulen = struct.unpack(">HH", sizes)
                data = fh.read(clen)
                if len(data) < clen:
                    self._broken("is truncated")
                    return
                self.compressed_bytes += 7 + clen
                try:
                    yield decompress(data, ulen)
                except Exception as exc:
                    self._broken(f"is corrupt ({exc})")
                    return


def _lzf_decompress(data: bytes, size: int) -> bytes:
    """LZF (liblzf) block decoder in pure Python, used when the ``lzf`` package is absent."""
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        ctrl = data[i]
        i += 1
        if ctrl < 32:                       # literal run of ctrl + 1 bytes
            out += data[i:i + ctrl + 1]
            i += ctrl + 1
        else:                               # back reference
            length = ctrl >> 5
            ref = len(out) - ((ctrl & 0x1F) << 8) - 1
            if length == 7:
                length += data[i]
                i += 1
            ref -= data[i]
            i += 1
            length += 2
            if ref < 0:
                raise ValueError("bad LZF back reference")
            if ref + length <= len(out):
                out += out[ref:ref + length]
            else:                           # overlapping copy, byte by byte
                for k in range(length):
                    out.append(out[ref + k])
    if len(out) != size:
        raise ValueError(f"LZF block decoded to {len(out)} bytes, expected {size}")
    return bytes(out)


class _ChunkReader(io.RawIOBase):
    """A read-only raw stream over decompressed chunks, so BufferedReader splits lines in C."""

    def __init__(self, chunks: Iterator[bytes]):
        self._chunks = chunks
        self._buf = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while not len(self._buf):
            try:
                self._buf = memoryview(next(self._chunks))
            except StopIteration:
                return 0
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n


def codec_of(path: str) -> str | None:
    """The compression codec of an event-log file name (None = plain text)."""
    name = os.path.basename(path)
    for suffix in (INPROGRESS, COMPACT):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    ext = os.path.splitext(name)[1].lower()
    if ext in CODEC_EXTENSIONS:
        return CODEC_EXTENSIONS[ext]
    if ext in (".gz", ".bz2", ".xz", ".zip", ".gzip"):
        raise EventLogError(
            f"{os.path.basename(path)}: {ext} is not a Spark event-log codec; decompress it "
            f"first (supported codecs: {', '.join(SUPPORTED_CODECS)}, or plain text)")
    return None


def _check_codec(codec: str | None, path: str) -> None:
    missing = {"zstd": "zstandard", "lz4": "cramjam", "snappy": "cramjam"}.get(codec or "")
    if not missing:
        return
    try:
        __import__(missing)
    except ImportError:
        raise EventLogError(
            f"{os.path.basename(path)} is {codec}-compressed and the Python package "
            f"'{missing}' is missing: pip install {missing}") from None


_EVENTS_RE = re.compile(r"^events_(\d+)_")


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


# ---------------------------------------------------------------------------
# The parser
# ---------------------------------------------------------------------------
# Task Metrics fields kept per task, in the model's raw event-log names ("Outer.Inner").
_METRIC_FIELDS = [f for f in EVENTLOG_TASK_FIELDS if not f.startswith(("Task Info.", "Stage "))]
_METRIC_SPECS = [(f.split(".", 1)[0], f.split(".", 1)[1] if "." in f else None)
                 for f in _METRIC_FIELDS]
_PEAK_FIELDS = {"JVMHeapMemory": "peak_jvm_heap_bytes",
                "OnHeapExecutionMemory": "peak_on_heap_execution_bytes",
                "OnHeapStorageMemory": "peak_on_heap_storage_bytes",
                "ProcessTreeJVMRSSMemory": "peak_process_rss_bytes"}
_KILLED_REASONS = ("TaskKilled", "TaskCommitDenied")
_EMPTY: dict = {}


def _appender(params: list[str], columns: list[tuple[str, str]], arrays: dict[str, array],
              arg: str) -> Callable:
    """A generated function appending one value per column (a Python expression each) to the
    columns' arrays through pre-bound ``append`` methods: ~3x faster than a loop over specs."""
    names = {f"a{i}": arrays[column].append for i, (column, _) in enumerate(columns)}
    body = "\n".join(f"    a{i}({expr})" for i, (_, expr) in enumerate(columns))
    src = f"def append({', '.join(params + [arg])}):\n{body}\n"
    namespace: dict[str, Any] = dict(names)
    exec(compile(src, "<eventlog appender>", "exec"), namespace)  # noqa: S102 - fixed source
    return namespace["append"]


def _metric_appender(arrays: dict[str, array]) -> Callable[[dict], None]:
    """``append(task_metrics)``: every field of ``_METRIC_FIELDS`` (0 when absent), plus
    ``has_metrics``, each nested group looked up once."""
    groups: dict[str, list[tuple[str | None, str]]] = {}
    for (top, sub), field in zip(_METRIC_SPECS, _METRIC_FIELDS):
        groups.setdefault(top, []).append((sub, field))
    columns: list[tuple[str, str]] = [("has_metrics", "1 if m else 0")]
    lines = []
    for g, (top, items) in enumerate(groups.items()):
        if items[0][0] is None:
            for _, field in items:
                columns.append((field, f"m.get({top!r}) or 0"))
        else:
            lines.append(f"    g{g} = m.get({top!r}) or E")
            for sub, field in items:
                columns.append((field, f"g{g}.get({sub!r}) or 0"))
    names = {f"a{i}": arrays[column].append for i, (column, _) in enumerate(columns)}
    body = "\n".join(lines + [f"    a{i}({expr})" for i, (_, expr) in enumerate(columns)])
    namespace: dict[str, Any] = dict(names, E=_EMPTY)
    exec(compile(f"def append(m):\n{body}\n", "<eventlog metrics>", "exec"), namespace)  # noqa: S102
    return namespace["append"]
_PREFIX = b'{"Event":"'


def _error_of(reason: dict[str, Any]) -> str:
    """Spark's ``TaskEndReason.toErrorString``, roughly: what the REST API shows as errorMessage."""
    kind = reason.get("Reason", "")
    if kind == "Success":
        return ""
    if kind == "ExceptionFailure":
        full = reason.get("Full Stack Trace")
        return full or f"{reason.get('Class Name', '')}: {reason.get('Description', '')}"
    if kind == "TaskKilled":
        return reason.get("Kill Reason", "") or "killed"
    if kind == "FetchFailed":
        return (f"FetchFailed(shuffle {reason.get('Shuffle ID')}, map {reason.get('Map ID')}, "
                f"reduce {reason.get('Reduce ID')}): {reason.get('Message', '')}")
    if kind == "ExecutorLostFailure":
        return f"ExecutorLostFailure (executor {reason.get('Executor ID')} exited): " \
               f"{reason.get('Loss Reason', '')}"
    return kind


def _without_accumulables(line: bytes) -> bytes:
    """A TaskEnd line with its Task Info ``Accumulables`` emptied, before parsing.

    They are half of a SQL task's line and nothing here reads them: skipping them makes
    parsing ~4x faster. Spark writes ``"Accumulables":[...]}`` last in Task Info, followed by
    ``,"Task Executor Metrics"`` (3.x) or ``,"Task Metrics"``; if the line does not look like
    that, it is returned whole (and a failed parse is retried on the whole line).
    """
    i = line.find(b'"Accumulables":[', 100)
    if i < 0:
        return line
    j = line.find(b'},"Task ', i)
    if j < 0 or line[j - 1] != 93:            # "]"
        return line
    return line[:i] + b'"Accumulables":[]' + line[j:]


class _Parser:
    """Event handlers that accumulate a whole application; ``run()`` builds the ``Run``."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.app: dict[str, Any] = {}
        self.jobs: dict[int, dict[str, Any]] = {}
        self.stages: dict[tuple[int, int], dict[str, Any]] = {}
        self.stage_jobs: dict[int, list[int]] = {}
        self.executors: dict[str, dict[str, Any]] = {}
        self.running: dict[int, tuple[int, int, dict]] = {}   # task id -> TaskStart info
        self.bad_lines: list[int] = []
        self.events = 0
        self.last_time = 0.0
        # task columns: numbers in float64 arrays, strings in lists of interned values
        self.num = {name: array("d") for name in (
            "Stage ID", "Stage Attempt ID", "Task Info.Task ID", "Task Info.Index",
            "Task Info.Attempt", "Task Info.Launch Time", "Task Info.Finish Time",
            "getting_result_start", "has_metrics", *_METRIC_FIELDS)}
        self.executor_col: list[str] = []
        self.host_col: list[str] = []
        self.locality_col: list[str] = []
        self.status_col: list[str] = []
        self.error_col: list[str] = []
        self.speculative_col = array("b")
        self._intern: dict[str, str] = {}
        self._append_info = _appender(
            ["stage_id", "stage_attempt"],
            [("Stage ID", "stage_id"), ("Stage Attempt ID", "stage_attempt"),
             ("Task Info.Task ID", 'info["Task ID"]'),
             ("Task Info.Index", 'info.get("Index") or 0'),
             ("Task Info.Attempt", 'info.get("Attempt") or 0'),
             ("Task Info.Launch Time", 'info.get("Launch Time") or 0'),
             ("Task Info.Finish Time", 'info.get("Finish Time") or 0'),
             ("getting_result_start", 'info.get("Getting Result Time") or 0')],
            self.num, arg="info")
        self._append_metrics = _metric_appender(self.num)
        self.handlers: dict[bytes, Callable[[dict], None]] = {
            b"SparkListenerLogStart": self.on_log_start,
            b"SparkListenerApplicationStart": self.on_app_start,
            b"SparkListenerApplicationEnd": self.on_app_end,
            b"SparkListenerEnvironmentUpdate": self.on_environment,
            b"SparkListenerJobStart": self.on_job_start,
            b"SparkListenerJobEnd": self.on_job_end,
            b"SparkListenerStageSubmitted": self.on_stage_submitted,
            b"SparkListenerStageCompleted": self.on_stage_completed,
            b"SparkListenerTaskStart": self.on_task_start,
            b"SparkListenerTaskEnd": self.on_task_end,
            b"SparkListenerExecutorAdded": self.on_executor_added,
            b"SparkListenerExecutorRemoved": self.on_executor_removed,
            b"SparkListenerBlockManagerAdded": self.on_block_manager_added,
            b"SparkListenerStageExecutorMetrics": self.on_stage_executor_metrics,
            b"SparkListenerExecutorMetricsUpdate": self.on_executor_metrics_update,
        }
        self._str_handlers = {k.decode(): v for k, v in self.handlers.items()}

    # -- the loop -------------------------------------------------------------
    def feed(self, lines: Iterator[bytes], first_line: int = 1) -> int:
        """Parse ``lines``; return the number of the last line read."""
        handlers, loads, prefix = self.handlers, _loads, _PREFIX
        task_end = self.on_task_end
        lineno = first_line - 1
        for lineno, line in enumerate(lines, first_line):
            if line.startswith(prefix) and line.endswith(b"\n"):
                handler = handlers.get(line[10:line.find(b'"', 10)])
                if handler is None:
                    self.events += 1
                    continue          # unknown or not needed: not even parsed
            else:
                if not line.strip():
                    continue
                handler = None
            try:
                if handler is task_end:
                    try:
                        event = loads(_without_accumulables(line))
                    except JSONError:
                        event = loads(line)
                else:
                    event = loads(line)
            except JSONError:
                self.bad_line(lineno, line)
                continue
            if not isinstance(event, dict) or "Event" not in event:
                self.bad_line(lineno, line)
                continue
            self.events += 1
            if handler is None:
                handler = self._str_handlers.get(event["Event"])
                if handler is None:
                    continue
            try:
                handler(event)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                self.bad_line(lineno, line, f"{type(exc).__name__}: {exc}")
        return lineno

    def bad_line(self, lineno: int, line: bytes, why: str = "") -> None:
        self.bad_lines.append(lineno)
        if len(self.bad_lines) <= MAX_LINE_WARNINGS:
            what = "is not a complete JSON event" if not why else f"has an unexpected shape ({why})"
            tail = "" if line.endswith(b"\n") else " (the log ends there: truncated)"
            self.warnings.append(f"line {lineno} {what}; skipped{tail}")

    def _s(self, value: Any) -> str:
        text = "" if value is None else str(value)
        return self._intern.setdefault(text, text)

    # -- application ----------------------------------------------------------
    def on_log_start(self, e: dict) -> None:
        self.app["spark_version"] = e.get("Spark Version", "")

    def on_app_start(self, e: dict) -> None:
        self.app.update(app_id=e.get("App ID", ""), app_name=e.get("App Name", ""),
                        attempt_id=e.get("App Attempt ID"), start_ms=float(e.get("Timestamp", 0)),
                        user=e.get("User", ""))

    def on_app_end(self, e: dict) -> None:
        self.app["end_ms"] = float(e.get("Timestamp", 0))

    def on_environment(self, e: dict) -> None:
        props = dict(e.get("Spark Properties") or [])
        self.app["master"] = props.get("spark.master", "")
        self.app["properties"] = {k: v for k, v in props.items() if k in (
            "spark.executor.memory", "spark.driver.memory", "spark.executor.cores",
            "spark.eventLog.compression.codec", "spark.submit.deployMode")}

    # -- jobs and stages -----------------------------------------------------
    def _stage(self, info: dict) -> dict[str, Any]:
        key = (int(info["Stage ID"]), int(info.get("Stage Attempt ID", 0)))
        st = self.stages.get(key)
        if st is None:
            st = self.stages[key] = {
                "stage_id": key[0], "attempt": key[1], "status": "PENDING",
                "submission_ms": np.nan, "first_task_launched_ms": np.nan,
                "completion_ms": np.nan, "description": "", "failure_reason": ""}
        st["name"] = info.get("Stage Name", "")
        st["num_tasks"] = int(info.get("Number of Tasks", 0))
        st["parent_ids"] = [int(p) for p in info.get("Parent IDs", []) or []]
        st["details"] = (info.get("Details") or "").split("\n", 1)[0]
        return st

    def on_job_start(self, e: dict) -> None:
        props = e.get("Properties") or {}
        infos = e.get("Stage Infos") or []
        job_id = int(e["Job ID"])
        last = max(infos, key=lambda s: s.get("Stage ID", -1)) if infos else {}
        sql = props.get("spark.sql.execution.id")
        tags = props.get("spark.job.tags") or ""
        sub = e.get("Submission Time")
        self.jobs[job_id] = {
            "job_id": job_id, "name": last.get("Stage Name", ""),
            "description": props.get("spark.job.description", "") or "",
            "status": "RUNNING",
            "submission_ms": float(sub) if sub and sub > 0 else np.nan,
            "completion_ms": np.nan,
            "stage_ids": [int(s) for s in e.get("Stage IDs", [])],
            # as Spark's AppStatusListener: tasks of the stages not yet completed at job start
            "num_tasks": int(sum(s.get("Number of Tasks", 0) for s in infos
                                 if s.get("Completion Time") is None)),
            "num_failed_tasks": 0, "num_killed_tasks": 0,
            "job_group": props.get("spark.jobGroup.id", "") or "",
            "job_tags": sorted(t for t in tags.split(",") if t),
            "sql_execution_id": int(sql) if sql not in (None, "") else None,
        }
        for info in infos:
            self._stage(info)
            self.stage_jobs.setdefault(int(info["Stage ID"]), []).append(job_id)
        if sub:
            self.last_time = max(self.last_time, float(sub))

    def on_job_end(self, e: dict) -> None:
        job = self.jobs.get(int(e["Job ID"]))
        if job is None:
            return
        result = (e.get("Job Result") or {}).get("Result", "")
        job["status"] = "SUCCEEDED" if result == "JobSucceeded" else "FAILED"
        comp = e.get("Completion Time")
        job["completion_ms"] = float(comp) if comp and comp > 0 else np.nan
        if comp:
            self.last_time = max(self.last_time, float(comp))
        for st in self.stages.values():   # stages of the job that never ran were skipped
            if st["stage_id"] in job["stage_ids"] and st["status"] == "PENDING":
                st["status"] = "SKIPPED"

    def on_stage_submitted(self, e: dict) -> None:
        info = e["Stage Info"]
        st = self._stage(info)
        st["status"] = "ACTIVE"
        sub = info.get("Submission Time")
        st["submission_ms"] = float(sub) if sub else np.nan
        props = e.get("Properties") or {}
        st["description"] = props.get("spark.job.description", "") or ""

    def on_stage_completed(self, e: dict) -> None:
        info = e["Stage Info"]
        st = self._stage(info)
        failure = info.get("Failure Reason")
        st["failure_reason"] = failure or ""
        st["status"] = ("FAILED" if failure else
                        "COMPLETE" if info.get("Submission Time") is not None else "SKIPPED")
        sub, comp = info.get("Submission Time"), info.get("Completion Time")
        if sub:
            st["submission_ms"] = float(sub)
        st["completion_ms"] = float(comp) if comp else np.nan
        if comp:
            self.last_time = max(self.last_time, float(comp))

    # -- tasks -----------------------------------------------------------------
    def on_task_start(self, e: dict) -> None:
        info = e["Task Info"]
        key = (int(e["Stage ID"]), int(e.get("Stage Attempt ID", 0)))
        self.running[int(info["Task ID"])] = (key[0], key[1], info)
        launch = float(info.get("Launch Time", 0) or 0)
        if launch > self.last_time:
            self.last_time = launch
        st = self.stages.get(key)
        if st is not None:
            first = st["first_task_launched_ms"]
            if not first <= launch:      # NaN or later
                st["first_task_launched_ms"] = launch

    def on_task_end(self, e: dict) -> None:
        info = e["Task Info"]
        reason = e.get("Task End Reason") or {}
        kind = reason.get("Reason", "Success")
        task_id = int(info["Task ID"])
        if kind == "Resubmitted" and task_id not in self.running:
            return   # a finished map task re-run after its executor was lost: Spark keeps the first
        self.running.pop(task_id, None)
        self._add_task(int(e["Stage ID"]), int(e.get("Stage Attempt ID", 0)), info,
                       e.get("Task Metrics"), reason)
        finish = info.get("Finish Time") or 0
        if finish > self.last_time:
            self.last_time = float(finish)
        failed = kind != "Success" and kind not in _KILLED_REASONS
        killed = kind in _KILLED_REASONS
        if failed or killed:
            for job_id in self.stage_jobs.get(int(e["Stage ID"]), ()):
                job = self.jobs.get(job_id)
                if job is not None:
                    job["num_failed_tasks" if failed else "num_killed_tasks"] += 1

    def _add_task(self, stage_id: int, stage_attempt: int, info: dict,
                  metrics: dict | None, reason: dict | None) -> None:
        self._append_info(stage_id, stage_attempt, info)
        get = info.get
        self.executor_col.append(self._s(get("Executor ID")))
        self.host_col.append(self._s(get("Host")))
        self.locality_col.append(self._s(get("Locality")))
        self.speculative_col.append(1 if get("Speculative") else 0)
        if reason is None:
            status = "RUNNING"
        elif get("Failed"):
            status = "FAILED"
        elif get("Killed"):
            status = "KILLED"
        elif get("Finish Time"):
            status = "SUCCESS"
        else:
            status = "UNKNOWN"
        self.status_col.append(status)
        self.error_col.append(self._s(_error_of(reason)) if reason and status != "SUCCESS" else "")
        self._append_metrics(metrics or _EMPTY)

    # -- executors ---------------------------------------------------------------
    def _executor(self, executor_id: str, time_ms: float) -> dict[str, Any]:
        ex = self.executors.get(executor_id)
        if ex is None:
            ex = self.executors[executor_id] = {
                "executor_id": executor_id, "host": "", "total_cores": 0,
                "max_memory_bytes": 0, "add_ms": time_ms, "remove_ms": np.nan,
                "is_active": True, "remove_reason": ""}
        return ex

    def on_executor_added(self, e: dict) -> None:
        info = e.get("Executor Info") or {}
        ex = self._executor(str(e["Executor ID"]), float(e.get("Timestamp", 0)))
        ex["host"] = info.get("Host", ex["host"])
        ex["total_cores"] = int(info.get("Total Cores", 0))
        ex["is_active"] = True

    def on_executor_removed(self, e: dict) -> None:
        ex = self.executors.get(str(e["Executor ID"]))
        if ex is not None:
            ex["is_active"] = False
            ex["remove_ms"] = float(e.get("Timestamp", 0))
            ex["remove_reason"] = e.get("Removed Reason", "")

    def on_block_manager_added(self, e: dict) -> None:
        bm = e.get("Block Manager ID") or {}
        ex = self._executor(str(bm.get("Executor ID", "")), float(e.get("Timestamp", 0)))
        if not ex["host"]:
            ex["host"] = bm.get("Host", "")
        ex["max_memory_bytes"] = int(e.get("Maximum Memory", 0))
        ex["is_active"] = True

    def on_stage_executor_metrics(self, e: dict) -> None:
        self._peaks(str(e.get("Executor ID", "")), e.get("Executor Metrics") or {})

    def on_executor_metrics_update(self, e: dict) -> None:
        # logged for the driver only (spark.eventLog.logStageExecutorMetrics); the History
        # Server folds these peaks in too
        for update in e.get("Executor Metrics Updated") or []:
            self._peaks(str(e.get("Executor ID", "")), update.get("Executor Metrics") or {})

    def _peaks(self, executor_id: str, metrics: dict) -> None:
        ex = self.executors.get(executor_id)
        if ex is None:
            return
        for field, column in _PEAK_FIELDS.items():
            v = metrics.get(field)
            if v is not None and (ex.get(column) is None or v > ex[column]):
                ex[column] = int(v)

    # -- the Run -----------------------------------------------------------------
    def tasks(self) -> pd.DataFrame:
        for task_id, (stage_id, attempt, info) in sorted(self.running.items()):
            self._add_task(stage_id, attempt, info, None, None)
        self.running.clear()
        n = len(self.status_col)
        raw = {name: np.frombuffer(arr, dtype="float64") if len(arr) else np.zeros(0)
               for name, arr in self.num.items()}
        frame = pd.DataFrame({k: v for k, v in raw.items()
                              if k not in ("getting_result_start", "has_metrics")})
        frame["Task Info.Executor ID"] = self.executor_col
        frame["Task Info.Host"] = self.host_col
        frame["Task Info.Locality"] = self.locality_col
        frame["Task Info.Speculative"] = np.frombuffer(self.speculative_col, dtype="int8").astype(bool) \
            if n else np.zeros(0, dtype=bool)
        tasks = normalize_tasks(frame, "eventlog")
        del frame
        # Derived times, as Spark's REST API derives them (AppStatusUtils), all in ms already.
        launch = tasks["launch_ms"].to_numpy()
        finish = tasks["finish_ms"].to_numpy()
        duration = np.where(finish > 0, finish - launch, 0.0)
        fetch_start = raw["getting_result_start"]
        getting = np.where((fetch_start > 0) & (finish > 0), launch + duration - fetch_start, 0.0)
        has_metrics = raw["has_metrics"] > 0
        delay = np.maximum(0.0, duration - tasks["run_ms"].to_numpy()
                           - tasks["deserialize_ms"].to_numpy()
                           - tasks["result_serialization_ms"].to_numpy() - getting)
        tasks["duration_ms"] = duration
        tasks["getting_result_ms"] = getting
        tasks["scheduler_delay_ms"] = np.where(has_metrics & (finish > 0), delay, 0.0)
        tasks["status"] = self.status_col
        tasks["error"] = self.error_col
        tasks["shuffle_read_bytes"] = tasks["shuffle_remote_bytes"] + tasks["shuffle_local_bytes"]
        tasks = tasks.sort_values(["stage_id", "stage_attempt", "task_id"], kind="stable")
        return tasks.reset_index(drop=True)

    def build(self, source: str) -> Run:
        app = self.app
        tasks = self.tasks()
        stages = pd.DataFrame(sorted(self.stages.values(),
                                     key=lambda s: (s["stage_id"], s["attempt"])))
        jobs = pd.DataFrame(sorted(self.jobs.values(), key=lambda j: j["job_id"]))
        executors = pd.DataFrame(sorted(self.executors.values(), key=lambda x: x["executor_id"]))
        for column in _PEAK_FIELDS.values():
            if not executors.empty and column not in executors.columns:
                executors[column] = None
        start = float(app.get("start_ms", 0) or 0)
        end = float(app.get("end_ms", 0) or 0)
        if not end:
            end = self.last_time
        extra = {"source": source, "attempt_id": app.get("attempt_id"),
                 "user": app.get("user", ""), "events": self.events,
                 "json_parser": JSON_PARSER, "properties": app.get("properties", {})}
        run = Run(kind="eventlog", label=app.get("app_name", ""), status="ok",
                  start_ms=start, end_ms=end, app_id=app.get("app_id", ""),
                  app_name=app.get("app_name", ""), spark_version=app.get("spark_version", ""),
                  master=app.get("master", ""), collector="eventlog",
                  warnings=list(self.warnings), jobs=jobs, stages=stages, tasks=tasks,
                  executors=executors, extra=extra)
        if run.jobs.empty:
            run.status = "no-jobs"
        return run


def _lines_of(path: str) -> tuple[Iterator[bytes], _Stream | None, Any]:
    codec = codec_of(path)
    _check_codec(codec, path)
    if codec is None:
        fh = open(path, "rb", buffering=_READ)
        return iter(fh), None, fh
    stream = _Stream(path, codec)
    reader = io.BufferedReader(_ChunkReader(stream.chunks()), buffer_size=_READ)
    return iter(reader), stream, reader


def load_eventlog(path: str | os.PathLike) -> Run:
    """A whole past application from its Spark event log -> ``Run`` (kind ``eventlog``).

    ``path``: an event-log file (plain, ``.zstd``/``.zst``, ``.lz4``, ``.snappy``, ``.lzf``,
    optionally ``.inprogress``) or a rolled-log directory (``eventlog_v2_*``).
    Raises :class:`EventLogError` (one line, with the next step) when it cannot be read.
    """
    path = os.path.abspath(os.path.expanduser(os.fspath(path)))
    files, warnings = log_files(path)
    parser = _Parser()
    parser.warnings.extend(warnings)
    line = 0
    total_bytes = 0
    for file in files:
        if os.path.basename(file).startswith("appstatus_"):
            continue
        try:
            size = os.path.getsize(file)
        except OSError as exc:
            raise EventLogError(f"cannot read {file}: {exc.strerror or exc}; check permissions") \
                from None
        total_bytes += size
        try:
            lines, stream, handle = _lines_of(file)
        except OSError as exc:
            raise EventLogError(f"cannot read {file}: {exc.strerror or exc}; check permissions") \
                from None
        try:
            first = line + 1
            line = parser.feed(lines, first)
        except OSError as exc:
            raise EventLogError(f"cannot read {file}: {exc.strerror or exc}; check the file") \
                from None
        finally:
            handle.close()
        if stream is not None and stream.error:
            parser.warnings.append(f"{stream.error}: events after line {line} are lost "
                                   "(truncated or corrupt file); the report covers what came before")
    if total_bytes == 0:
        raise EventLogError(f"{path} is empty: Spark had not written any event yet; wait for the "
                            "application to start or pick another log")
    if not parser.events:
        raise EventLogError(f"{path} holds no Spark events (not a Spark event log?); expected JSON "
                            "lines like {\"Event\":\"SparkListenerLogStart\",...}")
    if len(parser.bad_lines) > MAX_LINE_WARNINGS:
        parser.warnings.append(f"{len(parser.bad_lines)} lines could not be read in all "
                               f"(first: {parser.bad_lines[:MAX_LINE_WARNINGS]})")
    in_progress = any(f.endswith(INPROGRESS) for f in files) or (os.path.isdir(path) and any(
        n.startswith("appstatus_") and n.endswith(INPROGRESS) for n in os.listdir(path)))
    if "app_id" not in parser.app:
        parser.warnings.append("no SparkListenerApplicationStart event: app id and start time "
                               "unknown (is this the beginning of the log?)")
    if "end_ms" not in parser.app:
        running = len(parser.running)
        what = "in progress (.inprogress)" if in_progress else \
            "has no SparkListenerApplicationEnd (truncated, or the driver died)"
        parser.warnings.append(f"the log is {what}: end time taken from the last event"
                               + (f"; {running} task attempts still running are included as "
                                  "RUNNING" if running else ""))
    run = parser.build(path)
    run.extra["in_progress"] = in_progress
    run.extra["log_bytes"] = total_bytes
    run.extra["files"] = [os.path.basename(f) for f in files]
    return run
