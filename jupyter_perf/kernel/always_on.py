"""``%perfmeasure on``: measure every cell that runs Spark jobs, without the magic.

IPython's ``pre_run_cell`` / ``post_run_cell`` events bracket every cell. A cell that starts
no Spark job must cost next to nothing, so the cell's start does only what cannot be done
later: its job tag goes on the kernel's main thread (one py4j call; a tag is a thread-local
property, and it is what finds the cell's jobs afterwards). Everything else a measurement
window starts (sparkmeasure's listeners, the memory and host-CPU samplers, the live display)
starts when the cell's first job is seen: a watcher thread looks for jobs with the tag every
0.1 s while the cell runs, and the cell's end looks once more. No job: the tag comes off
(one more call) and the cell gets no output at all.

Only classic (py4j) sessions that exist when the cell starts are watched: a Spark Connect
session, or a session the cell itself creates, needs ``%%perfmeasure``. A ``%%perfmeasure``
cell, and ``jp.measure()`` inside a cell, take the cell over (the cell is not measured twice).
"""
from __future__ import annotations

import os
import sys
import threading
import time

from ..collect.window import TAG_PREFIX, ClassicWindow
from ..errors import one_line
from .finishing import Options, can_defer, defer, defer_finishing, finish_window
from .handoff import add_always_on, handover, wait_pending
from .live import LiveDisplay, mode_for
from .measuring import current_cell_id, interrupt_in, run_error

ENV = "JUPYTER_PERF_ALWAYS_ON"
POLL_S = 0.1


def env_says_on() -> bool:
    return os.environ.get(ENV, "").strip().lower() in ("1", "true", "yes", "on")


class AlwaysOnWindow(ClassicWindow):
    """A measurement window started late: the cell's job tag was set when the cell started
    (:class:`Armed`); the rest of ``ClassicWindow.start`` runs once its first job is seen."""

    def adopt(self, job_ids: list[int]) -> None:
        """Own what the cell did before the wake: the main thread's tag (from ``arm``, removed
        at the cell's end) and the jobs already seen with it."""
        self._tagged = True
        if job_ids:
            self._first_job = min(job_ids)

    def _mark_sql(self) -> None:
        # the cell's SQL executions may have started before the wake: no mark, the finish
        # reads the SQL list and keeps the executions of the window's jobs
        self._sql_mark = None


class Armed:
    """One cell under always-on: its tag on the main thread, and nothing else until a job
    with that tag is seen (no window, no DataFrame, no thread started per cell)."""

    def __init__(self, spark, source: str, notebook: str, cell_id: str,
                 profile: bool = False):
        from ..model import new_run_id

        self.spark, self.sc = spark, spark.sparkContext
        self.run_id = new_run_id()
        self.tag = TAG_PREFIX + self.run_id
        self.source, self.notebook, self.cell_id = source, notebook, cell_id
        self.profile = profile      # CPU stack samples from the first job on (--profile)
        self.lock = threading.Lock()
        self.state = "new"          # armed -> woken -> ended (or dropped)
        self.window: AlwaysOnWindow | None = None
        self.armed_ms = 0.0

    def arm(self) -> None:
        self.sc._jsc.addJobTag(self.tag)
        self.armed_ms = time.time() * 1000.0
        self.state = "armed"

    def untag(self) -> None:
        try:
            self.sc._jsc.removeJobTag(self.tag)
        except Exception:
            pass

    def job_ids_now(self, tracker) -> list[int]:
        return [int(i) for i in tracker.getJobIdsForTag(self.tag)]

    def wake(self, job_ids: list[int], on_progress=None) -> AlwaysOnWindow:
        """Start the window (from the watcher, or at the cell's end)."""
        window = AlwaysOnWindow(self.spark, kind="cell", label="", source=self.source,
                                notebook=self.notebook, on_progress=on_progress,
                                profile=self.profile)
        window.run.run_id, window.tag = self.run_id, self.tag
        if self.cell_id:
            window.run.extra["cell_id"] = self.cell_id
        window.run.extra["always_on"] = True
        handover()                              # listeners.begin() clears shared buffers
        ClassicWindow.start(window)             # (tags this thread too: taken off below)
        if threading.current_thread() is not threading.main_thread():
            self.untag()
        window.adopt(job_ids)
        window.run.start_ms = self.armed_ms
        self.window = window
        self.state = "woken"
        return window


