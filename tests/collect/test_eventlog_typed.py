"""The worker's typed reading of task lines (``eventlog/typed.py``, msgspec) against the
parser's own (orjson, then every field checked): on every TaskStart and TaskEnd of real Spark
logs, and on edited ones, the typed record equals the parser's, or the typed reading declines
(the line is then read the parser's way, which names the cause of a bad one). It never takes a
line the parser refuses."""
from __future__ import annotations

import math
import os
import re

import orjson
import pytest

from jupyter_perf.collect.eventlog import parser, typed
from jupyter_perf.collect.eventlog.codecs import open_lines

DATA = os.path.join(os.path.dirname(__file__), "data")


def _task_lines() -> list[bytes]:
    out = []
    for name in sorted(os.listdir(DATA)):
        lines, _, handle = open_lines(os.path.join(DATA, name))
        try:
            out += [line for line in lines if line.startswith(
                (b'{"Event":"SparkListenerTaskEnd"', b'{"Event":"SparkListenerTaskStart"'))]
        finally:
            handle.close()
    return out


LINES = _task_lines()


def _parsers_end(stripped: bytes, accumulables: bytes):
    row, fields = parser.task_end_record(orjson.loads(stripped), accumulables)
    return row, fields[:5]


def _same_row(a, b) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x == y or (math.isnan(x) and math.isnan(y))


def _check(line: bytes) -> str:
    """'typed' if the typed record was taken (and equals the parser's), 'declined' if the
    typed reading declined a line the parser reads, 'refused' if both refuse it."""
    end = line.startswith(b'{"Event":"SparkListenerTaskEnd"')
    if end:
        stripped, accumulables = parser.split_accumulables(line)
        assert accumulables is not None
        old = lambda: _parsers_end(stripped, accumulables)      # noqa: E731
        new = lambda: typed.task_end_record(stripped)           # noqa: E731
    else:
        old = lambda: parser.task_start_record(orjson.loads(line))  # noqa: E731
        new = lambda: typed.task_start_record(line)                 # noqa: E731
    try:
        want = old()
    except Exception:       # noqa: BLE001 - the parser refuses it: so must the typed reading
        try:
            new()
        except Exception:   # noqa: BLE001 - any refusal: the line goes the parser's way
            return "refused"
        pytest.fail(f"the typed reading took a line the parser refuses: {line[:200]!r}")
    try:
        got = new()
    except Exception:       # noqa: BLE001 - declined: read the parser's way
        return "declined"
    _same_row(got[0], want[0])
    assert got[1] == want[1] and [type(v) for v in got[1]] == [type(v) for v in want[1]]
    return "typed"


def test_every_task_line_of_real_logs_is_read_the_same():
    assert len(LINES) >= 20         # Spark 3.5 logs; Spark-written SQL logs: test_eventlog_parallel
    assert {_check(line) for line in LINES} == {"typed"}


EDITS = [
    (b'"Stage ID":', b'"Stage ID":true,"x":'),                   # bool for a number
    (b'"Stage ID":', b'"Stage ID":"1","x":'),                    # string for a number
    (b'"Task Info":{', b'"Task Info":null,"x":{'),                # null object: ids missing
    (b'"Task Info":{', b'"Task Info":[],"x":{'),                  # not an object
    (b'"Task Metrics":{', b'"Task Metrics":null,"x":{'),          # no metrics
    (b'"Task Metrics":{', b'"Task Metrics":{},"x":{'),            # empty metrics
    (b'"Task Metrics":{', b'"Task Metrics":{"Unknown":1},"x":{'),  # only unknown metrics
    (b'"Speculative":false', b'"Speculative":0'),                 # not true or false
    (b'"Failed":false', b'"Failed":true'),                        # a failed attempt
    (b'"Failed":false', b'"Failed":1'),                           # truthy, not a bool
    (b'"Killed":false', b'"Killed":true'),
    (b'"Host":"', b'"Host":7,"x":"'),                             # a number for a string
    (b'"Executor ID":"', b'"Executor ID":null,"x":"'),
    (b'"Locality":"', b'"Locality":"\\ud800'),                    # a lone surrogate
    (b'"Task ID":', b'"Task ID":-'),                              # a negative id
    (b'"Task ID":', b'"Task ID":1.5,"x":'),                       # not whole
    (b'"Task ID":', b'"Task ID":123456789012345678901234567890,"x":'),   # too large
    (b'"Launch Time":', b'"Launch Time":1e400,"x":'),             # out of range
    (b'"Finish Time":', b'"Finish Time":0,"x":'),                 # not finished
    (b'"Index":', b'"Index":null,"x":'),
    (b'"Reason":"Success"', b'"Reason":"ExceptionFailure","Class Name":"E",'
                            b'"Description":"<b>boom</b>"'),
    (b'"Reason":"Success"', b'"Reason":"TaskKilled","Kill Reason":"stage cancelled"'),
    (b'"Reason":"Success"', b'"Reason":5'),
    (b'"Task End Reason":{', b'"Task End Reason":null,"x":{'),
    (b'"Task End Reason":{', b'"Task End Reason":"Success","x":{'),
    (b'{"Event":"SparkListenerTask', b'{"Event":"SparkListenerTask'),   # unchanged
    (b'"Shuffle Read Metrics":{', b'"Shuffle Read Metrics":null,"x":{'),
    (b'"Shuffle Read Metrics":{', b'"Shuffle Read Metrics":{"Remote Bytes Read":2.5e3,'),
    (b'"Stage Attempt ID":', b'"Stage Attempt ID":1,"Stage Attempt ID":'),   # repeated key
]


