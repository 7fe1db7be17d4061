"""Timeline lanes: one per executor core, assigned from the real schedule.

Per executor, task attempts (in launch order) are packed onto that executor's cores: each
takes the lowest-numbered lane that is free at its launch. An executor never gets more lanes
than its cores (the replay's cap, ``analysis/timeline.py``): when an attempt launches while
all of its executor's lanes still look busy, it goes on the lane that frees first. That
happens because Spark stamps a task's finish when the driver has fetched its result, after
the executor already freed the core and launched the next task; the attempt is drawn on that
core, overlapping the previous one by the lag, and ``Lanes.lagged`` / ``max_lag_ms`` say how
often and by how much (the Timeline tab prints it). Only an executor whose core count is
unknown gets as many lanes as it had attempts running at once.
"""
from __future__ import annotations

import dataclasses
import heapq

import numpy as np
import pandas as pd

from ..model import Run


@dataclasses.dataclass
class Lanes:
    lane: np.ndarray          # int, per task row
    labels: list[str]         # per lane: "exec 1 · core 0"
    executor: list[str]       # per lane: executor id
    host: list[str]           # per lane
    first_lane: dict          # executor id -> its first lane
    lagged: int = 0           # attempts launched before their lane's previous finish stamp
    max_lag_ms: float = 0.0   # the largest such overlap

    @property
    def count(self) -> int:
        return len(self.labels)


def _cores(run: Run) -> dict[str, int]:
    ex = run.executors
    if ex.empty:
        return {}
    cores = pd.to_numeric(ex["total_cores"], errors="coerce").fillna(0).astype(int)
    return {str(e): int(c) for e, c in zip(ex["executor_id"], cores)}


def assign_lanes(run: Run, launch: np.ndarray, duration: np.ndarray) -> Lanes:
    t = run.tasks
    n = len(t)
    executors = t["executor_id"].astype(str).to_numpy()
    hosts = t["host"].astype(str).to_numpy()
    cores = _cores(run)
    lane = np.zeros(n, dtype="int64")
    labels: list[str] = []
    lane_exec: list[str] = []
    lane_host: list[str] = []
    first: dict[str, int] = {}
    lagged, max_lag = 0, 0.0
    if n == 0:
        return Lanes(lane, labels, lane_exec, lane_host, first)
    codes, uniq = pd.factorize(executors, sort=False)
    order_ex = sorted(range(len(uniq)), key=lambda c: _exec_sort_key(str(uniq[c])))
    end = launch + duration
    task_ids = t["task_id"].to_numpy()
    # every executor's attempts in launch order (ties by task id), from one sort
    by_exec = np.lexsort((task_ids, launch, codes))
    cuts = np.searchsorted(codes[by_exec], np.arange(len(uniq) + 1))
    push, pop = heapq.heappush, heapq.heappop
    for c in order_ex:
        name = str(uniq[c])
        rows = by_exec[cuts[c]:cuts[c + 1]]
        cap = cores.get(name, 0)                        # 0: unknown, no cap
        free: list[int] = list(range(max(cap, 1)))      # lane numbers free now
        busy: list[tuple[float, int]] = []              # (end, local lane)
        opened = max(cap, 1)
        local: list[int] = []
        for s, e in zip(launch[rows].tolist(), end[rows].tolist()):
            while busy and busy[0][0] <= s:
                push(free, pop(busy)[1])
            if free:
                k = pop(free)
            elif cap > 0:                   # the finish stamp lags: the lane that frees first
                prev_end, k = pop(busy)
                lagged += 1
                if prev_end - s > max_lag:
                    max_lag = prev_end - s
            else:
                k = opened
                opened += 1
            local.append(k)
            push(busy, (e, k))
        base = len(labels)
        first[name] = base
        lane[rows] = base + np.asarray(local, dtype="int64")
        host = hosts[rows[0]] if len(rows) else ""
        for k in range(opened):
            labels.append(f"exec {name} · core {k}")
            lane_exec.append(name)
            lane_host.append(host)
    return Lanes(lane, labels, lane_exec, lane_host, first, lagged, float(max_lag))


def _exec_sort_key(name: str):
    return (0, int(name), "") if name.isdigit() else (1, 0, name)
