"""CPU stack samples → task threads → plan operators (issue P). Pure: no Spark.

Input: ``run.extra["profile"]`` as ``collect/profiler.py`` keeps it — ``method``,
``interval_ms`` and ``stacks`` (``[[collapsed stack, samples], ...]``, root first; a task
thread's stack starts with its thread name ``[Executor task launch worker for task … (TID n)]``,
other JVM threads are one frame ``[jvm] <thread group>``); or ``{"method": "none", "note":
why}`` when no profile could be taken.

The rule, per task-thread stack (docs/report.md, "Profile"):

1. **Kind.** Walking from the leaf towards the root, the first frame of a known Spark or JDK
   class names what the sample was doing (:data:`KIND_RULES`: regex, sort, hash aggregate,
   joins, file scans and decompression, shuffle write/read, Python runners, window, expand);
   a frame of whole-stage generated code met first names it by its method's prefix
   (``hashAgg_…``, ``sort_…``, ``smj_…``; :data:`CODEGEN_PREFIXES`), and ``processNext``
   itself is the pipeline's own row work ("codegen").
2. **Codegen stage.** The leaf-most ``GeneratedIteratorForCodegenStage<N>`` frame gives the
   whole-stage-codegen id N; the run's plan (``run.operators.codegen_id``) has the operators
   fused into it.
3. **Operator.** Among the operators of codegen stage N (every operator when the stack has
   none), the one whose name the kind names (:data:`KIND_OPERATORS`; a regex: the operator
   whose expression has ``rlike``/``regexp``); else the pipeline's main operator (joins,
   aggregates, windows, sorts, generators, scans, then row operators). When several SQL
   executions of the window have a codegen stage N, the one whose stages used the most CPU.
4. **Stage.** The operator's stage attempts. async-profiler names a thread by its name at the
   end of the window, and Spark renames its pooled task threads at every task, so the thread
   name says "a task thread", not which task: the stage comes from the operator.

Python workers' rows (root ``[Python worker]``, py-spy's frames ``function (file:line)``;
``collect/pyprofiler.py``) all go to the window's Python evaluation operator (the "python"
kind; among several, the one whose stages used the most CPU). They are shown with the task
threads' (stacks, hot functions, operators) but counted apart: ``python.samples``.

``sampled_cpu_ms`` = task-thread samples × interval (on-CPU samples, each one interval of a
thread's CPU time); ``spark_cpu_ms`` = Spark's executor CPU + deserialize CPU of the window's
task attempts. Both are shown with their kind: sampled, measured.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np
import pandas as pd

from ..model import Run
from .operator_labels import operator_label
from .operators import MAIN_CLASSES, PYTHON_NODE, SCAN, _pairs

# a task thread's root frame: its name while a task runs, or Spark 4's name for an idle pooled
# task thread (the profile is dumped when the window's tasks are done); as
# collect/profiler.TASK_ROOTS, which this room cannot import
TASK_ROOTS = ("[Executor task launch worker", "[Executor task idle worker")
#: a Python worker's stack (py-spy's samples; collect/pyprofiler.PY_ROOT): frames
#: ``function (file:line)``, attributed to the window's Python evaluation operator
PY_ROOT = "[Python worker]"
JVM_ROOT = "[jvm] "
CODEGEN = re.compile(r"GeneratedIteratorForCodegenStage(\d+)\.([\w$]+)")

#: (kind, frame pattern), tried on each frame from the leaf up; the first frame that matches
#: any rule names the sample's kind.
KIND_RULES: tuple[tuple[str, re.Pattern], ...] = (
    ("regex", re.compile(r"java/util/regex/|expressions/(RLike|RegExp|Like)|"
                         r"StringUtils\$?\.(escapeLikeRegex)|regexp", re.I)),
    ("decompress", re.compile(r"(snappy|Snappy|zstd|Zstd|lz4|LZ4|Lz4|Inflater|GZIP|Gzip|"
                              r"Decompress|decompress|brotli)")),
    ("python", re.compile(r"api/python/|PythonRunner|PythonUDFRunner|ArrowPythonRunner|"
                          r"EvalPython|PythonArrowInput|PythonArrowOutput")),
    ("shuffle write", re.compile(r"shuffle/sort/(BypassMergeSortShuffleWriter|"
                                 r"UnsafeShuffleWriter|SortShuffleWriter|ShuffleExternalSorter|"
                                 r"ShuffleInMemorySorter)|ShufflePartitionPairsWriter|"
                                 r"DiskBlockObjectWriter|LocalDiskShuffleMapOutputWriter|"
                                 r"ShuffleExchangeExec\$\$anonfun|prepareShuffleDependency")),
    ("shuffle read", re.compile(r"ShuffleBlockFetcherIterator|BlockStoreShuffleReader|"
                                r"ShuffledRowRDD|ShuffleReader|"
                                r"UnsafeRowSerializerInstance\$\$anon\$2")),
    ("sort", re.compile(r"UnsafeExternalSorter|UnsafeInMemorySorter|RadixSort|"
                        r"UnsafeExternalRowSorter|UnsafeSorterSpill|SortExec|"
                        r"collection/unsafe/sort/")),
    ("aggregate", re.compile(r"HashAggregate|BytesToBytesMap|UnsafeFixedWidthAggregationMap|"
                             r"TungstenAggregation|ObjectAggregat|SortBasedAggregat|"
                             r"aggregate/|UnsafeKVExternalSorter")),
    ("join", re.compile(r"HashedRelation|LongToUnsafeRowMap|SortMergeJoin|HashJoin|"
                        r"BroadcastNestedLoopJoin|CartesianProduct")),
    ("scan", re.compile(r"parquet|Parquet|/orc/|Orc[A-Z]|FileScanRDD|ColumnarToRow|"
                        r"ColumnarBatch|vectorized/|OnHeapColumnVector|OffHeapColumnVector|"
                        r"InMemoryTableScan|CachedBatch|columnar/compression|CSVParser|"
                        r"univocity|JacksonParser|json/")),
    ("window", re.compile(r"execution/window/|WindowExec|WindowFunctionFrame")),
    ("expand", re.compile(r"ExpandExec|GenerateExec")),
)
#: Generated method-name prefixes (Spark's ``CodegenSupport.variablePrefix``) -> kind.
CODEGEN_PREFIXES: tuple[tuple[str, str], ...] = (
    ("hashAgg_", "aggregate"), ("agg_", "aggregate"), ("sort_", "sort"),
    ("smj_", "join"), ("bhj_", "join"), ("shj_", "join"), ("bnlj_", "join"),
    ("columnartorow_", "scan"), ("scan_", "scan"), ("inputadapter_", "codegen"),
    ("range_", "range"), ("filter_", "filter"), ("project_", "project"),
    ("expand_", "expand"), ("generate_", "expand"), ("localtablescan_", "scan"),
    ("window_", "window"),
)
#: Kind -> the plan operators (by name) that do that work; "regex" also by description.
KIND_OPERATORS: dict[str, re.Pattern] = {
    "sort": re.compile(r"^Sort\b"),
    "aggregate": re.compile(r"Aggregate"),
    "join": re.compile(r"(Join|CartesianProduct)"),
    "scan": SCAN,
    "decompress": SCAN,
    "python": PYTHON_NODE,
    "shuffle write": re.compile(r"^(Exchange|ShuffleExchange)"),
    "shuffle read": re.compile(r"^(AQEShuffleRead|CustomShuffleReader|ShuffleQueryStage|"
                               r"Exchange|ShuffleExchange)"),
    "window": re.compile(r"^Window"),
    "expand": re.compile(r"^(Expand|Generate)"),
    "range": re.compile(r"^Range"),
    "filter": re.compile(r"^Filter"),
    "project": re.compile(r"^Project"),
    "regex": re.compile(r"^(Filter|Project)"),
}
REGEX_EXPR = re.compile(r"rlike|regexp|\blike\b", re.I)
_STRUCTURAL = re.compile(r"^(WholeStageCodegen|InputAdapter|AdaptiveSparkPlan)")

HOT_COLUMNS = ["function", "self_samples", "total_samples", "share", "operator",
               "execution_id", "node_id", "kind", "stage_ids", "executor_ids"]


#: A thread-dump sample's root names the stage attempt its task ran in (the thread's name at
#: the dump; collect/profiler.dump_stacks): "[Executor task launch worker in stage 5.0]".
STAGE_ROOT = re.compile(r"^\[Executor task launch worker in stage (\d+)\.\d+\]")


def task_stage(root: str) -> int | None:
    """The stage a thread-dump sample's task ran in, from its root frame; None for
    async-profiler's (a thread named at the window's end: its stage is not the sample's)."""
    found = STAGE_ROOT.match(root)
    return int(found.group(1)) if found else None