class AlwaysOn:
    """The kernel's always-on state and its two IPython event handlers."""

    def __init__(self, shell):
        self.shell = shell
        self.enabled = False
        self.profile = False         # %perfmeasure on --profile: each measured cell sampled
        self.cells = 0               # cells measured (woken)
        self._window: Armed | None = None
        self._live: LiveDisplay | None = None
        self._tracker = None         # (SparkContext, its JVM status tracker)
        self._cond = threading.Condition()
        self._watcher: threading.Thread | None = None

    # -- switching ------------------------------------------------------------------
    def enable(self, on: bool, profile: bool = False) -> None:
        """On or off; ``profile``: also sample each measured cell's CPU stacks, from its
        first Spark job on (off by default: docs/benchmarks.md, "Issue P")."""
        self.enabled = bool(on)
        self.profile = bool(on and profile)
        if not on:
            self.disarm()

    # -- IPython events -----------------------------------------------------------------
    def pre_run_cell(self, info) -> None:
        wait_pending(binds_only=True)       # %%perfmeasure -o NAME: NAME exists for this cell
        if not self.enabled or _measured_by_magic(getattr(info, "raw_cell", "") or ""):
            return
        try:
            self._arm(getattr(info, "raw_cell", "") or "")
        except Exception as exc:   # never stop the cell itself
            self._window = None
            print(f"perfmeasure: always-on could not watch this cell ({one_line(exc)})",
                  file=sys.stderr)

    def post_run_cell(self, result) -> None:
        window, self._window = self._window, None
        if window is None:
            return
        try:
            self._end(window, getattr(result, "error_in_exec", None))
        except Exception as exc:
            try:
                window.untag()
                if window.window is not None:
                    window.window.stop_background()
            except Exception:
                pass
            print(f"perfmeasure: always-on could not measure this cell ({one_line(exc)}); the "
                  "cell itself ran as usual", file=sys.stderr)

    # -- the cell's start and end ---------------------------------------------------------
    def _arm(self, source: str) -> None:
        spark = _classic_session()
        if spark is None:
            return
        shell = self.shell
        window = Armed(spark, source, _notebook(shell), current_cell_id(shell),
                       profile=self.profile)
        window.arm()
        self._live = LiveDisplay(mode_for(shell))
        with self._cond:
            self._window = window
            self._cond.notify_all()
        self._start_watcher()

    def disarm(self) -> None:
        """The cell is measured another way (``%%perfmeasure``, ``jp.measure``) or always-on
        was switched off: drop this cell's window (only its tag was set if it never woke)."""
        window, self._window = self._window, None
        if window is None:
            return
        with window.lock:
            window.untag()
            if window.window is not None:
                window.window.stop_background()
            window.state = "dropped"

    def _end(self, armed: Armed, error) -> None:
        live = self._live or LiveDisplay("none")
        with armed.lock:
            if armed.state == "armed":
                ids = armed.job_ids_now(self._status_tracker(armed.sc))
                if not ids:                     # no Spark job: no output at all
                    armed.untag()
                    armed.state = "dropped"
                    return
                armed.wake(ids)                 # the cell is over: no live display
            if armed.state != "woken" or armed.window is None:
                return
            armed.state = "ended"
        window = armed.window
        self.cells += 1
        status, message = "ok", ""
        if error is not None:
            interrupt = interrupt_in(error)
            if interrupt is not None:
                window.cancel()
                status, message = "interrupted", "KeyboardInterrupt"
            else:
                status, message = "failed", run_error(error)
        opts = Options()
        if defer_finishing(self.shell) and can_defer(window):
            defer(self.shell, window, live, opts, status, message)
        else:
            finish_window(self.shell, window, live, opts, status, message)

    # -- the watcher ----------------------------------------------------------------------
    def _status_tracker(self, sc):
        cached = self._tracker
        if cached is None or cached[0] is not sc:
            cached = (sc, sc._jsc.sc().statusTracker())
            self._tracker = cached
        return cached[1]

    def _start_watcher(self) -> None:
        if self._watcher is None or not self._watcher.is_alive():
            self._watcher = threading.Thread(target=self._watch, name="jupyter-perf-always-on",
                                             daemon=True)
            self._watcher.start()

    def _watch(self) -> None:
        while True:
            with self._cond:
                while self._window is None:
                    self._cond.wait()
                window = self._window
                self._cond.wait(POLL_S)      # the first look after POLL_S
            if window is not self._window:
                continue
            try:
                with window.lock:
                    if window.state != "armed":
                        continue
                    ids = window.job_ids_now(self._status_tracker(window.sc))
                    if ids:
                        live = self._live
                        window.wake(ids, live.update if live is not None
                                    and live.mode != "none" else None)
            except Exception:
                time.sleep(POLL_S)           # the cell's end looks again


def _measured_by_magic(raw: str) -> bool:
    """A cell the magic measures itself (``%%perfmeasure``) or a ``%perfmeasure`` verb."""
    first = raw.lstrip().split("\n", 1)[0]
    return first.startswith("%%perfmeasure") or first.startswith("%perfmeasure")


def _classic_session():
    """The process's classic SparkSession if its context runs, else None (no py4j call)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return None
    for spark in (getattr(SparkSession, "_activeSession", None),
                  getattr(SparkSession, "_instantiatedSession", None)):
        if spark is not None and getattr(getattr(spark, "sparkContext", None), "_jsc", None):
            return spark
    return None


def _notebook(shell) -> str:
    ns = getattr(shell, "user_ns", {}) or {}
    return str(ns.get("__session__") or os.environ.get("JPY_SESSION_NAME", "") or "")


_instances: dict[int, AlwaysOn] = {}


def always_on_for(shell) -> AlwaysOn:
    """The shell's always-on state, its event handlers registered once."""
    key = id(shell)
    found = _instances.get(key)
    if found is None or found.shell is not shell:
        found = AlwaysOn(shell)
        _instances[key] = found
        add_always_on(found)
        shell.events.register("pre_run_cell", found.pre_run_cell)
        shell.events.register("post_run_cell", found.post_run_cell)
        # IPython transforms a cell before pre_run_cell: a cell that reads the name a
        # `%%perfmeasure -o NAME` cell binds after it returned ("run" alone) would become the
        # %run automagic if the name is not bound yet. The first cleanup transformer waits.
        transformers = getattr(shell, "input_transformers_cleanup", None)
        if isinstance(transformers, list):
            transformers.insert(0, wait_for_bound_names)
    return found


def wait_for_bound_names(lines: list[str]) -> list[str]:
    """An IPython input transformer (cleanup stage, first): waits until every pending finish of
    a ``%%perfmeasure -o NAME`` cell has bound its name, then leaves the cell as it is."""
    wait_pending(binds_only=True)
    return lines
