"""Advice with values: one dict per hint, ``{operator, text, setting, value, predicted_ms}``.

Operator hints come from the measured plan (``analysis/operators.py``): a setting and a value
computed from the run's own numbers, and ``predicted_ms`` where the what-if can compute the
effect (else ``None``, and the text says "suggestion, not simulated"). Cause hints (the
verdict's) follow, with the what-if of their cause where there is one.
"""
from __future__ import annotations

import math

import pandas as pd

from .. import fmt
from ..model import Run
from .operators import AQE_READ, EXCHANGE, Node, _producers

MiB = 1 << 20
GiB = 1 << 30
TARGET_PARTITION_BYTES = 128 * MiB
BROADCAST_MAX_BYTES = 512 * MiB       # broadcasting more is not a suggestion we make
SKEW_THRESHOLD_DEFAULT = 256 * MiB    # spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes
SKEW_FACTOR_DEFAULT = 5.0             # spark.sql.adaptive.skewJoin.skewedPartitionFactor
MEMORY_FRACTION, RESERVED = 0.6, 300 * MiB
NOT_SIMULATED = "Suggestion, not simulated."
JOINS_WITH_SHUFFLE = ("SortMergeJoin", "ShuffledHashJoin")

# verdict cause -> the what-if key that predicts its effect
CAUSE_WHATIF = {"gc": "no_gc_ms", "slots": "slots_x2_ms", "io": "infinite_disk_ms",
                "shuffle_read": "infinite_network_ms"}


def _label(node: Node) -> str:
    return f"{node.name} (#{node.node_id})"


def hint(operator: str | None, text: str, setting: str | None = None, value: str | None = None,
         predicted_ms: float | None = None, cause: str | None = None) -> dict:
    return {"operator": operator, "text": text, "setting": setting, "value": value,
            "predicted_ms": predicted_ms, "cause": cause}


def _side_exchange(nodes: dict, node: Node) -> Node | None:
    """The shuffle feeding one side of a join (looking down through sorts and projections)."""
    todo, seen = [node], set()
    while todo:
        n = todo.pop(0)
        if n.key in seen:
            continue
        seen.add(n.key)
        if EXCHANGE.match(n.name):
            return n
        todo += _producers(nodes, n)
    return None


def shuffle_partitions(run: Run, nodes: dict, slots: int) -> list[dict]:
    out = []
    by_exec: dict[int, Node] = {}
    for n in nodes.values():
        written = n.metric("shuffle bytes written")
        if not EXCHANGE.match(n.name) or not written or not n.metric("number of partitions"):
            continue
        if any(AQE_READ.match(c.name) and c.metric("number of coalesced partitions")
               for c in _read_side(nodes, n)):
            continue                    # AQE already sized the reads
        best = by_exec.get(n.execution_id)
        if best is None or written > best.metric("shuffle bytes written"):
            by_exec[n.execution_id] = n
    for n in by_exec.values():
        written, parts = n.metric("shuffle bytes written"), int(n.metric("number of partitions"))
        target = max(math.ceil(written / TARGET_PARTITION_BYTES), max(slots, 1))
        if max(parts, target) < 2 * min(parts, target):
            continue
        out.append(hint(
            _label(n),
            f"{_label(n)} shuffled {fmt.nbytes(written)} into {parts} partitions "
            f"({fmt.nbytes(written / parts)} each). About 128 MiB per partition, and at least one "
            f"per slot, is {target}: spark.sql.shuffle.partitions={target} (or let AQE "
            f"coalesce: spark.sql.adaptive.coalescePartitions.enabled). {NOT_SIMULATED}",
            "spark.sql.shuffle.partitions", str(target)))
    return out


def _read_side(nodes: dict, exchange: Node) -> list[Node]:
    out, todo = [], [exchange]
    while todo:
        n = todo.pop()
        for pid in n.parents:
            p = nodes.get((n.execution_id, pid))
            if p is not None:
                out.append(p)
                if AQE_READ.match(p.name) or p.name.startswith("ShuffleQueryStage"):
                    todo.append(p)
    return out


def broadcast_threshold(nodes: dict, table: pd.DataFrame) -> list[dict]:
    out = []
    ran = set(zip(table["execution_id"], table["node_id"])) if len(table) else set()
    for n in nodes.values():
        if not n.name.startswith(JOINS_WITH_SHUFFLE) or n.key not in ran:
            continue
        sides = [s for s in (_side_exchange(nodes, p) for p in _producers(nodes, n)) if s]
        sizes = [s.metric("data size") for s in sides if s.metric("data size")]
        if len(sizes) < 2 or min(sizes) > BROADCAST_MAX_BYTES:
            continue
        small = min(sizes)
        mb = max(1, math.ceil(small * 1.25 / MiB))
        out.append(hint(
            _label(n),
            f"{_label(n)}: its smaller side measured {fmt.nbytes(small)} (the data size of its "
            f"shuffle), the larger {fmt.nbytes(max(sizes))}. With "
            f"spark.sql.autoBroadcastJoinThreshold={mb}m Spark would broadcast the smaller "
            f"side instead of shuffling and sorting both (or mark it with broadcast()). "
            f"{NOT_SIMULATED}",
            "spark.sql.autoBroadcastJoinThreshold", f"{mb}m"))
    return out


