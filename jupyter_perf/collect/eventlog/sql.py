"""SQL executions, their final physical plans and SQL metrics, as Spark keeps them.

The History Server builds its ``/sql`` answers from the event log with Spark's
``SQLAppStatusListener``; this module follows the same rules (Spark 3.5) so that the tables
it gives equal what ``/sql`` shows for the same execution:

* the plan is the last ``SparkListenerSQLAdaptiveExecutionUpdate``'s (with AQE the final plan
  is the one that ran), else the ``SparkListenerSQLExecutionStart``'s; it becomes a graph of
  nodes and edges exactly as Spark's ``SparkPlanGraph`` builds it (WholeStageCodegen clusters,
  InputAdapter and query stages skipped, reused exchanges and subqueries pointing at the
  original);
* an execution's SQL metrics are the ones its plans and ``SQLAdaptiveSQLMetricUpdates``
  declared; a job tracks, for each of its stages, the metrics known when it starts (a later
  job's start, or a new stage attempt, starts that stage's tracking afresh, as in Spark);
  each task index keeps its last update until it succeeds; driver-side updates
  (``SparkListenerDriverAccumUpdates``) are added as values;
* an execution's values are aggregated when it ends (or at the end of the log);
* the display text is ``SQLMetrics.stringValue``'s, to the character (:mod:`.sqltext`);
* each node's ``stage_attempts`` come from the rule REST uses too
  (:mod:`jupyter_perf.collect.sql_stages`), on the same tables, so the sources agree.

Task updates come from TaskEnd's Task Info ``Accumulables``, read only for the stages of SQL
executions and only for the accumulators of SQL metrics (see :func:`sql_updates`).
"""
from __future__ import annotations

import json
import re
from array import array
from itertools import chain
from typing import Any, Iterable

import numpy as np
import orjson
import pandas as pd

from ..sql_stages import assign, stage_records
from .sqltext import metric_text

SQL_PREFIX = "org.apache.spark.sql.execution.ui."
# Names with an escaped quote do not match: the count check below then parses the array.
# Possessive (``*+``, ``++``): what each part takes can never be given back to the next, so
# an item that is not a SQL metric's fails without backtracking (~15% of the search).
_UPDATE = re.compile(rb'\{"ID":(\d++),"Name":"[^"]*+","Update":"(-?\d++)"')
_SQL_MARK = b'"Metadata":"sql"'
_MASK = 0xFFFFFFFF


def sql_updates(accumulables: bytes) -> list[tuple[int, int]]:
    """(accumulator id, update) of the SQL metrics in a TaskEnd's ``Accumulables`` array,
    given as the raw bytes of its items (``{...},{...}``).

    Spark writes SQL metrics with string updates (``"Update":"42"``) and ``"Metadata":"sql"``
    in a fixed key order; they are picked out with one regular expression instead of
    parsing the whole array (which is half of a TaskEnd line). When the count does not match
    the SQL markers (another writer's key order), the array is parsed whole.
    """
    found = _sql_matches(accumulables)
    if found is not None:
        return [(int(i), int(v)) for i, v in found]
    out = []
    whole = b"[" + accumulables + b"]"
    try:
        items = orjson.loads(whole)
    except orjson.JSONDecodeError:
        # orjson refuses a lone UTF-16 surrogate escape (a metric name can carry one); Python's
        # reader keeps it, as for the rest of the line (parser.lenient_json)
        items = json.loads(whole)
    for item in items:
        if type(item) is dict and item.get("Metadata") == "sql":
            try:
                out.append((int(item["ID"]), int(item["Update"])))
            except (KeyError, TypeError, ValueError):
                continue
    return out


def _sql_matches(accumulables: bytes) -> list[tuple[bytes, bytes]] | None:
    """The (id, update) digits of the SQL metrics' items, or None when the pattern's matches
    do not account for every SQL marker. Only the part up to the last marker is searched:
    what follows has no SQL metric (Spark writes a task's own metrics there, about half of
    the array), and a match there could only have sent the array to be parsed whole."""
    last = accumulables.rfind(_SQL_MARK)
    if last < 0:
        return []
    found = _UPDATE.findall(accumulables, 0, last)
    return found if len(found) == accumulables.count(_SQL_MARK, 0, last + len(_SQL_MARK)) \
        else None


