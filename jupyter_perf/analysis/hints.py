"""Advice with values: one dict per hint, ``{operator, text, setting, value, predicted_ms,
cause, settings}``.

Operator hints come from the measured plan (``analysis/operators.py``): a setting and a value
computed from the run's own numbers, and ``predicted_ms`` where the what-if can compute the
effect (else ``None``, and the text says "suggestion, not simulated"). Memory advice (a
spill, the heap, Python workers' overhead, the driver) is ``analysis/memory.py``'s sizing,
the same hint dicts with ``evidence`` and ``kind``: ``Analysis.hints`` puts it after the
operators' hints. Cause hints (the verdict's) follow, with the what-if of their cause where
there is one; :func:`one_per_setting` keeps one hint per setting.

**Advice only when it changes something** (issue W2): every value a hint proposes is compared
with the setting's *effective* value in the run — the session's conf the collector recorded
(``run.extra["spark_conf"]``), else Spark's default for the run's version (:data:`DEFAULTS`)
— and a hint whose value is already in effect is dropped or reworded into what would
change something. ``settings`` lists every ``[key, value]`` the hint proposes (``setting`` /
``value`` is the first of them, kept for the ready cell and the store).
"""
from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

from .. import fmt
from ..model import Run
from .operators import AQE_READ, EXCHANGE, Node, _producers

MiB = 1 << 20
GiB = 1 << 30
TARGET_PARTITION_BYTES = 128 * MiB
BROADCAST_MAX_BYTES = 512 * MiB       # broadcasting more is not a suggestion we make
MEMORY_FRACTION, RESERVED = 0.6, 300 * MiB
NOT_SIMULATED = "Suggestion, not simulated."
JOINS_WITH_SHUFFLE = ("SortMergeJoin", "ShuffledHashJoin")

# verdict cause -> the what-if key that predicts its effect
CAUSE_WHATIF = {"gc": "no_gc_ms", "slots": "slots_x2_ms", "io": "infinite_disk_ms",
                "shuffle_read": "infinite_network_ms"}

