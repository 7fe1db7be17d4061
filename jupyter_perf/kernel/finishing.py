"""Finishing a measured cell: after the cell returns, on one background worker, in order.

A measured cell's own result should appear the moment the user's code ends. What comes after
(REST reads, conforming, the analysis, storing, the report) runs here instead, while the kernel
is idle; the cell shows a one-line "collecting…" output that the report then replaces in place
(``update_display_data``, by display id).

Nothing may mix or get lost on the way, so the part of a window that depends on *when* the
cell ended is fixed at the cell's end, on the kernel's main thread, before the worker gets the
window (:func:`seal`): the end time, the job tag removed from the main thread (a tag is a
thread-local property: left on, it would tag the next cell's jobs), the host-CPU sampler's last
sample, the memory sampler and the live display stopped, the session's settings as the cell
left them. Everything else is read by job id (the window's jobs are those with its tag), so it
can wait. The one shared thing is sparkmeasure's listener buffers (one pair per SparkContext,
cleared by each window's start): before another window starts, :meth:`Finisher.handover` copies
what each pending window will read from them.

Spark Connect windows, ``--advised-by`` cells and a terminal IPython (no display ids to update)
finish synchronously, as before. ``jp.last_run()``, the ``%perfmeasure`` verbs that read the
store, and the next cell after ``%%perfmeasure -o NAME`` wait for the pending finishes.
"""
from __future__ import annotations

import atexit
import logging
import os
import queue
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from .. import fmt
from ..errors import one_line
from ..model import Run
from ..service.saving import analysis_or_none, save
from .handoff import set_finisher
from .measuring import remember

log = logging.getLogger("jupyter_perf")

#: How long a kernel shutdown waits for the pending finishes (seconds). A Jupyter server waits
#: ``shutdown_wait_time`` (5 s by default) for the kernel to exit before it kills it.
SHUTDOWN_WAIT_S = float(os.environ.get("JUPYTER_PERF_SHUTDOWN_WAIT_S", "4"))
#: Test-only: while this file exists, the worker does not start the next finish (tests use it
#: to make "the next cell starts while the previous one is finishing" happen deterministically).
GATE_ENV = "JUPYTER_PERF_TEST_FINISH_GATE"
GATE_MAX_S = 300.0
COLLECTING = "perfmeasure: collecting this cell's run…"


def report_bundle(run: Run, analysis=None) -> dict[str, Any]:
    """The report's MIME bundle: the one place the kernel builds it (with the cell's stored
    runs as a series, when the store has earlier ones: the History tab)."""
    from ..render import inline
    from ..service.history import report_series

    return inline.bundle(run, analysis, report_series(run))


def collecting_bundle() -> dict[str, str]:
    return {"text/plain": COLLECTING,
            "text/html": '<div class="jupyter-perf-collecting" style="font-size:var(--jp-ui-'
                         'font-size1, 13px);color:var(--jp-ui-font-color2, #616161)">'
                         f"{COLLECTING}</div>"}


# -- what a finish does -------------------------------------------------------------------
@dataclass
class Options:
    output: str | None = None          # -o NAME: bind the Run to NAME in the notebook
    no_report: bool = False
    advised_by: str | None = None