def sql_update_pairs(accumulables: bytes) -> array:
    """:func:`sql_updates` as one int64 array of (id, update) pairs in order, made without a
    tuple per update (raises OverflowError for a value past 64 bits)."""
    found = _sql_matches(accumulables)
    if found is not None:
        try:    # the digits converted in one C call (~1 µs less a TaskEnd than int() each)
            return array("q", orjson.loads(b"[" + b",".join(chain.from_iterable(found)) + b"]"))
        except (orjson.JSONDecodeError, TypeError):  # a leading zero (not JSON); past 64
            return array("q", map(int, chain.from_iterable(found)))  # bits (a float): raises
    return array("q", chain.from_iterable(sql_updates(accumulables)))


def _scala_hash(x: int) -> int:
    """Scala 2.12 ``immutable.HashSet``'s hash of an Int (its ``improve``), as unsigned."""
    h = x & _MASK
    h = (h + (~(h << 9) & _MASK)) & _MASK
    h ^= h >> 14
    h = (h + (h << 4)) & _MASK
    return h ^ (h >> 10)


def _trie_order(x: int) -> tuple[int, ...]:
    h = _scala_hash(x)
    return tuple((h >> shift) & 31 for shift in range(0, 35, 5))


class ScalaIntSet:
    """The iteration order of a Scala 2.12 immutable ``Set[Int]`` built by adding elements:
    insertion order up to four elements, hash-trie order beyond. Spark walks an execution's
    stages in this order, which decides which task is named when two stages tie for a
    metric's maximum."""

    def __init__(self) -> None:
        self.items: list[int] = []
        self._seen: set[int] = set()

    def add_all(self, values: Iterable[int]) -> None:
        for v in values:
            if v not in self._seen:
                self._seen.add(v)
                self.items.append(v)

    def __contains__(self, v: int) -> bool:
        return v in self._seen

    def ordered(self) -> list[int]:
        return list(self.items) if len(self.items) <= 4 else sorted(self.items, key=_trie_order)


class StageMetrics:
    """One stage attempt's task values per SQL metric (Spark's ``LiveStageMetrics``)."""

    __slots__ = ("stage_id", "attempt", "num_tasks", "types", "completed", "values", "maxes",
                 "task_index")

    def __init__(self, stage_id: int, attempt: int, num_tasks: int, types: dict[int, str]):
        self.stage_id, self.attempt, self.num_tasks, self.types = stage_id, attempt, num_tasks, types
        self.completed = bytearray(max(num_tasks, 0))
        self.task_index: dict[int, int] = {}          # for heartbeats, which carry no index
        self.values: dict[int, array] = {}
        self.maxes: dict[int, list[int]] = {}          # id -> [max value, task id]

    def update(self, task_id: int, index: int, succeeded: bool,
               updates: list[tuple[int, int]]) -> None:
        if not 0 <= index < self.num_tasks or self.completed[index]:
            return
        types, values, maxes = self.types, self.values, self.maxes
        for acc_id, value in updates:
            kind = types.get(acc_id)
            if kind is None:
                continue
            arr = values.get(acc_id)
            if arr is None:
                arr = values[acc_id] = array("q", bytes(8 * self.num_tasks))
            arr[index] = value
            if kind != "sum":
                best = maxes.get(acc_id)
                if best is None:
                    maxes[acc_id] = [value, task_id]
                elif value > best[0]:          # ties: the first to report (heartbeats too)
                    best[0], best[1] = value, task_id
        if succeeded:
            self.completed[index] = 1

    def update_many(self, task_ids: np.ndarray, indexes: np.ndarray, succeeded: np.ndarray,
                    counts: np.ndarray, acc_ids: np.ndarray, values: np.ndarray) -> None:
        """:meth:`update` for each of a run of tasks in turn, done with arrays: task ``i``
        (``task_ids[i]``, ``indexes[i]``, ``succeeded[i]``) has the next ``counts[i]`` pairs of
        ``acc_ids`` / ``values`` (int64). The outcome is the same as the calls one by one
        (``tests/collect/test_stage_metrics_bulk.py``): an index's values are its last applied
        task's, a metric's maximum is the first task to report the largest value, and a task
        counts only until its index's first success."""
        n = len(indexes)
        if not n:
            return
        num = self.num_tasks
        done = np.frombuffer(self.completed, dtype=np.uint8) if num > 0 else np.zeros(1, np.uint8)
        valid = (indexes >= 0) & (indexes < num)
        at = np.where(valid, indexes, 0)
        applied = valid & (done[at] == 0)
        wins = applied & succeeded
        if wins.any():                 # after its index's first success, a task counts no more
            pos = np.arange(n)
            first = np.full(max(num, 1), n, dtype=np.int64)
            np.minimum.at(first, at[wins], pos[wins])
            applied &= pos <= first[at]
        event = np.repeat(np.arange(n), counts)
        types = self.types
        keep = applied[event]
        if keep.any():
            known = np.fromiter(types, dtype=np.int64, count=len(types))
            keep &= np.isin(acc_ids, known)
        if keep.any():
            event = event[keep]
            acc, val = acc_ids[keep], values[keep]
            where, who = at[event], task_ids[event]
            ids, first_at = np.unique(acc, return_index=True)
            for acc_id in ids[np.argsort(first_at, kind="stable")].tolist():   # as met
                mine = acc == acc_id
                where_a, val_a = where[mine], val[mine]
                arr = self.values.get(acc_id)
                if arr is None:
                    arr = self.values[acc_id] = array("q", bytes(8 * num))
                view = np.frombuffer(arr, dtype=np.int64)
                if np.bincount(where_a, minlength=num).max() <= 1:
                    view[where_a] = val_a                # one write per index
                else:                                    # the last write wins
                    last, back = np.unique(where_a[::-1], return_index=True)
                    view[last] = val_a[::-1][back]
                if types[acc_id] != "sum":
                    m = int(val_a.argmax())                  # the first of the largest
                    top = int(val_a[m])
                    best = self.maxes.get(acc_id)
                    if best is None:
                        self.maxes[acc_id] = [top, int(who[mine][m])]
                    elif top > best[0]:
                        best[0], best[1] = top, int(who[mine][m])
        won = applied & succeeded
        if won.any():
            done[at[won]] = 1


