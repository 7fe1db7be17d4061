"""One honest sentence about where the time went, and concrete fix hints per cause.

Besides the sentence, a verdict has a *category* (one word the store indexes and the sidebar
badges: cpu | gc | shuffle | io | overhead | other_wait | core_wait | driver | python | none)
and a *headline*: the few words a user reads as the diagnosis ("CPU-bound", "Driver-bound",
"Waiting for cores").
"""
from __future__ import annotations

import dataclasses

from .stragglers import CAUSES

VERDICT_CATEGORIES = ("cpu", "gc", "shuffle", "io", "overhead", "other_wait", "core_wait",
                      "driver", "python", "none")

HINTS: dict[str, str] = {
    "driver": "Most of the time no Spark task ran: look at driver-side work (collect()/"
              "toPandas() of large results, Python loops between jobs, planning of huge plans).",
    "gc": "GC: give executors more memory (spark.executor.memory / spark.driver.memory in "
          "local mode) or create fewer objects (built-in functions instead of Python/Scala "
          "UDFs, avoid collect_list into very large groups).",
    "data_skew": "Data skew: salt the hot key, or let AQE split skewed partitions "
                 "(spark.sql.adaptive.enabled, spark.sql.adaptive.skewJoin.enabled).",
    "shuffle_write": "Shuffle write: fewer shuffle partitions (spark.sql.shuffle.partitions or "
                     "AQE coalescing), keep spark.shuffle.compress on, faster local disks.",
    "shuffle_read": "Shuffle read: less data across the shuffle (filter/aggregate early, "
                    "broadcast the small side of a join), or a faster network.",
    "scheduler_delay": "Scheduler delay: fewer, larger tasks (coalesce, larger "
                       "spark.sql.files.maxPartitionBytes), smaller task closures.",
    "deserialization": "Task deserialization: broadcast large objects instead of capturing "
                       "them in closures.",
    "first_task_jit": "First tasks on each executor (JIT warm-up): expected on a cold JVM; "
                      "warm up with a small run, or keep the session alive between cells.",
    "slots": "More slots would help: add executors or cores (spark.executor.instances, "
             "spark.executor.cores, local[N]).",
    "input_read_est": "Input read (estimated): columnar formats (Parquet) with filter/column "
                      "pruning, or cache() data that is read repeatedly.",
    "io": "Input/output wait (estimated): columnar formats with pruning, cache() reused "
          "inputs, faster storage.",
    "output_skew": "Output skew: some tasks write much more; repartition before writing.",
    "other_wait": "Time inside tasks that is neither CPU, GC nor shuffle: often Python worker "
                  "processes (Python UDFs, RDD lambdas) or CPU contention; prefer built-in or "
                  "pandas UDFs.",
    "python": "Python UDFs (time measured by Spark in its Python workers): built-in functions "
              "avoid the workers altogether; vectorised pandas/Arrow UDFs cut the per-row cost.",
    "core_wait": "The host's cores were saturated while tasks ran (other processes, or more "
                 "busy threads than cores): tasks waited for a core. A quieter machine, or "
                 "fewer task slots than cores (local[N]), would give them one.",
    "cpu": "CPU-bound: more cores help; so does less work per row (built-in functions, "
           "fewer columns, filtering earlier).",
}

# category -> (headline, what the share of task time went to)
CATEGORY_TEXT = {
    "cpu": ("CPU-bound", "CPU"),
    "gc": ("GC-bound", "JVM garbage collection"),
    "shuffle": ("Shuffle-bound", "shuffle read/write"),
    "io": ("I/O-bound (estimated)", "input/output wait (estimated)"),
    "python": ("Python UDF-bound", "Python UDFs (measured by Spark)"),
    "core_wait": ("Waiting for cores", "waiting for a core (estimated: the host's CPU was "
                                       "saturated)"),
    "overhead": ("Overhead-bound", "scheduling, (de)serialization and result handling"),
    "other_wait": ("Unexplained wait", "unexplained wait (not CPU, GC, shuffle or I/O)"),
}


@dataclasses.dataclass
class Verdict:
    sentence: str
    category: str              # one of VERDICT_CATEGORIES
    headline: str
    hints: list[dict]


def _pct(x: float) -> str:
    return f"{max(x, 0.0) * 100:.0f}%"


def verdict(wall_ms: float, n_tasks: int, driver_gap_ms: float, shares: dict[str, float],
            whatif: dict, stragglers: dict) -> Verdict:
    """The verdict from the summary's parts."""
    if n_tasks == 0:
        return Verdict(f"No Spark tasks ran: all {wall_ms / 1000:.2f} s were driver time.",
                       "none", "No Spark tasks", [{"cause": "driver", "hint": HINTS["driver"]}])
    hints: list[str] = []
    saved = {k: (wall_ms - whatif[k]) / wall_ms if wall_ms > 0 else 0.0
             for k in ("infinite_network_ms", "infinite_disk_ms", "no_gc_ms",
                       "no_stragglers_ms", "slots_x2_ms")}
    cat = max(shares, key=shares.get)
    label, what = CATEGORY_TEXT[cat]
    gap_share = driver_gap_ms / wall_ms if wall_ms > 0 else 0.0
    category, headline = cat, label
    if gap_share > 0.5:
        category, headline = "driver", "Driver-bound"
        head = (f"Driver-bound: no Spark task ran for {_pct(gap_share)} of the time; "
                f"inside tasks {_pct(shares[cat])} went to {what}")
        hints.append("driver")
    else:
        head = f"{label}: {_pct(shares[cat])} of task time on {what}"
        if cat in ("gc", "io", "other_wait", "cpu", "python", "core_wait"):
            hints.append(cat)
    parts = [head,
             f"an infinitely fast network would save at most {_pct(saved['infinite_network_ms'])}, "
             f"disk at most {_pct(saved['infinite_disk_ms'])}"]
    if shares.get("gc", 0) >= 0.1 or saved["no_gc_ms"] >= 0.1:
        parts.append(f"no GC would save {_pct(saved['no_gc_ms'])}")
        if "gc" not in hints:
            hints.append("gc")
    n, skew = stragglers.get("count", 0), stragglers.get("data_skew_count", 0)
    if n or skew:
        by = stragglers.get("by_cause", {})
        reasons = [f"{v} {CAUSES[c]}" for c, v in sorted(by.items(), key=lambda kv: -kv[1]) if v]
        if skew:
            reasons.append(f"{skew} data skew")
        noun = "straggler" if n == 1 else "stragglers"
        parts.append(f"{n} {noun} ({', '.join(reasons) or 'cause unknown'}) "
                     f"cost up to {_pct(saved['no_stragglers_ms'])}")
        hints += [c for c, v in by.items() if v and c != "gc"] + (["data_skew"] if skew else [])
        if by.get("gc") and "gc" not in hints:
            hints.append("gc")
    if saved["slots_x2_ms"] >= 0.2:
        parts.append(f"twice the slots would save {_pct(saved['slots_x2_ms'])}")
        hints.append("slots")
    if shares.get("shuffle", 0) >= 0.2:
        hints += ["shuffle_write", "shuffle_read"]
    if shares.get("overhead", 0) >= 0.2:
        hints.append("scheduler_delay")
    seen: list[str] = []
    for h in hints:
        if h in HINTS and h not in seen:
            seen.append(h)
    return Verdict("; ".join(parts) + ".", category, headline,
                   [{"cause": h, "hint": HINTS[h]} for h in seen])
