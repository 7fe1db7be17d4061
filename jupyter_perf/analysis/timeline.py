"""Where a run's time sits on the clock: task intervals, stage groups, wall time, driver gaps.

Everything else in ``analysis`` builds on :class:`Timeline`, computed once per run:

* each task attempt's *interval* ``[launch, launch + duration)`` (failed and killed attempts
  included: they occupied a slot);
* *stage groups*: stage attempts whose task intervals overlap (NSDI'15 §2.3.2), each replayed
  on its own; the time between groups, where no task ran, is *driver time* and stays fixed;
* per group, the *slots* = the concurrency the group actually used (max tasks running at once,
  never more than the executors' cores: Spark's finish stamps lag the freed slot);
* per group whose executors came or went while the run was going (dynamic allocation, lost
  executors), the *slot windows*: one ``[from, until)`` per executor core, relative to the
  group's start (see :func:`slot_windows`); the replay then uses those instead of ``slots``;
* the *window*: the run's own (:meth:`jupyter_perf.model.Run.window`, the one definition of
  wall time): ``[start_ms, end_ms]`` for a cell or function run, the union of job intervals
  for a whole application (``eventlog`` / ``rest``);
* ``actual_ms``: the time the groups span inside the window, and ``driver_gap_ms`` = the rest
  of ``wall_ms``.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np
import pandas as pd

from ..model import Run

NOT_SUCCESS = ("FAILED", "KILLED", "RUNNING", "UNKNOWN")


@dataclasses.dataclass
class Timeline:
    """Per-task intervals (row order of ``run.tasks``) and per-group schedule facts."""

    launch: np.ndarray          # ms, per task row
    duration: np.ndarray        # ms, per task row (wall: finish - launch)
    stage_code: np.ndarray      # int, per task row: index into ``stage_keys``
    stage_keys: np.ndarray      # (S, 2) int64: stage_id, stage_attempt
    group: np.ndarray           # int, per task row
    order: np.ndarray           # task rows sorted by (group, launch, task_id)
    bounds: np.ndarray          # (G + 1,) offsets of each group inside ``order``
    group_start: np.ndarray     # ms, per group (earliest launch)
    group_end: np.ndarray       # ms, per group (latest finish)
    group_slots: np.ndarray     # int, per group: max concurrency actually used
    group_actual: np.ndarray    # ms, per group: span clipped to the window
    splits: list                # per group: [(pos, parent_positions), ...] DAG barriers
    slot_windows: list          # per group: None, or (from_ms, until_ms) arrays, one per slot
    wall_ms: float
    window: tuple               # (lo, hi) epoch ms
    has_times: bool             # False when tasks carry no launch times
    warnings: list

    @property
    def n_groups(self) -> int:
        return len(self.group_start)

    @property
    def actual_ms(self) -> float:
        """Time any task of the run was running inside the window (sum of group spans)."""
        return float(self.group_actual.sum())

    @property
    def driver_gap_ms(self) -> float:
        return max(0.0, self.wall_ms - self.actual_ms)


def is_success(status: pd.Series) -> np.ndarray:
    """Finished attempts that count as the task's result ('' = unknown, treated as success)."""
    return ~status.isin(NOT_SUCCESS).to_numpy()


def task_durations(run: Run) -> tuple[np.ndarray, np.ndarray]:
    """(launch_ms, duration_ms) per task row; finish - launch where both are known.

    A task still RUNNING at collection (no finish) is taken to run until the window's end.
    """
    t = run.tasks
    launch = t["launch_ms"].to_numpy(dtype="float64")
    finish = t["finish_ms"].to_numpy(dtype="float64")
    reported = t["duration_ms"].to_numpy(dtype="float64")
    dur = np.where((finish > 0) & (finish >= launch), finish - launch, reported)
    open_ended = (finish <= 0) & (reported <= 0) & (launch > 0) & (float(run.end_ms) > launch)
    dur = np.where(open_ended, float(run.end_ms) - launch, dur)
    return launch, np.maximum(dur, 0.0)


def parse_parent_ids(value: Any) -> list[int]:
    """Stage ``parent_ids`` as a list of ints, whatever shape the collector stored."""
    if value is None:
        return []
    if isinstance(value, float) and np.isnan(value):
        return []
    if isinstance(value, str):
        return [int(x) for x in re.findall(r"-?\d+", value)]
    try:
        return [int(x) for x in value]
    except TypeError:
        return [int(value)]


