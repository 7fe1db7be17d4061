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


class _Accumulable(msgspec.Struct, omit_defaults=True, rename={"count": "Count Failed Values"}):
    """An item of Task Info's ``Accumulables``, every field Spark writes, in Spark's order:
    encoded again, it is the item's bytes exactly when they are as Spark writes them."""
    ID: Optional[int] = None
    Name: Optional[str] = None
    Update: Union[int, str, None] = None
    Value: Union[int, str, None] = None
    Internal: Optional[bool] = None
    count: Optional[bool] = None
    Metadata: Optional[str] = None


_METRIC_PATHS = [p for p in NUMERIC_FIELDS if p.startswith(_METRICS + ".")]
_END_EXTRA = {**_TEXT, "Event": Optional[str], "Task End Reason": Optional[dict]}
_END, _END_AT, _END_EMPTY = _structs(NUMERIC_FIELDS, _END_EXTRA)
# a whole TaskEnd line: its accumulables decoded (for the SQL updates), or kept as raw bytes
_LINE, _LINE_AT, _LINE_EMPTY = _structs(NUMERIC_FIELDS, {
    **_END_EXTRA, "Task Info.Accumulables": Optional[list[_Accumulable]]})
_BARE, _BARE_AT, _BARE_EMPTY = _structs(NUMERIC_FIELDS, {
    **_END_EXTRA, "Task Info.Accumulables": msgspec.Raw})
_START, _START_AT, _START_EMPTY = _structs(START_FIELDS, {**_TEXT, "Event": Optional[str]})
_END_DECODE = msgspec.json.Decoder(_END).decode
_START_DECODE = msgspec.json.Decoder(_START).decode
_END_READ = _reader("end", _END_AT, _END_EMPTY, NUMERIC_FIELDS,
                    ["Event", "Task End Reason"])
_START_READ = _reader("start", _START_AT, _START_EMPTY, START_FIELDS, ["Event"])
_LINE_DECODE = msgspec.json.Decoder(_LINE).decode
_BARE_DECODE = msgspec.json.Decoder(_BARE).decode
_LINE_READ = _reader("line", _LINE_AT, _LINE_EMPTY, NUMERIC_FIELDS,
                     ["Event", "Task End Reason", "Task Info.Accumulables"])
_BARE_READ = _reader("bare", _BARE_AT, _BARE_EMPTY, NUMERIC_FIELDS,
                     ["Event", "Task End Reason", "Task Info.Accumulables"])
_ENCODE = msgspec.json.Encoder().encode
_METRICS_AT, _LINE_METRICS_AT, _BARE_METRICS_AT = (
    next(f.name for f in msgspec.structs.fields(s) if f.encode_name == _METRICS)
    for s in (_END, _LINE, _BARE))
_METRIC_INDEX = [NUMERIC_FIELDS.index(p) for p in _METRIC_PATHS]
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
    return _end_record(values, texts, event, reason, getattr(e, _METRICS_AT))


def _end_record(values: tuple, texts: tuple, event: Any, reason: Any,
                metrics: Any) -> tuple[array, tuple]:
    if event != _EVENT_END:
        raise NotTyped
    if metrics is not None and all(values[i] is None for i in _METRIC_INDEX):
        raise NotTyped                    # {} or only unknown metrics: bool(dict) decides
    row = _parser._numbers(values)
    executor, host, locality, speculative, failed, killed = texts
    strings = (executor or "", host or "", locality or "", bool(speculative))
    reason = reason if reason is not None else _parser._EMPTY
    info = {"Failed": failed, "Killed": killed, "Finish Time": values[_FINISH_AT]}
    status, error = _parser._status(info, reason)
    return row, (strings, metrics is not None, status, error, reason.get("Reason", "Success"))


