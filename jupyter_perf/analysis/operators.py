"""SQL operators ↔ stages ↔ task time: which part of the query took the time.

Inputs are the model's tables (``run.sql``, ``run.operators`` with ``stage_attempts``,
``run.sql_metrics`` normalised to ms / bytes / rows) and the per-task breakdown. The rule
(docs/operators.md says it with its ambiguities):

1. **Stages.** An operator owns the task time of the stage attempts it ran in. A stage
   attempt no operator lists (RDD work, or a plan the collector could not map) stays
   *unattributed*.
2. **Measured, by role.** Inside a stage attempt, the breakdown components Spark measures go
   to the operator that does that work: shuffle write → the ``Exchange`` whose input is
   computed in the stage (map side), split by its bytes written; shuffle fetch wait → the
   ``Exchange`` the stage reads (read side), split by bytes read; Python UDF time (Spark's
   Python SQL metrics, 4.0+) → the Python evaluation node. Estimated components with an
   obvious owner: input/output wait (estimated) → the stage's scans (by bytes read), else its
   write command; in a stage with a Python evaluation node and no Python time from Spark
   (3.5), the other wait (estimated) → that node: the JVM task thread waits on the Python
   worker.
3. **The rest** (CPU, GC, waiting for a core, overheads) is split by Spark's own exclusive
   per-operator timings where they exist — ``sort time`` (Sort) and ``scan time`` (columnar
   scans), measured — and what remains goes to the stage's main operator, *estimated*: its
   joins, else aggregates, windows, sorts, generators/expands, scans, other row operators,
   then the exchange's map side (serialising for the shuffle); several of the same class
   share by output rows. Spark's ``WholeStageCodegen`` "duration" is not used: it is each
   pipeline's lifetime (from the iterator's creation to its end), and pipelines of one
   task overlap; "time in aggregation build" includes everything fused below the aggregate.
4. ``BroadcastExchange`` runs on the driver: its collect/build/broadcast times are
   ``driver_ms``, not task time (the job collecting its input has its own stages).

``kind`` is ``measured`` when at least half of an operator's time came from Spark's own
attribution (step 2's measured components, step 3's timings), else ``estimated``.
"""
from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

import numpy as np
import pandas as pd

from ..model import Run
from .components import KEYS
from .operator_labels import operator_label
from .stragglers import MIN_EXCESS_MS
from .timeline import Timeline, is_success, parse_parent_ids

# Physical plan nodes that evaluate Python in Python workers (Spark 3.5 and 4.x names).
PYTHON_NODE = re.compile(
    r"^(BatchEvalPython|ArrowEvalPython|FlatMapGroupsInPandas|FlatMapCoGroupsInPandas|"
    r"FlatMapGroupsInArrow|FlatMapCoGroupsInArrow|MapInPandas|MapInArrow|PythonMapInArrow|"
    r"AggregateInPandas|ArrowAggregatePython|WindowInPandas|ArrowWindowPython|"
    r"FlatMapGroupsInPandasWithState|TransformWithStateInPandas|BatchEvalPythonUDTF|"
    r"ArrowEvalPythonUDTF|PythonDataSource|MapInBatch)")
# Plan nodes that hold no work of their own in a task.
STRUCTURAL = re.compile(
    r"^(WholeStageCodegen|AdaptiveSparkPlan|InputAdapter|ResultQueryStage|ShuffleQueryStage|"
    r"BroadcastQueryStage|TableCacheQueryStage|ReusedExchange|ReusedSubquery|Subquery|"
    r"AQEShuffleRead|CustomShuffleReader|BroadcastExchange|CollectLimit|TakeOrderedAndProject)")
EXCHANGE = re.compile(r"^(Exchange|ShuffleExchange)")
AQE_READ = re.compile(r"^(AQEShuffleRead|CustomShuffleReader)")
SCAN = re.compile(r"^(Scan|FileScan|BatchScan|InMemoryTableScan|LocalTableScan|Range|"
                  r"RDDScan|ExistingRDD|HiveTableScan|RowDataSourceScan)")
