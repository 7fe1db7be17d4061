"""The worker's typed reading of task lines (``eventlog/typed.py``, msgspec) against the
parser's own (orjson, then every field checked): on every TaskStart and TaskEnd of real Spark
logs, and on edited ones, the typed record equals the parser's, or the typed reading declines
(the line is then read the parser's way, which names the cause of a bad one). It never takes a
line the parser refuses."""
from __future__ import annotations

import math
import os

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