def _clip_measure(starts: np.ndarray, ends: np.ndarray,
                  win_s: np.ndarray, win_e: np.ndarray) -> np.ndarray:
    """Per interval ``i``: the measure of ``[starts[i], ends[i]] ∩ union(windows)``.

    Windows are disjoint and sorted (a union); intervals may be anything.
    """
    if len(win_s) == 0:
        return np.zeros(len(starts))
    # Cumulative window measure up to time x, vectorised with searchsorted.
    cum = np.concatenate([[0.0], np.cumsum(win_e - win_s)])

    def covered(x: np.ndarray) -> np.ndarray:
        i = np.searchsorted(win_s, x, side="right")          # windows starting at or before x
        last = np.maximum(i - 1, 0)
        full = cum[last]
        partial = np.where(i > 0, np.minimum(x, win_e[last]) - win_s[last], 0.0)
        return np.where(i > 0, full + np.maximum(partial, 0.0), 0.0)

    return np.maximum(covered(ends) - covered(starts), 0.0)


def build_timeline(run: Run) -> Timeline:
    t = run.tasks
    n = len(t)
    launch, duration = task_durations(run)
    warnings: list[str] = []
    has_times = bool(n) and bool((launch > 0).all())
    if n and not has_times:
        # No launch times: one group, tasks in stage/task order, slots = the run's cores.
        warnings.append("tasks carry no launch times: replayed as one group in stage order "
                        f"on {max(run.slots, 1)} slots; driver gaps unknown")
        launch = np.zeros(n)

    stage_id = t["stage_id"].to_numpy(dtype="int64")
    stage_att = t["stage_attempt"].to_numpy(dtype="int64")
    key = (stage_id << 20) | (stage_att & 0xFFFFF)
    stage_code, uniq = pd.factorize(key, sort=True)
    uniq = np.asarray(uniq, dtype="int64")
    stage_keys = np.stack([uniq >> 20, uniq & 0xFFFFF], axis=1) if len(uniq) else np.zeros((0, 2), "int64")
    end = launch + duration

    if n == 0:
        win = run.window()
        wall, window, w = win.wall_ms, (win.lo, win.hi), list(win.warnings)
        empty = np.zeros(0)
        return Timeline(empty, empty, np.zeros(0, "int64"), stage_keys, np.zeros(0, "int64"),
                        np.zeros(0, "int64"), np.zeros(1, "int64"), empty, empty,
                        np.zeros(0, "int64"), empty, [], [], wall, window, False, warnings + w)

    # Stage intervals -> groups of overlapping stages (touching intervals stay apart).
    s_start = pd.Series(launch).groupby(stage_code).min().to_numpy()
    s_end = pd.Series(end).groupby(stage_code).max().to_numpy()
    if has_times:
        idx = np.argsort(s_start, kind="stable")
        run_max = np.maximum.accumulate(s_end[idx])
        new = np.ones(len(idx), dtype=bool)
        new[1:] = s_start[idx][1:] >= run_max[:-1]
        stage_group = np.empty(len(idx), dtype="int64")
        stage_group[idx] = np.cumsum(new) - 1
    else:
        stage_group = np.zeros(len(s_start), dtype="int64")
    group = stage_group[stage_code]
    n_groups = int(group.max()) + 1

    if has_times:
        order = np.lexsort((t["task_id"].to_numpy(), launch, group))
    else:
        order = np.lexsort((t["index"].to_numpy(), t["task_id"].to_numpy(), stage_code))
    counts = np.bincount(group, minlength=n_groups)
    bounds = np.concatenate([[0], np.cumsum(counts)]).astype("int64")
    g_sorted = group[order]
    group_start = np.minimum.reduceat(launch[order], bounds[:-1])
    group_end = np.maximum.reduceat(end[order], bounds[:-1])

    if has_times:
        # Concurrency at each launch = launched so far - finished so far (finish first at ties).
        sl, se = np.sort(launch), np.sort(end)
        conc = np.searchsorted(sl, launch, side="right") - np.searchsorted(se, launch, side="right")
        group_slots = pd.Series(conc).groupby(group).max().reindex(range(n_groups), fill_value=1)
        group_slots = np.maximum(group_slots.to_numpy(dtype="int64"), 1)
        if run.slots > 0:
            # Spark stamps a task's finish when the driver has fetched its result, after the
            # executor already freed the slot and launched the next task: overlapping stamps
            # would count more slots than the executors have. Concurrency <= cores.
            group_slots = np.minimum(group_slots, run.slots)
    else:
        group_slots = np.full(n_groups, max(run.slots, 1), dtype="int64")

    win = run.window()               # the model defines the wall time once
    wall, window, ws, we = win.wall_ms, (win.lo, win.hi), win.starts, win.ends
    warnings += list(win.warnings)
    if has_times:
        group_actual = _clip_measure(group_start, group_end, ws, we)
    else:
        group_actual = np.array([wall], dtype="float64")

    splits = _dag_splits(run, order, bounds, stage_code, stage_keys, g_sorted, n_groups)
    windows = (slot_windows(run, launch, group, group_start, group_end, window[0]) if has_times
               else [None] * n_groups)
    return Timeline(launch, duration, stage_code.astype("int64"), stage_keys, group, order,
                    bounds, group_start, group_end, group_slots, group_actual, splits, windows,
                    float(wall), window, has_times, warnings)


