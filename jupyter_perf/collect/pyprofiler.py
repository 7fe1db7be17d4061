"""On-CPU stack samples of the Python UDF workers of a profiled window, with py-spy (issue P).

The JVM profiler (``collect/profiler.py``) sees a Python UDF only as a task thread waiting for
the worker's answer. The UDF itself runs in pyspark's Python workers: ``pyspark.daemon``
forks one ``pyspark.worker`` per task (the daemon is a child of the JVM that runs the tasks:
the driver's on ``local[N]``, each executor's on ``local-cluster``; without the daemon,
``spark.python.use.daemon=false``, the JVM starts ``pyspark.worker`` itself). While the window
runs, :class:`PythonProfiler` finds those processes among this kernel's descendants (psutil;
polled every :data:`POLL_S` s until one is found, then every :data:`POLL_FOUND_S` s — the
first UDF of a session starts the daemon after the window started) and runs

    py-spy record --pid P --subprocesses --nonblocking --function --rate R --format raw -o F

on each (``--subprocesses``: the workers the daemon forks later; ``--nonblocking``: never
pauses the worker; ``--function``: a frame is the function and its first line, so one
function is one row). At the window's end each py-spy gets SIGINT (it then writes its output;
:data:`STOP_TIMEOUT_S` later it is killed), and the collapsed stacks become rows of the
window's profile record (``profiler.merge_python``) with the root :data:`PY_ROOT` and the
executor id of the JVM the worker descends from.

**What one sample is.** py-spy's default leaves idle threads out (``--idle`` would keep them),
so a sample is a Python worker thread found running (the OS's "running" includes waiting for
a core, so a crowded host inflates it), one every ``1000 / R`` ms
(:data:`RATE_HZ` = 100: every 10 ms, as the JVM's async-profiler interval): each stands for
about 10 ms of the worker's CPU time, comparable with the JVM's on-CPU samples.

**Never breaks a cell.** No py-spy binary (the one the ``py-spy`` package installs beside this
Python, else ``PATH``; :data:`BINARY_ENV` names another), py-spy refused (no ptrace
permission), executors on other hosts, or no Python worker ran: the record's ``python`` part
has no samples and a ``note`` saying why, and the JVM profile is unaffected.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sysconfig
import tempfile
import threading
from typing import Any

import psutil

from ..errors import one_line

#: A path to the py-spy binary to use instead of the installed one (also: a test's missing one).
BINARY_ENV = "JUPYTER_PERF_PY_SPY"
#: py-spy's sampling rate (samples a second): one every 10 ms, the JVM profiler's interval.
RATE_HZ = 100
METHOD = "py-spy"
#: The root frame of a Python worker's stack in the profile record.
PY_ROOT = "[Python worker]"
#: How often the kernel's descendants are listed for new Python workers (s): until the first
#: is found, then while the window runs (a daemon per executor; a restarted one).
POLL_S = 0.25
POLL_FOUND_S = 1.0
#: How long py-spy may take to write its output after SIGINT (s), before it is killed.
STOP_TIMEOUT_S = 10.0
SAMPLE = (f"one sample every {1000 // RATE_HZ} ms of a Python worker thread that is running "
          "(py-spy without --idle: idle threads are not sampled; a thread waiting for a core "
          f"on a busy host counts as running), so each stands for about {1000 // RATE_HZ} ms "
          "of the worker's CPU time, like the JVM's on-CPU samples")
_PROCESS_FRAME = re.compile(r'^process \d+:".*"$')
_EXECUTOR_ID = re.compile(r"--executor-id\s+(\S+)")


def py_spy_binary() -> str | None:
    """The py-spy to run: :data:`BINARY_ENV`, the one installed beside this Python, PATH."""
    named = os.environ.get(BINARY_ENV)
    if named is not None:
        return named if os.path.isfile(named) and os.access(named, os.X_OK) else None
    beside = os.path.join(sysconfig.get_path("scripts"), "py-spy")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    return shutil.which("py-spy")


def _cmdline(proc: psutil.Process) -> list[str]:
    try:
        return proc.cmdline()
    except psutil.Error:
        return []


def _is_module(cmd: list[str], module: str) -> bool:
    return any(a == module or a.endswith(f"/{module.replace('.', '/')}.py") for a in cmd)


def executor_of(proc: psutil.Process, default: str) -> str:
    """The executor id of the JVM a worker descends from (``--executor-id`` on its command
    line), else ``default`` (``driver`` on a local master: Spark's executor id there)."""
    try:
        parents = proc.parents()
    except psutil.Error:
        return default
    for parent in parents:
        cmd = " ".join(_cmdline(parent))
        if "CoarseGrainedExecutorBackend" in cmd:
            found = _EXECUTOR_ID.search(cmd)
            return found.group(1) if found else default
    return default


def python_workers(root: psutil.Process | None = None) -> list[psutil.Process]:
    """The Python worker processes to sample among ``root``'s descendants: every
    ``pyspark.daemon`` (py-spy follows the workers it forks) and every ``pyspark.worker``
    not forked by a daemon."""
    root = root or psutil.Process()
    try:
        procs = root.children(recursive=True)
    except psutil.Error:
        return []
    # a daemon forks its workers without exec: they have the daemon's command line too
    daemons = {p.pid for p in procs if _is_module(_cmdline(p), "pyspark.daemon")}
    out = []
    for p in procs:
        if p.pid not in daemons and not _is_module(_cmdline(p), "pyspark.worker"):
            continue
        try:
            if p.ppid() in daemons:      # forked by a daemon: sampled with it
                continue
        except psutil.Error:
            continue
        out.append(p)
    return out


def parse_raw(text: str) -> list[tuple[list[str], int]]:
    """py-spy's raw (collapsed) lines -> (Python frames root first, samples); the
    ``process N:"cmd"`` frames ``--subprocesses`` adds are left out."""
    out = []
    for line in text.splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [f for f in stack.split(";") if not _PROCESS_FRAME.match(f)]
        if frames and int(count) > 0:
            out.append((frames, int(count)))
    return out


class PythonProfiler:
    """:meth:`start` when the window starts, :meth:`stop` at its end -> the ``python`` part
    of the profile record: ``{"method", "interval_ms", "rate_hz", "sample", "note",
    "samples", "processes", "counts"}`` (``counts``: ``{(stack, executor id): samples}`` for
    ``profiler.stack_rows``; never raises)."""

    def __init__(self, default_executor: str = "driver", rate_hz: int = RATE_HZ,
                 root: psutil.Process | None = None):
        self.default_executor = default_executor
        self.rate_hz = int(rate_hz)
        self.root = root
        self.binary = py_spy_binary()
        self._dir = tempfile.mkdtemp(prefix="jupyter-perf-pyspy-")
        self._spies: dict[int, tuple[subprocess.Popen, str, str]] = {}   # pid -> (py-spy, out, ex)
        self._seen: set[tuple[int, float]] = set()
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None
        self._failed: list[str] = []

    def start(self) -> "PythonProfiler":
        if self.binary is None:
            return self
        self._poll()
        self._thread = threading.Thread(target=self._loop, name="jupyter-perf py-spy",
                                        daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._halt.wait(POLL_FOUND_S if self._spies else POLL_S):
            self._poll()

    def _poll(self) -> None:
        try:
            workers = python_workers(self.root)
        except Exception as exc:       # psutil on an odd platform: no Python profile
            self._failed.append(f"listing processes: {one_line(exc)}")
            return
        for proc in workers:
            try:
                key = (proc.pid, proc.create_time())
            except psutil.Error:
                continue
            if key in self._seen or self._halt.is_set():
                continue
            self._seen.add(key)
            self._attach(proc)

    def _attach(self, proc: psutil.Process) -> None:
        out = os.path.join(self._dir, f"{proc.pid}.txt")
        log = open(os.path.join(self._dir, f"{proc.pid}.log"), "wb")
        try:
            spy = subprocess.Popen(
                [str(self.binary), "record", "--pid", str(proc.pid), "--subprocesses",
                 "--nonblocking", "--function", "--rate", str(self.rate_hz), "--format", "raw",
                 "-o", out],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        except OSError as exc:
            self._failed.append(f"py-spy did not start ({one_line(exc)})")
            return
        finally:
            log.close()
        self._spies[proc.pid] = (spy, out, executor_of(proc, self.default_executor))

    def _why(self, pid: int) -> str:
        """py-spy's own last line about ``pid`` (why it wrote nothing)."""
        try:
            with open(os.path.join(self._dir, f"{pid}.log"), encoding="utf-8",
                      errors="replace") as fh:
                lines = [ln.strip() for ln in fh if ln.strip() and "Sampling process" not in ln]
        except OSError:
            return ""
        errors = [ln for ln in lines if "rror" in ln or "ermission" in ln]
        return (errors or lines or [""])[-1][:200]

    def stop(self) -> dict[str, Any]:
        self._halt.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        for spy, _, _ in self._spies.values():
            if spy.poll() is None:
                try:
                    spy.send_signal(signal.SIGINT)
                except OSError:
                    pass
        counts: dict[tuple[str, str], int] = {}
        for pid, (spy, out, executor) in self._spies.items():
            try:
                spy.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                spy.kill()
                spy.wait(timeout=5.0)
                self._failed.append(f"py-spy on process {pid} did not stop in "
                                    f"{STOP_TIMEOUT_S:.0f} s")
                continue
            try:
                with open(out, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                text = ""
            rows = parse_raw(text)
            if not rows and spy.returncode not in (0, None):
                self._failed.append(f"py-spy on process {pid}: "
                                    f"{self._why(pid) or f'exit {spy.returncode}'}")
            for frames, n in rows:
                key = (";".join([PY_ROOT] + frames), executor)
                counts[key] = counts.get(key, 0) + n
        shutil.rmtree(self._dir, ignore_errors=True)
        samples = sum(counts.values())
        return {"method": METHOD if samples else "none",
                "interval_ms": 1000.0 / self.rate_hz, "rate_hz": self.rate_hz,
                "sample": SAMPLE, "note": self._note(samples), "samples": samples,
                "processes": len(self._spies), "counts": counts}

    def _note(self, samples: int) -> str:
        if self.binary is None:
            where = os.environ.get(BINARY_ENV)
            return (f"no Python profile: py-spy not found ({BINARY_ENV}={where} is not an "
                    "executable)" if where is not None else
                    "no Python profile: py-spy not found (pip install py-spy)")
        failed = "; ".join(self._failed)[:300]
        if samples:
            return f"some Python workers not sampled: {failed}" if failed else ""
        if failed:
            return f"no Python profile: {failed}"
        if not self._spies:
            return "no Python profile: no Python worker ran in the window"
        return "no Python profile: the Python workers were idle (no on-CPU samples)"


def not_sampled(why: str) -> dict[str, Any]:
    """The ``python`` part of a record whose Python workers could not be sampled at all."""
    return {"method": "none", "interval_ms": 1000.0 / RATE_HZ, "rate_hz": RATE_HZ,
            "sample": SAMPLE, "note": f"no Python profile: {why}", "samples": 0,
            "processes": 0, "counts": {}}