WRITE = re.compile(r"(Write|InsertInto|CreateTable|SaveIntoDataSource)")
# The main operator of a stage: the first class present takes what Spark leaves unsplit.
MAIN_CLASSES: tuple[tuple[str, re.Pattern], ...] = (
    ("join", re.compile(r"(Join|CartesianProduct)")),
    ("aggregate", re.compile(r"Aggregate")),
    ("window", re.compile(r"^Window")),
    ("sort", re.compile(r"^Sort")),
    ("generate", re.compile(r"^(Generate|Expand)")),
    ("scan", SCAN),
    ("row", re.compile(r".")),
)
EXCLUSIVE_TIMINGS = ("sort time", "scan time")
PYTHON_TIMINGS = ("time to execute Python code", "time to run Python workers")
DRIVER_TIMINGS = ("time to collect", "time to build", "time to broadcast")

COLUMNS = ["execution_id", "node_id", "name", "label", "description", "stage_ids", "task_time_ms",
           "share", "kind", "measured_ms", "rows_out", "input_bytes", "source",
           "spill_bytes", "peak_memory_bytes", "skew", "skew_ratio", "python_udf_ms",
           "driver_ms", "breakdown"]


def python_nodes(run: Run) -> list[str]:
    """Names of the plan nodes that ran Python."""
    names = run.operators["name"].dropna().astype(str)
    return [n for n in names if PYTHON_NODE.match(n.strip())]


def has_python(run: Run, breakdown: dict | None = None) -> bool:
    """Evidence that the run evaluated Python: a Python evaluation node in its plan, or
    Python time Spark measured (the ``python_udf`` component)."""
    if python_nodes(run):
        return True
    return bool(breakdown and breakdown.get("python_udf", {}).get("ms", 0.0) > 0)


# -- the plan, as the analysis reads it ------------------------------------------------
@dataclasses.dataclass
class Node:
    execution_id: int
    node_id: int
    name: str
    description: str
    parents: list[int]                  # consumers of this node's output
    children: list[int]
    stages: list[tuple[int, int]]
    metrics: dict[str, float]           # Spark's metric name -> normalised total
    maxima: dict[str, float]            # per-task max, where Spark gives it
    medians: dict[str, float]

    @property
    def key(self) -> tuple[int, int]:
        return (self.execution_id, self.node_id)

    def metric(self, *names: str) -> float | None:
        for n in names:
            if n in self.metrics:
                return self.metrics[n]
        return None


def _int(value: Any, default: int = -1) -> int:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return default
    return int(v) if math.isfinite(v) else default


