"""The event-log reader's fast path for TaskEnd lines (the Task Info ``Accumulables`` cut out
before parsing, the SQL metric updates picked out of the raw array by one regular expression:
``parser.split_accumulables``, ``sql.sql_updates``) against the straightforward reading
(every line parsed whole, the updates taken from the parsed array): the same ``Run``, field
by field, on real Spark logs — as written, with hostile strings (lone surrogates, NULs,
100 kB names) where Spark writes user strings, and with damaged or unusual task lines."""
from __future__ import annotations

import json
import math
import os

import orjson
import pandas as pd
import pytest

from jupyter_perf.collect.eventlog import load_eventlog, parser
from jupyter_perf.collect.eventlog.codecs import open_lines

DATA = os.path.join(os.path.dirname(__file__), "data")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOSTILE = "a\\ud800b\\u0000c\\u202e<img src=x onerror=alert(1)>" + "x" * 100_000
TABLES = ("tasks", "jobs", "stages", "executors")


def _lines(path: str) -> list[bytes]:
    lines, _, handle = open_lines(path)
    try:
        return [line if line.endswith(b"\n") else line + b"\n" for line in lines if line.strip()]
    finally:
        handle.close()


def _straightforward(monkeypatch, path):
    """``load_eventlog`` with the fast path off: every TaskEnd parsed whole, accumulables
    included, and its SQL updates read from the parsed list."""
    with monkeypatch.context() as m:
        m.setattr(parser, "split_accumulables", lambda line: (line, None))
        m.setattr(parser, "sql_updates", None)          # never called on this path
        return load_eventlog(path)


