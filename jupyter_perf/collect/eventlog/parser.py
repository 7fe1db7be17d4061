"""Spark listener events (JSON lines) -> the raw tables of one application.

:class:`Parser` is fed the lines of a log in order and keeps, per event type it needs, what
Spark's own status listeners keep: the application, jobs, stage attempts, executors with
their memory peaks, and every task attempt. Events it does not need are recognised from
their first bytes and never parsed. Each event is taken whole or not at all: a handler reads
and checks everything first and changes the parser's state only when the event is good; a
malformed event is skipped and its line named.

Task attempts are accumulated as rows of numbers in one typed array (8 bytes a value, see
``benchmarks/eventlog_scale.py``), read from each TaskEnd by one generated reader built from
the model's field map (:data:`jupyter_perf.collect.eventlog.fields.EVENTLOG_TASK_FIELDS`). Units and Spark's
field names are left as they are: collect/fields.py converts them.
"""
from __future__ import annotations

import json
from array import array
from typing import Any, Callable, Iterator

import numpy as np
import orjson
import pandas as pd

from ...model import Run, is_plain_index
from ..fields import KEPT_PROPERTIES, PEAK_MEMORY_FIELDS, sorted_stage_memory
from .fields import EVENTLOG_TASK_FIELDS, conform_eventlog
from .sql import SQL_PREFIX as SQL
from .sql import SqlListener, sql_updates

NAMED_SKIPS = 3            # skipped lines named in the warning (all are in run.extra)
KEPT_SKIPS = 1_000         # skipped lines listed in run.extra["skipped_lines"]
_PREFIX = b'{"Event":"'
_KILLED_REASONS = ("TaskKilled", "TaskCommitDenied")
_EMPTY: dict = {}
_NUMBER = (int, float)


class BadEvent(ValueError):
    """An event of a known type with a field of the wrong type or shape."""


# what a handler raises on a malformed event (the line is skipped and named)
HANDLER_ERRORS = (BadEvent, KeyError, IndexError, TypeError, ValueError, AttributeError,
                  OverflowError, RecursionError)


# ---------------------------------------------------------------------------
# One task attempt: a generated reader of its numbers, from the model's field map.
# ---------------------------------------------------------------------------
_STRING_FIELDS = {"Task Info.Executor ID": "executor", "Task Info.Host": "host",
                  "Task Info.Locality": "locality"}
_FLAG_FIELDS = ("Task Info.Speculative",)
# Numbers per task attempt: every numeric field of the field map, then the raw inputs the
# derived times need ("Getting Result Time"), in this order.
NUMERIC_FIELDS = [f for f in EVENTLOG_TASK_FIELDS
                  if f not in _STRING_FIELDS and f not in _FLAG_FIELDS] + [
    "Task Info.Getting Result Time"]
# A TaskStart carries the same numbers but the metrics.
START_FIELDS = [f for f in NUMERIC_FIELDS if not f.startswith("Task Metrics.")]
_REQUIRED = {"Stage ID", "Task Info.Task ID"}
_COLUMN = {f: i for i, f in enumerate(NUMERIC_FIELDS)}
_START_COLUMN = {f: i for i, f in enumerate(START_FIELDS)}
_START_AT = np.array([_COLUMN[f] for f in START_FIELDS])


def compile_reader(paths: list[str]) -> Callable[[dict], tuple]:
    """``read(event) -> tuple``: the value at each dotted path of ``paths`` (None if absent).

    Generated once as straight-line code, each nested object looked up once: ~2.5x faster
    than walking the paths in a loop, which matters at a quarter million TaskEnd events.
    A nested object of the wrong type (a list where Spark writes an object) raises
    AttributeError, which makes the event malformed.
    """
    groups: dict[str, str] = {"": "e"}
    lines: list[str] = []

    def group(prefix: str) -> str:
        if prefix not in groups:
            parent, _, last = prefix.rpartition(".")
            outer = group(parent)
            groups[prefix] = f"g{len(groups)}"
            lines.append(f"    {groups[prefix]} = {outer}.get({last!r}) or E")
        return groups[prefix]

    values = []
    for path in paths:
        parent, _, last = path.rpartition(".")
        values.append(f"{group(parent)}.get({last!r})")
    src = "def read(e):\n" + "".join(line + "\n" for line in lines) + \
        f"    return ({', '.join(values)},)\n"
    namespace: dict[str, Any] = {"E": _EMPTY}
    exec(compile(src, "<eventlog reader>", "exec"), namespace)  # noqa: S102 - fixed source
    return namespace["read"]


_READERS = {"end": (compile_reader(NUMERIC_FIELDS), NUMERIC_FIELDS),
            "start": (compile_reader(START_FIELDS), START_FIELDS)}


def _read_numbers(event: dict, kind: str = "end") -> tuple:
    """The numbers of a TaskEnd (``kind`` "end") or a TaskStart ("start"), as in the event."""
    read, fields = _READERS[kind]
    try:
        return read(event)
    except AttributeError:        # a nested object that is not one: name it
        for path in fields:
            node: Any = event
            parts = path.split(".")
            for depth, key in enumerate(parts[:-1]):
                node = node.get(key) or _EMPTY
                if type(node) is not dict:
                    where = ".".join(parts[:depth + 1])
                    raise BadEvent(f"{where!r} is {type(node).__name__}, expected an object") \
                        from None
        raise


_ID_FIELDS = ("Stage ID", "Stage Attempt ID", "Task Info.Task ID", "Task Info.Index",
              "Task Info.Attempt")