def is_task_stack(frames: list[str]) -> bool:
    return bool(frames) and frames[0].startswith(TASK_ROOTS)


def is_python_stack(frames: list[str]) -> bool:
    return bool(frames) and frames[0].startswith(PY_ROOT)


def pretty(frame: str) -> str:
    """A Java frame as people read it (``java.util.regex.Pattern$Branch.match``)."""
    if re.fullmatch(r"[\w$/]+\.[\w$<>]+", frame) and "/" in frame:
        return frame.replace("/", ".")
    return frame


def stacks_of(profile: dict | None) -> list[tuple[list[str], int]]:
    """The profile's stacks as (frames root first, samples), bad rows skipped."""
    return [(frames, count) for frames, count, _ in executor_stacks_of(profile)]


def default_executor(profile: dict | None) -> str:
    """The executor of a stack row that names none: ``driver`` when the tasks ran in the
    driver's JVM (``local[N]``: Spark's executor id there), the one executor sampled, else
    ``""`` (not recorded)."""
    prof = profile or {}
    if prof.get("method") == "async-profiler":
        return "driver"
    executors = prof.get("executors")
    if isinstance(executors, dict) and len(executors) == 1:
        return str(next(iter(executors)))
    return ""


def executor_stacks_of(profile: dict | None) -> list[tuple[list[str], int, str]]:
    """The profile's stacks as (frames root first, samples, executor id); a row is
    ``[stack, samples]`` or ``[stack, samples, executor id]`` (:func:`default_executor`
    for the first); bad rows skipped."""
    out = []
    fallback = default_executor(profile)
    for row in (profile or {}).get("stacks") or []:
        try:
            stack, count = row[0], int(row[1])
            executor = str(row[2]) if len(row) > 2 and row[2] is not None else fallback
        except (TypeError, ValueError, IndexError, KeyError):
            continue
        if isinstance(stack, str) and stack and count > 0:
            out.append((stack.split(";"), count, executor))
    return out


