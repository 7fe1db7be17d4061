"""``measure(fn)``: what ``%%perfmeasure`` does, as a function; and the kernel's last run."""
from __future__ import annotations

import logging
from typing import Any, Callable

from .model import Run

log = logging.getLogger("jupyter_perf")
_last: list[Run] = []


def remember(run: Run) -> None:
    _last[:] = [run]


def last_run() -> Run | None:
    """The newest Run measured in this process (``%%perfmeasure -o NAME`` also binds it)."""
    return _last[0] if _last else None


def save(run: Run, summary: dict[str, Any] | None = None) -> str | None:
    """Store ``run`` durably; on failure keep going and say why in the run's warnings."""
    from .store import StoreError, default_store
    try:
        return default_store().save(run, summary=summary if summary is not None
                                    else summary_or_none(run))
    except StoreError as exc:
        run.warnings.append(str(exc))
        log.warning("%s", exc)
        return None


def analysis_or_none(run: Run):
    """(Analysis, summary) of ``run``, or (None, None) if the analysis fails: never lose a run."""
    try:
        from .analysis import analyze
    except ImportError:
        return None, None
    try:
        analysis = analyze(run)
        return analysis, analysis.summary()
    except Exception as exc:
        run.warnings.append(f"analysis failed: {type(exc).__name__}: {exc}")
        return None, None


def summary_or_none(run: Run) -> dict[str, Any] | None:
    return analysis_or_none(run)[1]


def measure(fn: Callable[[], Any], spark=None, label: str = "", store: bool = True) -> Run:
    """Run ``fn()`` under measurement and return its Run (the result is in ``run.extra``
    only when JSON-able; keep your own reference if you need it)."""
    from .collect import Window
    from .session import spark_session

    spark = spark or spark_session()
    window = Window(spark, kind="function", label=label,
                    source=getattr(fn, "__qualname__", repr(fn))).start()
    try:
        fn()
    except KeyboardInterrupt:
        window.cancel()
        run = window.finish("interrupted", "KeyboardInterrupt")
        _close(run, store)
        raise
    except BaseException as exc:
        run = window.finish("failed", f"{type(exc).__name__}: {exc}".splitlines()[0])
        _close(run, store)
        raise
    run = window.finish()
    _close(run, store)
    return run


def _close(run: Run, store: bool) -> None:
    remember(run)
    if store:
        save(run)
