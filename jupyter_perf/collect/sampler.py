"""Background sampler of executor memory through the REST API (>= 1 Hz)."""
from __future__ import annotations

import time
from typing import Any

from .periodic import PeriodicSampler
from .rest import RestError, SparkRest

PEAK_FIELDS = {
    "JVMHeapMemory": "peak_jvm_heap_bytes",
    "OnHeapExecutionMemory": "peak_on_heap_execution_bytes",
    "OnHeapStorageMemory": "peak_on_heap_storage_bytes",
    "ProcessTreeJVMRSSMemory": "peak_process_rss_bytes",
}


def memory_rows(executors: list[dict[str, Any]], now_ms: float) -> list[dict[str, Any]]:
    rows = []
    for ex in executors:
        mem = ex.get("memoryMetrics") or {}
        peak = ex.get("peakMemoryMetrics") or {}
        row = {
            "time_ms": now_ms,
            "executor_id": str(ex.get("id", "")),
            "used_on_heap_storage_bytes": mem.get("usedOnHeapStorageMemory"),
            "used_off_heap_storage_bytes": mem.get("usedOffHeapStorageMemory"),
            "max_memory_bytes": ex.get("maxMemory"),
            "memory_used_bytes": ex.get("memoryUsed"),
        }
        for field, column in PEAK_FIELDS.items():
            row[column] = peak.get(field)
        rows.append(row)
    return rows


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