#: A kind found at the leaf that a frame nearer the root may refine: decompression inside a
#: shuffle read is the shuffle read's; a sort inside a shuffle writer is the writer's.
CONTEXTUAL: dict[str, tuple[str, ...]] = {"decompress": ("shuffle read", "shuffle write"),
                                          "sort": ("shuffle write",)}
#: Kinds whose operators run outside the generated code of the pipeline they feed or read.
OUTSIDE: frozenset[str] = frozenset({"shuffle read", "shuffle write", "python", "scan",
                                     "decompress"})


def _rule(frame: str) -> str | None:
    for name, pattern in KIND_RULES:
        if pattern.search(frame):
            return name
    return None


def classify(frames: list[str]) -> tuple[str, int | None]:
    """(kind, codegen stage id or None) of one task-thread stack (root first).

    From the leaf up: the first known frame names the kind (a contextual kind may be refined
    by a frame nearer the root, :data:`CONTEXTUAL`); the first generated-code frame gives the
    codegen id, and its method the kind if none was found yet. Frames above it are the
    pipeline's callers (the task, the shuffle writer pulling rows) and do not count."""
    kind = ""
    for frame in reversed(frames[1:]):
        found = CODEGEN.search(frame)
        if found:
            if not kind:
                method = found.group(2)
                kind = next((k for prefix, k in CODEGEN_PREFIXES if method.startswith(prefix)),
                            "codegen")
            return kind, int(found.group(1))
        name = _rule(frame)
        if name is None:
            continue
        if not kind:
            kind = name
        elif name in CONTEXTUAL.get(kind, ()):
            kind = name
    return kind or "other", None


