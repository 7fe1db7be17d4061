"""The host's CPU as a floor under the "more slots", disk and network what-ifs, for runs on one
machine.

The replay (NSDI'15 §2.3.2) keeps every task's duration when slots are added. That holds when
the new slots bring their own cores (more executors on more machines). With ``local[N]`` the
new slots share the cores that were already there with the driver, the JIT and GC threads,
Python workers and whatever else runs on the machine; under ``local[1]`` on two cores that
background work had a core to itself, and with two task threads it takes time from them.

The monotask view (HotOS'17 §5) gives the bound: a stage group cannot finish faster than the
CPU work done while it ran divided by the cores. From the host samples the collector took
(``run.host_cpu``, cumulative busy core-ms), each group gets its measured **busy share**
``s = busy core-ms during the group / (cores × the group's span)``, in [0, 1]. A scenario with
more slots on the same host replays each group both ways and keeps the larger:

    makespan'_g = max(replay(d', k × slots)_g, s_g × replay(d', slots)_g)

The floor is in the replay's own units (a share of the group's replay at its measured slots,
for the scenario's task durations ``d'``), so every scenario is still reported as
``actual × simulated / simulated_baseline`` and the replay's model error cancels; the CPU work
shrinks with the scenario's durations (e.g. without GC). Since ``s ≤ 1`` and fewer slots never
replay faster, the floor never changes a scenario with ``slots_factor ≤ 1``; and it is the same
for every ``k``, so more slots are still never slower. Runs without host samples (event logs,
the REST API, clusters) get ``s = 0``: the plain replay, as in the paper.

A faster disk or network takes only the disk/network time out of the tasks, not the CPU work
the host did meanwhile, so those scenarios get the same floor with the CPU-only durations
(``cpu_d``: the scenario's durations without its disk/network savings):

    makespan'_g = max(replay(d', k × slots)_g, s_g × replay(cpu_d, slots)_g)

which is what keeps "disk ∞" from predicting a saving the measured CPU saturation rules out
(``Analysis._replay_total``).

**This application's load and other processes'.** The collector also samples the CPU time of
the driver's process tree (``own_core_ms``: the kernel, the driver JVM, its Python workers,
local-cluster's executors). Over an interval, the host's busy share ``s`` splits into the
tree's own share ``o = own core-ms / (cores × span)`` (clipped to ``s``) and other processes'
``s − o``. The saturation bound ``C·s − (C − 1)`` (``core_wait_share``) splits the same way:

* *waiting for a core (estimated)* is ``C·o − (C − 1)``: the share of the interval during which
  this application's own threads alone kept every core busy — the part a quieter machine would
  not remove, and the only part the verdict may name as the bottleneck;
* *host busy with other processes (estimated)* is the rest, ``(C·s − (C − 1)) − (C·o − (C − 1))``
  (both clipped to [0, 1]): the time the tasks lost because other processes held cores they
  could have run on. It is context, not this query's bottleneck: the verdict chooses its
  category without it and says how busy the host was (``analysis/verdict.py``).

Without ``own_core_ms`` (stored runs from before it, partial samples) the split is unknown and
everything stays as it was: the whole bound is "waiting for a core".

The floor keeps the host's whole busy share ``s``, other processes' part included. A what-if
changes this job, not the rest of the machine: the load those processes put on the cores was
measured while the job ran, and adding slots on the same host does not make it go away. With
the scheduler's per-thread fair share more task threads would win a larger part of the cores
from those processes, but that is taking CPU from someone else, not a gain a setting of the
job buys, and the fair share depends on how many threads the neighbours run, which the samples
do not show. The verdict states that load as context, and the breakdown's "host busy with
other processes" estimates what the tasks lost to it: that, not "more slots", is the gain a
quieter host would bring.

**Same host, no samples: a range, not a point.** An event log or a History Server load of a
``local`` / ``local-cluster`` application (``model.executors_on_this_host``) has no host
samples: how many cores the host had and what else ran on them are unknown, and the plain
replay alone is optimistic (median 17–22 % under the measured ``local[2]`` wall in
``docs/benchmarks.md``). A more-slots scenario then states a range (``slots_range``):

* low: the plain replay — the added slots bring idle cores of their own;
* high: the floor above with the host taken to have **only the run's current slots as
  cores** and the tasks' busy time estimated from the log: each task's time that is not
  measured or estimated I/O wait (``executorRunTime`` − shuffle fetch wait − shuffle write −
  estimated input/output wait), summed over the group and divided by the group's slots —
  ``s_g = busy_g / (slots_g × replay(d, slots)_g)`` in the replay's units (``no_spare_share``),
  clipped to [0, 1], used as ``s_g`` is above. Counting the unexplained time as CPU takes
  Python workers and waiting for a core as CPU work, so the high end errs pessimistic; it
  assumes the host has at least the run's slots as cores and that the other load it had
  stays as it was (both unknown from a log).

Runs with samples keep the point (the measured floor), and clusters keep the plain replay:
their added slots are added machines.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from ..model import Run, executors_on_this_host
from .timeline import Timeline

#: Why a more-slots prediction is a range: what the log lacks (``range_reason``).
#: One wording whatever the source: an event log's and the REST API's analyses of one
#: application are the same (tests/collect/test_history.py).
RANGE_REASON = ("estimated; the run has no host CPU samples (an event log or a History Server "
                "records none): the host's cores and other load are unknown")


class _Samples(NamedTuple):
    t: np.ndarray                 # ms, sorted
    busy: np.ndarray              # cumulative busy core-ms of the host's usable CPUs
    own: np.ndarray | None        # cumulative CPU ms of the driver's process tree (None: unknown)
    cores: float


def _samples(run: Run) -> _Samples | None:
    """The host samples, sorted; None without two usable samples. ``own`` only when every
    usable sample has it."""
    h = run.host_cpu
    if len(h) < 2:
        return None
    own = h["own_core_ms"] if "own_core_ms" in h.columns else pd.Series(np.nan, index=h.index)
    frame = pd.DataFrame({
        "t": pd.to_numeric(h["time_ms"], errors="coerce"),
        "b": pd.to_numeric(h["busy_core_ms"], errors="coerce"),
        "c": pd.to_numeric(h["cores"], errors="coerce"),
    }).dropna().sort_values("t")
    if len(frame) < 2 or frame["c"].max() <= 0:
        return None
    o = pd.to_numeric(own, errors="coerce").reindex(frame.index)
    return _Samples(frame["t"].to_numpy(), frame["b"].to_numpy(),
                    None if o.isna().any() else o.to_numpy(dtype="float64"),
                    float(frame["c"].max()))


def _share(lo: np.ndarray, hi: np.ndarray, samples: _Samples,
           cumulative: np.ndarray | None = None) -> np.ndarray:
    """Busy share of the cores over each ``[lo, hi]``, counting only the sampled part
    (``cumulative``: another cumulative core-ms column than the host's busy one)."""
    t, cores = samples.t, samples.cores
    b = samples.busy if cumulative is None else cumulative
    a, z = np.maximum(lo, t[0]), np.minimum(hi, t[-1])
    span = hi - lo
    busy = np.interp(z, t, b) - np.interp(a, t, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where((span > 0) & (z > a), busy / (cores * span), 0.0)
    return np.clip(np.nan_to_num(share), 0.0, 1.0)


def _shares(lo: np.ndarray, hi: np.ndarray, samples: _Samples) -> tuple[np.ndarray, np.ndarray | None]:
    """(host busy share, this process tree's share ≤ it or None when unknown) per interval."""
    host = _share(lo, hi, samples)
    if samples.own is None:
        return host, None
    return host, np.minimum(_share(lo, hi, samples, samples.own), host)


def _saturated(share: np.ndarray, cores: float) -> np.ndarray:
    """Lower bound on the share of an interval during which every core was busy."""
    return np.clip(cores * share - (cores - 1.0), 0.0, 1.0)


def wait_shares(run: Run, tl: Timeline) -> tuple[np.ndarray, np.ndarray]:
    """Per task row: (waiting for a core, host busy with other processes), each a share in
    [0, 1] of the task's unexplained time, summing to at most 1.

    With ``C`` cores busy ``s`` of the time on average over the task's interval, every core
    was busy at least ``C·s − (C − 1)`` of that interval (in the rest at most ``C − 1`` were):
    a thread that could run found no free core. With this process tree's own share ``o`` known,
    the part its own threads explain, ``C·o − (C − 1)``, is waiting for a core and the rest is
    other processes' (see the module docstring); without it, all of it is waiting for a core.
    Both 0 without host samples (clusters, event logs).
    """
    n = len(tl.duration)
    samples = _samples(run)
    if samples is None or n == 0 or not tl.has_times:
        return np.zeros(n), np.zeros(n)
    host, own = _shares(tl.launch, tl.launch + tl.duration, samples)
    total = _saturated(host, samples.cores)
    if own is None:
        return total, np.zeros(n)
    mine = np.minimum(_saturated(own, samples.cores), total)
    return mine, total - mine


def core_wait_share(run: Run, tl: Timeline) -> np.ndarray:
    """Per task row: the share of its unexplained time taken as waiting for a core — the
    host's cores saturated by this application's own threads (``wait_shares``)."""
    return wait_shares(run, tl)[0]


def contention_share(run: Run, tl: Timeline) -> np.ndarray:
    """Per task row: the share of its unexplained time lost to other processes holding the
    host's cores (0 when this process tree's load was not sampled; ``wait_shares``)."""
    return wait_shares(run, tl)[1]


def busy_share(run: Run, tl: Timeline) -> np.ndarray:
    """Per group: the measured share of the host's cores that were busy while it ran."""
    samples = _samples(run)
    if tl.n_groups == 0 or samples is None or not tl.has_times:
        return np.zeros(tl.n_groups)
    return _share(tl.group_start, tl.group_end, samples)


def own_share(run: Run, tl: Timeline) -> np.ndarray | None:
    """Per group: the share of the host's cores this process tree kept busy while it ran
    (≤ ``busy_share``); None when not sampled."""
    samples = _samples(run)
    if samples is None or samples.own is None or not tl.has_times:
        return None
    if tl.n_groups == 0:
        return np.zeros(0)
    return _shares(tl.group_start, tl.group_end, samples)[1]


def host_cores(run: Run) -> int:
    """Cores the host samples were taken over (0 without samples)."""
    c = pd.to_numeric(run.host_cpu["cores"], errors="coerce").dropna()
    return int(c.max()) if len(c) else 0


def with_floor(makespan: np.ndarray, one_slot_factor: np.ndarray, share: np.ndarray) -> np.ndarray:
    """``max(makespan, share × makespan at the measured slots)`` per group."""
    return np.maximum(makespan, share * one_slot_factor)


def needs_range(run: Run) -> bool:
    """True when a more-slots scenario is a range (see the module docstring): the executors
    share the driver's host and the run has no usable host CPU samples."""
    return executors_on_this_host(run.master) and _samples(run) is None


def range_reason(run: Run) -> str:
    """The words that say why the prediction is a range (``RANGE_REASON``)."""
    return RANGE_REASON


def no_spare_share(busy_ms: np.ndarray, tl: Timeline, makespan: np.ndarray) -> np.ndarray:
    """Per group: the share ``with_floor`` takes for the high end of a range — the tasks'
    estimated busy ms (``busy_ms``, per task row) over the group's slots × its replay at the
    measured slots (``makespan``): the busy share of a host with only those slots as cores."""
    if tl.n_groups == 0:
        return np.zeros(0)
    busy = np.bincount(tl.group, weights=np.clip(busy_ms, 0.0, None), minlength=tl.n_groups)
    denom = tl.group_slots.astype("float64") * makespan
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(denom > 0, busy / denom, 0.0)
    return np.clip(np.nan_to_num(share), 0.0, 1.0)