def slot_windows(run: Run, launch: np.ndarray, group: np.ndarray, group_start: np.ndarray,
                 group_end: np.ndarray, window_lo: float) -> list:
    """Per group: ``None`` (its slots are the concurrency it used, all free from its start),
    or the slots its executors really had over time, as ``(from_ms, until_ms)`` arrays relative
    to the group's start, one entry per core, sorted by ``from``, then the longest-staying
    first (the replay breaks ties by this order: a task is not put on a slot about to go when
    another is free as early), then executor.

    An executor offers its cores to a group:

    * from the group's start if it was there before the run's window began; if it arrived
      while the run was going (dynamic allocation, a replacement for a lost executor), from
      its first task launch in the group — Spark's ``addTime`` is when it registered, and on
      a loaded host its first task followed up to 15 s later (seen on local-cluster) — or from
      its ``addTime`` if it ran no task of the group;
    * until its ``removeTime`` (``inf`` if it stayed).

    A group gets windows only when one of them starts after the group's start or ends before
    its end; executors whose cores or times are unknown, or tasks on executors the table
    lacks, keep the group on the plain replay.
    """
    G = len(group_start)
    out: list = [None] * G
    ex = run.executors
    if ex.empty or G == 0:
        return out
    workers = ex[ex["executor_id"].astype(str) != "driver"]
    if workers.empty:
        return out
    ids = workers["executor_id"].astype(str).to_numpy()
    cores = pd.to_numeric(workers["total_cores"], errors="coerce").to_numpy(dtype="float64")
    added = pd.to_numeric(workers["add_ms"], errors="coerce").to_numpy(dtype="float64")
    removed = pd.to_numeric(workers["remove_ms"], errors="coerce").to_numpy(dtype="float64")
    removed = np.where(removed > 0, removed, np.inf)
    added = np.where(added > 0, added, -np.inf)
    if not (np.isfinite(removed).any() or (added > window_lo).any()):
        return out                                  # nobody came or went during the run
    task_ex = run.tasks["executor_id"].astype(str).to_numpy()
    first = (pd.DataFrame({"g": group, "e": task_ex, "l": launch})
             .groupby(["g", "e"])["l"].min().to_dict())
    index = {e: i for i, e in enumerate(ids)}
    for g in range(G):
        gs, ge = float(group_start[g]), float(group_end[g])
        alive = np.flatnonzero((added < ge) & (removed > gs))
        used = set(np.unique(task_ex[group == g]).tolist())
        if not used <= {ids[i] for i in alive}:
            continue                                # a task on an executor we do not know
        if not len(alive) or not (np.isfinite(cores[alive]) & (cores[alive] > 0)).all():
            continue
        starts, ends, owner = [], [], []
        for i in alive:
            if added[i] > window_lo:
                begin = first.get((g, ids[i]), added[i])
                begin = max(float(begin), float(added[i]))
            else:
                begin = gs
            begin = max(begin - gs, 0.0)
            end = removed[i] - gs
            n = int(cores[i])
            starts += [begin] * n
            ends += [end] * n
            owner += [index[ids[i]]] * n
        starts_a, ends_a = np.asarray(starts), np.asarray(ends)
        if not ((starts_a > 0).any() or (ends_a < ge - gs).any()):
            continue
        order = np.lexsort((np.asarray(owner), -ends_a, starts_a))
        out[g] = (starts_a[order], ends_a[order])
    return out


def _dag_splits(run: Run, order, bounds, stage_code, stage_keys, g_sorted, n_groups) -> list:
    """Per group: [(pos, parent_positions)] where a stage whose parents ran in the same group
    starts; ``pos`` and the parents' positions are offsets inside the group's order."""
    splits: list[list] = [[] for _ in range(n_groups)]
    st = run.stages
    if st.empty or "parent_ids" not in st.columns:
        return splits
    parents: dict[int, set[int]] = {}
    for sid, pids in zip(st["stage_id"], st["parent_ids"]):
        try:
            parents.setdefault(int(sid), set()).update(parse_parent_ids(pids))
        except (TypeError, ValueError):
            continue
    if not any(parents.values()):
        return splits
    codes_sorted = stage_code[order]
    stage_ids_sorted = stage_keys[codes_sorted, 0]
    for g in range(n_groups):
        lo, hi = bounds[g], bounds[g + 1]
        sids = stage_ids_sorted[lo:hi]
        present = set(np.unique(sids).tolist())
        if len(present) < 2:
            continue
        codes = codes_sorted[lo:hi]
        uniq_codes, first = np.unique(codes, return_index=True)
        for c, pos in sorted(zip(uniq_codes.tolist(), first.tolist()), key=lambda kv: kv[1]):
            ps = parents.get(int(stage_keys[c, 0]), set()) & present
            if not ps or pos == 0:
                continue
            before = np.flatnonzero(np.isin(sids[:pos], list(ps)))
            if len(before):
                splits[g].append((pos, before))
    return splits