@dataclasses.dataclass
class _Op:
    execution_id: int
    node_id: int
    name: str
    description: str
    codegen_id: int
    stages: list[int]

    @property
    def label(self) -> str:
        return operator_label(self.name, self.description)


def _plan_ops(run: Run) -> list[_Op]:
    out = []
    for rec in run.operators.to_dict("records"):
        name = str(rec.get("name") or "").strip()
        if not name or _STRUCTURAL.match(name):
            continue
        try:
            cg = int(rec.get("codegen_id"))
        except (TypeError, ValueError):
            cg = -1
        out.append(_Op(int(rec["execution_id"]), int(rec["node_id"]), name,
                       str(rec.get("description") or ""), cg,
                       sorted({s for s, _ in _pairs(rec.get("stage_attempts"))})))
    return out


def _stage_cpu(run: Run) -> dict[int, float]:
    t = run.tasks
    if t.empty:
        return {}
    cpu = pd.to_numeric(t["cpu_ms"], errors="coerce").fillna(0.0)
    return {int(k): float(v) for k, v in cpu.groupby(t["stage_id"]).sum().items()}


def _main(ops: list[_Op]) -> _Op:
    def rank(op: _Op) -> int:
        for i, (_, pattern) in enumerate(MAIN_CLASSES):
            if pattern.search(op.name):
                return i
        return len(MAIN_CLASSES)
    return min(ops, key=lambda o: (rank(o), o.node_id))


class _Resolver:
    """(kind, codegen id) -> the plan operator, per the module's rule (memoised)."""

    def __init__(self, run: Run):
        self.ops = _plan_ops(run)
        self.cpu = _stage_cpu(run)
        self.memo: dict[tuple[str, int | None, int | None], _Op | None] = {}

    def _weight(self, ops: list[_Op]) -> float:
        return sum(self.cpu.get(s, 0.0) for s in {s for o in ops for s in o.stages})

    def _pick_execution(self, ops: list[_Op]) -> list[_Op]:
        by_ex: dict[int, list[_Op]] = {}
        for op in ops:
            by_ex.setdefault(op.execution_id, []).append(op)
        if len(by_ex) <= 1:
            return ops
        best = max(sorted(by_ex), key=lambda ex: self._weight(by_ex[ex]))
        return by_ex[best]

    def resolve(self, kind: str, codegen: int | None, stage: int | None = None) -> _Op | None:
        """``stage``: the stage the sample's task ran in, when its thread name said so
        (thread dumps): only that stage's operators are candidates (all when none has it)."""
        key = (kind, codegen, stage)
        if key not in self.memo:
            if stage is None:
                self.memo[key] = self._resolve(kind, codegen)
            else:
                every = self.ops
                self.ops = [o for o in every if stage in o.stages] or every
                try:
                    self.memo[key] = self._resolve(kind, codegen)
                finally:
                    self.ops = every
        return self.memo[key]

    def _resolve(self, kind: str, codegen: int | None) -> _Op | None:
        pattern = KIND_OPERATORS.get(kind)
        if codegen is not None:
            fused = self._pick_execution([o for o in self.ops if o.codegen_id == codegen])
            if not fused:
                return None
            if kind == "regex":
                hits = [o for o in fused if REGEX_EXPR.search(o.description)]
                if hits:
                    return min(hits, key=lambda o: o.node_id)
            if pattern is not None:
                hits = [o for o in fused if pattern.search(o.name)]
                if hits:
                    return min(hits, key=lambda o: o.node_id)
                if kind in OUTSIDE:      # the operator next to the pipeline, in its stages
                    stages = {s for o in fused for s in o.stages}
                    execs = {o.execution_id for o in fused}
                    near = [o for o in self.ops if o.execution_id in execs
                            and pattern.search(o.name) and stages & set(o.stages)]
                    if near:
                        return max(near, key=lambda o: (self._weight([o]), -o.node_id))
            return _main(fused)
        if pattern is None:
            return None
        hits = [o for o in self.ops if pattern.search(o.name)]
        if kind == "regex":
            hits = [o for o in hits if REGEX_EXPR.search(o.description)] or hits
        hits = self._pick_execution(hits)
        if not hits:
            return None
        if kind in ("shuffle write", "shuffle read", "python"):   # the busiest of its kind
            return max(hits, key=lambda o: (self._weight([o]), -o.node_id))
        return min(hits, key=lambda o: o.node_id)


