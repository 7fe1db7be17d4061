"""Where the kernel's front doors meet the work still finishing after a cell: ``last_run()``,
``measure()`` and the magics call these, ``finishing.py`` and ``always_on.py`` register what
they answer with. (No imports from the rest of the kernel: every module may import this.)"""
from __future__ import annotations

import threading
from typing import Any

_finisher: Any = None                  # finishing.Finisher, once a cell was deferred
_always_on: list[Any] = []             # always_on.AlwaysOn, one per shell


def set_finisher(finisher: Any) -> None:
    global _finisher
    _finisher = finisher


def add_always_on(state: Any) -> None:
    _always_on.append(state)


def wait_pending(timeout: float | None = None, binds_only: bool = False) -> bool:
    """Wait for this kernel's pending finishes (none: returns at once); True if none is left.
    Ctrl-C stops the wait, never the finish."""
    if _finisher is None:
        return True
    return _finisher.wait(timeout, binds_only=binds_only)


def handover() -> None:
    """A window is about to start: the windows still finishing copy sparkmeasure's buffers."""
    if _finisher is not None:
        _finisher.handover()


def disarm_current() -> None:
    """``%%perfmeasure`` or ``jp.measure()`` measures the running cell: always-on steps aside."""
    if threading.current_thread() is not threading.main_thread():
        return
    for state in list(_always_on):
        state.disarm()
