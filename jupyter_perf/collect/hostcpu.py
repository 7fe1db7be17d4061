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

Each sample also holds ``own_core_ms``: the CPU time (user + system) of this process tree —
the kernel/driver process and all its descendants: the driver JVM py4j launched, the Python
workers the JVM forks, ``local-cluster``'s executor JVMs, and any subprocess the notebook
started. It is what separates this application's load from other processes' on a shared host
(``analysis/hostcpu.py``). The tree is re-listed every ``tree_every`` samples; a process
that ends keeps the CPU time last read for it, so the column never goes back, and one that
appears counts from its birth, so a late listing only moves its CPU time to a later sample.

Listing a tree with psutil (``Process.children(recursive=True)``) reads the parent of every
process on the host each time: ~1.3 ms with 70 processes, several ms on a busy host, ten times
a second in the kernel while a measured cell runs. A process's parent does not change while it
lives (an orphan is re-parented to init, which takes it out of any tree below this process), so
:class:`ParentCache` reads it once per process: a re-listing reads the process ids (one
directory) and the parents of the new ones only. A pid that ends and is reused between two
listings (the whole pid space wrapping around in a fraction of a second) would keep its old
parent: not a case on a real host.
"""
from __future__ import annotations

import time
from typing import Any

import psutil

from ..model import executors_on_this_host
from .periodic import PeriodicSampler

BUSY_FIELDS = ("user", "nice", "system", "irq", "softirq")
__all__ = ["BUSY_FIELDS", "HostCpuSampler", "ParentCache", "ProcessTreeCpu", "busy_core_ms",
           "executors_on_this_host", "usable_cpus"]


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


class ParentCache:
    """The parent of each process on the host, read once per process while one window runs
    (see the module's docstring)."""

    def __init__(self) -> None:
        self._parent: dict[int, int] = {}

    def descendants(self, root: int) -> list[int]:
        """The pids of ``root``'s descendants alive now."""
        live = psutil.pids()
        alive = set(live)
        parent = self._parent
        for pid in [p for p in parent if p not in alive]:
            del parent[pid]                       # ended: its pid may be reused later
        for pid in live:
            if pid not in parent:
                try:
                    parent[pid] = psutil.Process(pid).ppid()
                except psutil.Error:              # ended between listing and reading
                    continue
        children: dict[int, list[int]] = {}
        for pid, ppid in parent.items():
            children.setdefault(ppid, []).append(pid)
        out: list[int] = []
        seen = {root}
        stack = list(children.get(root, ()))
        while stack:
            pid = stack.pop()
            if pid not in seen:
                seen.add(pid)
                out.append(pid)
                stack.extend(children.get(pid, ()))
        return out


class ProcessTreeCpu:
    """Cumulative CPU time (user + system) of a process and all its descendants, in ms."""

    def __init__(self, root: psutil.Process | None = None, tree_every: int = 5):
        self.root = root or psutil.Process()
        self.tree_every = max(1, int(tree_every))
        self.parents = ParentCache()
        self._procs: dict[tuple[int, float], psutil.Process] = {}
        self._pids: set[int] = set()              # of the live ones in _procs
        self._last: dict[tuple[int, float], float] = {}   # ms last read, per (pid, birth)
        self._calls = 0                           # listed at the first call (the sampler's
                                                  # thread, not the cell's)

    def _relist(self) -> None:
        try:
            pids = [self.root.pid] + self.parents.descendants(self.root.pid)
        except (OSError, psutil.Error):
            pids = [self.root.pid]
        for pid in pids:
            if pid in self._pids:
                continue
            try:
                p = self.root if pid == self.root.pid else psutil.Process(pid)
                key = (pid, p.create_time())
            except psutil.Error:
                continue                          # gone between listing and reading
            self._procs.setdefault(key, p)
            self._pids.add(pid)

    def core_ms(self) -> float:
        """The tree's CPU ms so far: live processes read now, ended ones as last read."""
        if self._calls % self.tree_every == 0:
            self._relist()
        self._calls += 1
        for key, p in list(self._procs.items()):
            try:
                t = p.cpu_times()
                self._last[key] = (t.user + t.system) * 1000.0
            except psutil.Error:                  # ended (or no longer readable): keep it
                del self._procs[key]
                self._pids.discard(key[0])
        return float(sum(self._last.values()))


class HostCpuSampler(PeriodicSampler):
    """Samples cumulative busy core-ms of the usable CPUs every ``interval`` s until stop()."""

    def __init__(self, interval: float = 0.1):
        super().__init__("jupyter-perf-host-cpu", interval)
        self.cpus = usable_cpus()
        self.error = ""
        try:
            self.tree: ProcessTreeCpu | None = ProcessTreeCpu()
        except (OSError, psutil.Error):
            self.tree = None                      # own load unknown: the analysis falls back

    @property
    def available(self) -> bool:
        return bool(self.cpus)

    def sample(self) -> None:
        try:
            own = self._own_core_ms()
            self.rows.append({"time_ms": time.time() * 1000.0,
                              "busy_core_ms": busy_core_ms(self.cpus),
                              "cores": len(self.cpus),
                              "own_core_ms": own})
        except (OSError, AttributeError) as exc:
            self.error = str(exc)
            self.end_loop()

    def _own_core_ms(self) -> float:
        """This process tree's cumulative CPU ms (NaN when it cannot be read)."""
        if self.tree is None:
            return float("nan")
        try:
            return self.tree.core_ms()
        except (OSError, psutil.Error):
            self.tree = None
            return float("nan")

    def stop(self) -> list[dict[str, Any]]:
        """Stop, take a last sample, and return every sample."""
        self.halt(timeout=2.0)
        if not self.error:
            self.sample()
        return self.rows