@dataclasses.dataclass
class ProfileResult:
    method: str
    interval_ms: float
    note: str
    samples: int                       # task-thread samples
    other_samples: int                 # samples of the JVM's other threads
    hot: pd.DataFrame                  # HOT_COLUMNS
    operators: list[dict]              # per operator: samples, share, kinds
    kinds: dict[str, int]              # per kind: samples
    sampled_cpu_ms: float
    spark_cpu_ms: float
    # task stacks: (frames, samples, operator label, executor id, the operator's stages)
    stacks: list[tuple[list[str], int, str, str, list[int]]]
    # why the coarser thread dumps sampled the window instead of async-profiler ("" if not)
    fallback: str = ""
    # what one sample is, in the collector's words ("" for runs stored before it said)
    sample: str = ""
    # the Python workers' part (py-spy): method, interval_ms, sample, note, samples (their
    # samples are in ``stacks``, ``hot`` and ``operators`` too); {} when not asked
    python: dict = dataclasses.field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        ratio = (self.sampled_cpu_ms / self.spark_cpu_ms) if self.spark_cpu_ms > 0 else None
        return {"method": self.method, "interval_ms": self.interval_ms, "note": self.note,
                "fallback": self.fallback, "sample": self.sample,
                "samples": self.samples, "other_jvm_samples": self.other_samples,
                "sampled_cpu_ms": self.sampled_cpu_ms, "spark_cpu_ms": self.spark_cpu_ms,
                "sampled_to_spark": ratio, "operators": self.operators, "kinds": self.kinds,
                "python": self.python,
                "kind_of_numbers": {"sampled_cpu_ms": "sampled", "spark_cpu_ms": "measured",
                                    "python.sampled_cpu_ms": "sampled"}}


def spark_cpu_ms(run: Run) -> float:
    t = run.tasks
    if t.empty:
        return 0.0
    cols = [c for c in ("cpu_ms", "deserialize_cpu_ms") if c in t.columns]
    return float(sum(pd.to_numeric(t[c], errors="coerce").fillna(0.0).sum() for c in cols))


