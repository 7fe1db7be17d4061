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
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..model import Run
from .timeline import Timeline


def _samples(run: Run) -> tuple[np.ndarray, np.ndarray, float] | None:
    """(times, cumulative busy core-ms, cores), sorted; None without two usable samples."""
    h = run.host_cpu
    if len(h) < 2:
        return None
    frame = pd.DataFrame({
        "t": pd.to_numeric(h["time_ms"], errors="coerce"),
        "b": pd.to_numeric(h["busy_core_ms"], errors="coerce"),
        "c": pd.to_numeric(h["cores"], errors="coerce"),
    }).dropna().sort_values("t")
    if len(frame) < 2 or frame["c"].max() <= 0:
        return None
    return frame["t"].to_numpy(), frame["b"].to_numpy(), float(frame["c"].max())


def _share(lo: np.ndarray, hi: np.ndarray, samples) -> np.ndarray:
    """Busy share of the cores over each ``[lo, hi]``, counting only the sampled part."""
    t, b, cores = samples
    a, z = np.maximum(lo, t[0]), np.minimum(hi, t[-1])
    span = hi - lo
    busy = np.interp(z, t, b) - np.interp(a, t, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where((span > 0) & (z > a), busy / (cores * span), 0.0)
    return np.clip(np.nan_to_num(share), 0.0, 1.0)


def core_wait_share(run: Run, tl: Timeline) -> np.ndarray:
    """Per task row: the share of its time during which every core of the host was busy.

    With ``C`` cores busy ``s`` of the time on average over the task's interval, every core
    was busy at least ``C·s − (C − 1)`` of that interval (in the rest at most ``C − 1`` were),
    so this lower bound, in [0, 1], is the share of the task's unexplained time (neither CPU,
    GC, shuffle nor Python that Spark measured) taken as waiting for a core: a thread that
    could run found no free core. 0 without host samples (clusters, event logs).
    """
    n = len(tl.duration)
    samples = _samples(run)
    if samples is None or n == 0 or not tl.has_times:
        return np.zeros(n)
    cores = samples[2]
    share = _share(tl.launch, tl.launch + tl.duration, samples)
    return np.clip(cores * share - (cores - 1.0), 0.0, 1.0)


def busy_share(run: Run, tl: Timeline) -> np.ndarray:
    """Per group: the measured share of the host's cores that were busy while it ran."""
    samples = _samples(run)
    if tl.n_groups == 0 or samples is None or not tl.has_times:
        return np.zeros(tl.n_groups)
    return _share(tl.group_start, tl.group_end, samples)


def host_cores(run: Run) -> int:
    """Cores the host samples were taken over (0 without samples)."""
    c = pd.to_numeric(run.host_cpu["cores"], errors="coerce").dropna()
    return int(c.max()) if len(c) else 0


def with_floor(makespan: np.ndarray, one_slot_factor: np.ndarray, share: np.ndarray) -> np.ndarray:
    """``max(makespan, share × makespan at the measured slots)`` per group."""
    return np.maximum(makespan, share * one_slot_factor)