def _pairs(value: Any) -> list[tuple[int, int]]:
    """``stage_attempts`` as (stage, attempt) pairs, whatever shape the table holds."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    if isinstance(value, str):
        nums = [int(x) for x in re.findall(r"-?\d+", value)]
        return list(zip(nums[::2], nums[1::2]))
    out = []
    for item in value:
        try:
            s, a = item
            out.append((int(s), int(a)))
        except (TypeError, ValueError):
            continue
    return out


def plan_nodes(run: Run) -> dict[tuple[int, int], Node]:
    """The plan nodes of the run, keyed by (execution_id, node_id), with their metrics."""
    ops = run.operators
    if ops.empty:
        return {}
    metrics: dict[tuple[int, int], tuple[dict, dict, dict]] = {}
    for rec in run.sql_metrics.to_dict("records"):
        key = (_int(rec.get("execution_id")), _int(rec.get("node_id")))
        total, mx, med = metrics.setdefault(key, ({}, {}, {}))
        name = str(rec.get("name") or "")
        for target, field in ((total, "value"), (mx, "max"), (med, "med")):
            v = pd.to_numeric(rec.get(field), errors="coerce")
            if pd.notna(v) and name not in target:
                target[name] = float(v)
    nodes: dict[tuple[int, int], Node] = {}
    for rec in ops.to_dict("records"):
        key = (_int(rec.get("execution_id")), _int(rec.get("node_id")))
        total, mx, med = metrics.get(key, ({}, {}, {}))
        nodes[key] = Node(key[0], key[1], str(rec.get("name") or "").strip(),
                          str(rec.get("description") or ""),
                          parse_parent_ids(rec.get("parent_ids")), [],
                          _pairs(rec.get("stage_attempts")), total, mx, med)
    for (ex, nid), node in nodes.items():
        for p in node.parents:
            if (ex, p) in nodes:
                nodes[(ex, p)].children.append(nid)
    return nodes


def _neighbours(nodes: dict, node: Node, up: bool) -> list[Node]:
    """The nodes reading ``node``'s output (``up``) or whose output it reads, looking through
    structural wrappers (an ``Exchange`` is never looked through)."""
    out, seen = [], set()
    todo = list(node.parents if up else node.children)
    while todo:
        nid = todo.pop()
        if nid in seen or (node.execution_id, nid) not in nodes:
            continue
        seen.add(nid)
        other = nodes[(node.execution_id, nid)]
        if STRUCTURAL.match(other.name) and not EXCHANGE.match(other.name):
            todo += other.parents if up else other.children
        else:
            out.append(other)
    return out


def _consumers(nodes: dict, node: Node) -> list[Node]:
    return _neighbours(nodes, node, up=True)


def _producers(nodes: dict, node: Node) -> list[Node]:
    return _neighbours(nodes, node, up=False)


# -- Python time Spark measured, per task ----------------------------------------------
def python_time(node: Node) -> float | None:
    """The node's Python time as Spark measured it (ms), None where Spark reports none:
    4.2+ "time to execute Python code", else 4.0+ "time to run Python workers"; Spark 3.5
    reports only data sent/returned and rows."""
    if not PYTHON_NODE.match(node.name):
        return None
    return node.metric(*PYTHON_TIMINGS)


def _tasks_in(run: Run, stages: set) -> np.ndarray:
    """Per task row: whether it belongs to one of ``stages`` ((stage, attempt) pairs)."""
    t = run.tasks
    if not stages or not len(t):
        return np.zeros(len(t), dtype=bool)
    keys = zip(t["stage_id"].to_numpy().tolist(), t["stage_attempt"].to_numpy().tolist())
    return np.fromiter((k in stages for k in keys), dtype=bool, count=len(t))


def python_stage_tasks(run: Run, nodes: dict) -> np.ndarray:
    """Per task row: whether its stage attempt ran a Python evaluation node."""
    return _tasks_in(run, {s for n in nodes.values() if PYTHON_NODE.match(n.name)
                           for s in n.stages})


def python_ms_per_task(run: Run, nodes: dict, rest: np.ndarray) -> np.ndarray:
    """Per task row: Python time Spark measured, laid over the tasks of the Python nodes'
    stage attempts in proportion to what their task metrics leave unexplained (``rest``)."""
    out = np.zeros(len(run.tasks))
    for node in nodes.values():
        ms = python_time(node)
        if not ms or not node.stages:
            continue
        room = np.where(_tasks_in(run, set(node.stages)), rest, 0.0)
        if room.sum() <= 0:
            continue
        out += room * min(1.0, ms / room.sum())
    return np.minimum(out, rest)


# -- attribution -----------------------------------------------------------------------
@dataclasses.dataclass
class _Acc:
    time: float = 0.0
    measured: float = 0.0
    comps: dict = dataclasses.field(default_factory=dict)

    def add(self, ms: float, measured: bool, comps: dict[str, float]) -> None:
        self.time += ms
        if measured:
            self.measured += ms
        for k, v in comps.items():
            self.comps[k] = self.comps.get(k, 0.0) + v


def _split(total: float, nodes: list[Node], weight) -> list[tuple[Node, float]]:
    """``total`` over ``nodes`` by ``weight(node)`` (evenly where every weight is 0)."""
    if not nodes or total <= 0:
        return []
    w = np.array([max(float(weight(n) or 0.0), 0.0) for n in nodes])
    if w.sum() <= 0:
        w = np.ones(len(nodes))
    return list(zip(nodes, (total * w / w.sum()).tolist()))


def _bytes_read(n: Node) -> float:
    return (n.metric("remote bytes read") or 0.0) + (n.metric("local bytes read") or 0.0)


def _rows(n: Node) -> float:
    return n.metric("number of output rows") or 0.0


def _main_class(name: str) -> int:
    for i, (_, pattern) in enumerate(MAIN_CLASSES):
        if pattern.search(name):
            return i
    return len(MAIN_CLASSES)


@dataclasses.dataclass
class OperatorResult:
    table: pd.DataFrame                 # COLUMNS, most expensive first
    unattributed_ms: float              # task time of stages no operator lists
    notes: list[str]                    # what AQE did, in plan order


def attribute(run: Run, tl: Timeline, per_task: pd.DataFrame,
              nodes: dict | None = None) -> OperatorResult:
    """Operators with their share of the run's task time (module docstring's rule)."""
    nodes = plan_nodes(run) if nodes is None else nodes
    total_time = float(per_task.to_numpy().sum()) if len(per_task) else 0.0
    if not nodes:
        return OperatorResult(pd.DataFrame(columns=COLUMNS), total_time, [])
    t = run.tasks
    sums = per_task.join(t[["stage_id", "stage_attempt"]]).groupby(
        ["stage_id", "stage_attempt"]).sum()
    by_stage: dict[tuple[int, int], list[Node]] = {}
    for node in nodes.values():
        for st in node.stages:
            by_stage.setdefault(st, []).append(node)
    stage_time = {k: float(sums.loc[k].sum()) for k in sums.index}
    acc: dict[tuple[int, int], _Acc] = {k: _Acc() for k in nodes}
    unattributed = 0.0
    for key in sums.index:
        key = (int(key[0]), int(key[1]))
        comps = {k: float(v) for k, v in sums.loc[key].items()}
        owners = [n for n in by_stage.get(key, []) if not STRUCTURAL.match(n.name)]
        if not owners:
            unattributed += sum(comps.values())
            continue
        _attribute_stage(nodes, key, owners, comps, acc, stage_time)
    table = _table(run, tl, nodes, acc, total_time)
    return OperatorResult(table, unattributed, aqe_notes(nodes))


def _metric_share(node: Node, key: tuple[int, int], stage_time: dict, name: str) -> float:
    """The part of a node's metric total that belongs to stage attempt ``key`` (by task time
    where the node ran in several)."""
    v = node.metrics.get(name, 0.0)
    if not v or len(node.stages) <= 1:
        return v
    times = [stage_time.get(s, 0.0) for s in node.stages]
    mine = stage_time.get(key, 0.0)
    return v * mine / sum(times) if sum(times) > 0 else v / len(node.stages)


def _attribute_stage(nodes, key, owners, comps, acc, stage_time) -> None:
    left = dict(comps)

    def pin(component: str, targets: list[Node], weight, measured: bool) -> None:
        amount = left.get(component, 0.0)
        for node, ms in _split(amount, targets, weight):
            acc[node.key].add(ms, measured, {component: ms})
        if targets and amount > 0:
            left[component] = 0.0

    in_stage = {n.key for n in owners}
    execs = {n.execution_id for n in owners}
    # every shuffle of these executions: written where its input is computed in the stage,
    # read where its consumer is, whether or not the collector listed the stage for it
    shuffles = [n for n in nodes.values() if n.execution_id in execs and EXCHANGE.match(n.name)]
    writes = [e for e in shuffles if any(p.key in in_stage for p in _producers(nodes, e))]
    reads = [e for e in shuffles if e not in writes
             and (e.key in in_stage or any(c.key in in_stage for c in _consumers(nodes, e)))]
    pythons = [n for n in owners if PYTHON_NODE.match(n.name)]
    scans = [n for n in owners if SCAN.match(n.name)]
    writers = [n for n in owners if WRITE.search(n.name)]
    pin("shuffle_write", writes, lambda n: n.metric("shuffle bytes written"), True)
    pin("shuffle_fetch_wait", reads, _bytes_read, True)
    pin("python_udf", pythons, lambda n: python_time(n), True)
    pin("io_wait_est", scans or writers, lambda n: n.metric("size of files read") or _rows(n),
        False)
    if pythons:
        # the JVM task thread waits on its Python workers: Spark 3.5 times none of it, and
        # 4.x's "time to execute Python code" leaves out starting and initialising the
        # workers and moving the rows (19 s of a 21 s task on a loaded host, Spark 4.3)
        pin("other_wait_est", pythons, lambda n: 1.0, False)

    pool = {k: v for k, v in left.items() if v > 0}
    pool_ms = sum(pool.values())
    if pool_ms <= 0:
        return
    mix = {k: v / pool_ms for k, v in pool.items()}
    work = [n for n in owners if not EXCHANGE.match(n.name)]
    timed = []
    for n in work:
        ms = sum(_metric_share(n, key, stage_time, m) for m in EXCLUSIVE_TIMINGS)
        if ms > 0:
            timed.append((n, ms))
    timed_ms = sum(ms for _, ms in timed)
    scale = min(1.0, pool_ms / timed_ms) if timed_ms > 0 else 0.0
    for n, ms in timed:
        share = ms * scale
        acc[n.key].add(share, True, {k: share * f for k, f in mix.items()})
    rest = pool_ms - timed_ms * scale
    if rest <= 1e-9:
        return
    candidates = ([n for n in work if not PYTHON_NODE.match(n.name)] or work or writes or reads
                  or owners)
    best = min(_main_class(n.name) for n in candidates)
    main = [n for n in candidates if _main_class(n.name) == best]
    for n, ms in _split(rest, main, _rows):
        acc[n.key].add(ms, False, {k: ms * f for k, f in mix.items()})


def _stage_skew(run: Run, tl: Timeline) -> dict[tuple[int, int], float]:
    """Per stage attempt: its longest successful task over its median one (1 when the
    longest is less than ``MIN_EXCESS_MS`` longer)."""
    t = run.tasks
    if not len(t):
        return {}
    frame = pd.DataFrame({"s": t["stage_id"].to_numpy(), "a": t["stage_attempt"].to_numpy(),
                          "d": tl.duration})[is_success(t["status"])]
    out = {}
    for (s, a), g in frame.groupby(["s", "a"]):
        med, mx = float(g["d"].median()), float(g["d"].max())
        out[(int(s), int(a))] = mx / med if med > 0 and mx - med >= MIN_EXCESS_MS else 1.0
    return out


def _source(node: Node) -> str:
    if not SCAN.match(node.name):
        return ""
    fmt = node.name.split(" ", 1)[1].strip() if " " in node.name else node.name
    return f"{fmt}: {node.description}".strip(": ") if node.description else fmt


def _table(run: Run, tl: Timeline, nodes: dict, acc: dict, total_time: float) -> pd.DataFrame:
    skew = _stage_skew(run, tl)
    rows = []
    for key, node in nodes.items():
        if node.name.startswith(("WholeStageCodegen", "AdaptiveSparkPlan", "InputAdapter")):
            continue
        a = acc[key]
        ratio = max([skew.get(s, 1.0) for s in node.stages] or [1.0])
        driver = sum(node.metrics.get(m, 0.0) for m in DRIVER_TIMINGS) \
            if node.name.startswith("BroadcastExchange") else 0.0
        rows.append({
            "execution_id": node.execution_id, "node_id": node.node_id, "name": node.name,
            "label": operator_label(node.name, node.description),
            "description": node.description,
            "stage_ids": sorted({s for s, _ in node.stages}),
            "task_time_ms": a.time,
            "share": a.time / total_time if total_time > 0 else 0.0,
            "kind": "measured" if a.time > 0 and a.measured >= 0.5 * a.time else "estimated",
            "measured_ms": a.measured,
            "rows_out": node.metric("number of output rows"),
            "input_bytes": node.metric("size of files read", "bytes read")
            if SCAN.match(node.name) else None,
            "source": _source(node),
            "spill_bytes": node.metric("spill size"),
            "peak_memory_bytes": node.metric("peak memory"),
            "skew": False,   # from data, not durations: set by Analysis.operators
            "skew_ratio": ratio,
            "python_udf_ms": python_time(node),
            "driver_ms": driver,
            "breakdown": {k: a.comps.get(k, 0.0) for k in KEYS if a.comps.get(k, 0.0) > 0},
        })
    table = pd.DataFrame(rows, columns=COLUMNS)
    if table.empty:
        return table
    table = table.sort_values(["task_time_ms", "driver_ms", "execution_id", "node_id"],
                              ascending=[False, False, True, True], kind="stable")
    return table.reset_index(drop=True)


# -- what AQE did ----------------------------------------------------------------------
def aqe_notes(nodes: dict) -> list[str]:
    """One clause per kind of AQE shuffle read that coalesced or split partitions (its
    metrics), with how many shuffles it happened to."""
    notes: list[str] = []
    for node in sorted(nodes.values(), key=lambda n: n.key):
        if not AQE_READ.match(node.name):
            continue
        after = node.metric("number of partitions")
        before = next((p.metric("number of partitions") for p in _producers(nodes, node)
                       if EXCHANGE.match(p.name)), None)
        coalesced = node.metric("number of coalesced partitions") or 0
        skewed = node.metric("number of skewed partitions") or 0
        splits = node.metric("number of skewed partition splits") or 0
        if skewed:
            notes.append(f"AQE split {int(skewed)} skewed shuffle "
                         f"partition{'s' if skewed != 1 else ''} into {int(splits)} tasks")
        if coalesced and before and after is not None and after < before:
            notes.append(f"AQE coalesced {int(before)} shuffle partitions into {int(after)}")
    counted = {n: notes.count(n) for n in notes}
    return [n if k == 1 else f"{n} ({k} shuffles)" for n, k in counted.items()]


# -- where in the cell -----------------------------------------------------------------
CALL_SITE = re.compile(r"^(?P<fn>[\w.<>$]+) at (?P<file>.+?):(?P<line>\d+)\s*$")
CELL_FILE = re.compile(r"(ipykernel_\d+[/\\]\d+\.py|<ipython-input-\d+-[0-9a-f]+>)")


def cell_line(run: Run, execution_id: int) -> dict | None:
    """``{"line", "text"}`` when Spark's call site of the execution points into the measured
    cell: an IPython cell file, a line of the cell (the editor's numbering: the
    ``%%perfmeasure`` header is line 1) that calls the action the call site names."""
    if run.kind != "cell" or run.sql.empty or not run.source:
        return None
    rows = run.sql[pd.to_numeric(run.sql["execution_id"], errors="coerce") == execution_id]
    lines = run.source.splitlines()
    for rec in rows.to_dict("records"):
        for text in (rec.get("details"), rec.get("description")):
            for part in str(text or "").splitlines():
                m = CALL_SITE.match(part.strip())
                if not m or not CELL_FILE.search(m.group("file")):
                    continue
                number = int(m.group("line"))
                index = number - 2                       # line 1 is the magic's header
                fn = m.group("fn").rsplit(".", 1)[-1]
                if 0 <= index < len(lines) and fn in lines[index]:
                    return {"line": number, "text": lines[index].strip()}
    return None


# -- stages named by their operators ---------------------------------------------------
def stage_operators(nodes: dict, limit: int = 6) -> dict[int, str]:
    """Per stage id: its operators from input to output ("Scan parquet lineitem → Filter →
    HashAggregate by l_orderkey → Exchange hash on l_orderkey"), wrappers left out; a shuffle
    reads at the start of a stage and writes at its end."""
    by_stage: dict[int, list[Node]] = {}
    for n in nodes.values():
        if STRUCTURAL.match(n.name):
            continue
        for s in {s for s, _ in n.stages}:
            by_stage.setdefault(s, []).append(n)
    out = {}
    for s, members in by_stage.items():
        names = [operator_label(n.name, n.description) for n in _input_to_output(nodes, members)]
        out[s] = " → ".join(names if len(names) <= limit else names[:limit - 1] + ["…"])
    return out


def _input_to_output(nodes: dict, members: list[Node]) -> list[Node]:
    """One stage's operators (``members``) ordered from its input to its output."""
    keys = {n.key for n in members}

    def depth(n: Node, seen=()) -> int:
        below = [p for p in _producers(nodes, n) if p.key in keys and p.key not in seen
                 and not (EXCHANGE.match(p.name) and _writes_in(nodes, p, keys))]
        if EXCHANGE.match(n.name) and not _writes_in(nodes, n, keys):
            return 0                                    # read side: the stage's input
        return 1 + max((depth(p, seen + (n.key,)) for p in below), default=0)

    return sorted(members, key=lambda n: (depth(n), n.execution_id, -n.node_id))


def _writes_in(nodes: dict, exchange: Node, keys: set) -> bool:
    return any(p.key in keys for p in _producers(nodes, exchange))
