"""The loop the window's background threads share: sample now, then every ``interval`` s."""
from __future__ import annotations

import threading
import time
from typing import Any


class PeriodicSampler(threading.Thread):
    """A daemon thread calling ``sample()`` until ``halt()``; subclasses append to ``rows``."""

    #: False: wait ``interval`` after each sample. True: a sample every ``interval`` of wall
    #: time from the first, whatever one took (a late one: the next at the next tick).
    fixed_rate = False

    def __init__(self, name: str, interval: float):
        super().__init__(name=name, daemon=True)
        self.interval = interval
        self.rows: list[dict[str, Any]] = []
        self._stop_event = threading.Event()

    def sample(self) -> None:
        raise NotImplementedError

    def run(self) -> None:
        due = time.monotonic()
        while not self._stop_event.is_set():
            self.sample()
            wait = self.interval
            if self.fixed_rate and self.interval > 0:
                due += self.interval
                now = time.monotonic()
                if due < now:
                    due = now + self.interval - ((now - due) % self.interval)
                wait = due - now
            self._stop_event.wait(wait)

    def end_loop(self) -> None:
        """Ask the loop to end after the current sample (does not wait; safe from ``sample``)."""
        self._stop_event.set()

    def halt(self, timeout: float) -> None:
        """Stop the loop and wait (bounded) for the thread to end."""
        self.end_loop()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(timeout=timeout)
