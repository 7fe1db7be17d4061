"""The loop the window's background threads share: sample now, then every ``interval`` s."""
from __future__ import annotations

import threading
from typing import Any


class PeriodicSampler(threading.Thread):
    """A daemon thread calling ``sample()`` until ``halt()``; subclasses append to ``rows``."""

    def __init__(self, name: str, interval: float):
        super().__init__(name=name, daemon=True)
        self.interval = interval
        self.rows: list[dict[str, Any]] = []
        self._stop_event = threading.Event()

    def sample(self) -> None:
        raise NotImplementedError

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.sample()
            self._stop_event.wait(self.interval)

    def end_loop(self) -> None:
        """Ask the loop to end after the current sample (does not wait; safe from ``sample``)."""
        self._stop_event.set()

    def halt(self, timeout: float) -> None:
        """Stop the loop and wait (bounded) for the thread to end."""
        self.end_loop()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(timeout=timeout)
