"""Host CPU samples while a window runs, for runs whose executors share this host.

With ``local[N]`` (and ``local-cluster``) the tasks, the driver, the JIT and GC threads and
Python workers all share this machine's cores. The analysis uses how busy the cores were to
bound the "more slots" what-if: added slots on the same host cannot make the CPU work finish
faster than ``busy core time / cores`` (see ``analysis/hostcpu.py``).

Read with psutil (a well-kept, cross-platform library) instead of parsing ``/proc/stat``: it
gives per-CPU times on Linux, macOS and Windows, and the CPUs this process may run on.
Busy = user + nice + system + irq + softirq; idle, I/O wait and steal (time the hypervisor
gave to others) are not. Samples are cumulative, so a late or missed sample only blurs the
edges of a stage group, never the totals.
"""
from __future__ import annotations

import time
from typing import Any

import psutil

from .periodic import PeriodicSampler

BUSY_FIELDS = ("user", "nice", "system", "irq", "softirq")


def executors_on_this_host(master: str) -> bool:
    """True when every executor runs on the driver's machine (local and local-cluster)."""
    return str(master or "").strip().startswith("local")


def usable_cpus() -> list[int]:
    """CPU numbers this process may run on (its affinity)."""
    try:
        return sorted(psutil.Process().cpu_affinity())
    except (AttributeError, OSError, psutil.Error):    # no affinity API (macOS)
        return list(range(psutil.cpu_count() or 1))


def busy_core_ms(cpus: list[int]) -> float:
    """Cumulative busy time of ``cpus`` in core-milliseconds."""
    per_cpu = psutil.cpu_times(percpu=True)
    total = 0.0
    for i in cpus:
        if i < len(per_cpu):
            t = per_cpu[i]
            total += sum(getattr(t, f, 0.0) for f in BUSY_FIELDS)
    return total * 1000.0


class HostCpuSampler(PeriodicSampler):
    """Samples cumulative busy core-ms of the usable CPUs every ``interval`` s until stop()."""

    def __init__(self, interval: float = 0.1):
        super().__init__("jupyter-perf-host-cpu", interval)
        self.cpus = usable_cpus()
        self.error = ""

    @property
    def available(self) -> bool:
        return bool(self.cpus)

    def sample(self) -> None:
        try:
            self.rows.append({"time_ms": time.time() * 1000.0,
                              "busy_core_ms": busy_core_ms(self.cpus),
                              "cores": len(self.cpus)})
        except (OSError, AttributeError) as exc:
            self.error = str(exc)
            self.end_loop()

    def stop(self) -> list[dict[str, Any]]:
        """Stop, take a last sample, and return every sample."""
        self.halt(timeout=2.0)
        if not self.error:
            self.sample()
        return self.rows
