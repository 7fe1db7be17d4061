"""One honest sentence about where the time went, and concrete fix hints per cause.

Besides the sentence, a verdict has a *category* (one word the store indexes and the sidebar
badges: cpu | gc | shuffle | io | overhead | other_wait | core_wait | driver | python | none)
and a *headline*: the few words a user reads as the diagnosis ("CPU-bound", "Driver-bound",
"Waiting for cores").

The bottleneck is chosen from the task time *without* other processes' load on the host
(``breakdown.CONTEXT``: "host busy with other processes", estimated from the host's and this
process tree's sampled CPU time, ``analysis/hostcpu.py``): the same query on a quiet and on a
busy host names the same category, and the busy one says how busy the host was and what the
other processes cost as context. "Waiting for cores" is the diagnosis only when this
application's own threads saturated the cores.
"""
from __future__ import annotations

import dataclasses

from .. import fmt
from .breakdown import CATEGORIES, CONTEXT, without_context
from .components import BY_KEY
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
    "other_wait": "Time inside tasks that Spark's metrics do not explain (not CPU, GC, "
                  "shuffle, measured Python time or input/output): code Spark does not time, "
                  "such as external calls, locks or Python workers of RDD functions; a profile "
                  "of that code, not a Spark setting, finds it.",
    "python": "Python UDFs (time measured by Spark in its Python workers): built-in functions "
              "avoid the workers altogether; vectorised pandas/Arrow UDFs cut the per-row cost.",
    "core_wait": "The host's cores were saturated while tasks ran (other processes, or more "
                 "busy threads than cores): tasks waited for a core. A quieter machine, or "
                 "fewer task slots than cores (local[N]), would give them one.",
    "cpu": "CPU-bound: more cores help; so does less work per row (built-in functions, "
           "fewer columns, filtering earlier).",
    "contention": "Other processes kept the host's cores busy while tasks ran: the shares above "
                  "leave out the time tasks lost to them (estimated). Measure again on a "
                  "quieter machine, or once they finish, to time this query alone.",
}

HEADLINES = {
    "cpu": "CPU-bound",
    "gc": "GC-bound",
    "shuffle": "Shuffle-bound",
    "io": "I/O-bound (estimated)",
    "python": "Python UDF-bound",
    "core_wait": "Waiting for cores",
    "overhead": "Overhead-bound",
    "other_wait": "Unexplained wait",
    "contention": "Host busy with other processes",   # context only, never a verdict category
}


def _what(category: str) -> str:
    """What a category's share of task time went to: its components' labels
    (analysis/components.py), "shuffle fetch wait and shuffle write"."""
    labels = [BY_KEY[key].label for key in CATEGORIES[category]]
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


# category -> (headline, what the share of task time went to)
CATEGORY_TEXT = {cat: (HEADLINES[cat], _what(cat)) for cat in CATEGORIES}


DOMINANT = 0.5          # a category is "the bottleneck" only with at least this task-time share
SATURATED = 0.9         # measured host CPU busy share from which the verdict says so
OTHER_LOAD = 0.2        # other processes' share of the host's cores from which it says so
LOST = 0.05             # estimated share of task time lost to other processes, ditto


@dataclasses.dataclass
class Verdict:
    sentence: str
    category: str              # one of VERDICT_CATEGORIES
    headline: str
    hints: list[dict]


@dataclasses.dataclass
class Evidence:
    """What the verdict may say beyond the task metrics (each from the run's own data)."""

    host_busy_share: float | None = None   # measured, over the task time (local masters)
    host_own_share: float | None = None    # of it, this process tree's (None: not sampled)
    python: bool = False       # the plan has a Python evaluation node or Spark timed Python
    stages_without_tasks: int = 0          # ran, but no task attempt readable (Connect client-only)
    tasks_unread: bool = False             # the collector could not read task attempts at all
    notes: tuple[str, ...] = ()            # extra clauses (e.g. what AQE did), in order
    top_operator: dict | None = None       # analysis.operators' most expensive row


def _pct(x: float) -> str:
    return f"{max(x, 0.0) * 100:.0f}%"