class Execution:
    """What Spark keeps of one SQL execution (``LiveExecutionData``)."""

    def __init__(self, execution_id: int):
        self.execution_id = execution_id
        self.root_execution_id = -1
        self.description = ""
        self.details = ""
        self.plan_text = ""
        self.plan: dict | None = None
        self.submission_ms = np.nan
        self.completion_ms = np.nan
        self.error = ""
        self.types: dict[int, str] = {}            # exec.metrics: accumulator id -> type
        self.jobs: dict[int, str] = {}             # job id -> RUNNING | SUCCEEDED | FAILED
        self.stages = ScalaIntSet()
        self.driver: list[tuple[int, int]] = []
        self.end_events = 0
        self.values: dict[int, tuple[np.ndarray, tuple | None]] | None = None


class SqlListener:
    """Spark's ``SQLAppStatusListener``, for event-log replay (no live accumulator reads)."""

    def __init__(self) -> None:
        self.executions: dict[int, Execution] = {}
        self.live: dict[int, Execution] = {}
        self.stage_metrics: dict[int, StageMetrics] = {}
        self.sql_stages: set[int] = set()          # stages of any SQL execution, ever
        self.live_stages: set[int] = set()         # stages of the live executions

    # -- executions -------------------------------------------------------------------
    def _get(self, execution_id: int) -> Execution:
        exec_ = self.live.get(execution_id)
        if exec_ is None:
            exec_ = self.executions.get(execution_id)
            if exec_ is None:
                exec_ = self.executions[execution_id] = Execution(execution_id)
            self.live[execution_id] = exec_
            self._live_changed()
        return exec_

    def _live_changed(self) -> None:
        self.live_stages = {s for exec_ in self.live.values() for s in exec_.stages.items}

    def execution_start(self, execution_id: int, root_id: int, description: str, details: str,
                        plan_text: str, plan: dict, time_ms: float) -> None:
        types = plan_metric_types(plan)
        exec_ = self._get(execution_id)
        exec_.root_execution_id = root_id
        exec_.description, exec_.details, exec_.plan_text = description, details, plan_text
        exec_.plan = plan
        exec_.types = types              # Spark replaces the metrics at start
        exec_.submission_ms = time_ms

    def adaptive_update(self, execution_id: int, plan_text: str, plan: dict) -> None:
        types = plan_metric_types(plan)
        exec_ = self._get(execution_id)
        exec_.plan_text, exec_.plan = plan_text, plan
        exec_.types.update(types)

    def metric_updates(self, execution_id: int, metrics: list[tuple[int, str]]) -> None:
        self._get(execution_id).types.update(metrics)

    def driver_updates(self, execution_id: int, updates: list[tuple[int, int]]) -> None:
        exec_ = self.live.get(execution_id)
        if exec_ is not None:
            exec_.driver.extend(updates)

    def execution_end(self, execution_id: int, time_ms: float, error: str) -> None:
        exec_ = self.live.get(execution_id)
        if exec_ is None:
            return
        exec_.completion_ms, exec_.error = time_ms, error
        exec_.values = self._aggregate(exec_)
        self._drop_stale_stages(exec_)
        exec_.end_events += 1
        self._maybe_done(exec_)

    def _maybe_done(self, exec_: Execution) -> None:
        if exec_.end_events >= len(exec_.jobs) + 1:
            self._drop_stale_stages(exec_)
            self.live.pop(exec_.execution_id, None)
            self._live_changed()

    def _drop_stale_stages(self, exec_: Execution) -> None:
        active = {s for other in self.live.values() if other is not exec_ for s in other.stages.items}
        for stage_id in [s for s in self.stage_metrics if s not in active]:
            del self.stage_metrics[stage_id]

    # -- jobs, stages, tasks --------------------------------------------------------
    def job_start(self, job_id: int, execution_id: int, stage_infos: list[tuple[int, int]],
                  stage_ids: list[int]) -> None:
        exec_ = self._get(execution_id)
        if exec_.types:
            types = dict(exec_.types)
            for stage_id, num_tasks in stage_infos:
                self.stage_metrics[stage_id] = StageMetrics(stage_id, 0, num_tasks, types)
        exec_.jobs[job_id] = "RUNNING"
        exec_.stages.add_all(stage_ids)
        self.sql_stages.update(stage_ids)
        self.live_stages.update(stage_ids)

    def job_end(self, job_id: int, succeeded: bool) -> None:
        for exec_ in list(self.live.values()):
            if job_id in exec_.jobs:
                exec_.jobs[job_id] = "SUCCEEDED" if succeeded else "FAILED"
                exec_.end_events += 1
                self._maybe_done(exec_)

    def stage_submitted(self, stage_id: int, attempt: int) -> None:
        if stage_id not in self.live_stages:
            return
        st = self.stage_metrics.get(stage_id)
        if st is not None and st.attempt != attempt:
            self.stage_metrics[stage_id] = StageMetrics(stage_id, attempt, st.num_tasks, st.types)

    def task_start(self, stage_id: int, attempt: int, task_id: int, index: int) -> None:
        st = self.stage_metrics.get(stage_id)
        if st is not None and st.attempt == attempt:
            st.task_index[task_id] = index

    def task_end(self, stage_id: int, attempt: int, task_id: int, index: int, succeeded: bool,
                 updates: list[tuple[int, int]]) -> None:
        st = self.stage_metrics.get(stage_id)
        if st is not None and st.attempt == attempt and stage_id in self.live_stages:
            st.task_index[task_id] = index
            st.update(task_id, index, succeeded, updates)

    def heartbeat(self, task_updates: list[tuple[int, int, int, list[tuple[int, int]]]]) -> None:
        """Running tasks' accumulator values an executor heartbeat carried (logged in
        ``SparkListenerExecutorMetricsUpdate``): they count until the task ends, and a
        heartbeat can be the first to report a metric's maximum."""
        for task_id, stage_id, attempt, updates in task_updates:
            st = self.stage_metrics.get(stage_id)
            if st is not None and st.attempt == attempt and task_id in st.task_index:
                st.update(task_id, st.task_index[task_id], False, updates)

    # -- aggregation (Spark's aggregateMetrics) ---------------------------------------
    def _aggregate(self, exec_: Execution) -> dict[int, tuple[np.ndarray, tuple | None]]:
        types = exec_.types
        stages = [self.stage_metrics[s] for s in exec_.stages.ordered() if s in self.stage_metrics]
        values: dict[int, list[np.ndarray]] = {}
        maxes: dict[int, list[int]] = {}            # id -> [value, stage, attempt, task]
        for st in stages:
            for acc_id, arr in st.values.items():
                if acc_id in types:
                    values.setdefault(acc_id, []).append(np.frombuffer(arr, dtype="int64").copy())
        for st in stages:
            for acc_id, (value, task_id) in st.maxes.items():
                if acc_id not in types:
                    continue
                best = maxes.setdefault(acc_id, [value, st.stage_id, st.attempt, task_id])
                if value > best[0]:
                    best[:] = [value, st.stage_id, st.attempt, task_id]
        for acc_id, value in exec_.driver:
            if acc_id not in types:
                continue
            if acc_id in values and acc_id in maxes and value > maxes[acc_id][0]:
                del maxes[acc_id]          # the driver's value is the largest: "(driver)"
            values.setdefault(acc_id, []).append(np.array([value], dtype="int64"))
        return {acc_id: (np.concatenate(parts), tuple(maxes[acc_id]) if acc_id in maxes else None)
                for acc_id, parts in values.items()}

    def finish(self) -> None:
        """At the end of the log: executions still open are aggregated as they stand."""
        for exec_ in self.live.values():
            exec_.values = self._aggregate(exec_)

    # -- tables -------------------------------------------------------------------------
    def tables(self, job_ids: set[int], job_stages: dict[int, list[int]], stages: pd.DataFrame,
               tasks: pd.DataFrame, warnings: list[str],
               ) -> tuple[list[dict], list[dict], list[dict]]:
        """(sql, operators, sql_metrics) rows of the executions with a job in ``job_ids``,
        in the model's names (``model.SQL_COLUMNS``, ...). ``stage_attempts`` follow the rule
        every source shares (:mod:`jupyter_perf.collect.sql_stages`) on the run's ``stages``
        and ``tasks``, so REST and the event log give equal tables; a node the rule cannot
        place is said in ``warnings``."""
        sql, operators, metrics = [], [], []
        records = stage_records(tasks)          # once, not once per execution
        for execution_id in sorted(self.executions):
            exec_ = self.executions[execution_id]
            jobs = sorted(j for j in exec_.jobs if j in job_ids)
            if not jobs:
                continue
            sql.append({
                "execution_id": execution_id, "root_execution_id": exec_.root_execution_id,
                "description": exec_.description, "details": exec_.details,
                "plan_text": exec_.plan_text, "submission_ms": exec_.submission_ms,
                "completion_ms": exec_.completion_ms, "job_ids": jobs,
                "status": _status(exec_), "error": _first_line(exec_.error)})
            if exec_.plan is None:
                continue
            graph = PlanGraph(exec_.plan)
            values = exec_.values or {}
            ops, mets = [], []
            for node in graph.all_nodes():
                ops.append({
                    "execution_id": execution_id, "node_id": node.id,
                    "parent_ids": sorted(graph.parents.get(node.id, [])),
                    "name": node.name.strip(), "description": node.desc,
                    "codegen_id": graph.codegen_id.get(node.id, -1),
                    "cluster_id": graph.cluster_of.get(node.id, -1),
                    "stage_attempts": []})
                for name, acc_id, kind in node.metrics:
                    if acc_id in values:
                        mets.append(_metric_row(execution_id, node.id, name.strip(), acc_id,
                                                kind, *values[acc_id]))
            assign(ops, mets, [s for j in jobs for s in job_stages.get(j, [])], stages, tasks,
                   warnings, records=records)
            operators.extend(ops)
            metrics.extend(mets)
        return sql, operators, metrics


