"""TaskStart and TaskEnd lines decoded straight into typed records (worker processes and serial reads).

Most of a large log is task events, and reading one was a JSON parse into dicts (orjson,
~4 µs for a TaskEnd without its accumulables) and then Python walking ~30 paths and checking
each value's type (~10 µs more). msgspec (a well-kept library: a JSON decoder that builds typed
objects and checks types in C) decodes only the fields the parser keeps, into structs built
here from the same field map (:data:`.parser.NUMERIC_FIELDS`), and skips the rest of the line
without building it: ~2 µs for the same TaskEnd.

The result must be exactly what :func:`.parser.task_end_record` / ``task_start_record`` make
of the line: the same numbers (through the same :func:`.parser._numbers` checks), strings,
status and error. Whatever the typed decode refuses (a value of another type, a nested object
that is not one, a number out of range, a lone surrogate) or cannot tell apart (a ``Task
Metrics`` object with none of the known metrics) is read the old way, so the parser still
names the cause of a bad line. ``tests/collect/test_eventlog_typed.py`` checks the two agree
on every task line of the test logs and on edited ones.
"""
from __future__ import annotations

from array import array
from typing import Any, Optional, Union

import msgspec

from . import parser as _parser
from .parser import NUMERIC_FIELDS, START_FIELDS

_Number = Optional[Union[int, float]]
_TEXT = {"Task Info.Executor ID": Optional[str], "Task Info.Host": Optional[str],
         "Task Info.Locality": Optional[str], "Task Info.Speculative": Optional[bool],
         "Task Info.Failed": Optional[bool], "Task Info.Killed": Optional[bool]}
_METRICS = "Task Metrics"


def _structs(paths: list[str], extra: dict[str, Any]) -> tuple[type, dict[str, str],
                                                              dict[str, Any]]:
    """A struct type for events carrying ``paths`` (numbers) and ``extra`` (typed), each
    nested object its own struct (absent or null: None); per dotted path, the expression
    reading it from ``e``; and an all-absent stand-in of each nested struct, by its path."""
    tree: dict[str, Any] = {}
    for path, kind in [(p, _Number) for p in paths] + list(extra.items()):
        node = tree
        *parents, last = path.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = kind
    exprs: dict[str, str] = {}
    empties: dict[str, Any] = {}

    def build(node: dict[str, Any], prefix: str, expr: str, name: str) -> type:
        fields, rename = [], {}
        for i, (key, kind) in enumerate(node.items()):
            attr = f"f{i}"
            rename[attr] = key
            path = f"{prefix}.{key}" if prefix else key
            if isinstance(kind, dict):
                inner = build(kind, path, f"({expr}.{attr} or _EMPTY[{path!r}])", f"{name}_{i}")
                empties[path] = inner()
                kind = Optional[inner]
            else:
                exprs[path] = f"{expr}.{attr}"
            fields.append((attr, kind, None))
        return msgspec.defstruct(name, fields, rename=rename)

    return build(tree, "", "e", "TaskEvent"), exprs, empties


def _reader(kind: str, exprs: dict[str, str], empties: dict[str, Any], numbers: list[str],
            flags: list[str]):
    """``read(event struct) -> (numbers, (executor, host, locality, speculative, failed,
    killed), flags)``, generated once as straight-line code (as parser.compile_reader)."""
    values = ", ".join(exprs[p] for p in numbers)
    texts = ", ".join(exprs[p] for p in _TEXT)
    more = "".join(f"{exprs[p]}, " for p in flags)
    src = f"def read(e):\n    return ({values},), ({texts},), ({more})\n"
    namespace: dict[str, Any] = {"_EMPTY": empties}
    exec(compile(src, f"<typed {kind} reader>", "exec"), namespace)  # noqa: S102 - fixed source
    return namespace["read"]