@pytest.mark.parametrize("old,new", EDITS)
def test_edited_task_lines_are_read_the_same_or_declined(old, new):
    seen = set()
    for line in LINES:
        if old in line:
            edited = line.replace(old, new, 1)
            if edited.endswith(b"}\n") or edited.endswith(b"}"):
                seen.add(_check(edited))
    assert seen, "the edit matched no line"
    assert seen <= {"typed", "declined", "refused"}


def test_the_edits_that_must_be_taken_are():
    # what real logs carry must not fall back to the slow reading
    for old, new in [(b'"Failed":false', b'"Failed":true'),
                     (b'"Reason":"Success"', b'"Reason":"ExceptionFailure","Class Name":"E",'
                                             b'"Description":"boom"'),
                     (b'"Task Metrics":{', b'"Task Metrics":null,"x":{')]:
        for line in LINES:
            if old in line and line.startswith(b'{"Event":"SparkListenerTaskEnd"'):
                assert _check(line.replace(old, new, 1)) == "typed"
                break
        else:
            pytest.fail(f"no line with {old!r}")


# -- task_end_line: a whole TaskEnd line, its SQL updates read from the decoded items --------
END_LINES = [line for line in LINES if line.startswith(b'{"Event":"SparkListenerTaskEnd"')]


def _old_line(line: bytes, sql: bool):
    """What the worker's typed reading made of the line before: split, typed record, SQL
    updates (raises where that reading declines or the updates are bad)."""
    stripped, accumulables = parser.split_accumulables(line)
    if accumulables is None:
        raise typed.NotTyped
    row, fields = typed.task_end_record(stripped)
    return row, fields, parser.task_updates(accumulables, None) if sql else None


def _check_line(line: bytes) -> str:
    """'typed' if task_end_line took the line (both ways, equal to the old reading),
    'declined' if it declined a line the old reading takes, 'refused' if both refuse it."""
    seen = set()
    for sql in (True, False):
        try:
            want = _old_line(line, sql)
        except Exception:       # noqa: BLE001 - the old reading refuses: so must the new
            try:
                typed.task_end_line(line, sql)
            except Exception:   # noqa: BLE001
                seen.add("refused")
                continue
            pytest.fail(f"task_end_line(sql={sql}) took a line the old reading refuses: "
                        f"{line[:300]!r}")
        try:
            got = typed.task_end_line(line, sql)
        except Exception:       # noqa: BLE001 - declined: read the old way
            seen.add("declined")
            continue
        _same_row(got[0], want[0])
        assert got[1] == want[1] and [type(v) for v in got[1]] == [type(v) for v in want[1]]
        assert got[2] == want[2]
        if sql:
            assert [tuple(map(type, p)) for p in got[2]] == [(int, int)] * len(got[2])
        seen.add("typed")
    # sql=False reads no accumulables: it may take what sql=True declines, not the reverse
    assert seen in ({"typed"}, {"declined"}, {"refused"}, {"declined", "typed"},
                    {"refused", "typed"}, {"refused", "declined"}), seen
    return "typed" if seen == {"typed"} else "declined" if "declined" in seen else "refused"