def _first_line(error: str) -> str:
    """The error's first line, as REST's collector takes it from ``errorMessage``."""
    lines = error.strip().splitlines()
    return lines[0] if lines else ""


def _status(exec_: Execution) -> str:
    states = set(exec_.jobs.values())
    if exec_.error or "FAILED" in states:
        return "FAILED"
    if exec_.completion_ms == exec_.completion_ms and states <= {"SUCCEEDED"}:
        return "COMPLETED"
    return "RUNNING"


def _metric_row(execution_id: int, node_id: int, name: str, acc_id: int, kind: str,
                values: np.ndarray, best: tuple | None) -> dict[str, Any]:
    text, stats = metric_text(kind, values, best)
    unit = {"size": "bytes", "timing": "ms", "nsTiming": "ms"}.get(
        kind, "rows" if "rows" in name else "count")
    return {"execution_id": execution_id, "node_id": node_id, "accumulator_id": acc_id,
            "name": name, "metric_type": kind, "unit": unit, **stats, "text": text}


# ---------------------------------------------------------------------------
# The plan graph (Spark's SparkPlanGraph)
# ---------------------------------------------------------------------------
def plan_metric_types(plan: dict) -> dict[int, str]:
    """Accumulator id -> metric type of the metrics of a plan's graph nodes (what Spark
    records as an execution's metrics: nodes the graph skips do not count)."""
    return {acc_id: kind for node in PlanGraph(plan).all_nodes()
            for _, acc_id, kind in node.metrics}