_MAX_ID = 2 ** 53          # ids are whole numbers a double holds exactly


def _numbers(values: tuple, fields: list[str] = NUMERIC_FIELDS) -> array:
    """The event's numbers as a typed row; absent values are 0, required ones must be there,
    ids are whole and not negative."""
    row = _row(values, fields)
    at = _COLUMN if fields is NUMERIC_FIELDS else _START_COLUMN
    for field in _ID_FIELDS:
        v = row[at[field]]
        if not (0 <= v <= _MAX_ID and v == int(v)):
            raise BadEvent(f"{field!r} is {v:g}, expected a whole number >= 0")
    return row


def _row(values: tuple, fields: list[str]) -> array:
    if bool not in set(map(type, values)):
        try:
            return array("d", values)
        except TypeError:
            pass              # None (absent) or a value of the wrong type: look closer
        except OverflowError as exc:
            raise BadEvent(f"a number out of range ({exc})") from None
    row = array("d")
    for field, value in zip(fields, values):
        if value is None:
            if field in _REQUIRED:
                raise BadEvent(f"{field!r} is missing")
            value = 0
        elif type(value) not in _NUMBER:
            raise BadEvent(f"{field!r} is {type(value).__name__}, expected a number")
        try:
            row.append(value)
        except OverflowError as exc:
            raise BadEvent(f"{field!r} out of range ({exc})") from None
    return row


def _text(value: Any, field: str) -> str:
    if value is None:
        return ""
    if type(value) is not str:
        raise BadEvent(f"{field!r} is {type(value).__name__}, expected a string")
    return value


def _obj(value: Any, field: str) -> dict:
    """A nested JSON object (None/absent -> {})."""
    if value is None:
        return _EMPTY
    if type(value) is not dict:
        raise BadEvent(f"{field!r} is {type(value).__name__}, expected an object")
    return value


def _int(value: Any, field: str, default: int | None = None) -> int:
    if value is None and default is not None:
        return default
    if type(value) is not int:
        raise BadEvent(f"{field!r} is {type(value).__name__}, expected an integer")
    return value


def _time(value: Any, field: str) -> float:
    """An epoch-ms timestamp; absent, null, 0 or negative (Spark's -1) -> NaN."""
    if value is None:
        return np.nan
    if type(value) not in _NUMBER:
        raise BadEvent(f"{field!r} is {type(value).__name__}, expected a number")
    return float(value) if value > 0 else np.nan


def _ints(value: Any, field: str) -> list[int]:
    if value is None:
        return []
    if type(value) is not list or any(type(v) is not int for v in value):
        raise BadEvent(f"{field!r} is not a list of integers")
    return list(value)


def _error_of(reason: dict[str, Any]) -> str:
    """Spark's ``TaskEndReason.toErrorString``, roughly: what the REST API shows as errorMessage."""
    kind = reason.get("Reason", "")
    if kind == "Success":
        return ""
    if kind == "ExceptionFailure":
        full = reason.get("Full Stack Trace")
        return str(full or f"{reason.get('Class Name', '')}: {reason.get('Description', '')}")
    if kind == "TaskKilled":
        return str(reason.get("Kill Reason", "") or "killed")
    if kind == "FetchFailed":
        return (f"FetchFailed(shuffle {reason.get('Shuffle ID')}, map {reason.get('Map ID')}, "
                f"reduce {reason.get('Reduce ID')}): {reason.get('Message', '')}")
    if kind == "ExecutorLostFailure":
        return f"ExecutorLostFailure (executor {reason.get('Executor ID')} exited): " \
               f"{reason.get('Loss Reason', '')}"
    return str(kind)


def split_accumulables(line: bytes) -> tuple[bytes, bytes | None]:
    """(the TaskEnd line with its Task Info ``Accumulables`` emptied, the array's items).

    They are half of a SQL task's line and only the SQL metrics among them are needed:
    parsing the line without them is ~4x faster, and :func:`.sql.sql_updates` picks the SQL
    updates out of the items. Spark writes ``"Accumulables":[...]}`` last in Task Info,
    followed by ``,"Task Executor Metrics"`` (3.x) or ``,"Task Metrics"``; if the line does
    not look like that, it is returned whole with None (and a failed parse is retried on
    the whole line).
    """
    i = line.find(b'"Accumulables":[', 100)
    if i < 0:
        return line, None
    j = line.find(b'},"Task ', i)
    if j < 0 or line[j - 1] != 93:            # "]"
        return line, None
    return line[:i] + b'"Accumulables":[]' + line[j:], line[i + 16:j - 1]


def _updates_of(accumulables: Any) -> list[tuple[int, int]]:
    """SQL metric updates of a parsed Accumulables list (the slow path)."""
    if accumulables is None:
        return []
    if type(accumulables) is not list:
        raise BadEvent("'Task Info.Accumulables' is not a list")
    out = []
    for item in accumulables:
        if type(item) is dict and item.get("Metadata") == "sql":
            update = item.get("Update")
            try:
                out.append((int(item["ID"]), int(update)))
            except (KeyError, TypeError, ValueError):
                raise BadEvent(f"SQL accumulable {item.get('ID')!r} has update {update!r}") \
                    from None
    return out