def profile_of(run: Run) -> ProfileResult | None:
    """The run's profile, attributed; None when the run has none (not asked, or an old run)."""
    prof = run.extra.get("profile") if isinstance(run.extra, dict) else None
    if not isinstance(prof, dict):
        return None
    interval = float(prof.get("interval_ms") or 0.0)
    method = str(prof.get("method") or "none")
    note = str(prof.get("note") or "")
    resolver = _Resolver(run)
    task_stacks: list[tuple[list[str], int, str, str, list[int]]] = []
    fn_execs: dict[str, set[str]] = {}
    other = 0
    self_s: dict[str, int] = {}
    total_s: dict[str, int] = {}
    fn_ops: dict[str, dict[tuple[int, int] | None, int]] = {}
    fn_kind: dict[str, dict[str, int]] = {}
    op_rows: dict[tuple[int, int] | None, dict[str, Any]] = {}
    kinds: dict[str, int] = {}
    py_samples = 0
    for frames, count, executor in executor_stacks_of(prof):
        python = is_python_stack(frames)
        if not python and not is_task_stack(frames):
            other += count
            continue
        # a Python worker runs the window's Python evaluation operator (the busiest one)
        kind, codegen = ("python", None) if python else classify(frames)
        stage = None if python else task_stage(frames[0])
        py_samples += count if python else 0
        op = resolver.resolve(kind, codegen, stage)
        key = (op.execution_id, op.node_id) if op is not None else None
        label = f"{op.label} #{op.node_id}" if op is not None else "(no operator)"
        # the sample's stages: its task's where the thread's name said it, else its operator's
        task_stacks.append((frames, count, label, executor, [stage] if stage is not None
                            else list(op.stages) if op else []))
        kinds[kind] = kinds.get(kind, 0) + count
        row = op_rows.setdefault(key, {
            "execution_id": op.execution_id if op else None,
            "node_id": op.node_id if op else None, "name": op.name if op else "",
            "label": label, "stage_ids": op.stages if op else [], "samples": 0, "kinds": {}})
        row["samples"] += count
        row.setdefault("python_samples", 0)
        row["python_samples"] += count if python else 0
        row["kinds"][kind] = row["kinds"].get(kind, 0) + count
        body = [pretty(f) for f in frames[1:]] or ["(no frames)"]
        leaf = body[-1]
        self_s[leaf] = self_s.get(leaf, 0) + count
        fn_ops.setdefault(leaf, {}).setdefault(key, 0)
        fn_ops[leaf][key] += count
        fn_kind.setdefault(leaf, {}).setdefault(kind, 0)
        fn_kind[leaf][kind] += count
        for f in set(body):
            total_s[f] = total_s.get(f, 0) + count
            fn_execs.setdefault(f, set()).add(executor)
    # every sample shown (the task threads' and the Python workers': each one interval of a
    # thread's CPU time) for the shares; ``samples`` (the JVM's task threads) for sampled_cpu_ms
    shown = sum(c for _, c, *_ in task_stacks)
    samples = shown - py_samples
    py_part = dict(prof.get("python") or {}) if isinstance(prof.get("python"), dict) else {}
    py_interval = float(py_part.get("interval_ms") or 0.0)
    if py_part:
        py_part["samples"] = py_samples
        py_part["sampled_cpu_ms"] = py_samples * py_interval
    ops_by_key = {(o.execution_id, o.node_id): o for o in resolver.ops}
    rows = []
    for fn, total in total_s.items():
        own = self_s.get(fn, 0)
        counts = fn_ops.get(fn, {})
        key = max(counts, key=lambda k: (counts[k], str(k))) if counts else None
        op = ops_by_key.get(key) if key is not None else None
        kc = fn_kind.get(fn, {})
        rows.append({"function": fn, "self_samples": own, "total_samples": total,
                     "share": own / shown if shown else 0.0,
                     "operator": f"{op.label} #{op.node_id}" if op else
                     ("(no operator)" if own else ""),
                     "execution_id": op.execution_id if op else None,
                     "node_id": op.node_id if op else None,
                     "kind": max(kc, key=lambda k: (kc[k], k)) if kc else "",
                     "stage_ids": list(op.stages) if op else [],
                     "executor_ids": sorted(fn_execs.get(fn, ()))})
    hot = pd.DataFrame(rows, columns=HOT_COLUMNS)
    if not hot.empty:
        hot = hot.sort_values(["self_samples", "total_samples", "function"],
                              ascending=[False, False, True], kind="stable").reset_index(drop=True)
    operators = sorted(op_rows.values(), key=lambda r: (-r["samples"], str(r["label"])))
    for r in operators:
        r["share"] = r["samples"] / shown if shown else 0.0
        r["sampled_ms"] = ((r["samples"] - r["python_samples"]) * interval
                           + r["python_samples"] * py_interval)
        r["kind"] = "sampled"
    return ProfileResult(method, interval, note, samples, other, hot, operators,
                         dict(sorted(kinds.items(), key=lambda kv: -kv[1])),
                         samples * interval, spark_cpu_ms(run), task_stacks,
                         str(prof.get("fallback") or ""), str(prof.get("sample") or ""),
                         py_part)


def empty_hot() -> pd.DataFrame:
    return pd.DataFrame(columns=HOT_COLUMNS)