def finish_window(shell, window, live, opts: Options, status: str, error: str,
                  deferred: bool = False, sealed: "Sealed | None" = None) -> Run | None:
    """Collect, analyse, store and show the window's run. Nothing here may change what the
    cell returned or raised: every failure becomes a line under the cell. ``deferred``: the
    cell has returned, so lines go into its output (replacing "collecting…"), not to
    stderr, which would land under whatever cell runs now."""
    notes: list[str] = []

    def say(line: str) -> None:
        if deferred:
            notes.append(line)
        else:
            print(line, file=sys.stderr)

    started = time.monotonic()
    try:
        run = window.finish(status, error)
    except Exception as exc:   # a bug in collection: the cell's own outcome stands
        _replace(live, None, f"perfmeasure: could not collect this cell's run ({one_line(exc)}); "
                             "the cell itself ran as usual")
        return None
    if sealed is not None:
        sealed.restore(run)
    remember(run)
    if opts.output and shell is not None:
        shell.user_ns[opts.output] = run
    analysis, summary = analysis_or_none(run)
    run.extra["collect_s"] = round(time.monotonic() - started, 3)
    stored = save(run, summary) is not None
    no_jobs = run.jobs.empty and run.stages.empty   # stages without jobs: Connect client-only
    text = None
    try:
        if no_jobs:
            text = "perfmeasure: " + no_jobs_line(run)
        elif opts.no_report:
            text = (f"perfmeasure: {run.describe()}"
                    + (f" — %perfmeasure show {run.run_id}" if stored else ""))
        else:
            bundle = report_bundle(run, analysis)   # the report lists the warnings
            live.replace(bundle)
    except Exception as exc:   # rendering failed: the run is kept, the cell is untouched
        text = (f"perfmeasure: could not show the report ({one_line(exc)}); "
                f"{run.describe()}")
    # the cell failed before any job: its own error, right below, says why — one quiet line
    quiet = no_jobs and (run.extra or {}).get("jobs_started") == 0
    if (no_jobs or opts.no_report) and not quiet:   # no report: one line each
        for warning in run.warnings[:-1] if not stored else run.warnings:
            say(f"perfmeasure: {warning}")
    if not stored and (text is not None or not deferred):
        say(f"perfmeasure: {run.warnings[-1]}; the run is kept in this kernel as "
            "jupyter_perf.last_run()")
    if text is not None:
        _replace(live, None, "\n".join([text, *notes]))
    if opts.advised_by and run.status == "ok":
        from .verbs import show_advised
        show_advised(opts.advised_by, run)
    return run


def no_jobs_line(run) -> str:
    """The one line under a measured cell that ran no Spark job: quiet when the cell's own
    exception (shown right below it) is why."""
    if run.status == "no-jobs":
        return f"no Spark jobs ran in this cell ({fmt.ms(run.wall_ms)}); nothing to profile"
    before_any = (run.extra or {}).get("jobs_started") == 0   # the window counted none
    if run.status == "interrupted" and before_any:
        return "the cell was interrupted before any Spark job ran — nothing to measure"
    if run.status == "failed" and before_any:
        m = re.match(r"\s*([A-Za-z_][\w.]*)", run.error or "")
        raised = m.group(1).rsplit(".", 1)[-1] if m else "an exception"
        return f"the cell raised {raised} before any Spark job ran — nothing to measure"
    return "no Spark job of this cell could be collected; see the line(s) below"


def _replace(live, bundle, message: str) -> None:
    """``message`` in place of the live display, or printed if that display is broken."""
    try:
        live.replace(bundle, message)
    except Exception:
        print(message, file=sys.stderr)


# -- sealing a window at the cell's end ---------------------------------------------------
class HeldListeners:
    """Stands for a sealed window's sparkmeasure listeners: reads the shared buffers until
    another window is about to clear them (:meth:`hold`), then the copy taken then."""

    def __init__(self, live, drain: Callable[[], None]):
        self._live = live
        self._drain = drain
        self._lock = threading.Lock()
        self._held: tuple[Any, Any] | None = None
        self._done = False

    def __bool__(self) -> bool:
        return True

    def begin(self) -> None:   # a sealed window never starts again
        raise RuntimeError("a sealed window's listeners cannot begin")

    def end(self) -> None:     # ended at the seal
        pass

    def hold(self) -> None:
        """Copy the buffers now (the next window's start clears them)."""
        with self._lock:
            if self._held is not None or self._done:
                return
            self._drain()
            try:
                stages = self._live.stage_metrics()
            except Exception:
                stages = None
            try:
                tasks = self._live.task_metrics()
            except Exception:
                tasks = None
            self._held = (stages, tasks)

    def release(self) -> None:
        """The finish is over: nothing reads the buffers for this window any more."""
        with self._lock:
            self._done = True

    def _read(self, i: int):
        with self._lock:
            if self._held is None:
                return (self._live.stage_metrics, self._live.task_metrics)[i]()
            value = self._held[i]
        if value is None:
            raise RuntimeError("sparkmeasure's buffers could not be read at the next cell's start")
        return value.copy()

    def stage_metrics(self):
        return self._read(0)

    def task_metrics(self):
        return self._read(1)