def _plan(info: Any, field: str = "sparkPlanInfo") -> dict:
    """A SparkPlanInfo tree, checked node by node (iteratively: plans can be deep)."""
    stack = [_obj(info, field)]
    root = stack[0]
    while stack:
        node = stack.pop()
        if type(node) is not dict or type(node.get("nodeName")) is not str \
                or type(node.get("simpleString")) is not str \
                or type(node.get("children")) is not list or type(node.get("metrics")) is not list:
            raise BadEvent(f"{field!r} has a node that is not a plan node")
        _metrics(node["metrics"], field)
        stack.extend(node["children"])
    if not root:
        raise BadEvent(f"{field!r} is empty")
    return root


def _metrics(items: Any, field: str) -> list[tuple[int, str]]:
    if type(items) is not list:
        raise BadEvent(f"{field!r} metrics are not a list")
    out = []
    for m in items:
        if type(m) is not dict or type(m.get("name")) is not str \
                or type(m.get("accumulatorId")) is not int or type(m.get("metricType")) is not str:
            raise BadEvent(f"{field!r} has a metric without a name, id and type")
        out.append((m["accumulatorId"], m["metricType"]))
    return out


def lenient_json(line: bytes) -> Any:
    """``line`` read by Python's own JSON reader, or None. orjson refuses a lone UTF-16
    surrogate escape (``"\\ud800"``), which the JVM writes for an application name, job
    description or column name that carries one; Python's reader keeps it in the string (the
    store and every view handle such strings), so the event and its app id are not lost."""
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


_TASK, _STAGE, _ATTEMPT, _INDEX, _FINISH = (_COLUMN[f] for f in (
    "Task Info.Task ID", "Stage ID", "Stage Attempt ID", "Task Info.Index",
    "Task Info.Finish Time"))
_START_TASK, _START_STAGE, _START_ATTEMPT, _START_INDEX, _START_LAUNCH = (
    _START_COLUMN[f] for f in ("Task Info.Task ID", "Stage ID", "Stage Attempt ID",
                               "Task Info.Index", "Task Info.Launch Time"))
_LAZY = "lazy"                 # a record's SQL updates: read when its stage is known to be SQL
_BAD_ACCUMULABLES = "'Task Info.Accumulables' is not a JSON array"


def _strings(info: dict) -> tuple[str, str, str, bool]:
    spec = info.get("Speculative")
    if spec is not None and type(spec) is not bool:
        raise BadEvent(f"'Task Info.Speculative' is {type(spec).__name__}, expected true or "
                       "false")
    return (_text(info.get("Executor ID"), "Task Info.Executor ID"),
            _text(info.get("Host"), "Task Info.Host"),
            _text(info.get("Locality"), "Task Info.Locality"), bool(spec))


def _status(info: dict, reason: dict | None) -> tuple[str, str]:
    if reason is None:
        return "RUNNING", ""
    get = info.get
    return status_of(get("Failed"), get("Killed"), get("Finish Time"), reason)


def status_of(failed: Any, killed: Any, finish: Any, reason: dict) -> tuple[str, str]:
    """An ended task attempt's (status, error) from its Task Info's Failed, Killed and Finish
    Time and its end reason."""
    status = ("FAILED" if failed else "KILLED" if killed else
              "SUCCESS" if finish else "UNKNOWN")
    return status, (_error_of(reason) if status != "SUCCESS" else "")


def task_start_record(e: dict) -> tuple[array, tuple[str, str, str, bool]]:
    """A TaskStart, read and checked: (its numbers, its strings). Needs no parser state."""
    row = _numbers(_read_numbers(e, "start"), START_FIELDS)
    return row, _strings(_obj(e.get("Task Info"), "Task Info"))


def task_end_record(e: dict, accumulables: bytes | None) -> tuple[array, tuple]:
    """A TaskEnd, read and checked: (its numbers, (strings, has metrics, status, error,
    end reason, SQL updates (``_LAZY``: not read yet), raw accumulables, Task Info)).
    ``accumulables``: the raw items :func:`split_accumulables` cut out, or None. Needs no
    parser state."""
    info = _obj(e.get("Task Info"), "Task Info")
    reason = _obj(e.get("Task End Reason"), "Task End Reason")
    metrics = e.get("Task Metrics")
    _obj(metrics, "Task Metrics")
    kind = reason.get("Reason", "Success")
    row = _numbers(_read_numbers(e))
    strings = _strings(info)
    status, error = _status(info, reason)
    return row, (strings, bool(metrics), status, error, kind, _LAZY, accumulables, info)


def task_updates(accumulables: bytes | None, info: dict | None) -> list[tuple[int, int]]:
    """A TaskEnd's SQL metric updates, from the raw accumulables if they were cut out, else
    from its parsed Task Info."""
    try:
        return sql_updates(accumulables) if accumulables is not None else \
            _updates_of((info or _EMPTY).get("Accumulables"))
    except (orjson.JSONDecodeError, ValueError):
        raise BadEvent(_BAD_ACCUMULABLES) from None


