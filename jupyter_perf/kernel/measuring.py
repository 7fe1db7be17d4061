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


def run_error(exc: BaseException) -> str:
    """What a failed run stores as its error: :func:`one_line`, plus the cause when the
    message carries a Python traceback (pyspark's PythonException from a UDF: its first line
    says only that a Python worker failed; the worker's own exception is the traceback's
    last line)."""
    first = one_line(exc, limit=2000)
    lines = str(exc).splitlines()
    starts = [i for i, line in enumerate(lines)
              if line.strip() == "Traceback (most recent call last):"]
    if not starts:
        return first
    cause = ""
    for line in lines[starts[-1] + 1:]:
        if not line.strip():
            if cause:
                break                       # the end of the traceback block
            continue
        if not line[:1].isspace():          # frames are indented; the exception line is not
            cause = line.strip()
    return f"{first} — {cause}" if cause and cause not in first else first


def remember(run: Run) -> None:
    with _newest_lock:
        _newest[_kernel()] = run


def last_run() -> Run | None:
    """The newest Run measured in this kernel (``%%perfmeasure -o NAME`` also binds it)."""
    with _newest_lock:
        return _newest.get(_kernel())


def measure(fn: Callable[[], Any], spark=None, label: str = "", store: bool = True,
            ui_url: str | None = None) -> Run:
    """Run ``fn()`` under measurement and return its Run (the result is in ``run.extra``
    only when JSON-able; keep your own reference if you need it). ``ui_url``: a Spark
    Connect server's Spark UI, when ``spark`` is a Connect session.

    If ``fn`` raises, its exception is re-raised unchanged, whatever happens while the run is
    collected or stored."""
    from ..collect.session import spark_session
    from ..collect.windows import window_for

    spark = spark or spark_session()
    window = window_for(spark, ui_url=ui_url, kind="function", label=label,
                        source=getattr(fn, "__qualname__", repr(fn))).start()
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
