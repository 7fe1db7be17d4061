"""Property-based fuzzing of the event-log reader (Hypothesis), on logs real Spark wrote.

Random type and value mutations of real events, deleted fields, byte damage, truncation at
any byte and reordered lines. Whatever the damage:

* nothing but a one-line :class:`EventLogError` ever escapes ``load_eventlog``;
* only damaged lines are skipped, and every skipped line is named (``run.extra`` lists them;
  the one warning counts them and names the first few);
* a damaged TaskEnd that is not skipped is a finished task attempt of the run;
* the run's task values stay plausible (no part longer than its whole, nothing negative)
  and the analysis gives a JSON-able summary.
"""
from __future__ import annotations

import json
import math
import os

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jupyter_perf as jp
from jupyter_perf.collect.eventlog import EventLogError, load_eventlog
from jupyter_perf.collect.eventlog.codecs import open_lines
from jupyter_perf.model import PART_SLACK, PART_SLACK_MS

DATA = os.path.join(os.path.dirname(__file__), "data")
# JP_FUZZ_EXAMPLES=500 (and JP_FUZZ_RANDOM=1 for fresh examples) fuzzes longer by hand
FUZZ = settings(max_examples=int(os.environ.get("JP_FUZZ_EXAMPLES", 25)), deadline=None,
                derandomize=not os.environ.get("JP_FUZZ_RANDOM"),
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow, HealthCheck.data_too_large])

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([1e30, -1.0, 0, 1])
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                   max_size=3),
    max_leaves=4)


class Log(list):
    """A real log's lines; its repr is its name (Hypothesis prints it on a failure)."""

    def __init__(self, name: str, path: str):
        lines, _, handle = open_lines(path)
        try:
            super().__init__(line if line.endswith(b"\n") else line + b"\n"
                             for line in lines if line.strip())
        finally:
            handle.close()
        self.name = name

    def __repr__(self) -> str:
        return f"<log {self.name}: {len(self)} lines>"


@pytest.fixture(scope="module", params=["gen-snappy.snappy", "gen-lzf.lzf", "local"])
def real_log(request) -> Log:
    """The lines of a log written by real Spark (3.5.9 wrote the two in data/)."""
    if request.param == "local":
        return Log("local", request.getfixturevalue("apps")["local"])
    return Log(request.param, os.path.join(DATA, request.param))


def _paths(node, prefix=()):
    """Every path into a JSON value (object keys and list positions)."""
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


def _set(node, path, value):
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value


_DELETE = object()


def _read(tmp_path, lines: list[bytes], name: str = "log"):
    path = tmp_path / name
    path.write_bytes(b"".join(lines))
    try:
        return load_eventlog(path)
    except EventLogError as exc:       # allowed: one line with a next step
        message = str(exc)
        assert "\n" not in message and len(message) < 400
        return None


def _check_run(run, damaged: set[int], last_line_cut: int | None = None) -> None:
    skipped = run.extra["skipped_lines"]
    lines = [n for n, _ in skipped]
    allowed = set(damaged) | ({last_line_cut} if last_line_cut else set())
    assert set(lines) <= allowed, (skipped, allowed)
    assert all(why for _, why in skipped)
    text = [w for w in run.warnings if w.startswith("skipped ")]
    if skipped:
        assert len(text) == 1
        assert text[0].startswith(f"skipped line {lines[0]} (") if len(skipped) == 1 else \
            text[0].startswith(f"skipped {len(skipped)} lines: line {lines[0]} (")
    else:
        assert text == []
    t = run.tasks
    for column in ("duration_ms", "run_ms", "cpu_ms", "gc_ms", "input_bytes",
                   "shuffle_write_bytes"):
        assert (t[column] >= 0).all()
    assert (t["cpu_ms"] <= t["run_ms"] * PART_SLACK + PART_SLACK_MS).all()
    finished = t["duration_ms"] > 0
    assert (t.loc[finished, "run_ms"]
            <= t.loc[finished, "duration_ms"] * PART_SLACK + PART_SLACK_MS).all()
    assert not t.duplicated(["task_id", "attempt"]).any()
    summary = jp.analyze(run).summary()
    json.dumps(summary, allow_nan=False)
    assert math.isfinite(summary["wall_ms"]) and summary["wall_ms"] >= 0