class Parser:
    """Event handlers that accumulate a whole application; :meth:`build` makes the ``Run``."""

    def __init__(self, typed: Any = None) -> None:
        # ``typed``: a reader of task lines straight into records (``typed.py``), or None
        self.typed = typed
        self.warnings: list[str] = []
        self.sql = SqlListener()
        self._accumulables: bytes | None = None     # of the TaskEnd being handled
        self.app: dict[str, Any] = {}
        self.jobs: dict[int, dict[str, Any]] = {}
        self.stages: dict[tuple[int, int], dict[str, Any]] = {}
        self.stage_jobs: dict[int, list[int]] = {}
        self.executors: dict[str, dict[str, Any]] = {}
        # (stage id, attempt, executor id) -> its peaks while the stage attempt ran, by
        # Spark's field names (SparkListenerStageExecutorMetrics)
        self.stage_peaks: dict[tuple[int, int, str], dict[str, int]] = {}
        self.running: dict[int, tuple[array, tuple]] = {}   # task id -> its TaskStart, read
        self.skipped: list[tuple[int, str]] = []    # (line, why), the first KEPT_SKIPS
        self.skipped_count = 0
        self.events = 0
        self.first_time = np.inf       # of jobs, stages and tasks, epoch ms
        self.last_time = 0.0
        # task attempts: rows of len(NUMERIC_FIELDS) numbers; their strings (executor, host,
        # locality, status, error) as a code into the table of the distinct ones (a log has
        # few: the columns are taken from it at once, not converted from 250k strings each)
        self.numbers = array("d")
        self.has_metrics = array("b")
        self.speculative = array("b")
        self.text_codes = array("q")
        self.texts: list[tuple[str, str, str, str, str]] = []
        self._text_code: dict[tuple[str, str, str, str, str], int] = {}
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
            (SQL + "SparkListenerSQLExecutionStart").encode(): self.on_sql_start,
            (SQL + "SparkListenerSQLAdaptiveExecutionUpdate").encode(): self.on_sql_plan_update,
            (SQL + "SparkListenerSQLAdaptiveSQLMetricUpdates").encode(): self.on_sql_metrics,
            (SQL + "SparkListenerDriverAccumUpdates").encode(): self.on_sql_driver_updates,
            (SQL + "SparkListenerSQLExecutionEnd").encode(): self.on_sql_end,
        }
        self._str_handlers = {k.decode(): v for k, v in self.handlers.items()}

    # -- the loop -------------------------------------------------------------
    def feed(self, lines: Iterator[bytes], first_line: int = 1) -> int:
        """Parse ``lines``; return the number of the last line read."""
        handlers, loads, prefix = self.handlers, orjson.loads, _PREFIX
        task_end = handlers[b"SparkListenerTaskEnd"]     # the same bound method object
        task_start = handlers[b"SparkListenerTaskStart"]
        typed = self.typed is not None
        lineno = first_line - 1
        for lineno, line in enumerate(lines, first_line):
            if line.startswith(prefix) and line.endswith(b"\n"):
                handler = handlers.get(line[10:line.find(b'"', 10)])
                if handler is None:
                    self.events += 1
                    continue          # unknown or not needed: not even parsed
                if typed and (handler is task_end or handler is task_start) and \
                        self._typed_task(line, handler is task_end, lineno):
                    continue
            else:
                if not line.strip():
                    continue
                handler = None
            try:
                if handler is task_end:
                    stripped, self._accumulables = split_accumulables(line)
                    try:
                        event = loads(stripped)
                    except orjson.JSONDecodeError:
                        self._accumulables = None
                        event = loads(line)
                else:
                    event = loads(line)
            except orjson.JSONDecodeError as exc:
                event = lenient_json(line)
                if event is None:
                    self.skip(lineno, f"not valid JSON: {exc.msg}" if line.endswith(b"\n")
                              else "cut off where the log ends: truncated")
                    continue
            if type(event) is not dict or type(event.get("Event")) is not str:
                self.skip(lineno, "JSON but not a Spark event (no \"Event\" name)")
                continue
            self.events += 1
            if handler is None:
                handler = self._str_handlers.get(event["Event"])
                if handler is None:
                    continue
            try:
                handler(event)
            except HANDLER_ERRORS as exc:
                self.fail(lineno, event["Event"], exc)
        return lineno

    def _typed_task(self, line: bytes, end: bool, lineno: int) -> bool:
        """A TaskEnd (``end``) or TaskStart line read by the typed reader and handled; False
        when the typed reader declines it (the line is then read as any other)."""
        try:
            if end:
                stripped, accumulables = split_accumulables(line)
                if accumulables is None:
                    return False
                row, fields = self.typed.task_end_record(stripped)
            else:
                row, strings = self.typed.task_start_record(line)
        except Exception:   # noqa: BLE001 - declined: the usual reading names any cause
            return False
        self.events += 1
        try:
            if end:
                self._task_end(row, fields + (_LAZY, accumulables, None))
            else:
                self._task_start(row, strings)
        except HANDLER_ERRORS as exc:
            self.fail(lineno, "SparkListenerTaskEnd" if end else "SparkListenerTaskStart", exc)
        return True

    def fail(self, lineno: int, event: str, exc: Exception) -> None:
        """The event on line ``lineno`` is malformed: skipped, and why."""
        why = str(exc) if isinstance(exc, BadEvent) else f"{type(exc).__name__}: {exc}"
        self.skip(lineno, f"{event.removeprefix('SparkListener')} {why}")

    def skip(self, lineno: int, why: str) -> None:
        """A line not taken: named in :meth:`skipped_warning` and ``run.extra``."""
        self.skipped_count += 1
        if len(self.skipped) < KEPT_SKIPS:
            self.skipped.append((lineno, why if len(why) <= 120 else why[:119] + "…"))

    def skipped_warning(self) -> str | None:
        """One line: how many lines were skipped, the first few named with the reason."""
        if not self.skipped_count:
            return None
        named = ", ".join(f"line {n} ({why})" for n, why in self.skipped[:NAMED_SKIPS])
        if self.skipped_count == 1:
            return f"skipped {named}; the rest of the log was read"
        more = self.skipped_count - min(NAMED_SKIPS, len(self.skipped))
        return (f"skipped {self.skipped_count} lines: {named}"
                + (f" and {more} more (all listed in run.extra['skipped_lines'])" if more else "")
                + "; the rest of the log was read")

    def _seen(self, time_ms: float) -> None:
        if time_ms > self.last_time:
            self.last_time = time_ms
        if 0 < time_ms < self.first_time:
            self.first_time = time_ms

    # -- application ----------------------------------------------------------
    def on_log_start(self, e: dict) -> None:
        self.app["spark_version"] = _text(e.get("Spark Version"), "Spark Version")

    def on_app_start(self, e: dict) -> None:
        fields = dict(app_id=_text(e.get("App ID"), "App ID"),
                      app_name=_text(e.get("App Name"), "App Name"),
                      attempt_id=e.get("App Attempt ID"),
                      start_ms=float(_time(e.get("Timestamp"), "Timestamp")),
                      user=_text(e.get("User"), "User"))
        self.app.update(fields)

    def on_app_end(self, e: dict) -> None:
        self.app["end_ms"] = _time(e.get("Timestamp"), "Timestamp")

    def on_environment(self, e: dict) -> None:
        pairs = e.get("Spark Properties") or []
        if type(pairs) is dict:
            pairs = list(pairs.items())
        props = {str(k): v for k, v in pairs}
        master = props.get("spark.master", "")
        kept = {k: v for k, v in props.items() if k in KEPT_PROPERTIES or k in (
            "spark.eventLog.compression.codec", "spark.submit.deployMode")}
        self.app["master"] = master if type(master) is str else ""
        self.app["properties"] = kept

    # -- jobs and stages -----------------------------------------------------
    # Records keep the events' field names (the model maps them); statuses and counts are
    # derived here from the order of events, as Spark's AppStatusListener derives them.
    @staticmethod
    def _stage_fields(info: Any) -> tuple[tuple[int, int], dict[str, Any]]:
        """The stage attempt a ``Stage Info`` object describes, checked, not yet stored."""
        info = _obj(info, "Stage Info")
        key = (_int(info.get("Stage ID"), "Stage ID"),
               _int(info.get("Stage Attempt ID"), "Stage Attempt ID", 0))
        details = _text(info.get("Details"), "Details")
        return key, {"Stage ID": key[0], "Stage Attempt ID": key[1],
                     "Stage Name": _text(info.get("Stage Name"), "Stage Name"),
                     "Number of Tasks": _int(info.get("Number of Tasks"), "Number of Tasks", 0),
                     "Parent IDs": _ints(info.get("Parent IDs"), "Parent IDs"),
                     "Details": details.split("\n", 1)[0]}

    def _stage(self, key: tuple[int, int], fields: dict[str, Any]) -> dict[str, Any]:
        st = self.stages.get(key)
        if st is None:
            st = self.stages[key] = {"status": "PENDING", "first_task_launched_ms": np.nan}
        st.update(fields)
        return st

    def on_job_start(self, e: dict) -> None:
        props = _obj(e.get("Properties"), "Properties")
        infos = e.get("Stage Infos") or []
        if type(infos) is not list:
            raise BadEvent("'Stage Infos' is not a list")
        job_id = _int(e.get("Job ID"), "Job ID")
        stages = [self._stage_fields(info) for info in infos]
        pending = [_obj(info, "Stage Info").get("Completion Time") is None for info in infos]
        last = max(stages, key=lambda s: s[0][0])[1] if stages else {}
        sql = props.get("spark.sql.execution.id")
        tags = _text(props.get("spark.job.tags"), "spark.job.tags")
        sub = _time(e.get("Submission Time"), "Submission Time")
        job = {
            "Job ID": job_id, "Submission Time": sub,
            "Stage IDs": _ints(e.get("Stage IDs"), "Stage IDs"),
            "Properties.spark.job.description": _text(props.get("spark.job.description"),
                                                      "spark.job.description"),
            "Properties.spark.jobGroup.id": _text(props.get("spark.jobGroup.id"),
                                                  "spark.jobGroup.id"),
            "name": last.get("Stage Name", ""), "status": "RUNNING",
            # as Spark's AppStatusListener: tasks of the stages not yet completed at job start
            "num_tasks": int(sum(f["Number of Tasks"] for (_, f), p in zip(stages, pending) if p)),
            "num_failed_tasks": 0, "num_killed_tasks": 0,
            "job_tags": sorted(t for t in tags.split(",") if t),
            "sql_execution_id": int(sql) if sql not in (None, "") else None,
        }
        self.jobs[job_id] = job
        for key, fields in stages:
            self._stage(key, fields)
            self.stage_jobs.setdefault(key[0], []).append(job_id)
        self._seen(sub)
        if job["sql_execution_id"] is not None:
            self.sql.job_start(job_id, job["sql_execution_id"],
                               [(key[0], f["Number of Tasks"]) for key, f in stages],
                               job["Stage IDs"])

    def on_job_end(self, e: dict) -> None:
        job_id = _int(e.get("Job ID"), "Job ID")
        job = self.jobs.get(job_id)
        result = _obj(e.get("Job Result"), "Job Result").get("Result", "")
        comp = _time(e.get("Completion Time"), "Completion Time")
        self.sql.job_end(job_id, result == "JobSucceeded")
        if job is None:
            return
        job["status"] = "SUCCEEDED" if result == "JobSucceeded" else "FAILED"
        job["Completion Time"] = comp
        self._seen(comp)
        for st in self.stages.values():   # stages of the job that never ran were skipped
            if st["Stage ID"] in job["Stage IDs"] and st["status"] == "PENDING":
                st["status"] = "SKIPPED"

    def on_stage_submitted(self, e: dict) -> None:
        info = _obj(e.get("Stage Info"), "Stage Info")
        key, fields = self._stage_fields(info)
        fields["Submission Time"] = _time(info.get("Submission Time"), "Submission Time")
        fields["Properties.spark.job.description"] = _text(
            _obj(e.get("Properties"), "Properties").get("spark.job.description"),
            "spark.job.description")
        self._stage(key, fields)["status"] = "ACTIVE"
        self.sql.stage_submitted(*key)

    def on_stage_completed(self, e: dict) -> None:
        info = _obj(e.get("Stage Info"), "Stage Info")
        key, fields = self._stage_fields(info)
        failure = _text(info.get("Failure Reason"), "Failure Reason")
        sub = _time(info.get("Submission Time"), "Submission Time")
        fields["Completion Time"] = _time(info.get("Completion Time"), "Completion Time")
        fields["Failure Reason"] = failure
        if sub == sub:
            fields["Submission Time"] = sub
        self._stage(key, fields)["status"] = (
            "FAILED" if failure else
            "COMPLETE" if info.get("Submission Time") is not None else "SKIPPED")
        self._seen(fields["Completion Time"])

    # -- SQL executions (org.apache.spark.sql.execution.ui events) -------------------
    def on_sql_start(self, e: dict) -> None:
        execution_id = _int(e.get("executionId"), "executionId")
        self.sql.execution_start(
            execution_id, _int(e.get("rootExecutionId"), "rootExecutionId", -1),
            _text(e.get("description"), "description"), _text(e.get("details"), "details"),
            _text(e.get("physicalPlanDescription"), "physicalPlanDescription"),
            _plan(e.get("sparkPlanInfo")), _time(e.get("time"), "time"))

    def on_sql_plan_update(self, e: dict) -> None:
        self.sql.adaptive_update(
            _int(e.get("executionId"), "executionId"),
            _text(e.get("physicalPlanDescription"), "physicalPlanDescription"),
            _plan(e.get("sparkPlanInfo")))

    def on_sql_metrics(self, e: dict) -> None:
        self.sql.metric_updates(_int(e.get("executionId"), "executionId"),
                                _metrics(e.get("sqlPlanMetrics"), "sqlPlanMetrics"))

    def on_sql_driver_updates(self, e: dict) -> None:
        pairs = e.get("accumUpdates") or []
        if type(pairs) is not list or any(
                type(p) is not list or len(p) != 2 or type(p[0]) is not int
                or type(p[1]) is not int for p in pairs):
            raise BadEvent("'accumUpdates' is not a list of [id, value] pairs")
        self.sql.driver_updates(_int(e.get("executionId"), "executionId"),
                                [(p[0], p[1]) for p in pairs])

    def on_sql_end(self, e: dict) -> None:
        self.sql.execution_end(_int(e.get("executionId"), "executionId"),
                               _time(e.get("time"), "time"),
                               _text(e.get("errorMessage"), "errorMessage"))

    # -- tasks -----------------------------------------------------------------
    # Each task event is read in two steps: ``task_start_record`` / ``task_end_record`` read
    # and check the event and need no state (a worker process can run them, see
    # :mod:`.parallel`); ``_task_start`` / ``_task_end`` fold the record into the parser.
    def on_task_start(self, e: dict) -> None:
        row, strings = task_start_record(e)
        self._task_start(row, strings)

    def _task_start(self, row: array, strings: tuple[str, str, str, bool]) -> None:
        launch = row[_START_LAUNCH]
        task_id = int(row[_START_TASK])
        self.running[task_id] = (row, strings)
        self._seen(launch)
        key = (int(row[_START_STAGE]), int(row[_START_ATTEMPT]))
        if key[0] in self.sql.sql_stages:
            self.sql.task_start(key[0], key[1], task_id, int(row[_START_INDEX]))
        st = self.stages.get(key)
        if st is not None and not st["first_task_launched_ms"] <= launch:   # NaN or later
            st["first_task_launched_ms"] = launch

    def on_task_end(self, e: dict) -> None:
        row, record = task_end_record(e, self._accumulables)
        self._task_end(row, record)

    def _task_end(self, row: array, record: tuple) -> None:
        strings, has_metrics, status, error, kind, updates, raw, info = record
        task_id = int(row[_TASK])
        stage_id = int(row[_STAGE])
        if stage_id in self.sql.sql_stages:
            if updates is _LAZY:
                updates = task_updates(raw, info)
            elif updates is None:                  # found bad by a worker
                raise BadEvent(_BAD_ACCUMULABLES)
            self.sql.task_end(stage_id, int(row[_ATTEMPT]), task_id, int(row[_INDEX]),
                              status == "SUCCESS", updates)
        if kind == "Resubmitted" and task_id not in self.running:
            return   # a finished map task re-run after its executor was lost: Spark keeps the first
        self.running.pop(task_id, None)
        self._add_task(row, strings, has_metrics, status, error)
        self._seen(row[_FINISH])
        if kind != "Success":
            self._count_on_jobs(stage_id, kind)

    def _count_on_jobs(self, stage_id: int, kind: Any) -> None:
        """A task attempt of ``stage_id`` that ended with reason ``kind`` (not "Success"):
        counted as failed or killed on the stage's jobs."""
        failed = kind not in _KILLED_REASONS
        for job_id in self.stage_jobs.get(stage_id, ()):
            job = self.jobs.get(job_id)
            if job is not None:
                job["num_failed_tasks" if failed else "num_killed_tasks"] += 1

    def _add_task(self, row: array, strings: tuple[str, str, str, bool], has_metrics: bool,
                  status: str, error: str) -> None:
        """Append one checked task attempt (nothing here can fail half-way)."""
        executor, host, locality, speculative = strings
        code = self.text_code((executor, host, locality, status, error))
        self.numbers.extend(row)
        self.has_metrics.append(has_metrics)
        self.speculative.append(speculative)
        self.text_codes.append(code)

    def text_code(self, texts: tuple[str, str, str, str, str]) -> int:
        """The code of a task attempt's (executor, host, locality, status, error)."""
        code = self._text_code.get(texts)
        if code is None:
            code = self._text_code[texts] = len(self.texts)
            self.texts.append(texts)
        return code

    # -- executors ---------------------------------------------------------------
    def _executor(self, e: dict, ids: dict, host: Any, **fields: Any) -> None:
        """Add or update the executor ``ids["Executor ID"]`` (first seen at the event's time)."""
        executor_id = _text(ids.get("Executor ID"), "Executor ID")
        host = _text(host, "Host")
        when = _time(e.get("Timestamp"), "Timestamp")
        ex = self.executors.setdefault(executor_id, {
            "Executor ID": executor_id, "Host": "", "Total Cores": 0, "Maximum Memory": 0,
            "Added": when, "Removed": np.nan, "is_active": True, "Removed Reason": ""})
        ex.update(fields, Host=ex["Host"] or host, is_active=True)

    def on_executor_added(self, e: dict) -> None:
        info = _obj(e.get("Executor Info"), "Executor Info")
        self._executor(e, e, info.get("Host"),
                       **{"Total Cores": _int(info.get("Total Cores"), "Total Cores", 0)})

    def on_block_manager_added(self, e: dict) -> None:
        # the driver has no ExecutorAdded on a cluster: its block manager says it exists
        bm = _obj(e.get("Block Manager ID"), "Block Manager ID")
        self._executor(e, bm, bm.get("Host"),
                       **{"Maximum Memory": _int(e.get("Maximum Memory"), "Maximum Memory", 0)})

    def on_executor_removed(self, e: dict) -> None:
        ex = self.executors.get(_text(e.get("Executor ID"), "Executor ID"))
        when = _time(e.get("Timestamp"), "Timestamp")
        reason = _text(e.get("Removed Reason"), "Removed Reason")
        if ex is not None:
            ex.update({"is_active": False, "Removed": when, "Removed Reason": reason})

    def on_stage_executor_metrics(self, e: dict) -> None:
        # written at each stage attempt's end (spark.eventLog.logStageExecutorMetrics): the
        # executor's peaks while it ran, folded into the executor's and kept per stage
        executor_id = _text(e.get("Executor ID"), "Executor ID")
        metrics = _obj(e.get("Executor Metrics"), "Executor Metrics")
        key = (_int(e.get("Stage ID"), "Stage ID"),
               _int(e.get("Stage Attempt ID"), "Stage Attempt ID", 0), executor_id)
        peaks = self._peaks(executor_id, [metrics])
        row = self.stage_peaks.setdefault(key, {})
        for field, v in peaks.items():
            row[field] = max(v, row.get(field, v))

    def on_executor_metrics_update(self, e: dict) -> None:
        # logged for the driver only (spark.eventLog.logStageExecutorMetrics); the History
        # Server folds these peaks in too. Running tasks' SQL metric values ride along.
        updates = e.get("Executor Metrics Updated") or []
        tasks = e.get("Metrics Updated") or []
        if type(updates) is not list or type(tasks) is not list:
            raise BadEvent("'Executor Metrics Updated' or 'Metrics Updated' is not a list")
        heartbeats = []
        for t in tasks:
            t = _obj(t, "Metrics Updated")
            heartbeats.append((_int(t.get("Task ID"), "Task ID"), _int(t.get("Stage ID"), "Stage ID"),
                               _int(t.get("Stage Attempt ID"), "Stage Attempt ID", 0),
                               _updates_of(t.get("Accumulator Updates"))))
        self._peaks(_text(e.get("Executor ID"), "Executor ID"),
                    [_obj(_obj(u, "Executor Metrics Updated").get("Executor Metrics"),
                          "Executor Metrics") for u in updates])
        self.sql.heartbeat(heartbeats)

    def _peaks(self, executor_id: str, metrics: list[dict]) -> dict[str, int]:
        """The highest of each memory metric in ``metrics`` (Spark's names), folded into the
        executor's peaks; returned."""
        peaks: dict[str, int] = {}
        for m in metrics:
            for field in PEAK_MEMORY_FIELDS:
                v = m.get(field)
                if v is None:
                    continue
                if type(v) is not int:
                    raise BadEvent(f"{field!r} is {type(v).__name__}, expected an integer")
                peaks[field] = max(v, peaks.get(field, v))
        ex = self.executors.get(executor_id)
        if ex is not None:
            for field, v in peaks.items():
                column = f"Executor Metrics.{field}"
                if ex.get(column) is None or v > ex[column]:
                    ex[column] = v
        return peaks

    def stage_memory(self) -> list[dict[str, Any]]:
        """Per stage attempt and executor: its peaks (records for ``conform_eventlog``)."""
        return [{"Stage ID": s, "Stage Attempt ID": a, "Executor ID": ex,
                 **{f"Executor Metrics.{k}": v for k, v in peaks.items()}}
                for (s, a, ex), peaks in sorted(self.stage_peaks.items())]

    # -- the Run -----------------------------------------------------------------
    def _running_rows(self) -> tuple[np.ndarray, list[tuple[str, str, str, bool]]]:
        """Task attempts started and not ended: their rows (no metrics) and strings."""
        k, column = len(NUMERIC_FIELDS), _COLUMN["Task Info.Task ID"]
        ended = set(np.frombuffer(self.numbers, dtype="float64")[column::k].astype("int64").tolist()) \
            if self.running else set()
        # a TaskStart logged after its TaskEnd (a reordered log) does not make a second attempt
        running = [v for task_id, v in sorted(self.running.items()) if task_id not in ended]
        rows = np.zeros((len(running), k))
        for i, (start, _) in enumerate(running):
            rows[i, _START_AT] = np.frombuffer(start, dtype="float64")
        return rows, [strings for _, strings in running]

    def tasks(self) -> pd.DataFrame:
        """Every task attempt, ended or still running; the parser's state is not changed."""
        k = len(NUMERIC_FIELDS)
        extra, running = self._running_rows()
        numbers = np.frombuffer(self.numbers, dtype="float64").reshape(-1, k)
        if len(extra):
            numbers = np.vstack([numbers, extra])
        texts = self.texts + [(executor, host, locality, "RUNNING", "")
                              for executor, host, locality, _ in running]
        codes = np.concatenate([np.frombuffer(self.text_codes, dtype="int64"),
                                np.arange(len(self.texts), len(texts), dtype="int64")])
        speculative = np.concatenate([np.frombuffer(self.speculative, dtype="int8") > 0,
                                      np.array([s[3] for s in running], dtype=bool)])
        has_metrics = np.concatenate([np.frombuffer(self.has_metrics, dtype="int8") > 0,
                                      np.zeros(len(running), dtype=bool)])
        # rows put in the table's order (by stage attempt and task id, stable as sort_values')
        # here, in one take of the numbers (a copy: the parser's buffer stays its own), not
        # column by column once conformed; that order is checked again below
        order = np.lexsort((numbers[:, _TASK], numbers[:, _ATTEMPT], numbers[:, _STAGE]))
        frame = pd.DataFrame(numbers[order], columns=NUMERIC_FIELDS)
        del numbers
        codes = codes[order]
        table = np.empty((len(texts), 5), dtype=object)
        if texts:
            table[:] = texts
        for i, column in enumerate(("Task Info.Executor ID", "Task Info.Host",
                                    "Task Info.Locality", "status", "error")):
            frame[column] = table[codes, i]
        frame["Task Info.Speculative"] = speculative[order]
        frame["Task Metrics"] = has_metrics[order]
        tasks = conform_eventlog("tasks", frame)
        del frame
        order = np.lexsort((tasks["task_id"].to_numpy(), tasks["stage_attempt"].to_numpy(),
                            tasks["stage_id"].to_numpy()))
        if (order == np.arange(len(order))).all():
            return tasks if is_plain_index(tasks.index) else tasks.reset_index(drop=True)
        tasks = tasks.take(order)       # ids past the model's range (conformed to -1)
        tasks.index = pd.RangeIndex(len(tasks))
        return tasks

    def build(self, source: str) -> Run:
        app = self.app
        start = app.get("start_ms", 0) or 0
        end = app.get("end_ms", 0) or 0
        if not start or start != start:       # no ApplicationStart: the first time seen
            start = float(self.first_time) if self.first_time < np.inf else 0.0
        end = self.last_time if not end or end != end else float(end)
        extra = {"source": source, "attempt_id": app.get("attempt_id"),
                 "user": app.get("user", ""), "events": self.events,
                 "properties": app.get("properties", {})}
        run = Run(kind="eventlog", label=app.get("app_name", ""), status="ok",
                  start_ms=start, end_ms=end, app_id=app.get("app_id", ""),
                  app_name=app.get("app_name", ""), spark_version=app.get("spark_version", ""),
                  master=app.get("master", ""), collector="eventlog",
                  warnings=list(self.warnings), extra=extra,
                  jobs=conform_eventlog("jobs", [self.jobs[k] for k in sorted(self.jobs)]),
                  stages=conform_eventlog("stages",
                                          [self.stages[k] for k in sorted(self.stages)]),
                  tasks=self.tasks(),
                  executors=conform_eventlog("executors", [self.executors[k] for k in
                                                           sorted(self.executors)]))
        self.sql.finish()
        job_stages = {int(j): [int(s) for s in ss]       # as REST's: the model's jobs table
                      for j, ss in zip(run.jobs["job_id"], run.jobs["stage_ids"])}
        run.sql, run.operators, run.sql_metrics = self.sql.tables(
            set(self.jobs), job_stages, run.stages, run.tasks, run.warnings)
        run.stage_memory = sorted_stage_memory(
            conform_eventlog("stage_memory", self.stage_memory()), run.tasks)
        if run.jobs.empty:
            run.status = "no-jobs"
        return run
