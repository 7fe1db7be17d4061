"""Schedule replay (NSDI'15 §2.3.2): how long would these task durations take on these slots?

Each stage group of the :class:`~.timeline.Timeline` is replayed on its own, starting with
all of its slots free:

* tasks are dispatched **in their original launch order** (FIFO) onto the **earliest-free
  slot** — so a task starts when the first slot frees, not at its original start (Figure 2);
* where a stage's parents (``stages.parent_ids``) ran in the same group, that stage's first
  task — and, FIFO, every task after it — waits until the parents' tasks have finished;
* the group's simulated time is its makespan; the gaps between groups (driver time) are not
  replayed and stay fixed.

Both properties the what-if numbers rely on hold by construction: shorter tasks never make a
group slower (the start of each task is the k-th largest earlier finish, monotone in every
duration), and more slots never make it slower.

Cost: one ``heapq.heapreplace`` per task inside a list comprehension (~0.1 µs), none for
groups that fit in one wave (makespan = longest task) or run on one slot (sum), which are
vectorised across groups.
"""
from __future__ import annotations

import dataclasses
import heapq
import math

import numpy as np

from .timeline import Timeline


@dataclasses.dataclass
class ReplayResult:
    makespan: np.ndarray            # ms, per group
    starts: np.ndarray | None       # ms from the group's simulated start, per task row

    @property
    def total_ms(self) -> float:
        return float(self.makespan.sum())


def scaled_slots(slots: np.ndarray, factor: float, n_tasks: np.ndarray) -> np.ndarray:
    """``k × slots`` rounded to whole slots (at least 1), never more than the group's tasks."""
    if factor <= 0 or math.isnan(factor):
        raise ValueError(f"slots_factor must be > 0, got {factor!r}")
    if math.isinf(factor):
        return np.maximum(n_tasks, 1)
    k = np.maximum(np.round(slots * float(factor)), 1).astype("int64")
    return np.minimum(k, np.maximum(n_tasks, 1))


def simulate_group(durations: list[float], slots: int, splits: list | None = None,
                   durations_array: np.ndarray | None = None) -> tuple[float, list[float]]:
    """Replay one group: ``durations`` in dispatch order on ``slots`` slots.

    ``splits``: ``[(pos, parent_positions)]`` — the task at ``pos`` (and all after it) may not
    start before every task at ``parent_positions`` has finished. Returns (makespan, starts).
    """
    h = [0.0] * max(int(slots), 1)
    hr = heapq.heapreplace
    if not splits:
        # heapreplace returns the popped minimum: the time the first slot frees = the start.
        starts = [hr(h, h[0] + d) for d in durations]
        return (max(h) if durations else 0.0), starts
    starts: list[float] = []
    prev = 0
    for pos, parents in splits:
        starts.extend([hr(h, h[0] + d) for d in durations[prev:pos]])
        if durations_array is None:
            durations_array = np.asarray(durations, dtype="float64")
        ready = float((np.asarray(starts)[parents] + durations_array[parents]).max())
        if ready > h[0]:
            # Raising every entry below ``ready`` to ``ready`` is monotone: still a heap.
            h = [x if x >= ready else ready for x in h]
        prev = pos
    starts.extend([hr(h, h[0] + d) for d in durations[prev:]])
    return (max(h) if durations else 0.0), starts


def replay(tl: Timeline, durations: np.ndarray, slots_factor: float = 1.0,
           want_starts: bool = False) -> ReplayResult:
    """Replay every group of ``tl`` with per-task-row ``durations`` (ms)."""
    G = tl.n_groups
    if G == 0:
        return ReplayResult(np.zeros(0), np.zeros(0) if want_starts else None)
    d_sorted = np.maximum(np.asarray(durations, dtype="float64")[tl.order], 0.0)
    n_tasks = np.diff(tl.bounds)
    k = scaled_slots(tl.group_slots, slots_factor, n_tasks)
    has_split = np.array([bool(s) for s in tl.splits], dtype=bool)
    heads = tl.bounds[:-1]

    one_wave = (k >= n_tasks) & ~has_split
    one_slot = (k == 1) & ~has_split & ~one_wave
    makespan = np.zeros(G)
    makespan[one_wave] = np.maximum.reduceat(d_sorted, heads)[one_wave]
    makespan[one_slot] = np.add.reduceat(d_sorted, heads)[one_slot]

    starts_sorted = np.zeros(len(d_sorted)) if want_starts else None
    if want_starts and one_slot.any():
        # Exclusive cumulative sum inside each one-slot group.
        csum = np.cumsum(d_sorted) - d_sorted
        base = np.repeat(csum[heads], n_tasks)
        mask = np.repeat(one_slot, n_tasks)
        starts_sorted[mask] = (csum - base)[mask]

    rest = np.flatnonzero(~(one_wave | one_slot))
    for g in rest:
        lo, hi = int(tl.bounds[g]), int(tl.bounds[g + 1])
        d_g = d_sorted[lo:hi]
        span, starts = simulate_group(d_g.tolist(), int(k[g]), tl.splits[g], d_g)
        makespan[g] = span
        if want_starts:
            starts_sorted[lo:hi] = starts

    starts = None
    if want_starts:
        starts = np.empty(len(d_sorted))
        starts[tl.order] = starts_sorted
    return ReplayResult(makespan, starts)