class _StoppedSampler:
    """A host-CPU sampler stopped at the seal: its samples, never one more."""

    def __init__(self, rows: list, error: str):
        self.rows = rows
        self.error = error

    def stop(self) -> list:
        return self.rows


class _NoMore(list):
    """The memory sampler's rows once the next window started: the finish's "one last sample,
    after the window" would be the next cell's."""

    def extend(self, _rows) -> None:   # type: ignore[override]
        pass

    def append(self, _row) -> None:   # type: ignore[override]
        pass


@dataclass
class Sealed:
    """What :func:`seal` fixed at the cell's end; laid back over the finished run."""

    end_ms: float
    conf: dict[str, str] | None = None
    defaults: dict[str, str] | None = None
    listeners: HeldListeners | None = None
    sampler: Any = None

    def restore(self, run: Run) -> None:
        run.end_ms = self.end_ms
        if self.conf is not None:
            run.extra["spark_conf"] = self.conf
            run.extra["spark_defaults"] = self.defaults or {}

    def hold(self) -> None:
        if self.listeners is not None:
            self.listeners.hold()
        if self.sampler is not None and not isinstance(self.sampler.rows, _NoMore):
            self.sampler.rows = _NoMore(self.sampler.rows)

    def release(self) -> None:
        if self.listeners is not None:
            self.listeners.release()


def can_defer(window) -> bool:
    """A classic (py4j) window; a Spark Connect window finishes synchronously."""
    from ..collect.window import ClassicWindow

    return type(window).__name__ != "ConnectWindow" and isinstance(window, ClassicWindow) \
        and not window.stopped


def seal(window) -> Sealed:
    """Fix, on the main thread at the cell's end, what depends on when the cell ended (see the
    module's doc). Cheap: a few py4j calls and joins of samplers that are between samples."""
    from ..collect.sessionconf import with_session_conf

    run = window.run
    sealed = Sealed(end_ms=time.time() * 1000.0)
    if window.poller is not None:
        window.poller.end_loop()
    window.end_cell()                        # job tag, job count, CPU profile: at the end
    if window.host_cpu is not None:
        rows = window.host_cpu.stop()        # the last sample: now
        window.host_cpu = _StoppedSampler(rows, window.host_cpu.error)
    if window.sampler is not None:
        window.sampler.end_loop()            # no sample after this one (joined by the finish)
        sealed.sampler = window.sampler
    try:
        sealed.conf, sealed.defaults = with_session_conf(run.extra.get("spark_conf"),
                                                         window.spark)
    except Exception:
        sealed.conf = None                   # the finish reads (and reports) it
    if window.listeners is not None and not isinstance(window.listeners, HeldListeners):
        live = window.listeners
        try:
            live.end()
        except Exception:
            pass
        sealed.listeners = HeldListeners(live, window.drain_quietly)
        window.listeners = sealed.listeners
    return sealed


# -- the worker ---------------------------------------------------------------------------
@dataclass
class Pending:
    run_id: str
    work: Callable[[], Any]
    sealed: Sealed | None = None
    binds: bool = False                # -o NAME: the next cell waits for it
    done: threading.Event = field(default_factory=threading.Event)
    error: str = ""
    result: Any = None                 # the finished Run (None: it could not be collected)


