"""``<store>/logs`` stays bounded (collect/jvm.py): old JVM logs pruned when a JVM starts, a
running JVM's log cut past its size while the JVM keeps appending. No Spark: the logs are
fake files and the "JVM" a real child process writing through an inherited O_APPEND
descriptor, as pyspark's ``spark-submit`` does (``jvm.launch``)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time

from jupyter_perf.collect import jvm


def dead_pid() -> int:
    """A pid no process has now (a child that has exited and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def fake_log(folder, stamp: int, pid: int, size: int = 100, part: int = 0) -> str:
    """``spark-<time>-<pid>.log`` (and a ``.1`` part of ``part`` bytes), mtime ``stamp``."""
    name = time.strftime("spark-%Y%m%d-%H%M%S", time.localtime(stamp)) + f"-{pid}.log"
    path = os.path.join(folder, name)
    for p, n in ((path, size), (path + ".1", part)):
        if p == path or part:
            with open(p, "wb") as fh:
                fh.write(b"x" * n)
            os.utime(p, (stamp, stamp))
    return path


def test_a_new_jvm_prunes_the_logs_of_finished_ones_to_the_newest_twenty(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    gone = dead_pid()
    base = int(time.time()) - 100_000
    old = [fake_log(folder, base + 60 * i, gone, part=50 if i % 3 == 0 else 0)
           for i in range(35)]
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        oldest_alive = fake_log(folder, base - 10_000, alive.pid)      # another kernel, running
        (folder / "notes.txt").write_text("mine")                    # not a log of ours
        (folder / "spark-odd.log").write_text("not our name")
        path = jvm.new_log_path(str(tmp_path))
        names = set(os.listdir(folder))
        assert os.path.dirname(path) == str(folder) and not os.path.exists(path)
        assert re.fullmatch(rf"spark-\d{{8}}-\d{{6}}-{os.getpid()}\.log", os.path.basename(path))
        kept = [p for p in old if os.path.basename(p) in names]
        assert kept == old[-jvm.KEEP_LOGS:]                          # the newest twenty
        for p in old[:-jvm.KEEP_LOGS]:                               # ... parts go with them
            assert not os.path.exists(p) and not os.path.exists(p + ".1")
        assert os.path.exists(old[-3] + ".1") or os.path.exists(old[-2] + ".1")
        assert os.path.exists(oldest_alive)                          # its kernel still runs
        assert {"notes.txt", "spark-odd.log"} <= names
    finally:
        alive.kill()
        alive.wait()
    # once its kernel is gone, that log is the oldest finished one: pruned next time
    jvm.new_log_path(str(tmp_path))
    assert not os.path.exists(oldest_alive)


def test_the_finished_logs_total_at_most_the_byte_bound(tmp_path):
    gone = dead_pid()
    base = int(time.time()) - 10_000
    logs = [fake_log(tmp_path, base + i, gone, size=300, part=100) for i in range(10)]
    deleted = jvm.prune_logs(str(tmp_path), keep=20, max_bytes=1000)
    left = [p for p in logs if os.path.exists(p)]
    assert left == logs[-2:]                                      # 2 x 400 bytes <= 1000
    assert len(deleted) == 16                                     # 8 logs and their parts
    total = sum(os.path.getsize(os.path.join(tmp_path, n)) for n in os.listdir(tmp_path))
    assert total <= 1000


def test_the_logs_of_this_processs_running_jvm_are_never_pruned(tmp_path):
    class Gateway:                                    # stands for pyspark's JavaGateway
        pass

    gateway = Gateway()
    mine = fake_log(tmp_path, int(time.time()) - 5000, os.getpid(), size=5000)
    earlier = fake_log(tmp_path, int(time.time()) - 9000, os.getpid(), size=10)
    jvm._logs[gateway] = mine
    try:
        jvm.prune_logs(str(tmp_path), keep=0, max_bytes=0)
        assert os.path.exists(mine)                   # a gateway of this process writes it
        assert not os.path.exists(earlier)            # this process's JVM before: finished
    finally:
        del jvm._logs[gateway]


#: Writes numbered lines to its stdout (the log) and, for each, when its write began and
#: ended (``i start_ns end_ns``, CLOCK_MONOTONIC, one unbuffered append each) to a side file
#: the cut never touches: which lines the cut lost, and whether they were written while it
#: ran, is then known whatever the host's load.
WRITER = """
import os, sys, time
side = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
for i in range(10**9):
    start = time.monotonic_ns()
    sys.stdout.write(f"line {i:08d} " + "y" * 80 + "\\n")
    sys.stdout.flush()
    os.write(side, f"{i} {start} {time.monotonic_ns()}\\n".encode())
    time.sleep(0.0005)
"""


def line_numbers(text: str) -> list[int]:
    return [int(m) for m in re.findall(r"^line (\d{8}) y+$", text, re.MULTILINE)]


def test_a_running_writers_log_is_cut_and_it_keeps_appending_at_the_start(tmp_path):
    path = str(tmp_path / "spark-20250101-000000-1.log")
    side = str(tmp_path / "writes.txt")
    with open(path, "ab") as log:        # as jvm.launch opens it: the child inherits O_APPEND
        child = subprocess.Popen([sys.executable, "-c", WRITER, side], stdout=log,
                                 stderr=subprocess.STDOUT)
    try:
        limit = 64 * 1024
        deadline = time.monotonic() + 60
        while jvm.log_size(path) <= limit and time.monotonic() < deadline:
            time.sleep(0.05)
        cut_from = time.monotonic_ns()
        assert jvm.cut_if_large(path, limit)
        cut_to = time.monotonic_ns()
        # the writer carries on: wait for ten of its lines after the note, however slowly a
        # busy host runs it
        deadline = time.monotonic() + 60
        while len(lines_after_the_note(path)) < 10 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not jvm.cut_if_large(path, 10**9)          # under the limit: nothing to do
    finally:
        child.kill()
        child.wait()
    part = open(path + ".1", encoding="utf-8").read()
    now = open(path, "rb").read()
    assert b"\0" not in now                          # no hole: writes went to the new end
    lines = now.decode().splitlines()
    [note] = [i for i, line in enumerate(lines) if line.startswith("jupyter-perf: ")]
    assert lines[note].endswith(f"earlier part is {os.path.basename(path)}.1")
    assert len(lines_after_the_note(path)) >= 10, "the writer stopped after the cut"
    before, after = line_numbers(part), line_numbers(now.decode())
    assert len(after) == len(lines) - 1
    assert before[0] == 0 and before == list(range(len(before)))   # the whole log until the cut
    assert after and after == list(range(after[0], after[0] + len(after)))
    assert after[0] > before[-1]
    # copytruncate: the only lines lost, and the only ones ahead of the note (the writer may
    # get a line in before it), are lines written while the cut ran. How many that is
    # depends on how the host scheduled the two processes, so it is not counted.
    writes = {}
    for record in open(side, encoding="utf-8").read().splitlines():
        i, start, end = map(int, record.split())
        writes[i] = (start, end)
    lost = list(range(before[-1] + 1, after[0]))
    ahead = line_numbers("\n".join(lines[:note]))
    assert ahead == after[:note]
    for i in lost + ahead:
        start, end = writes[i]
        assert end >= cut_from and start <= cut_to, (i, lost, ahead)
    assert not os.path.exists(path + ".1.tmp")


def lines_after_the_note(path: str) -> list[int]:
    text = open(path, encoding="utf-8", errors="replace").read()
    _, note, rest = text.partition("jupyter-perf: ")
    return line_numbers(rest) if note else []


def test_the_watcher_cuts_running_jvms_logs(tmp_path, monkeypatch):
    class Gateway:
        pass

    gateway = Gateway()
    path = str(tmp_path / "spark-20250101-000000-2.log")
    with open(path, "wb") as fh:
        fh.write(b"z" * 20_000)
    monkeypatch.setattr(jvm, "CHECK_S", 0.05)
    monkeypatch.setenv(jvm.LOG_MAX_ENV, "8192")
    jvm._logs[gateway] = path
    try:
        jvm._start_watcher()
        deadline = time.monotonic() + 60
        while not os.path.exists(path + ".1") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert os.path.getsize(path + ".1") == 20_000
        assert jvm.log_size(path) < 200
    finally:
        del jvm._logs[gateway]


def test_the_limit_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(jvm.LOG_MAX_ENV, raising=False)
    assert jvm.log_limit() == jvm.LOG_MAX_BYTES == 8 * 2**20
    monkeypatch.setenv(jvm.LOG_MAX_ENV, "262144")
    assert jvm.log_limit() == 262144
    monkeypatch.setenv(jvm.LOG_MAX_ENV, "lots")
    assert jvm.log_limit() == jvm.LOG_MAX_BYTES


def test_a_failure_is_still_found_after_the_log_was_cut(tmp_path):
    path = str(tmp_path / "spark-20250101-000000-3.log")
    with open(path, "w") as fh:
        fh.write("jupyter-perf: cut\nException in thread \"main\" java.lang.Boom: no\n")
    assert jvm.failure_in_log(path, since=10**6) == "java.lang.Boom: no"
