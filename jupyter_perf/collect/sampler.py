"""Background sampler of executor memory through the REST API (>= 1 Hz)."""
from __future__ import annotations

import time
from typing import Any

from .periodic import PeriodicSampler
from .rest import RestError, SparkRest


def memory_rows(executors: list[dict[str, Any]], now_ms: float) -> list[dict[str, Any]]:
    """One raw sample per executor: its ``/allexecutors`` item and when it was read
    (``time_ms``); ``rest_fields.conform_rest("memory", rows)`` maps Spark's fields."""
    return [dict(ex, time_ms=now_ms) for ex in executors]


class MemorySampler(PeriodicSampler):
    """Polls ``/allexecutors`` every ``interval`` seconds until ``stop()``."""

    def __init__(self, rest: SparkRest, interval: float = 0.5):
        super().__init__("jupyter-perf-memory-sampler", interval)
        self.rest = SparkRest(rest.base_url, rest.app_id, rest.attempt_id, timeout=10.0)
        self.errors = 0
        self.last_error = ""

    def sample(self) -> None:
        try:
            self.rows.extend(memory_rows(self.rest.all_executors(), time.time() * 1000.0))
        except (RestError, KeyError, ValueError) as exc:
            self.errors += 1
            self.last_error = str(exc)

    def stop(self) -> list[dict[str, Any]]:
        self.halt(timeout=10)
        self.rest.close()
        return self.rows