def _same(a, b) -> None:
    """Two values equal, NaN equal to NaN, recursively."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
        return
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    assert a == b and type(a) is type(b), (a, b)


def assert_same_run(fast, slow) -> None:
    for table in TABLES:
        pd.testing.assert_frame_equal(getattr(fast, table), getattr(slow, table),
                                      check_exact=True)
    for table in ("sql", "operators", "sql_metrics"):
        _same(_records(getattr(fast, table)), _records(getattr(slow, table)))
    for name in ("app_id", "app_name", "start_ms", "end_ms", "status", "warnings",
                 "spark_version", "master"):
        _same(getattr(fast, name), getattr(slow, name))
    _same(fast.extra, slow.extra)


def _records(table):
    if isinstance(table, pd.DataFrame):
        return table.to_dict("records")
    return list(table or [])


def _compare(monkeypatch, path):
    fast = load_eventlog(path)
    slow = _straightforward(monkeypatch, path)
    assert_same_run(fast, slow)
    return fast


@pytest.mark.parametrize("name", ["gen-snappy.snappy", "gen-lzf.lzf"])
def test_fast_path_equals_the_straightforward_reading_on_real_logs(monkeypatch, name):
    run = _compare(monkeypatch, os.path.join(DATA, name))
    assert len(run.tasks) and run.warnings == []


def test_fast_path_equals_it_on_the_spark_applications(monkeypatch, apps):
    for _, path in sorted(apps.items()):
        _compare(monkeypatch, path)


def _hostile(lines: list[bytes]) -> list[bytes]:
    """The SQL log with hostile strings where the JVM would write them (JSON escapes for a
    lone surrogate and a NUL) — app name, job descriptions, task hosts, executor ids,
    localities, SQL metric names — and task lines that must read the same either way (most
    of them skipped, named): a bool, a string and a fraction where numbers go, an id past 2**53,
    an SQL update past 64 bits, a failed, a killed and a resubmitted attempt (and flags that
    disagree with their reason), no finish time, no metrics, a stripped
    TaskEnd that is not JSON, a duplicate SQL update, an escaped quote in a metric name."""
    out = []
    n_end = n_start = 0
    for line in lines:
        event = orjson.loads(line)
        kind = event["Event"].removeprefix("SparkListener")
        case = -1
        if kind == "ApplicationStart":
            event["App Name"] = "@APP@"
        elif kind == "JobStart":
            event.setdefault("Properties", {})["spark.job.description"] = "@JOB@"
        elif kind in ("TaskStart", "TaskEnd"):
            info = event["Task Info"]
            k = n_end if kind == "TaskEnd" else n_start
            if k % 3 == 0:
                info["Host"] = "@HOST@"
            if k % 4 == 1:
                info["Executor ID"] = "nul\u0000" + info["Executor ID"]
            if k % 5 == 2:
                info["Locality"] = "ANY \u202e<b>" + "z" * 100_000
        if kind == "TaskEnd":
            info, metrics = event["Task Info"], event.get("Task Metrics") or {}
            case = n_end % 17
            if case == 1:
                metrics["Executor Run Time"] = True
            elif case == 2:
                metrics["Result Size"] = "12"
            elif case == 3:
                metrics["JVM GC Time"] = 1.5
            elif case == 4:
                info["Index"] = 2 ** 60
            elif case == 5:
                event["Task End Reason"] = {"Reason": "ExceptionFailure", "Class Name": "E",
                                            "Description": "@HOST@", "Stack Trace": [],
                                            "Full Stack Trace": "@HOST@"}
                info["Failed"] = True
            elif case == 6:
                event["Task End Reason"] = {"Reason": "TaskKilled", "Kill Reason": "@HOST@"}
                info["Killed"] = True
            elif case == 7:
                event["Task End Reason"] = {"Reason": "Resubmitted"}
            elif case == 8:
                info["Speculative"] = None
            elif case == 9:
                event["Task Metrics"] = None
            elif case == 14:
                info["Failed" if n_end % 2 else "Killed"] = True   # with reason Success
            elif case == 16:
                info["Finish Time"] = 0
            for j, acc in enumerate(info.get("Accumulables") or []):
                if acc.get("Metadata") != "sql":
                    continue
                if case == 10 and j == 0 and n_end % 3 == 1:
                    acc["Update"] = str(2 ** 70)
                elif case == 11 and j == 0:
                    acc["Name"] = 'say "hi" @HOST@'
                elif case == 12 and j == 0:
                    acc["Update"] = "-" + str(acc["Update"]).lstrip("-")
                elif case == 13 and j == 0:
                    info["Accumulables"].append(dict(acc, Update="99999"))
            n_end += 1
        elif kind == "TaskStart":
            if n_start % 11 == 4:
                event["Task Info"]["Launch Time"] = "soon"
            n_start += 1
        text = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
        for mark in ("@APP@", "@JOB@", "@HOST@"):
            text = text.replace(f'"{mark}"', f'"{HOSTILE}"').replace(mark, HOSTILE[:40])
        raw = text.encode("utf-8", "surrogatepass")
        if kind == "TaskEnd" and case == 15:                 # stripped part is not JSON
            raw = raw.replace(b'"Task Metrics":{', b'"Task Metrics":{,', 1)
        out.append(raw + b"\n")
    return out


@pytest.fixture(scope="module")
def sql_log(tmp_path_factory):
    """1000 task attempts replicated from the real Spark 3.5.9 SQL log (the scale
    benchmark's generator): 5 SQL executions of a map and a reduce stage of 100 tasks, every
    TaskEnd with its SQL metric updates."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "eventlog_scale", os.path.join(ROOT, "benchmarks", "eventlog_scale.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    path = tmp_path_factory.mktemp("fastpath") / "app-sql"
    bench.generate(Path(DATA) / "gen-snappy.snappy", path, 1000, per_stage=100)
    return path


def test_fast_path_equals_it_on_a_larger_sql_log(monkeypatch, sql_log):
    run = _compare(monkeypatch, sql_log)
    assert len(run.tasks) == 1000 and len(run.sql) == 5 and len(run.sql_metrics)


def test_fast_path_equals_it_with_hostile_strings_and_damaged_task_lines(monkeypatch, tmp_path,
                                                                         sql_log):
    path = tmp_path / "hostile"
    path.write_bytes(b"".join(_hostile(_lines(str(sql_log)))))
    run = _compare(monkeypatch, path)
    expected = json.loads(f'"{HOSTILE}"')
    assert "\ud800" in expected and "\x00" in expected
    assert run.app_name == expected
    assert (run.jobs["description"] == expected).all()
    assert (run.tasks["host"] == expected).any()
    assert run.tasks["executor_id"].str.startswith("nul\x00").any()
    assert run.tasks["locality"].str.len().max() > 100_000
    assert set(run.tasks["status"]) >= {"SUCCESS", "FAILED", "KILLED"}
    assert run.extra["skipped_lines"]                  # the damaged ones, named
    assert len(run.sql_metrics)


@pytest.mark.parametrize("update", ["0", "42", "-7", "007", "-0", "9223372036854775807",
                                    "-9223372036854775808", "9223372036854775808",
                                    "18446744073709551615", "99999999999999999999999"])
def test_sql_update_pairs_convert_as_int_does(update):
    """A worker's SQL updates (digits converted in one orjson call) are what int() makes of
    each, and a value past 64 bits is refused the same way (the parser then reads the line)."""
    from array import array

    from jupyter_perf.collect.eventlog.sql import sql_update_pairs, sql_updates
    items = (b'{"ID":3,"Name":"number of output rows","Update":"' + update.encode() +
             b'","Value":"1","Internal":true,"Count Failed Values":true,"Metadata":"sql"},'
             b'{"ID":4,"Name":"internal.metrics.executorRunTime","Update":5,"Value":5}')
    assert sql_updates(items) == [(3, int(update))]
    if -2 ** 63 <= int(update) < 2 ** 63:
        assert sql_update_pairs(items) == array("q", [3, int(update)])
    else:
        with pytest.raises(OverflowError):
            sql_update_pairs(items)


def test_sql_updates_wherever_the_sql_items_are():
    """The SQL metrics' updates are found before, between and after the task's own metrics,
    and an item of another kind with a string update (before or after them) is never taken
    for one: the same as parsing the array."""
    from array import array

    from jupyter_perf.collect.eventlog.sql import sql_update_pairs, sql_updates

    def sql(i, v):
        return (b'{"ID":%d,"Name":"rows","Update":"%d","Value":"%d","Internal":true,'
                b'"Count Failed Values":true,"Metadata":"sql"}' % (i, v, v))

    def own(i, v):
        return b'{"ID":%d,"Name":"internal.metrics.x","Update":%d,"Value":%d}' % (i, v, v)

    def other(i, v):
        return b'{"ID":%d,"Name":"user counter","Update":"%d","Value":"%d"}' % (i, v, v)
    for items in ([sql(1, 5), sql(2, 6), own(3, 7)], [own(3, 7), sql(1, 5), own(4, 8), sql(2, 6)],
                  [sql(1, 5), other(9, 9)], [other(9, 9), sql(1, 5)], [other(9, 9), own(3, 7)],
                  [], [sql(1, 5), other(9, 9), sql(2, 6), own(3, 7)]):
        raw = b",".join(items)
        want = [(int(x["ID"]), int(x["Update"])) for x in orjson.loads(b"[" + raw + b"]")
                if x.get("Metadata") == "sql"]
        assert sql_updates(raw) == want
        assert sql_update_pairs(raw) == array("q", [n for pair in want for n in pair])