_METRIC_PATHS = [p for p in NUMERIC_FIELDS if p.startswith(_METRICS + ".")]
_END, _END_AT, _END_EMPTY = _structs(NUMERIC_FIELDS, {**_TEXT, "Event": Optional[str],
                                                      "Task End Reason": Optional[dict]})
_START, _START_AT, _START_EMPTY = _structs(START_FIELDS, {**_TEXT, "Event": Optional[str]})
_END_DECODE = msgspec.json.Decoder(_END).decode
_START_DECODE = msgspec.json.Decoder(_START).decode
_END_READ = _reader("end", _END_AT, _END_EMPTY, NUMERIC_FIELDS,
                    ["Event", "Task End Reason"])
_START_READ = _reader("start", _START_AT, _START_EMPTY, START_FIELDS, ["Event"])
_METRICS_AT = next(f.name for f in msgspec.structs.fields(_END) if f.encode_name == _METRICS)
_METRIC_INDEX = [NUMERIC_FIELDS.index(p) for p in _METRIC_PATHS]
_FIRST_METRIC = _METRIC_INDEX[0]
_EVENT_END, _EVENT_START = "SparkListenerTaskEnd", "SparkListenerTaskStart"


class NotTyped(Exception):
    """The line is to be read the old way."""


def task_end_record(stripped: bytes) -> tuple[array, tuple]:
    """:func:`.parser.task_end_record` of a TaskEnd line whose accumulables were cut out
    (``stripped``): its numbers and the first five parts of its record (the SQL updates, raw
    accumulables and Task Info are the caller's). Raises :class:`NotTyped` or a decode error
    when the line is to be read the parser's way, :class:`.parser.BadEvent` as the parser
    would."""
    e = _END_DECODE(stripped)
    values, texts, (event, reason) = _END_READ(e)
    if event != _EVENT_END:
        raise NotTyped
    metrics = getattr(e, _METRICS_AT)
    if metrics is not None and values[_FIRST_METRIC] is None and \
            all(values[i] is None for i in _METRIC_INDEX):
        raise NotTyped                    # {} or only unknown metrics: bool(dict) decides
    row = _numbers(values, NUMERIC_FIELDS, _END_IDS)
    executor, host, locality, speculative, failed, killed = texts
    strings = (executor or "", host or "", locality or "", bool(speculative))
    reason = reason if reason is not None else _parser._EMPTY
    status, error = _parser.status_of(failed, killed, values[_FINISH_AT], reason)
    return row, (strings, metrics is not None, status, error, reason.get("Reason", "Success"))


def task_start_record(line: bytes) -> tuple[array, tuple[str, str, str, bool]]:
    """:func:`.parser.task_start_record` of a TaskStart line (errors as task_end_record)."""
    e = _START_DECODE(line)
    values, texts, (event,) = _START_READ(e)
    if event != _EVENT_START:
        raise NotTyped
    row = _numbers(values, START_FIELDS, _START_IDS)
    executor, host, locality, speculative = texts[:4]
    return row, (executor or "", host or "", locality or "", bool(speculative))


_FINISH_AT = NUMERIC_FIELDS.index("Task Info.Finish Time")
_END_IDS = tuple(NUMERIC_FIELDS.index(f) for f in _parser._ID_FIELDS)
_START_IDS = tuple(START_FIELDS.index(f) for f in _parser._ID_FIELDS)


def _numbers(values: tuple, fields: list[str], ids: tuple[int, ...]) -> array:
    """:func:`.parser._numbers` of typed values, in one step where nothing needs a closer
    look: msgspec gave only ints, floats and None (never a bool, which the parser's check
    is for), so a row with no None converts at once; anything else (a None, a number out of
    range, an id that is not whole) is the parser's to convert or refuse."""
    try:
        row = array("d", values)
    except (TypeError, OverflowError):
        return _parser._numbers(values, fields)
    for i in ids:
        v = row[i]
        if not (0 <= v <= _MAX_ID and v == int(v)):
            return _parser._numbers(values, fields)
    return row


_MAX_ID = _parser._MAX_ID