def flame_tree(stacks: list[tuple], min_share: float = 0.002,
               max_nodes: int = 4000) -> list[list[Any]]:
    """An icicle of the task stacks, root first, as flat rows ``[depth, start, samples,
    self, name, operator]`` (start in samples from the left); frames narrower than
    ``min_share`` of all samples are left out (their samples stay in the parent's width),
    and at most ``max_nodes`` rows are kept (the widest)."""
    total = sum(c for _, c, *_ in stacks)
    if total <= 0:
        return []
    root: dict[str, Any] = {"n": 0, "own": 0, "kids": {}, "ops": {}}
    for frames, count, op, *_ in stacks:
        node = root
        node["n"] += count
        path = ["all task threads"] + [pretty(f) for f in frames[1:]]
        for name in path[1:]:
            node = node["kids"].setdefault(name, {"n": 0, "own": 0, "kids": {}, "ops": {}})
            node["n"] += count
            node["ops"][op] = node["ops"].get(op, 0) + count
        node["own"] += count
    floor = max(1.0, min_share * total)
    rows: list[list[Any]] = []

    def walk(name: str, node: dict, depth: int, start: int) -> None:
        ops = node["ops"]
        op = max(ops, key=lambda k: (ops[k], k)) if ops else ""
        rows.append([depth, start, node["n"], node["own"], name, op])
        at = start
        for kid_name, kid in sorted(node["kids"].items(), key=lambda kv: (-kv[1]["n"], kv[0])):
            if kid["n"] >= floor:
                walk(kid_name, kid, depth + 1, at)
            at += kid["n"]

    walk("all task threads", root, 0, 0)
    if len(rows) > max_nodes:
        keep = set(np.argsort([-r[2] for r in rows], kind="stable")[:max_nodes].tolist())
        rows = [r for i, r in enumerate(rows) if i in keep]
    return rows


def collapsed_text(stacks: list[tuple]) -> str:
    """The task stacks in the collapsed format (flamegraph.pl, speedscope)."""
    return "\n".join(f"{';'.join(frames)} {count}" for frames, count, *_ in stacks) + "\n"


#: A codegen stage's operator split becomes *sampled* with at least this many samples in it.
MIN_SPLIT_SAMPLES = 20


def sampled_split(table: pd.DataFrame, result: ProfileResult | None, run: Run,
                  total_time: float) -> pd.DataFrame:
    """The operator table with the rule's split inside each whole-stage-codegen stage
    replaced by the samples' where there are enough (:data:`MIN_SPLIT_SAMPLES`).

    Per (execution, codegen id): the task time of its *estimated* operators (what the rule
    gave the stage's main operator) is shared among them by their samples, their time
    components likewise; ``kind`` becomes ``sampled`` and ``samples`` says how many.
    Operators Spark measured keep their time, and the total is unchanged."""
    out = table.copy()
    out["samples"] = 0
    if result is None or out.empty or not result.samples:
        return out
    samples = {(o["execution_id"], o["node_id"]): int(o["samples"]) for o in result.operators
               if o["execution_id"] is not None}
    codegen = {(o.execution_id, o.node_id): o.codegen_id for o in _plan_ops(run)}
    keys = list(zip(out["execution_id"].astype(int), out["node_id"].astype(int)))
    out["samples"] = [samples.get(k, 0) for k in keys]
    groups: dict[tuple[int, int], list[int]] = {}
    for i, k in enumerate(keys):
        cg = codegen.get(k, -1)
        if cg >= 0 and out.at[i, "kind"] == "estimated":
            groups.setdefault((k[0], cg), []).append(i)
    times = out["task_time_ms"].astype(float).to_numpy().copy()
    kinds = out["kind"].astype(str).tolist()
    breakdowns = [dict(b) if isinstance(b, dict) else {} for b in out["breakdown"]]
    for rows in groups.values():
        s = np.array([out.at[i, "samples"] for i in rows], dtype=float)
        if s.sum() < MIN_SPLIT_SAMPLES:
            continue
        pool = float(times[rows].sum())
        comps: dict[str, float] = {}
        for i in rows:
            for c, v in breakdowns[i].items():
                comps[c] = comps.get(c, 0.0) + float(v)
        for i, share in zip(rows, s / s.sum()):
            times[i] = pool * share
            breakdowns[i] = {c: v * share for c, v in comps.items() if v * share > 0}
            kinds[i] = "sampled"
    out["task_time_ms"] = times
    out["kind"] = kinds
    out["breakdown"] = breakdowns
    if total_time > 0:
        out["share"] = times / total_time
    return out.sort_values(["task_time_ms", "driver_ms", "execution_id", "node_id"],
                           ascending=[False, False, True, True], kind="stable") \
        .reset_index(drop=True)