# -- the effective value of a setting ----------------------------------------------------
# Spark's defaults the hints rely on: key -> ((first version, value), ...), the newest entry
# at or below the run's version applies. Sources: the configuration pages of the Spark docs
# of each version, https://spark.apache.org/docs/<version>/configuration.html ("Spark
# Properties", "Spark SQL" runtime configuration) and .../sql-performance-tuning.html
# (AQE). tests/analysis/test_golden_verdicts.py checks the table against the running Spark.
DEFAULTS: dict[str, tuple[tuple[tuple[int, int], str], ...]] = {
    # configuration.html, Application Properties
    "spark.driver.memory": (((0, 0), "1g"),),
    "spark.executor.memory": (((0, 0), "1g"),),
    # configuration.html, Memory Management
    "spark.memory.fraction": (((1, 6), "0.6"),),
    # sql-performance-tuning.html, Adaptive Query Execution: on by default since 3.2.0
    "spark.sql.adaptive.enabled": (((0, 0), "false"), ((3, 2), "true")),
    "spark.sql.adaptive.coalescePartitions.enabled": (((3, 0), "true"),),
    "spark.sql.adaptive.advisoryPartitionSizeInBytes": (((3, 0), "64MB"),),
    "spark.sql.adaptive.skewJoin.enabled": (((3, 0), "true"),),
    "spark.sql.adaptive.skewJoin.skewedPartitionFactor": (((3, 0), "5.0"),),
    "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": (((3, 0), "256MB"),),
    # sql-performance-tuning.html, Other Configuration Options
    "spark.sql.autoBroadcastJoinThreshold": (((0, 0), "10MB"),),
    "spark.sql.shuffle.partitions": (((0, 0), "200"),),
    "spark.sql.files.maxPartitionBytes": (((2, 0), "128MB"),),
    # configuration.html, Runtime SQL Configuration: Arrow-optimised Python UDFs, 3.4+; on by
    # default since 4.2 (PySpark migration guide "Upgrading from PySpark 4.1 to 4.2",
    # apache/spark#53264)
    "spark.sql.execution.pythonUDF.arrow.enabled": (((3, 4), "false"), ((4, 2), "true")),
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": MiB, "g": GiB, "t": 1 << 40, "p": 1 << 50}
# settings whose plain numbers are MiB (spark.driver.memory=1024 is 1 GiB), not bytes
_MIB_NUMBERS = ("spark.driver.memory", "spark.executor.memory")


def version_tuple(version: Any) -> tuple[int, int]:
    nums = re.findall(r"\d+", str(version or ""))
    return (int(nums[0]), int(nums[1])) if len(nums) >= 2 else (99, 0)   # unknown: newest


def spark_conf(run: Any) -> dict[str, str]:
    """The run's recorded Spark conf (a dict, or a list of ``[key, value]`` pairs)."""
    conf = (getattr(run, "extra", None) or {}).get("spark_conf") or {}
    pairs = conf.items() if isinstance(conf, dict) else conf
    out = {}
    for item in pairs:
        try:
            k, v = item
        except (TypeError, ValueError):
            continue
        out[str(k)] = str(v)
    return out


def default_value(key: str, version: Any) -> str | None:
    """Spark's default of ``key`` for ``version`` (:data:`DEFAULTS`; None: not in the table or
    not in that version)."""
    have = version_tuple(version)
    value = None
    for since, v in DEFAULTS.get(key, ()):
        if have >= since:
            value = v
    return value


def _property(run: Any, key: str) -> str | None:
    """``key`` in the application's settings a whole-application run keeps (an event log's or
    the History Server's ``run.extra["properties"]``: ``collect/fields.KEPT_PROPERTIES``)."""
    props = (getattr(run, "extra", None) or {}).get("properties") or {}
    if isinstance(props, dict) and props.get(key) not in (None, ""):
        return str(props[key])
    return None


def recorded_defaults(run: Any) -> dict[str, str]:
    """Spark's defaults of the watched settings nobody set, as the session answered them at
    the cell's end (``run.extra["spark_defaults"]``, collect/sessionconf.py; none for older
    runs and other sources)."""
    d = (getattr(run, "extra", None) or {}).get("spark_defaults") or {}
    return {str(k): str(v) for k, v in d.items() if v not in (None, "")} \
        if isinstance(d, dict) else {}


def effective(run: Any, key: str) -> str | None:
    """The value ``key`` had in the run: the session's, else the application's (event log,
    History Server), else Spark's default for its version (:data:`DEFAULTS`, written as the
    advice writes it), else as the session answered it."""
    conf = spark_conf(run)
    if key in conf and "redacted" not in conf[key].lower():
        return conf[key]
    return (_property(run, key) or default_value(key, getattr(run, "spark_version", ""))
            or recorded_defaults(run).get(key))


def as_bytes(value: Any, key: str = "") -> float | None:
    m = _SIZE.match(str(value or ""))
    if not m:
        return None
    unit = m.group(2).lower()
    if not unit and key in _MIB_NUMBERS:
        unit = "m"
    return float(m.group(1)) * _UNITS[unit]


def same_value(key: str, a: Any, b: Any) -> bool:
    """Whether two values of ``key`` mean the same ("10MB" = "10485760", "true" = "True",
    "5" = "5.0", "1g" = "1024m")."""
    if a is None or b is None:
        return False
    x, y = str(a).strip().lower(), str(b).strip().lower()
    if x == y:
        return True
    try:
        return float(x) == float(y) and not any(c.isalpha() for c in x + y)
    except ValueError:
        pass
    bx, by = as_bytes(x, key), as_bytes(y, key)
    return bx is not None and bx == by


def is_true(value: Any) -> bool:
    return str(value).strip().lower() == "true"


def changes(run: Any, key: str, value: Any) -> bool:
    """Whether setting ``key`` to ``value`` changes anything in this run."""
    return not same_value(key, effective(run, key), value)


def effective_text(run: Any, key: str) -> str:
    """"10MB (Spark 3.5's default)" or "4 (set in the session)"."""
    conf = spark_conf(run)
    value = effective(run, key)
    if key in conf:
        return f"{value} (set in the session)"
    if _property(run, key) is not None:
        return f"{value} (the application's setting)"
    version = getattr(run, "spark_version", "") or "this version"
    return f"{value} (Spark {version}'s default)"


def _label(node: Node) -> str:
    return f"{node.name} (#{node.node_id})"


def hint(operator: str | None, text: str, setting: str | None = None, value: str | None = None,
         predicted_ms: float | None = None, cause: str | None = None,
         settings: list[list[str]] | None = None) -> dict:
    """One hint; ``settings`` every ``[key, value]`` it proposes (default: ``setting``'s)."""
    if settings and setting is None:
        setting, value = settings[0]
    if settings is None:
        settings = [[setting, value]] if setting else []
    return {"operator": operator, "text": text, "setting": setting, "value": value,
            "predicted_ms": predicted_ms, "cause": cause, "settings": settings}


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


def size_text(nbytes: float) -> str:
    """A size as a Spark setting writes it, rounded down ("12m", "350k", "900b")."""
    for unit, size in (("g", GiB), ("m", MiB), ("k", 1 << 10)):
        if nbytes >= 4 * size:
            return f"{int(nbytes // size)}{unit}"
    return f"{max(1, int(nbytes))}b"


def int_value(value: Any, default: int) -> int:
    try:
        return int(float(str(value)))
    except (TypeError, ValueError):
        return default


def shuffle_partitions(run: Run, nodes: dict, slots: int) -> list[dict]:
    """Shuffles with partitions far from ~128 MiB each (at least one per slot): at least 3×
    too many or 2× too few. The partition count comes from ``spark.sql.shuffle.partitions``
    when the exchange has that many, else from the code (``repartition(n)``)."""
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
    key = "spark.sql.shuffle.partitions"
    conf_parts = int_value(effective(run, key), 200)
    aqe = is_true(effective(run, "spark.sql.adaptive.enabled"))
    coalesce = aqe and is_true(effective(run, "spark.sql.adaptive.coalescePartitions.enabled"))
    for n in by_exec.values():
        written, parts = n.metric("shuffle bytes written"), int(n.metric("number of partitions"))
        target = max(math.ceil(written / TARGET_PARTITION_BYTES), max(slots, 1))
        too_big = math.ceil(written / TARGET_PARTITION_BYTES) >= 2 * parts
        if not (parts >= 3 * target or too_big):
            continue
        evidence = (f"{_label(n)} shuffled {fmt.nbytes(written)} into {parts} partitions "
                    f"({fmt.nbytes(written / parts)} each). About 128 MiB per partition, and at "
                    f"least one per slot ({slots}), is {target}")
        if parts != conf_parts:
            out.append(hint(_label(n), f"{evidence}: the code asks for {parts} partitions "
                            f"(repartition({parts}) or similar; {key} is {conf_parts}), so "
                            f"change it there to {target}. {NOT_SIMULATED}"))
            continue
        also = ""
        if parts > target and not coalesce:
            off = "spark.sql.adaptive.enabled" if not aqe else \
                "spark.sql.adaptive.coalescePartitions.enabled"
            also = f" (or let AQE coalesce them: {off}=true, now false)"
        out.append(hint(
            _label(n), f"{evidence}: {key}={target}, now {effective_text(run, key)}{also}. "
            f"{NOT_SIMULATED}", key, str(target)))
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


def broadcast_threshold(run: Run, nodes: dict, table: pd.DataFrame) -> list[dict]:
    """A shuffled join whose smaller side measured little: broadcast it. Raising the
    threshold is proposed only where the measured side is above the effective one."""
    out = []
    ran = set(zip(table["execution_id"], table["node_id"])) if len(table) else set()
    key = "spark.sql.autoBroadcastJoinThreshold"
    now = as_bytes(effective(run, key), key)
    for n in nodes.values():
        if not n.name.startswith(JOINS_WITH_SHUFFLE) or n.key not in ran:
            continue
        sides = [s for s in (_side_exchange(nodes, p) for p in _producers(nodes, n)) if s]
        sizes = [s.metric("data size") for s in sides if s.metric("data size")]
        if len(sizes) < 2 or min(sizes) > BROADCAST_MAX_BYTES:
            continue
        small = min(sizes)
        mb = max(1, math.ceil(small * 1.25 / MiB))
        evidence = (f"{_label(n)}: its smaller side measured {fmt.nbytes(small)} (the data size "
                    f"of its shuffle), the larger {fmt.nbytes(max(sizes))}")
        if now is not None and now >= mb * MiB:
            out.append(hint(
                _label(n), f"{evidence}, under {key} ({effective_text(run, key)}), yet Spark "
                "shuffled and sorted both sides: its size estimate before the run was larger, "
                "or a join hint asked for this join. Mark the smaller side with broadcast() to "
                f"broadcast it instead. {NOT_SIMULATED}"))
            continue
        out.append(hint(
            _label(n),
            f"{evidence}. With {key}={mb}m (now {effective_text(run, key)}) Spark would "
            f"broadcast the smaller side instead of shuffling and sorting both (or mark it "
            f"with broadcast()). {NOT_SIMULATED}", key, f"{mb}m"))
    return out


def _skew_rows(table: pd.DataFrame, skew: dict) -> list[dict]:
    """The operators that ran in the data-skewed stages (most expensive first)."""
    if table.empty or not skew:
        return []
    return [rec for rec in table.to_dict("records")
            if set(rec["stage_ids"] or []) & set(skew) and rec["task_time_ms"] > 0]


def hot_key(rec: dict) -> str:
    """The key column(s) an operator's label names ("k" of "SortMergeJoin on k = k")."""
    label = str(rec.get("label") or "")
    for word in (" on ", " by "):
        if word in label:
            keys = label.split(word, 1)[1]
            if " = " in keys:
                keys = ", ".join(dict.fromkeys(p.split(" = ")[0].strip() for p in keys.split(", ")))
            return keys
    return ""


def skew_join(run: Run, nodes: dict, table: pd.DataFrame, notes: list[str],
              skew: dict | None = None) -> list[dict]:
    """A join in a stage with data-skewed tasks (``skew``: per stage id, the bytes of its
    largest task and its median one, from ``stragglers.skewed_stages``): the AQE settings that
    would split its hot partition — each only where its effective value would not — else
    salting the hot key."""
    if any(n.startswith("AQE split") for n in notes) or not skew:
        return []
    out = []
    slots = max(run.slots, 2)
    for rec in _skew_rows(table, skew):
        node = nodes.get((rec["execution_id"], rec["node_id"]))
        if node is None or not node.name.startswith(JOINS_WITH_SHUFFLE):
            continue
        stage = max((skew[s] for s in rec["stage_ids"] if s in skew), key=lambda x: x["ratio"])
        hot, med, ratio = stage["max_bytes"], stage["median_bytes"], stage["ratio"]
        keys = hot_key(rec)
        evidence = (f"{_label(node)} is skewed: its largest task read {fmt.nbytes(hot)} "
                    f"(input and shuffle), {ratio:.1f}× its stage's median task "
                    f"({fmt.nbytes(med)})" + (f"; the hot key is a value of {keys}" if keys else ""))
        settings: list[list[str]] = []
        for k in ("spark.sql.adaptive.enabled", "spark.sql.adaptive.skewJoin.enabled"):
            if not is_true(effective(run, k)):
                settings.append([k, "true"])
        k = "spark.sql.adaptive.skewJoin.skewedPartitionFactor"
        factor = float(effective(run, k) or 5.0)
        if ratio <= factor:
            settings.append([k, str(max(1, math.ceil(ratio) - 1))])
        k = "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes"
        if hot <= (as_bytes(effective(run, k), k) or 256 * MiB):
            settings.append([k, size_text(hot / 2)])
        k = "spark.sql.adaptive.advisoryPartitionSizeInBytes"
        if hot <= 2 * (as_bytes(effective(run, k), k) or 64 * MiB):
            settings.append([k, size_text(hot / slots)])
        settings = [s for s in settings if changes(run, *s)]
        if not settings:
            out.append(hint(_label(node), f"{evidence}. AQE's skew join is on and its thresholds "
                            "cover this partition, yet it did not split it (it splits only joins "
                            "of two shuffles it planned itself): salt the hot key. "
                            f"{NOT_SIMULATED}"))
            continue
        now = "; now " + ", ".join(f"{k.rsplit('.', 1)[-1]} {effective_text(run, k)}"
                                   for k, _ in settings)
        out.append(hint(
            _label(node),
            f"{evidence}. AQE splits such a partition with "
            + ", ".join(f"{k}={v}" for k, v in settings) + f"{now}; or salt the hot key. "
            + NOT_SIMULATED, settings=settings))
    return out


def skew_other(run: Run, nodes: dict, table: pd.DataFrame, skew: dict | None) -> list[dict]:
    """Data skew in a stage without a join AQE could split (an aggregate or a repartition by
    key): salt or pre-aggregate the hot key, which the plan names."""
    if not skew:
        return []
    rows = _skew_rows(table, skew)
    if any(r["name"].startswith(JOINS_WITH_SHUFFLE) for r in rows):
        return []
    for rec in rows:
        keys = hot_key(rec)
        if not keys:
            continue
        stage = max((skew[s] for s in rec["stage_ids"] if s in skew), key=lambda x: x["ratio"])
        label = f"{rec['name']} (#{rec['node_id']})"
        return [hint(label, f"{rec['label']} is skewed: its largest task read "
                     f"{fmt.nbytes(stage['max_bytes'])}, {stage['ratio']:.1f}× its stage's median "
                     f"task; the hot key is a value of {keys}. No setting splits a key's rows: "
                     "salt it (add a random suffix, aggregate twice) or handle the hot value "
                     f"apart. {NOT_SIMULATED}")]
    return []


def udf_name(description: str) -> str:
    """The Python function a Python evaluation node calls ("slow_bucket" of
    ``BatchEvalPython [slow_bucket(id#0L)#5], [pythonUDF0#12]``); '' when unnamed."""
    body = re.sub(r"^\w+\s*", "", str(description or ""))
    m = re.search(r"([A-Za-z_]\w*)\(", body)
    return m.group(1) if m else ""


def python_udf(run: Run, nodes: dict, table: pd.DataFrame) -> list[dict]:
    """A row-at-a-time Python UDF: Arrow batches where the version has them and they are off."""
    out = []
    if table.empty:
        return out
    key = "spark.sql.execution.pythonUDF.arrow.enabled"
    for rec in table.to_dict("records"):
        if not rec["name"].startswith("BatchEvalPython") or rec["task_time_ms"] <= 0:
            continue
        fn = udf_name(rec.get("description", ""))
        label = f"{rec['name']} (#{rec['node_id']})"
        what = (f"{label} runs the Python UDF {fn}()" if fn else f"{label} runs a Python UDF") + \
            f" for {rec['share'] * 100:.0f}% of task time, sending rows one by one, pickled, to " \
            "Python workers"
        known = bool(run.spark_version)
        if known and default_value(key, run.spark_version) is None:
            out.append(hint(label, f"{what}. A vectorised pandas_udf moves Arrow batches, and a "
                            f"built-in function needs no Python at all. {NOT_SIMULATED}"))
        elif (not known and key not in spark_conf(run)) or changes(run, key, "true"):
            # the node itself shows Arrow was off for this UDF (an unknown version's default
            # cannot say otherwise)
            now = f"now {effective_text(run, key)}" if known or key in spark_conf(run) else \
                "off for this UDF, its plan shows"
            out.append(hint(label, f"{what}. Arrow-optimised Python UDFs move batches: {key}=true "
                            f"({now}), or @udf(useArrow=True); a "
                            f"built-in function needs no Python at all. {NOT_SIMULATED}",
                            key, "true"))
        else:
            out.append(hint(label, f"{what}, although {key} is {effective_text(run, key)}: the "
                            "UDF was declared with useArrow=False, or its types need pickling. "
                            "@udf(useArrow=True) moves batches; a built-in function needs no "
                            f"Python at all. {NOT_SIMULATED}"))
        break
    return out


def operator_hints(run: Run, nodes: dict, table: pd.DataFrame, notes: list[str],
                   skew: dict | None = None) -> list[dict]:
    """Hints from the plan; ``skew``: the data-skewed stages (``stragglers.skewed_stages``)."""
    if not nodes:
        return []
    return (skew_join(run, nodes, table, notes, skew) + skew_other(run, nodes, table, skew)
            + broadcast_threshold(run, nodes, table) + shuffle_partitions(run, nodes, run.slots)
            + python_udf(run, nodes, table))


def one_per_setting(hints: list[dict]) -> list[dict]:
    """Never two hints for one setting: a hint proposing a setting an earlier hint already
    proposes is left out (the earlier one wins; hints without a setting all stay)."""
    seen: set[str] = set()
    out = []
    for h in hints:
        keys = {k for k, _ in h.get("settings") or []}
        if keys & seen:
            continue
        seen |= keys
        out.append(h)
    return out


def cause_hints(verdict_hints: list[dict], whatif: dict) -> list[dict]:
    """The verdict's cause hints as hint dicts, with the what-if of their cause."""
    out = []
    for h in verdict_hints:
        key = CAUSE_WHATIF.get(h["cause"])
        text = h["hint"]
        if h["cause"] == "slots" and whatif.get("slots_x2_high_ms") is not None:
            text += " " + slots_range_text(whatif)
        out.append(hint(None, text, predicted_ms=whatif.get(key) if key else None,
                        cause=h["cause"]))
    return out


def slots_range_text(whatif: dict) -> str:
    """The slots hint's range where the run lacks host CPU samples (``Analysis.whatif_range``):
    "Twice the slots: between X and Y (estimated; … unknown)."."""
    return (f"Twice the slots: between {fmt.ms(whatif['slots_x2_low_ms'])} and "
            f"{fmt.ms(whatif['slots_x2_high_ms'])} ({whatif['slots_x2_range_reason']}).")

