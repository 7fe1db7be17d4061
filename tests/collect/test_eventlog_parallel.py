"""Reading an uncompressed log in worker processes (``eventlog/parallel.py``) gives the same
``Run`` as reading it line by line in one process: on the scale benchmark's SQL log built from
a real Spark 3.5.9 log, on the same log with hostile strings and damaged task lines, cut off
mid-line, as a rolled log, and when the workers die. The byte ranges are made small here so
that a small log is split into many."""
from __future__ import annotations

import importlib.util
import os
import signal
from pathlib import Path

import pytest
from test_eventlog_fastpath import _hostile, _lines, assert_same_run

from jupyter_perf.collect.eventlog import load_eventlog, parallel

DATA = os.path.join(os.path.dirname(__file__), "data")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _bench():
    spec = importlib.util.spec_from_file_location(
        "eventlog_scale", os.path.join(ROOT, "benchmarks", "eventlog_scale.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


@pytest.fixture(scope="module")
def sql_log(tmp_path_factory):
    """1000 task attempts of 5 SQL executions (the scale benchmark's generator)."""
    path = tmp_path_factory.mktemp("parallel") / "app-sql"
    _bench().generate(Path(DATA) / "gen-snappy.snappy", path, 1000, per_stage=100)
    return path


def _serial(monkeypatch, path):
    with monkeypatch.context() as m:
        m.setattr(parallel, "usable", lambda *_: False)
        return load_eventlog(path)


def _parallel(monkeypatch, path, chunk_bytes=200_000):
    """load_eventlog with every plain file read by two workers in ranges of ``chunk_bytes``;
    the ranges each worker read are counted."""
    used = []
    with monkeypatch.context() as m:
        m.setattr(parallel, "MIN_BYTES", 0)
        m.setattr(parallel, "workers", lambda: 2)
        real_chunks = parallel.chunks

        def chunks(path, size):
            ranges = real_chunks(path, size, chunk_bytes)
            used.extend(ranges)
            return ranges
        m.setattr(parallel, "chunks", chunks)
        run = load_eventlog(path)
    return run, used


def test_parallel_read_equals_the_serial_one(monkeypatch, sql_log):
    run, ranges = _parallel(monkeypatch, sql_log)
    assert len(ranges) > 10
    assert ranges[0][0] == 0 and all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert_same_run(run, _serial(monkeypatch, sql_log))
    assert len(run.tasks) == 1000 and len(run.sql) == 5 and len(run.sql_metrics)


def test_workers_started_afresh_as_in_a_kernel(monkeypatch, sql_log):
    """A notebook kernel runs threads: its workers are spawned, not forked."""
    monkeypatch.setattr(parallel, "START_METHOD", "spawn")
    run, ranges = _parallel(monkeypatch, sql_log, chunk_bytes=1_000_000)
    assert len(ranges) > 2
    assert_same_run(run, _serial(monkeypatch, sql_log))


def test_sql_executions_that_begin_after_rdd_jobs(monkeypatch, tmp_path, sql_log):
    """A log of RDD jobs that runs SQL later: ranges sent before the first SQL execution was
    folded in come back without SQL updates; its tasks' lines are read again here."""
    bench = _bench()
    rdd = tmp_path / "app-rdd"
    bench.generate(Path(DATA) / "gen-snappy.snappy", rdd, 1000, per_stage=100, sql=False)
    head = [line for line in _lines(str(rdd)) if b"ApplicationEnd" not in line]
    tail = [line for line in _lines(str(sql_log)) if not any(
        e in line[:60] for e in (b"LogStart", b"EnvironmentUpdate", b"ApplicationStart",
                                 b"ExecutorAdded", b"BlockManagerAdded"))]
    mixed = tmp_path / "app-mixed"
    mixed.write_bytes(b"".join(head + tail))
    reread = []
    real = parallel.reread
    monkeypatch.setattr(parallel, "reread", lambda *a: reread.append(a) or real(*a))
    run, _ = _parallel(monkeypatch, mixed, chunk_bytes=100_000)
    assert reread                       # some of the SQL tasks' lines were read again
    assert_same_run(run, _serial(monkeypatch, mixed))
    assert len(run.sql) == 5 and len(run.sql_metrics)


def test_with_hostile_strings_damaged_lines_and_a_cut_off_end(monkeypatch, tmp_path, sql_log):
    path = tmp_path / "hostile"
    data = b"".join(_hostile(_lines(str(sql_log))))
    # blank lines, a line that is no JSON, and the log cut in the middle of a TaskEnd
    cut = data.rfind(b'{"Event":"SparkListenerTaskEnd"') + 200
    path.write_bytes(b"\n\n" + data[:len(data) // 2] + b"not json\n" + data[len(data) // 2:cut])
    run, _ = _parallel(monkeypatch, path, chunk_bytes=100_000)
    serial = _serial(monkeypatch, path)
    assert_same_run(run, serial)
    assert len(run.extra["skipped_lines"]) > 3
    assert any("truncated" in why for _, why in run.extra["skipped_lines"])
    assert set(run.tasks["status"]) >= {"SUCCESS", "FAILED", "KILLED"}


def test_task_events_out_of_order(monkeypatch, tmp_path, sql_log):
    """A range's task events are folded in bulk (the last event of each task decides whether
    it still runs): TaskEnds logged before their TaskStart, TaskStarts logged twice, and
    tasks that start and never end, in ranges that cut between a task's events, end as the
    serial read ends them."""
    import random
    lines = _lines(str(sql_log))
    rng = random.Random(7)
    out = []
    for line in lines:
        head = line[:40]
        if b"SparkListenerTaskStart" in head and rng.random() < 0.1:
            out.append(line)                       # twice
        if b"SparkListenerTaskEnd" in head and out and b"TaskStart" in out[-1][:40] \
                and rng.random() < 0.3:
            out.insert(len(out) - 1, line)         # before the TaskStart just before it
            continue
        if b"SparkListenerTaskEnd" in head and rng.random() < 0.02:
            continue                               # never ends
        out.append(line)
    path = tmp_path / "app-reordered"
    path.write_bytes(b"".join(out))
    run, ranges = _parallel(monkeypatch, path, chunk_bytes=50_000)
    serial = _serial(monkeypatch, path)
    assert len(ranges) > 20
    assert_same_run(run, serial)
    assert (run.tasks["status"] == "RUNNING").sum() > 5      # tasks that never ended


def test_a_rolled_log_of_plain_files(monkeypatch, tmp_path, sql_log):
    lines = _lines(str(sql_log))
    rolled = tmp_path / "eventlog_v2_app-1"
    rolled.mkdir()
    third = len(lines) // 3
    for i, part in enumerate((lines[:third], lines[third:2 * third], lines[2 * third:])):
        (rolled / f"events_{i + 1}_app-1").write_bytes(b"".join(part))
    run, _ = _parallel(monkeypatch, rolled)
    assert_same_run(run, _serial(monkeypatch, rolled))
    assert len(run.tasks) == 1000


def test_workers_that_die_leave_the_rest_to_this_process(monkeypatch, sql_log):
    """A worker killed mid-read (out of memory, say): the ranges it had are read here."""
    real, me = parallel._task_end, os.getpid()

    def dying(*args):
        if os.getpid() != me:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args)
    breaks = []
    real_break = parallel.Pool._break
    monkeypatch.setattr(parallel.Pool, "_break",
                        lambda pool, pending: (breaks.append(1), real_break(pool, pending)))
    monkeypatch.setattr(parallel, "_task_end", dying)
    # forked, so that the workers run ``dying`` (a process that ran Spark has threads, and
    # would spawn them)
    monkeypatch.setattr(parallel, "START_METHOD", "fork")
    run, ranges = _parallel(monkeypatch, sql_log)
    monkeypatch.setattr(parallel, "_task_end", real)
    assert len(ranges) > 10 and breaks
    assert_same_run(run, _serial(monkeypatch, sql_log))


def test_chunks_end_after_a_newline_and_leave_the_unfinished_line(tmp_path):
    path = tmp_path / "log"
    path.write_bytes(b"a" * 10 + b"\n" + b"b" * 30 + b"\n" + b"\n" + b"c" * 5)
    ranges = parallel.chunks(str(path), path.stat().st_size, 4)
    assert ranges == [(0, 11), (11, 42), (42, 43)]
    assert parallel.chunks(str(path), 11, 100) == [(0, 11)]
    assert parallel.chunks(str(path), 10, 100) == []


def test_no_worker_processes_reads_the_ranges_here(monkeypatch, sql_log):
    """Where processes cannot be started (no /dev/shm, say) the ranges are read in this one."""
    def no_processes(*args, **kwargs):
        raise OSError(38, "Function not implemented")
    monkeypatch.setattr(parallel, "ProcessPoolExecutor", no_processes)
    run, ranges = _parallel(monkeypatch, sql_log)
    assert len(ranges) > 10
    assert_same_run(run, _serial(monkeypatch, sql_log))
