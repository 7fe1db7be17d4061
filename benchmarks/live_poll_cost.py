"""Kernel CPU of one live-display poll's heap-peak read: the conform step vs the dict reader.

While a measured cell runs, the live display reads the new memory samples' executor heap peaks
twice a second (``collect/window.ClassicWindow._peak_memory``). It used the one conform step
(``conform_rest("memory", rows)``: a pandas DataFrame per poll); it now reads the raw
``/allexecutors`` items with ``rest_fields.heap_peak`` (the same field, unit and zero rule,
checked equal on a real answer by tests/collect/test_rest.py). Both run side by side in one
process, alternating, on the same sample (one executor's /allexecutors item, as a local[N]
poll returns): thread CPU per poll (``time.thread_time``), median of the rounds.

    python benchmarks/live_poll_cost.py [--rounds 7]
"""
from __future__ import annotations

import argparse
import statistics
import time

from jupyter_perf.collect.fields import PEAK_MEMORY_FIELDS
from jupyter_perf.collect.rest_fields import conform_rest, heap_peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    item = {"id": "driver", "hostPort": "host:40000", "isActive": True, "totalCores": 2,
            "maxMemory": 1 << 29, "memoryUsed": 1 << 20,
            "memoryMetrics": {"usedOnHeapStorageMemory": 1 << 20, "usedOffHeapStorageMemory": 0},
            "peakMemoryMetrics": {k: (i + 1) << 20 for i, k in enumerate(PEAK_MEMORY_FIELDS)}}
    rows = [dict(item, time_ms=1.0)]

    def conform_poll():
        table = conform_rest("memory", rows)[["executor_id", "peak_jvm_heap_bytes"]].dropna()
        return list(zip(table["executor_id"], table["peak_jvm_heap_bytes"]))

    def dict_poll():
        return list(filter(None, map(heap_peak, rows)))

    assert conform_poll() == dict_poll()
    calls = {"conform step": (conform_poll, 200), "dict reader": (dict_poll, 20_000)}
    per_call: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(args.rounds):
        for name, (fn, n) in calls.items():
            start = time.thread_time()
            for _ in range(n):
                fn()
            per_call[name].append((time.thread_time() - start) / n * 1e3)
    for name, values in per_call.items():
        print(f"{name}: median {statistics.median(values):.4f} ms CPU per poll "
              f"(rounds: {', '.join(f'{v:.4f}' for v in values)})")
    ratio = statistics.median(per_call["conform step"]) / statistics.median(per_call["dict reader"])
    print(f"conform step / dict reader: {ratio:.0f}x")


if __name__ == "__main__":
    main()
