"""``StageMetrics.update_many`` (the bulk fold of worker-read task events) leaves a stage's SQL
metric values, maxima and completed indexes exactly as ``update`` called task by task does:
on random runs of attempts with failures, retries after a success, indexes out of range,
metrics of other plans, duplicate updates in one task and ties for the maximum."""
from __future__ import annotations

import random

import numpy as np
import pytest

from jupyter_perf.collect.eventlog.sql import StageMetrics

TYPES = {1: "sum", 2: "size", 3: "timing", 4: "average", 5: "sum"}


def _state(st: StageMetrics):
    return (list(st.values), {k: list(v) for k, v in st.values.items()},
            list(st.maxes), dict(st.maxes), bytes(st.completed))


def _events(rnd: random.Random, num_tasks: int, n: int):
    out = []
    for _ in range(n):
        index = rnd.choice([rnd.randrange(num_tasks), rnd.randrange(num_tasks), -1, num_tasks])
        updates = [(rnd.choice([1, 2, 3, 4, 5, 99]), rnd.choice([0, 7, 7, rnd.randrange(-5, 50)]))
                   for _ in range(rnd.randrange(0, 6))]
        out.append((rnd.randrange(1000), index, rnd.random() < 0.5, updates))
    return out


def _apply_many(st: StageMetrics, events) -> None:
    counts = np.array([len(u) for *_, u in events], dtype=np.int64)
    flat = [pair for *_, u in events for pair in u]
    st.update_many(np.array([e[0] for e in events], dtype=np.int64),
                   np.array([e[1] for e in events], dtype=np.int64),
                   np.array([e[2] for e in events], dtype=bool), counts,
                   np.array([a for a, _ in flat], dtype=np.int64),
                   np.array([v for _, v in flat], dtype=np.int64))


@pytest.mark.parametrize("seed", range(40))
def test_update_many_equals_update_one_by_one(seed):
    rnd = random.Random(seed)
    num_tasks = rnd.choice([1, 3, 8])
    one, many = (StageMetrics(4, 0, num_tasks, TYPES) for _ in range(2))
    for _ in range(rnd.randrange(1, 4)):        # several runs: state carried between them
        events = _events(rnd, num_tasks, rnd.randrange(0, 12))
        for task_id, index, won, updates in events:
            one.update(task_id, index, won, updates)
        _apply_many(many, events)
        assert _state(many) == _state(one)


def test_the_first_success_closes_an_index_and_the_first_largest_value_wins():
    st = StageMetrics(4, 0, 2, TYPES)
    _apply_many(st, [(10, 0, False, [(2, 5)]), (11, 0, True, [(2, 9), (1, 3)]),
                     (12, 0, True, [(2, 50), (1, 4)]), (13, 1, False, [(2, 9)])])
    assert list(st.values[2]) == [9, 9] and list(st.values[1]) == [3, 0]
    assert st.maxes == {2: [9, 11]}            # task 12 came after index 0's success
    assert bytes(st.completed) == b"\x01\x00"


def test_no_tasks_and_a_stage_of_no_tasks():
    st = StageMetrics(4, 0, 0, TYPES)
    _apply_many(st, [(1, 0, True, [(2, 5)])])
    _apply_many(st, [])
    assert st.values == {} and st.maxes == {}