def task_end_line(line: bytes, sql: bool = True) -> tuple[array, tuple,
                                                          list[tuple[int, int]] | None]:
    """A whole TaskEnd line read in one decode: ``(row, fields, updates)``, where ``row`` and
    ``fields`` are :func:`task_end_record` of the line :func:`.parser.split_accumulables`
    strips, and ``updates`` is :func:`.parser.task_updates` of the accumulables it cuts out
    (``sql``), or None (not ``sql``: the accumulables are skipped, not decoded).

    Instead of cutting the array out (a copy of the line) and scanning its bytes with
    :func:`.sql.sql_updates`' regular expression, the items are decoded with the line and
    encoded again; only when that gives the very bytes ``split_accumulables`` would cut out
    (items as Spark writes them: compact, its keys in its order, scalar values) is the line
    taken, since then what the regular expression finds in those bytes follows from the
    items (:func:`_sql_updates`). That check costs what the cut and the scan saved: on the
    250k-task benchmark log this is no faster than the three steps (~18 against ~16.5 µs a
    line; ~11 against ~9.5 without ``sql``). Declined (:class:`NotTyped`, a decode error, or
    :class:`.parser.BadEvent` / ``ValueError`` where the parser raises) whenever the result
    could differ: no array to cut out, other bytes there than the items' (escapes, spaces, a
    key Spark does not write, nested values, another ``Accumulables`` array first), an
    ``Accumulables`` key in the Task End Reason (cutting would change it), a lone surrogate.
    """
    i = line.find(b'"Accumulables":[', 100)
    if i < 0:
        raise NotTyped                    # split_accumulables cuts nothing
    at = i + 15                           # the array, "[" to "]", from here
    if sql:
        e = _LINE_DECODE(line)
        values, texts, (event, reason, items) = _LINE_READ(e)
        if items is None:
            raise NotTyped
        whole = _ENCODE(items)
        metrics = getattr(e, _LINE_METRICS_AT)
        # no '},"Task ' inside those bytes (a quote in a string is escaped): the one after
        # them is the first after i, where split_accumulables cuts
        j = at + len(whole)
        if not (line.startswith(whole, at) and line.startswith(b'},"Task ', j)):
            raise NotTyped
    else:
        j = line.find(b'},"Task ', i)
        if j < 0 or line[j - 1] != 93:   # "]"
            raise NotTyped
        e = _BARE_DECODE(line)
        values, texts, (event, reason, raw) = _BARE_READ(e)
        if raw is None:
            raise NotTyped
        whole = bytes(raw)
        metrics = getattr(e, _BARE_METRICS_AT)
        if len(whole) != j - at or not line.startswith(whole, at):
            raise NotTyped
    # the bytes cut out are those of the decoded array (wherever they are): cutting them
    # changes nothing the record reads, unless they are in the Task End Reason
    if reason is not None and reason != _SUCCESS and _holds_accumulables(reason):
        raise NotTyped
    row, fields = _end_record(values, texts, event, reason, metrics)
    return row, fields, _sql_updates(items) if sql else None


_SUCCESS = {"Reason": "Success"}


def _holds_accumulables(node: Any) -> bool:
    """Whether a decoded JSON value has an ``Accumulables`` key anywhere."""
    stack = [node]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            if "Accumulables" in node:
                return True
            stack.extend(node.values())
        elif type(node) is list:
            stack.extend(node)
    return False


def _sql_updates(items: list[_Accumulable]) -> list[tuple[int, int]]:
    """:func:`.sql.sql_updates` of the bytes ``items`` encode to (``_ENCODE``), read from the
    items. In those bytes, its regular expression matches exactly the items with an ID >= 0,
    a Name without a quote (an escaped quote stops ``[^"]*``) and an Update string of ASCII
    digits (after an optional "-"), nowhere else (a quote inside a string is escaped); its
    SQL marker is exactly each item whose Metadata is "sql". If as many items match as are
    marked, it takes the matches; else it parses the array: the items marked, those whose ID
    and Update ``int()`` takes."""
    marked = 0
    strings = []
    for item in items:
        if item.Metadata == "sql":
            marked += 1
        if type(item.Update) is str:
            strings.append(item)
    found = []
    for item in strings:
        update, ident, name = item.Update, item.ID, item.Name
        if ident is not None and ident >= 0 and type(name) is str and '"' not in name and \
                update.isascii() and (update.isdigit() or (
                    update[:1] == "-" and update[1:].isdigit())):
            found.append((ident, update))
    if len(found) == marked:
        return [(ident, int(update)) for ident, update in found]
    out = []
    for item in items:
        if item.Metadata == "sql":
            try:
                out.append((int(item.ID), int(item.Update)))   # None: parse's KeyError
            except (TypeError, ValueError):
                continue
    return out


def task_start_record(line: bytes) -> tuple[array, tuple[str, str, str, bool]]:
    """:func:`.parser.task_start_record` of a TaskStart line (errors as task_end_record)."""
    e = _START_DECODE(line)
    values, texts, (event,) = _START_READ(e)
    if event != _EVENT_START:
        raise NotTyped
    row = _parser._numbers(values, START_FIELDS)
    executor, host, locality, speculative = texts[:4]
    return row, (executor or "", host or "", locality or "", bool(speculative))


_FINISH_AT = NUMERIC_FIELDS.index("Task Info.Finish Time")
