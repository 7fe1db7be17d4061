"""Timeline lanes: one per executor slot, assigned from the real schedule.

Per executor, task attempts (in launch order) are packed onto that executor's cores: each
takes the lowest-numbered lane that is free at its launch. When more attempts overlap than
the executor has cores (clock skew, an unknown core count, the driver counted in local
mode), extra lanes are opened rather than drawing two tasks on top of each other; the lane
label then says ``overflow``.
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
    if n == 0:
        return Lanes(lane, labels, lane_exec, lane_host, first)
    codes, uniq = pd.factorize(executors, sort=False)
    # executors in order of their first task
    order_ex = sorted(range(len(uniq)), key=lambda c: _exec_sort_key(str(uniq[c])))
    end = launch + duration
    for c in order_ex:
        name = str(uniq[c])
        rows = np.flatnonzero(codes == c)
        rows = rows[np.lexsort((t["task_id"].to_numpy()[rows], launch[rows]))]
        nominal = max(cores.get(name, 0), 1)
        free: list[int] = list(range(nominal))          # lane numbers free now
        busy: list[tuple[float, int]] = []              # (end, local lane)
        opened = nominal
        local = np.empty(len(rows), dtype="int64")
        for j, (s, e) in enumerate(zip(launch[rows].tolist(), end[rows].tolist())):
            while busy and busy[0][0] <= s:
                heapq.heappush(free, heapq.heappop(busy)[1])
            if free:
                k = heapq.heappop(free)
            else:
                k = opened
                opened += 1
            local[j] = k
            heapq.heappush(busy, (e, k))
        base = len(labels)
        first[name] = base
        lane[rows] = base + local
        host = hosts[rows[0]] if len(rows) else ""
        for k in range(opened):
            extra = " (overflow)" if k >= nominal else ""
            labels.append(f"exec {name} · core {k}{extra}")
            lane_exec.append(name)
            lane_host.append(host)
    return Lanes(lane, labels, lane_exec, lane_host, first)


def _exec_sort_key(name: str):
    return (0, int(name), "") if name.isdigit() else (1, 0, name)