class Node:
    __slots__ = ("id", "name", "desc", "metrics", "children")

    def __init__(self, node_id: int, info: dict):
        self.id = node_id
        self.name = info["nodeName"]
        self.desc = info["simpleString"]
        self.metrics = [(m["name"], m["accumulatorId"], m["metricType"]) for m in info["metrics"]]
        self.children: list[Node] = []          # nodes of a WholeStageCodegen cluster


def _key(info: dict) -> tuple:
    """SparkPlanInfo equality: node name, simple string and children (not the metrics)."""
    return (info["nodeName"], info["simpleString"], tuple(_key(c) for c in info["children"]))


class PlanGraph:
    """Nodes and edges of a physical plan, numbered as Spark's ``SparkPlanGraph`` numbers
    them (the ids the REST API and the SQL tab show)."""

    def __init__(self, plan: dict):
        self.nodes: list[Node] = []
        self.edges: list[tuple[int, int]] = []          # (from child, to parent)
        self.exchanges: dict[tuple, Node] = {}
        self._next = 0
        self._build(plan, None, None)
        self.parents: dict[int, list[int]] = {}
        for child, parent in self.edges:
            self.parents.setdefault(child, []).append(parent)
        self.cluster_of: dict[int, int] = {}
        self.codegen_id: dict[int, int] = {}
        for node in self.nodes:
            if node.name.strip().startswith("WholeStageCodegen"):
                number = _codegen_number(node.name.strip())
                if number is not None:           # the cluster's own number (REST: its name's)
                    self.codegen_id[node.id] = number
                for inner in node.children:
                    self.cluster_of[inner.id] = node.id
                    if number is not None:
                        self.codegen_id[inner.id] = number

    def _node(self, info: dict) -> Node:
        node = Node(self._next, info)
        self._next += 1
        return node

    def _build(self, info: dict, parent: Node | None, cluster: Node | None) -> None:
        name = info["nodeName"]
        children = info["children"]
        if name.startswith("WholeStageCodegen"):
            node = self._node(info)
            self.nodes.append(node)
            self._build(children[0], parent, node)
        elif name == "InputAdapter":
            self._build(children[0], parent, None)
        elif name in ("BroadcastQueryStage", "ShuffleQueryStage"):
            reused = self.exchanges.get(_key(children[0]))
            if reused is not None:
                self._edge(reused, parent)
            else:
                self._build(children[0], parent, None)
        elif name in ("TableCacheQueryStage", "ResultQueryStage"):   # 4.x: the result stage
            self._build(children[0], parent, None)
        elif name in ("Subquery", "SubqueryBroadcast") and cluster is not None:
            self._build(info, parent, None)
        elif name in ("Subquery", "SubqueryBroadcast") and _key(info) in self.exchanges:
            self._edge(self.exchanges[_key(info)], parent)
        elif name == "ReusedSubquery":
            self._build(children[0], parent, cluster)
        elif name == "ReusedExchange" and _key(children[0]) in self.exchanges:
            self._edge(self.exchanges[_key(children[0])], parent)
        else:
            node = self._node(info)
            (cluster.children if cluster is not None else self.nodes).append(node)
            if "Exchange" in name or name in ("Subquery", "SubqueryBroadcast"):
                self.exchanges[_key(info)] = node
            self._edge(node, parent)
            for child in children:
                self._build(child, node, cluster)

    def _edge(self, child: Node, parent: Node | None) -> None:
        if parent is not None:
            self.edges.append((child.id, parent.id))

    def all_nodes(self) -> list[Node]:
        """Every node, each cluster after its inner nodes (Spark's ``allNodes``)."""
        out: list[Node] = []
        for node in self.nodes:
            if node.name.strip().startswith("WholeStageCodegen"):
                out.extend(node.children)
            out.append(node)
        return out


def _codegen_number(name: str) -> int | None:
    prefix = "WholeStageCodegen ("
    if name.startswith(prefix) and name.endswith(")"):
        try:
            return int(name[len(prefix):-1])
        except ValueError:
            return None
    return None
