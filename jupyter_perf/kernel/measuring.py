"""``measure(fn)``: what ``%%perfmeasure`` does, as a function; and the kernel's last run."""
from __future__ import annotations

import logging
import threading
import weakref
from typing import Any, Callable

from IPython import get_ipython

from ..errors import one_line
from ..model import Run
from ..service.saving import save
from .handoff import disarm_current, handover, wait_pending

log = logging.getLogger("jupyter_perf")


class _PlainPython:
    """Stands for the kernel when no IPython shell runs (a script calling ``jp.measure``)."""


_PLAIN = _PlainPython()
_newest: "weakref.WeakKeyDictionary[Any, Run]" = weakref.WeakKeyDictionary()
_newest_lock = threading.Lock()


def _kernel() -> Any:
    """The IPython shell this code runs in (the kernel), or the plain-Python stand-in."""
    shell = get_ipython()
    return shell if shell is not None else _PLAIN


TRACEBACK = "Traceback (most recent call last):"
# What pyspark's PythonException says before the worker's traceback: no use in one line.
_WORKER_BOILERPLATE = (". Please see the stack trace below.",)


def traceback_cause(text: str) -> str:
    """The exception line of the last Python traceback in ``text``, or '' if it has none.

    A traceback's frames are indented and its exception line is not: the first unindented line
    after the last ``Traceback (most recent call last):`` (which may end a longer line, as in
    Spark Connect's "[PYTHON_EXCEPTION] ... worker: Traceback ...") is the exception the
    worker raised. Lines after it (the rest of a multi-line message, "SQLSTATE: ...", a JVM
    stack trace) are not part of the one line.
    """
    at = text.rfind(TRACEBACK)
    if at < 0:
        return ""
    for line in text[at + len(TRACEBACK):].splitlines():
        if line.strip() and not line[:1].isspace():
            return line.strip()
    return ""


def run_error(exc: BaseException, limit: int = 2000) -> str:
    """What a failed run stores as its error, one line, never blank: :func:`one_line`, or,
    when the message carries a Python traceback (pyspark's PythonException from a UDF, whose
    text may start with a blank line and whose first line says only that a Python worker
    failed), the worker's own exception line first, e.g. ``ModuleNotFoundError: No module
    named 'pyarrow' — PythonException: An exception was thrown from the Python worker``."""
    first = one_line(exc, limit=limit)
    cause = traceback_cause(str(exc))
    if not cause or cause in first:
        return first
    for boilerplate in _WORKER_BOILERPLATE:
        if first.endswith(boilerplate):
            first = first[: -len(boilerplate)]
    out = f"{cause} — {first.rstrip(' :')}"
    return out if len(out) <= limit else out[: limit - 1] + "…"


def current_cell_id(shell) -> str:
    """JupyterLab sends the executing cell's id in the request metadata; '' elsewhere."""
    try:
        parent = shell.kernel.get_parent()
        return str((parent or {}).get("metadata", {}).get("cellId") or "")
    except Exception:
        return ""


def interrupt_in(exc: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt behind ``exc``, if the user's Ctrl-C is what raised it."""
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def remember(run: Run) -> None:
    with _newest_lock:
        _newest[_kernel()] = run


def last_run() -> Run | None:
    """The newest Run measured in this kernel (``%%perfmeasure -o NAME`` also binds it).
    A cell that just ended may still be collecting its run after it returned: this waits for
    it (Ctrl-C stops the wait, not the collection)."""
    wait_pending()
    with _newest_lock:
        return _newest.get(_kernel())


def measure(fn: Callable[[], Any], spark=None, label: str = "", store: bool = True,
            ui_url: str | None = None, profile: bool = False) -> Run:
    """Run ``fn()`` under measurement and return its Run (the result is in ``run.extra``
    only when JSON-able; keep your own reference if you need it). ``ui_url``: a Spark
    Connect server's Spark UI, when ``spark`` is a Connect session. ``profile``: CPU stack
    samples of the window too (``collect/profiler.py``).

    If ``fn`` raises, its exception is re-raised unchanged, whatever happens while the run is
    collected or stored."""
    from ..collect.session import spark_session
    from ..collect.windows import window_for
    spark = spark or spark_session()
    disarm_current()        # the cell is measured here: always-on steps aside
    handover()              # a finishing cell copies the listener buffers before they clear
    window = window_for(spark, ui_url=ui_url, kind="function", label=label,
                        source=getattr(fn, "__qualname__", repr(fn)), profile=profile).start()
    try:
        fn()
    except KeyboardInterrupt:
        window.cancel()
        _close_after_error(window, "interrupted", "KeyboardInterrupt", store)
        raise
    except BaseException as exc:
        _close_after_error(window, "failed", run_error(exc), store)
        raise
    run = window.finish()
    _close(run, store)
    return run


def _close_after_error(window, status: str, error: str, store: bool) -> None:
    """Collect and keep the run of a failed call; never let that replace the call's error."""
    try:
        _close(window.finish(status, error), store)
    except Exception as exc:
        log.warning("jupyter-perf could not collect the run of the failed call: %s",
                    one_line(exc))


def _close(run: Run, store: bool) -> None:
    remember(run)
    if store:
        save(run)