def test_task_end_line_reads_every_taskend_of_real_logs_the_same():
    assert len(END_LINES) >= 10
    assert sum(line.count(b'"Metadata":"sql"') for line in END_LINES) >= 40
    assert {_check_line(line) for line in END_LINES} == {"typed"}
    for line in END_LINES:
        assert typed.task_end_line(line, False)[2] is None


_SQL_ITEM = rb'\{"ID":(\d+),"Name":"([^"]*)","Update":"(\d+)"'
_ARRAY = rb'"Accumulables":\[(.*?)\]\},"Task '

# (pattern, replacement, taken): the first match in each TaskEnd line is replaced; taken:
# True (must be read, equal), False (must be declined or refused), None (either)
LINE_EDITS = [
    # a non-SQL item with a string Update (a user's accumulator): the regular expression
    # matches it, the counts differ, sql_updates parses the array
    (rb',"Name":"internal.metrics.executorRunTime","Update":',
     rb',"Name":"internal.metrics.executorRunTime","Update":"5","Value":"5","Internal":false,'
     rb'"Count Failed Values":false},{"ID":7,"Name":"acc","Update":', True),
    (_SQL_ITEM, rb'{"ID":\1,"Name":"\2","Update":\3', True),              # numeric SQL update
    (_SQL_ITEM, rb'{"ID":\1,"Name":"\2","Update":"+\3"', True),           # int() takes these
    (_SQL_ITEM, rb'{"ID":\1,"Name":"\2","Update":"1_\3"', True),
    (_SQL_ITEM, rb'{"ID":\1,"Name":"\2","Update":" \3"', True),
    (_SQL_ITEM, rb'{"ID":\1,"Name":"\2","Update":"-\3"', True),
    (_SQL_ITEM, rb'{"ID":\1,"Name":"\2","Update":""', True),              # int() refuses
    (_SQL_ITEM, rb'{"ID":\1,"Name":"\2","Update":"x\3"', True),
    (_SQL_ITEM, '{"ID":\\1,"Name":"\\2","Update":"\u0661"'.encode(), True),  # a non-ASCII digit
    (_SQL_ITEM, rb'{"ID":\1,"Name":"\2","Update":"\u0661"', False),     # escaped
    (_SQL_ITEM, rb'{"ID":\1,"Name":"\2","Update":"99999999999999999999999"', True),
    (_SQL_ITEM, b'{"ID":\\1,"Name":"\\2","Update":"' + b"7" * 5000 + b'"', False),  # int() limit
    (_SQL_ITEM, rb'{"ID":-\1,"Name":"\2","Update":"\3"', True),           # negative id
    (_SQL_ITEM, rb'{"ID":\1.0,"Name":"\2","Update":"\3"', False),
    (_SQL_ITEM, rb'{"ID":"\1","Name":"\2","Update":"\3"', False),
    (_SQL_ITEM, rb'{"ID":\1,"Update":"\3"', True),                        # no Name
    (_SQL_ITEM, rb'{"ID":\1,"Name":5,"Update":"\3"', False),
    (_SQL_ITEM, rb'{"ID":\1,"Name":"a\"b]},\"Task x","Update":"\3"', True),   # quotes in Name
    (_SQL_ITEM, rb'{"ID":\1,"Name":"a\\b","Update":"\3"', True),          # a backslash
    (_SQL_ITEM, rb'{"ID":\1,"Name":"\ud800","Update":"\3"', False),       # lone surrogate
    (_SQL_ITEM, rb'{"Name":"\2","ID":\1,"Update":"\3"', False),           # another key order
    (_SQL_ITEM, rb'{"ID":\1, "Name":"\2","Update":"\3"', False),          # a space
    (_SQL_ITEM, rb'{"ID":\1,"N\u0061me":"\2","Update":"\3"', False),      # an escaped key
    (_SQL_ITEM, rb'{"ID":\1,"ID":\1,"Name":"\2","Update":"\3"', False),   # a repeated key
    (_SQL_ITEM, rb'{"ID":\1,"Name":"\2","Update":null', False),
    (_SQL_ITEM, rb'{"ID":\1,"Name":"\2","Update":[\3]', False),
    (rb'"Metadata":"sql"', rb'"Metadata":"sql","Metadata":"no"', False),
    (rb'"Metadata":"sql"', rb'"Metadata":"SQL"', True),
    (rb'"Metadata":"sql"', rb'"Metadata":"sql","x":1', False),            # an unknown key
    (rb'"Metadata":"sql"}', rb'"Metadata":"sql","x":{"ID":1,"Name":"n","Update":"5",'
                            rb'"Metadata":"sql"}}', False),               # a nested item
    (rb'"Metadata":"sql"}', rb'"Metadata":"sql","x":{"Accumulables":[]}}', False),
    (rb'"Metadata":"sql"}', rb'"Metadata":"sql","x":[{"a":[]},"Task x"]}', False),
    (rb'"Accumulables":\[', rb'"Accumulables":[5,', False),               # an item not an object
    (rb'"Accumulables":\[', rb'"Accumulables":[[1],', False),
    (rb'"Accumulables":\[', rb'"Accumulables":[null,', False),
    (rb'"Accumulables":\[', rb'"Accumulables":[],"Accumulables":[', False),   # repeated key
    (rb'"Accumulables":\[', rb'"Accumulables": [', False),
    (rb'"Accumulables":\[', rb'"Accumulables_":[', False),                 # none
    (_ARRAY, rb'"Accumulables":[\1],"Accumulables":[]},"Task ', False),
    (_ARRAY, rb'"Accumulables":[\1],"Z":[1]},"Task ', False),
    (_ARRAY, rb'"Accumulables":[\1],"Z":1},"Task ', False),
    (_ARRAY, rb'"Accumulables":null},"Task ', False),
    (_ARRAY, rb'"Accumulables":[]},"Task ', True),                       # empty
    (_ARRAY, rb'"Accumulables":[\1]},"Task ', True),                     # unchanged
    (_ARRAY, rb'"Accumulables":[\1 ]},"Task ', False),
    # an Accumulables array in the Task End Reason: split_accumulables cuts that one
    (rb'"Reason":"Success"', rb'"Reason":"Success","Accumulables":[]', False),
    (rb'"Reason":"Success"', rb'"Reason":"ExceptionFailure","x":{"Accumulables":[]}', False),
    (rb'"Task End Reason":\{"Reason":"Success"\}(.*)"Accumulables":\[(.*?)\]\},"Task ',
     rb'"Task End Reason":{"Reason":"Success","A":{"Accumulables":[\2]},"B":"x"}\1'
     rb'"Accumul\u0061bles":[\2]},"Task ', False),                         # a copy there
    (rb'"Task End Reason":\{"Reason":"Success"\}(.*)"Failed":false(.*)"Accumulables":\[(.*?)\]\},'
     rb'"Task ', rb'"Task End Reason":{"Reason":"ExceptionFailure","Full Stack Trace":'   # its error
     rb'{"Accumulables":[\3]},"Task x":1}\1"Failed":true\2"Accumul\u0061bles":[\3]},"Task ', False),
    (rb'"Task End Reason":\{"Reason":"Success"\}', rb'"Task End Reason":{"Reason":"Success",'
     rb'"Task Info":{"Accumulables":[]},"Task x":1}', False),
    (rb'"Stage ID":', rb'"Stage ID":true,"x":', False),                   # as task_end_record
    (rb'"Task Metrics":{', rb'"Task Metrics":{},"x":{', False),
    (rb'"Failed":false', rb'"Failed":true', True),
    (rb'"Reason":"Success"', rb'"Reason":"ExceptionFailure","Class Name":"E",'
                             rb'"Description":"boom"', True),
    (rb'"Task Metrics":{', rb'"Task Metrics":null,"x":{', True),
]


def _fill(template: bytes, match: re.Match) -> bytes:
    """``template`` with ``\\1``... replaced by the match's groups (nothing else unescaped)."""
    return re.sub(rb"\\([1-9])", lambda g: match.group(int(g.group(1))), template)


@pytest.mark.parametrize("pattern,replacement,taken", LINE_EDITS)
def test_task_end_line_on_edited_lines_reads_the_same_or_declines(pattern, replacement, taken):
    seen = set()
    for line in END_LINES:
        edited = re.sub(pattern, lambda m: _fill(replacement, m), line, count=1, flags=re.S)
        if edited != line or pattern == _ARRAY:
            seen.add(_check_line(edited))
    assert seen, "the edit matched no line"
    if taken is True:
        assert seen == {"typed"}
    elif taken is False:
        assert "typed" not in seen