def skew_join(run: Run, nodes: dict, table: pd.DataFrame, notes: list[str]) -> list[dict]:
    if any(n.startswith("AQE split") for n in notes) or table.empty:
        return []
    out = []
    t = run.tasks
    for rec in table[table["skew"]].to_dict("records"):
        node = nodes[(rec["execution_id"], rec["node_id"])]
        if not node.name.startswith(JOINS_WITH_SHUFFLE):
            continue
        stage = t[t["stage_id"].isin(rec["stage_ids"]) & (t["shuffle_read_bytes"] > 0)]
        if stage.empty:
            continue
        hot, med = float(stage["shuffle_read_bytes"].max()), float(stage["shuffle_read_bytes"].median())
        if med <= 0:
            continue
        threshold = max(1, math.floor(hot / 2 / MiB))
        factor = max(1.0, math.floor(hot / med))
        extra = []
        if hot < SKEW_THRESHOLD_DEFAULT:
            extra.append(f"spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes="
                         f"{threshold}m (its default, 256 MiB, is above it)")
        if hot / med < SKEW_FACTOR_DEFAULT:
            extra.append(f"spark.sql.adaptive.skewJoin.skewedPartitionFactor={factor:g} "
                         "(default 5)")
        out.append(hint(
            _label(node),
            f"{_label(node)} is skewed: its largest task read {fmt.nbytes(hot)} of shuffle data, "
            f"{hot / med:.1f}× the median. AQE can split that partition: "
            "spark.sql.adaptive.enabled=true, spark.sql.adaptive.skewJoin.enabled=true"
            + (", " + ", ".join(extra) if extra else "") + f"; or salt the hot key. "
            f"{NOT_SIMULATED}",
            "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes",
            f"{threshold}m"))
    return out


def memory_per_core(run: Run, table: pd.DataFrame) -> list[dict]:
    if table.empty:
        return []
    spilled = table[pd.to_numeric(table["spill_bytes"], errors="coerce").fillna(0) > 0]
    if spilled.empty:
        return []
    ex = run.executors
    local = not (ex["executor_id"].astype(str) != "driver").any() if len(ex) else True
    workers = ex if local else ex[ex["executor_id"].astype(str) != "driver"]
    cores = pd.to_numeric(workers["total_cores"], errors="coerce").fillna(0)
    mem = pd.to_numeric(workers["max_memory_bytes"], errors="coerce").fillna(0)
    per_core = float((mem / cores.where(cores > 0)).min()) if (cores > 0).any() else float("nan")
    core_count = int(cores[cores > 0].max()) if (cores > 0).any() else max(run.slots, 1)
    setting = "spark.driver.memory" if local else "spark.executor.memory"
    out = []
    t = run.tasks
    for rec in spilled.head(1).to_dict("records"):
        tasks = t[t["stage_id"].isin(rec["stage_ids"])]
        need = float((tasks["peak_execution_memory_bytes"] + tasks["memory_spilled_bytes"]).max()) \
            if len(tasks) else float(rec["spill_bytes"])
        heap = need * core_count / MEMORY_FRACTION + RESERVED
        gb = max(1, math.ceil(heap / GiB))
        have = f", about {fmt.nbytes(per_core)} per core now" if math.isfinite(per_core) else ""
        out.append(hint(
            f"{rec['name']} (#{rec['node_id']})",
            f"{rec['name']} (#{rec['node_id']}) spilled {fmt.nbytes(rec['spill_bytes'])} to disk; its "
            f"tasks needed up to {fmt.nbytes(need)} of execution memory each{have}. {setting}="
            f"{gb}g would hold that for {core_count} concurrent "
            f"task{'s' if core_count != 1 else ''} (or use more, smaller partitions). "
            f"{NOT_SIMULATED}",
            setting, f"{gb}g"))
    return out


def python_udf(nodes: dict, table: pd.DataFrame) -> list[dict]:
    out = []
    if table.empty:
        return out
    for rec in table.to_dict("records"):
        if not rec["name"].startswith("BatchEvalPython") or rec["task_time_ms"] <= 0:
            continue
        out.append(hint(
            f"{rec['name']} (#{rec['node_id']})",
            f"{rec['name']} (#{rec['node_id']}) sends rows one by one, pickled, to Python "
            "workers. Arrow-optimised Python UDFs (useArrow=True, or "
            "spark.sql.execution.pythonUDF.arrow.enabled=true, Spark 3.4+) move batches, and a "
            f"built-in function needs no Python at all. {NOT_SIMULATED}",
            "spark.sql.execution.pythonUDF.arrow.enabled", "true"))
        break
    return out


def operator_hints(run: Run, nodes: dict, table: pd.DataFrame, notes: list[str]) -> list[dict]:
    if not nodes:
        return []
    return (skew_join(run, nodes, table, notes) + broadcast_threshold(nodes, table)
            + shuffle_partitions(run, nodes, run.slots) + memory_per_core(run, table)
            + python_udf(nodes, table))


def cause_hints(verdict_hints: list[dict], whatif: dict) -> list[dict]:
    """The verdict's cause hints as hint dicts, with the what-if of their cause."""
    out = []
    for h in verdict_hints:
        key = CAUSE_WHATIF.get(h["cause"])
        out.append(hint(None, h["hint"], predicted_ms=whatif.get(key) if key else None,
                        cause=h["cause"]))
    return out