@FUZZ
@given(data=st.data())
def test_mutated_values_and_deleted_fields(real_log, tmp_path_factory, data):
    tmp_path = tmp_path_factory.mktemp("fuzz")
    lines = list(real_log)
    damaged: dict[int, dict] = {}
    for _ in range(data.draw(st.integers(1, 4), label="events")):
        k = data.draw(st.integers(0, len(lines) - 1), label="line")
        event = orjson.loads(lines[k])
        paths = [p for p in _paths(event) if p]
        if not paths:
            continue
        path = data.draw(st.sampled_from(paths), label="path")
        value = data.draw(st.just(_DELETE) | JSON_VALUES, label="value")
        _set(event, path, value)
        lines[k] = json.dumps(event).encode() + b"\n"      # json: ints beyond 64 bits too
        damaged[k + 1] = event
    run = _read(tmp_path, lines)
    if run is None:
        return
    _check_run(run, set(damaged))
    skipped = {n for n, _ in run.extra["skipped_lines"]}
    ended = set(zip(run.tasks["task_id"], run.tasks["status"] != "RUNNING"))
    for lineno, event in damaged.items():
        info = event.get("Task Info")
        reason = event.get("Task End Reason")
        if (lineno in skipped or event.get("Event") != "SparkListenerTaskEnd"
                or not isinstance(info, dict) or type(info.get("Task ID")) is not int
                or (isinstance(reason, dict) and reason.get("Reason") == "Resubmitted")):
            continue
        assert (info["Task ID"], True) in ended, (lineno, event)    # taken, not lost


@FUZZ
@given(data=st.data())
def test_byte_damage_and_truncation(real_log, tmp_path_factory, data):
    tmp_path = tmp_path_factory.mktemp("fuzz")
    lines = list(real_log)
    damaged = set()
    for _ in range(data.draw(st.integers(0, 3), label="damaged lines")):
        k = data.draw(st.integers(0, len(lines) - 1), label="line")
        line = bytearray(lines[k])
        i = data.draw(st.integers(0, len(line) - 2), label="byte")
        line[i] = data.draw(st.integers(0, 255).filter(lambda b: b != 10), label="value")
        lines[k] = bytes(line)
        damaged.add(k + 1)
    blob = b"".join(lines)
    cut = data.draw(st.integers(1, len(blob)), label="cut")
    cut_line = blob[:cut].count(b"\n") + (0 if blob[:cut].endswith(b"\n") else 1)
    run = _read(tmp_path, [blob[:cut]])
    if run is None:
        return
    _check_run(run, damaged, last_line_cut=cut_line)


@FUZZ
@given(data=st.data())
def test_reordered_events(real_log, tmp_path_factory, data):
    tmp_path = tmp_path_factory.mktemp("fuzz")
    lines = list(real_log)
    start = data.draw(st.integers(0, len(lines) - 2), label="start")
    stop = data.draw(st.integers(start + 2, min(len(lines), start + 40)), label="stop")
    window = data.draw(st.permutations(lines[start:stop]), label="order")
    lines[start:stop] = window
    run = _read(tmp_path, lines)
    assert run is not None                     # every line is still a whole event
    _check_run(run, set())
    full = load_eventlog(_write(tmp_path, real_log))
    assert set(run.tasks["task_id"]) == set(full.tasks["task_id"])


def _write(tmp_path, lines: list[bytes]) -> str:
    path = tmp_path / "intact"
    path.write_bytes(b"".join(lines))
    return str(path)