class Finisher:
    """One worker thread; finishes run in the order the cells ended."""

    def __init__(self):
        self._lock = threading.Lock()
        self._queue: "queue.Queue[Pending]" = queue.Queue()
        self._pending: list[Pending] = []
        self._thread: threading.Thread | None = None
        self.finished = 0

    # the kernel's side
    def submit(self, item: Pending) -> Pending:
        with self._lock:
            self._pending.append(item)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="jupyter-perf-finisher",
                                                daemon=True)
                self._thread.start()
        _register_atexit(self)
        self._queue.put(item)
        return item

    def pending(self) -> list[Pending]:
        with self._lock:
            return [p for p in self._pending if not p.done.is_set()]

    def handover(self) -> None:
        """Another window is about to start (and clear sparkmeasure's buffers): every pending
        window copies what it still needs of them."""
        for item in self.pending():
            if item.sealed is not None:
                item.sealed.hold()

    def wait(self, timeout: float | None = None, binds_only: bool = False) -> bool:
        """Wait for the pending finishes (all, or those binding a name); True if none is left.
        Interruptible: Ctrl-C stops the wait, never the finish. From the worker itself: no
        wait."""
        if threading.current_thread() is self._thread:
            return not self.pending()
        deadline = None if timeout is None else time.monotonic() + timeout
        for item in self.pending():
            if binds_only and not item.binds:
                continue
            while not item.done.wait(0.1):
                if deadline is not None and time.monotonic() > deadline:
                    return False
        return not self.pending()

    # the worker's side
    def _work(self) -> None:
        while True:
            item = self._queue.get()
            _test_gate()
            try:
                item.result = item.work()
            except BaseException as exc:   # never let one finish stop the next
                item.error = one_line(exc)
                log.warning("jupyter-perf: finishing run %s failed: %s", item.run_id, item.error)
            finally:
                if item.sealed is not None:
                    item.sealed.release()
                with self._lock:
                    self.finished += 1
                    self._pending = [p for p in self._pending if p is not item]
                item.done.set()


def _test_gate() -> None:
    gate = os.environ.get(GATE_ENV)
    if not gate:
        return
    deadline = time.monotonic() + GATE_MAX_S
    while os.path.exists(gate) and time.monotonic() < deadline:
        time.sleep(0.05)


_finisher: Finisher | None = None
_finisher_lock = threading.Lock()


def finisher() -> Finisher:
    global _finisher
    with _finisher_lock:
        if _finisher is None:
            _finisher = Finisher()
            set_finisher(_finisher)
        return _finisher


def defer_finishing(shell) -> bool:
    """Finish measured cells after they return: in a Jupyter kernel (whose outputs can be
    replaced in place), not in a terminal. JUPYTER_PERF_FINISH=sync|after forces it."""
    forced = os.environ.get("JUPYTER_PERF_FINISH", "").strip().lower()
    if forced in ("sync", "after"):
        return forced == "after"
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def _at_exit() -> None:
    """Kernel shutdown or restart: wait (bounded) for the pending finishes, then say which
    were cut short."""
    if _finisher is None:
        return
    if not _finisher.wait(SHUTDOWN_WAIT_S):
        ids = ", ".join(p.run_id for p in _finisher.pending())
        log.warning("jupyter-perf: the kernel exits before run(s) %s finished collecting "
                    "(waited %.0f s)", ids, SHUTDOWN_WAIT_S)


def _register_atexit(_f: Finisher) -> None:
    """Registered again at each submit so it runs before the handlers registered since (e.g.
    the Spark session's own, which stops the JVM the finish still reads): atexit runs the
    last-registered first."""
    atexit.unregister(_at_exit)
    atexit.register(_at_exit)


def defer(shell, window, live, opts: Options, status: str, error: str) -> Pending:
    """Seal the window now, show "collecting…", and finish it on the worker."""
    sealed = seal(window)
    live.collecting(collecting_bundle())

    def work() -> Run | None:
        return finish_window(shell, window, live, opts, status, error, deferred=True, sealed=sealed)

    return finisher().submit(Pending(window.run.run_id, work, sealed, binds=bool(opts.output)))
