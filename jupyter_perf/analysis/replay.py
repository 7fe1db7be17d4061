"""Schedule replay (NSDI'15 §2.3.2): how long would these task durations take on these slots?

Each stage group of the :class:`~.timeline.Timeline` is replayed on its own, starting with
all of its slots free:

* tasks are dispatched **in their original launch order** (FIFO) onto the **earliest-free
  slot** — so a task starts when the first slot frees, not at its original start (Figure 2);
* where a stage's parents (``stages.parent_ids``) ran in the same group, that stage's first
  task — and, FIFO, every task after it — waits until the parents' tasks have finished;
* the group's simulated time is its makespan; the gaps between groups (driver time) are not
  replayed and stay fixed.

Where executors came or went during a group (``Timeline.slot_windows``), each slot is free
from its executor's arrival and takes no task at or after its removal: the earliest-free slot
that is still there takes the next task (a slot is passed over once it frees too late; the
last one never is, so every task runs). ``k × slots`` then repeats the windows in order
(twice the slots: each executor's cores twice), or keeps the earliest ones (fewer).

Shorter tasks never make such a group slower either (checked on 20,000 random cases), and
more slots never do while executors only arrive; where they also leave, list scheduling has
Graham's anomalies: an extra slot that disappears can cost a few per cent (7 of 5,000 random
cases, all with every executor leaving).

Without windows, both properties the what-if numbers rely on hold by construction: shorter tasks never make a
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


def scaled_windows(windows: tuple[np.ndarray, np.ndarray], factor: float,
                   n_tasks: int) -> tuple[np.ndarray, np.ndarray]:
    """``k ×`` the slot windows: ``round(k × m)`` of them (at least 1, ``max(n_tasks, m)`` for
    ``k = inf``), taking the windows in order and starting over at the end."""
    begin, end = windows
    m = len(begin)
    if factor <= 0 or math.isnan(factor):
        raise ValueError(f"slots_factor must be > 0, got {factor!r}")
    if math.isinf(factor):
        count = max(int(n_tasks), m)
    else:
        count = max(int(np.round(m * float(factor))), 1)
    if count == m:
        return begin, end
    take = np.arange(count) % m
    return begin[take], end[take]


def simulate_windows(durations: list[float], windows: tuple[np.ndarray, np.ndarray],
                     splits: list | None = None) -> tuple[float, list[float]]:
    """Replay one group on slots with windows ``(from, until)``; as :func:`simulate_group`."""
    begin, end = windows
    # (free at, slot, until): ties go to the lower slot, as in report.js
    h = [(float(b), j, float(u)) for j, (b, u) in enumerate(zip(begin.tolist(), end.tolist()))]
    heapq.heapify(h)
    starts: list[float] = []
    makespan = 0.0
    cuts = list(splits or []) + [(len(durations), None)]
    prev = 0
    for pos, parents in cuts:
        for d in durations[prev:pos]:
            while h[0][0] >= h[0][2] and len(h) > 1:
                heapq.heappop(h)                # its executor was gone before it freed
            t, j, u = h[0]
            starts.append(t)
            heapq.heapreplace(h, (t + d, j, u))
            if t + d > makespan:
                makespan = t + d
        if parents is not None:
            ready = max(starts[p] + durations[p] for p in parents)
            h = [(max(t, ready), j, u) for t, j, u in h]
            heapq.heapify(h)
        prev = pos
    return makespan, starts


def replay(tl: Timeline, durations: np.ndarray, slots_factor: float = 1.0,
           want_starts: bool = False, only: np.ndarray | None = None) -> ReplayResult:
    """Replay every group of ``tl`` with per-task-row ``durations`` (ms); ``only``: a mask
    of the groups worth simulating one task at a time (the others' makespans are then not
    meaningful unless they fit one wave or one slot)."""
    G = tl.n_groups
    if G == 0:
        return ReplayResult(np.zeros(0), np.zeros(0) if want_starts else None)
    d_sorted = np.maximum(np.asarray(durations, dtype="float64")[tl.order], 0.0)
    n_tasks = np.diff(tl.bounds)
    k = scaled_slots(tl.group_slots, slots_factor, n_tasks)
    has_split = np.array([bool(s) for s in tl.splits], dtype=bool)
    windowed = np.array([w is not None for w in tl.slot_windows], dtype=bool)
    heads = tl.bounds[:-1]

    one_wave = (k >= n_tasks) & ~has_split & ~windowed
    one_slot = (k == 1) & ~has_split & ~one_wave & ~windowed
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

    rest = np.flatnonzero(~(one_wave | one_slot) & (True if only is None else only))
    for g in rest:
        lo, hi = int(tl.bounds[g]), int(tl.bounds[g + 1])
        d_g = d_sorted[lo:hi]
        if windowed[g]:
            w = scaled_windows(tl.slot_windows[g], slots_factor, hi - lo)
            span, starts = simulate_windows(d_g.tolist(), w, tl.splits[g])
        else:
            span, starts = simulate_group(d_g.tolist(), int(k[g]), tl.splits[g], d_g)
        makespan[g] = span
        if want_starts:
            starts_sorted[lo:hi] = starts

    starts = None
    if want_starts:
        starts = np.empty(len(d_sorted))
        starts[tl.order] = starts_sorted
    return ReplayResult(makespan, starts)