def others_matter(busy: float | None, own: float | None, lost: float) -> bool:
    """Whether other processes' load on the host is worth a clause: they held at least
    ``OTHER_LOAD`` of its cores, or cost the tasks at least ``LOST`` of their time."""
    return busy is not None and own is not None and (busy - own >= OTHER_LOAD or lost >= LOST)


def host_context(busy: float | None, own: float | None, lost: float) -> str:
    """The host's load as context ('' when there is nothing to say): how busy its cores were
    (measured), what other processes took (sampled) and what that cost the tasks (estimated:
    ``lost``, the share of task time the breakdown gives to other processes)."""
    if busy is None:
        return ""
    if others_matter(busy, own, lost):
        clause = (f"the host's CPU was {_pct(busy)} busy (measured): other processes took "
                  f"{_pct(busy - own)} of its cores")
        if lost >= LOST:
            clause += (f", costing tasks an estimated {_pct(lost)} of their time, the shares above "
                       "estimated as if the host had been quiet")
        return clause
    if busy >= SATURATED:
        return f"the host's CPU was {_pct(busy)} busy (measured)"
    return ""


def verdict(wall_ms: float, n_tasks: int, driver_gap_ms: float, shares: dict[str, float],
            whatif: dict, stragglers: dict, evidence: Evidence | None = None) -> Verdict:
    """The verdict from the summary's parts.

    The largest category is named the bottleneck only when it holds at least ``DOMINANT`` of
    the task time (else "No single bottleneck", category ``none``); the driver when no task
    ran for more than half the wall time. Python advice needs ``evidence.python``; a straggler
    saving is the one of the flagged stragglers only (``flagged_stragglers_ms``).
    """
    ev = evidence or Evidence()
    if n_tasks == 0 and (ev.stages_without_tasks or ev.tasks_unread):
        ran = (f"{ev.stages_without_tasks} stage(s) ran, but their" if ev.stages_without_tasks
               else "Spark work ran, but its")
        return Verdict(f"{ran} task attempts could not be read (see the warnings): no time "
                       "breakdown.", "none", "Tasks not collected", [])
    if n_tasks == 0:
        return Verdict(f"No Spark tasks ran: all {fmt.ms(wall_ms)} were driver time.",
                       "none", "No Spark tasks", [{"cause": "driver", "hint": HINTS["driver"]}])
    hints: list[str] = []
    saved = {k: (wall_ms - whatif[k]) / wall_ms if wall_ms > 0 else 0.0
             for k in ("infinite_network_ms", "infinite_disk_ms", "no_gc_ms",
                       "flagged_stragglers_ms", "slots_x2_ms") if k in whatif}
    lost = sum(shares.get(c, 0.0) for c in CONTEXT)     # other processes' part, estimated
    shares = without_context(shares)      # the bottleneck never moves with the host's load
    ranked = sorted(shares, key=lambda c: -shares[c])
    cat = ranked[0]
    demand = shares.get("cpu", 0.0) + shares.get("core_wait", 0.0)
    if cat in ("cpu", "core_wait") or demand > shares[cat]:
        # Time on a core and time waiting for one (this application's own threads: other
        # processes' part is context, left out above) are one demand for CPU: the bottleneck is
        # CPU when together they dominate, named by the larger part. Otherwise the split
        # between the two, which follows how many of its own threads were runnable at each
        # sample, would flip the verdict between runs of the same query (issue U3).
        cat = "cpu" if shares.get("cpu", 0.0) >= shares.get("core_wait", 0.0) else "core_wait"
        ranked = [cat] + [c for c in ranked if c != cat]
    label, what = CATEGORY_TEXT[cat]
    cat_share = demand if cat in ("cpu", "core_wait") else shares[cat]
    gap_share = driver_gap_ms / wall_ms if wall_ms > 0 else 0.0
    if gap_share > 0.5:
        category, headline = "driver", "Driver-bound"
        head = (f"Driver-bound: no Spark task ran for {_pct(gap_share)} of the time; "
                f"inside tasks {_pct(shares[cat])} went to {what}")
        hints.append("driver")
    elif cat_share >= DOMINANT:
        category, headline = cat, label
        head = f"{label}: {_pct(shares[cat])} of task time on {what}"
        other = "core_wait" if cat == "cpu" else "cpu"
        if cat_share > shares[cat] and shares.get(other, 0.0) >= 0.05:
            head += f" and {_pct(shares[other])} on {CATEGORY_TEXT[other][1]}"
        hints.append(cat)
    else:
        category, headline = "none", "No single bottleneck"
        top = [c for c in ranked[:3] if shares[c] >= 0.1] or [cat]
        head = "No single bottleneck: " + ", ".join(
            f"{_pct(shares[c])} of task time on {CATEGORY_TEXT[c][1]}" for c in top)
        hints += [c for c in top if shares[c] >= 0.25]
    parts = [head]
    top = ev.top_operator
    if top and top.get("share", 0.0) > 0:
        clause = (f"top operator: {top.get('label') or top['name']} ({_pct(top['share'])} of task time, "
                  f"{top.get('kind', 'estimated')}{', skewed' if top.get('skew') else ''})")
        line = top.get("line")
        if line:
            text = line["text"] if len(line["text"]) <= 60 else line["text"][:57] + "..."
            clause += f", cell line {line['line']}: {text}"
        parts.append(clause)
    clause = host_context(ev.host_busy_share, ev.host_own_share, lost)
    if clause:
        core = shares.get("core_wait", 0.0)
        parts.append(clause
                     + (f", so {_pct(core)} of task time is taken as waiting for a core "
                        "(estimated)" if core >= 0.05 and category not in ("core_wait", "cpu") else ""))
        if core >= 0.05:
            hints.append("core_wait")
        if lost >= LOST:
            hints.append("contention")
    parts.append(f"an infinitely fast network would save at most "
                 f"{_pct(saved['infinite_network_ms'])}, disk at most "
                 f"{_pct(saved['infinite_disk_ms'])}")
    if shares.get("gc", 0) >= 0.1 or saved["no_gc_ms"] >= 0.1:
        parts.append(f"no GC would save {_pct(saved['no_gc_ms'])}")
        hints.append("gc")
    n, skew = stragglers.get("count", 0), stragglers.get("data_skew_count", 0)
    if n:
        by = stragglers.get("by_cause", {})
        reasons = [f"{v} {CAUSES[c]}" for c, v in sorted(by.items(), key=lambda kv: -kv[1]) if v]
        noun = "straggler" if n == 1 else "stragglers"
        parts.append(f"{n} {noun} ({', '.join(reasons) or 'cause unknown'}) "
                     f"{'costs' if n == 1 else 'cost'} up to "
                     f"{_pct(saved.get('flagged_stragglers_ms', 0.0))}")
        hints += [c for c, v in by.items() if v]
    if skew:
        ratio = stragglers.get("max_skew_ratio")
        size = f" (up to {ratio:.1f}× its stage's median task)" if ratio else ""
        parts.append(f"{skew} data-skewed {'task' if skew == 1 else 'tasks'}{size}")
        hints.append("data_skew")
    parts += list(ev.notes)
    if saved["slots_x2_ms"] >= 0.2:
        parts.append(f"twice the slots would save {_pct(saved['slots_x2_ms'])}")
        hints.append("slots")
    if shares.get("shuffle", 0) >= 0.2:
        hints += ["shuffle_write", "shuffle_read"]
    if shares.get("overhead", 0) >= 0.2:
        hints.append("scheduler_delay")
    unexplained = shares.get("other_wait", 0.0) + shares.get("io", 0.0)
    if ev.python and (shares.get("python", 0.0) >= 0.05 or unexplained >= 0.2):
        hints.append("python")
    seen: list[str] = []
    for h in hints:
        if h in HINTS and h not in seen and (h != "python" or ev.python):
            seen.append(h)
    return Verdict("; ".join(parts) + ".", category, headline,
                   [{"cause": h, "hint": HINTS[h]} for h in seen])
