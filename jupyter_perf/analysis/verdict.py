"""One honest sentence about where the time went, and concrete fix hints per cause.

Besides the sentence, a verdict has a *category* (one word the store indexes and the sidebar
badges: driver | python | skew | scan | io | shuffle | memory | gc | cpu | core_wait |
other_wait | overhead | none; oom when the window lost an executor to memory: that failure
leads, the bottleneck's verdict follows), a *headline* (the few words of the diagnosis: "Python
UDF-bound"), a *headline text* (one line of at most ~120 characters: the bottleneck, the
operator, the share) and at most five *bullets* with the rest.

**Categories from evidence, in a fixed order** (issue W1; docs/verdicts.md): the first of
these whose evidence holds is the verdict — driver (no task ran for most of the wall time),
Python (Python evaluation nodes hold most of the task time, measured or estimated), data skew
(tasks with much more data than their stage's median ran long enough beyond it to hold a
good part of the task time), memory (operators that spilled hold most), scan (scan operators
hold most of the task time: reading or decoding input), input/output wait, shuffle
(exchanges, stages that only move rows through a shuffle, or shuffle time hold most), GC
(a large share in JVM GC), CPU / waiting for cores (together), unexplained wait, overhead;
else "No single bottleneck". The operators' shares explain the components': a scan's CPU is
decoding, an exchange's CPU serialising, a Python node's wait the Python workers.

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
                      "driver", "python", "skew", "scan", "memory", "none", "oom")
# "oom" is no bottleneck: an executor the window lost to memory (a failure outranks a
# bottleneck), tested before ORDER; the bottleneck's verdict follows it (:func:`verdict`)
# the fixed order in which the categories' evidence is tested (CPU and waiting for a core
# are one test: their sum, named by the larger part)
ORDER = ("driver", "python", "skew", "memory", "scan", "io", "shuffle", "gc", "cpu",
         "other_wait", "overhead")

HINTS: dict[str, str] = {
    "oom": "An executor ran out of memory and was lost (its tasks ran again elsewhere, or the "
           "job failed): give it the memory it ran out of — the heap (spark.executor.memory) "
           "after an OutOfMemoryError (exit 52), heap or spark.executor.memoryOverhead after a "
           "kill for memory (exit 137, YARN/Kubernetes) — or make each task hold less: more, "
           "smaller partitions, no huge rows or collect_list of a whole group.",
    "driver": "Most of the time no Spark task ran: look at driver-side work (collect()/"
              "toPandas() of large results, Python loops between jobs, planning of huge plans).",
    "gc": "GC: give executors more memory (spark.executor.memory / spark.driver.memory in "
          "local mode) or create fewer objects (built-in functions instead of Python/Scala "
          "UDFs, avoid collect_list into very large groups).",
    "data_skew": "Data skew: salt the hot key (a random suffix, aggregated twice) or handle "
                 "the hot value apart; for a join of two shuffles, AQE's skew join can split "
                 "the hot partition (see the join's hint for the settings it needs).",
    "shuffle_write": "Shuffle write: shuffle less (select only the columns needed and filter or "
                     "aggregate before the shuffle; a repartition() nothing after it needs is "
                     "pure cost), keep spark.shuffle.compress on, faster local disks.",
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
                  "of that code, not a Spark setting, finds it: run the cell again as "
                  "%%perfmeasure --profile (the Profile tab samples the executors' JVM stacks; "
                  "py-spy samples Python workers).",
    "python_arrow": "The UDF's own Python code takes the time (rows already reach the workers "
                    "in Arrow batches): vectorise it — a pandas_udf working on whole Series "
                    "with pandas/NumPy operations, not a loop per row or Series.apply — or "
                    "use a built-in function.",
    "python": "Python UDFs (time measured by Spark in its Python workers): built-in functions "
              "avoid the workers altogether; vectorised pandas/Arrow UDFs cut the per-row cost.",
    "core_wait": "The host's cores were saturated while tasks ran (other processes, or more "
                 "busy threads than cores): tasks waited for a core. A quieter machine, or "
                 "fewer task slots than cores (local[N]), would give them one.",
    "cpu": "CPU-bound: more cores help; so does less work per row (built-in functions, "
           "fewer columns, filtering earlier).",
    "host_busy": "Some tasks waited for a core (the host's CPU was saturated while they ran): "
                 "fewer concurrent processes or task slots than cores evens them out.",
    "host_noise": "Stragglers on evenly sized data with no measured cause (not GC, shuffle, "
                  "input, scheduling): noise of the host. Measure again to see whether they "
                  "repeat before changing anything.",
    "scan": "Scan-bound: read less (select only the columns used, filter on partition or "
            "sorted columns so Parquet/ORC skip files and row groups), or cache() input read "
            "again and again.",
    "scan_cached": "The time is reading the cached table itself (decoding its columnar "
                   "batches): select fewer columns before cache(), or aggregate before caching.",
    "memory": "Memory-bound: operators spilled to disk; see the spilling operator's hint for "
              "the memory or partitioning that would hold its data.",
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
    "skew": "Data skew",
    "scan": "Scan-bound",
    "memory": "Memory-bound (spill)",
    "contention": "Host busy with other processes",   # context only, never a verdict category
}


def _what(category: str) -> str:
    """What a category's share of task time went to: its components' labels
    (analysis/components.py), "shuffle fetch wait and shuffle write"."""
    labels = [BY_KEY[key].label for key in CATEGORIES[category]]
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


# category -> (headline, what the share of task time went to)
CATEGORY_TEXT = {cat: (HEADLINES[cat], _what(cat)) for cat in CATEGORIES}
SHORT = {"cpu": "CPU", "gc": "GC", "shuffle": "shuffle", "io": "I/O wait (est.)",
         "python": "Python", "core_wait": "core wait (est.)", "overhead": "overheads",
         "other_wait": "unexplained wait", "contention": "other processes (est.)"}


DOMINANT = 0.5          # a category is "the bottleneck" only with at least this task-time share
SATURATED = 0.9         # measured host CPU busy share from which the verdict says so
OTHER_LOAD = 0.2        # other processes' share of the host's cores from which it says so
LOST = 0.05             # estimated share of task time lost to other processes, ditto
GC_SHARE = 0.3          # GC share of task time from which GC is the verdict (before CPU)
SKEW_SHARE = 0.25       # share of task time data-skewed tasks ran beyond their stage's median
# CPU demand is named "Waiting for cores" only when the wait is at least this many times the
# time on CPU (over twice as many runnable threads of its own as cores: local[8] on 2 cores);
# else "CPU-bound". Named by the larger part, a query that keeps its cores just full (its task
# threads, the driver and the JIT on 2 cores: 34% CPU, 39% waiting one run, the reverse the
# next) flipped name between runs of the same query.
OVERSUBSCRIBED = 2.0
HEADLINE_MAX = 120
MAX_BULLETS = 5


@dataclasses.dataclass
class Verdict:
    sentence: str
    category: str              # one of VERDICT_CATEGORIES
    headline: str
    hints: list[dict]
    headline_text: str = ""
    bullets: list[str] = dataclasses.field(default_factory=list)


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
    # operator evidence (analysis.operators' table): share of task time and the label of the
    # most expensive operator of each kind
    python_share: float = 0.0
    python_label: str = ""
    python_udf: str = ""                   # the Python function the node calls
    scan_share: float = 0.0
    scan_label: str = ""
    scan_io_share: float = 0.0             # of the task time, the scans' input wait (est.)
    scan_cached: bool = False              # the top scan reads a cached table
    exchange_share: float = 0.0
    exchange_label: str = ""
    spill_share: float = 0.0               # task time of the operators that spilled
    spill_label: str = ""
    spill_bytes: float = 0.0
    skew_share: float = 0.0                # task time data-skewed tasks ran beyond the median
    python_arrow: bool = False             # the Python node moves Arrow batches already
    skew_ratio: float = 0.0                # largest skewed task's bytes over its median
    skew_tasks: int = 0                    # data-skewed tasks in stages where skew costs time
    skew_label: str = ""                   # the operator in the skewed stage, with its key
    skew_key: str = ""
    cell_line: dict | None = None          # {"line", "text"} of the top operator's action
    # executors the window lost to memory (analysis/memory.lost_to_memory's records: id,
    # memory "heap" | "killed", exit_code, last heap peak and limit, the sizing's setting/value)
    lost_to_memory: tuple[dict, ...] = ()
    # executors whose window peak came to a memory limit (analysis/memory.limit_risks): an
    # OOM risk the verdict states as a fact, whatever the bottleneck
    limit_risks: tuple[str, ...] = ()


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


def _choose(shares: dict[str, float], gap_share: float, ev: Evidence) -> tuple[str, float]:
    """(category, its share) by the first evidence that holds, in :data:`ORDER`."""
    demand = shares.get("cpu", 0.0) + shares.get("core_wait", 0.0)
    python = max(ev.python_share, shares.get("python", 0.0))
    tests = {
        "driver": (gap_share > 0.5, gap_share),
        "python": (python >= DOMINANT, python),
        "skew": (ev.skew_share >= SKEW_SHARE, ev.skew_share),
        "scan": (ev.scan_share >= DOMINANT, ev.scan_share),
        "io": (shares.get("io", 0.0) >= DOMINANT, shares.get("io", 0.0)),
        "shuffle": (max(shares.get("shuffle", 0.0), ev.exchange_share) >= DOMINANT,
                    max(shares.get("shuffle", 0.0), ev.exchange_share)),
        "memory": (ev.spill_share >= DOMINANT, ev.spill_share),
        "gc": (shares.get("gc", 0.0) >= GC_SHARE, shares.get("gc", 0.0)),
        # Time on a core and time waiting for one (this application's own threads: other
        # processes' part is context, left out) are one demand for CPU, named by the larger
        # part only where the wait dwarfs it (OVERSUBSCRIBED). Otherwise the split between
        # the two, which follows how many of its own threads were runnable at each sample,
        # would flip the verdict between runs of the same query (issue U3).
        "cpu": (demand >= DOMINANT, demand),
        "other_wait": (shares.get("other_wait", 0.0) >= DOMINANT, shares.get("other_wait", 0.0)),
        "overhead": (shares.get("overhead", 0.0) >= DOMINANT, shares.get("overhead", 0.0)),
    }
    for cat in ORDER:
        holds, share = tests[cat]
        if holds:
            if cat == "cpu" and (shares.get("core_wait", 0.0)
                                 >= OVERSUBSCRIBED * shares.get("cpu", 0.0) > 0):
                return "core_wait", share
            return cat, share
    return "none", 0.0


def _short(label: str, limit: int = 48) -> str:
    return label if len(label) <= limit else label[:limit - 1] + "…"


def _fit(text: str, limit: int = HEADLINE_MAX) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip(" ,;:") + "…"


def merge_notes(notes: list[str] | tuple[str, ...]) -> list[str]:
    """Repeated facts as one: "AQE coalesced 200 shuffle partitions into 1" and "… into 2"
    become "AQE coalesced 200 shuffle partitions into 1 and 2 (2 shuffles)"."""
    import re

    pattern = re.compile(r"^(AQE coalesced \d+ shuffle partitions into|AQE split \d+ skewed "
                         r"shuffle partitions? into) (\d+)( tasks)?(?: \((\d+) shuffles\))?$")
    groups: dict[str, list[tuple[str, int, str]]] = {}
    out: list[str] = []
    for note in notes:
        m = pattern.match(note)
        if not m:
            out.append(note)
            continue
        if m.group(1) not in groups:
            groups[m.group(1)] = []
            out.append(m.group(1))           # placeholder, in order
        groups[m.group(1)].append((m.group(2), int(m.group(4) or 1), m.group(3) or ""))
    merged = []
    for item in out:
        if item not in groups:
            merged.append(item)
            continue
        parts = groups[item]
        values = list(dict.fromkeys(v for v, _, _ in parts))
        count = sum(k for _, k, _ in parts)
        text = f"{item} {' and '.join([', '.join(values[:-1]), values[-1]] if len(values) > 1 else values)}"
        text += parts[0][2]
        merged.append(text + (f" ({count} shuffles)" if count > 1 else ""))
    return merged


def _line_suffix(line: dict | None) -> str:
    return f", cell line {line['line']}" if line else ""


def _headline_text(category: str, share: float, shares: dict[str, float], gap_share: float,
                   ev: Evidence) -> str:
    top = ev.top_operator or {}
    top_label = _short(str(top.get("label") or top.get("name") or ""))
    line = ev.cell_line
    if category == "driver":
        text = f"Driver-bound: no Spark task ran for {_pct(gap_share)} of the time"
    elif category == "python":
        udf = f"{ev.python_udf}() in " if ev.python_udf else ""
        text = (f"Python UDF-bound: {udf}{_short(ev.python_label or 'Python evaluation')} "
                f"holds {_pct(share)} of task time{_line_suffix(line)}")
    elif category == "skew":
        text = (f"Data skew: {_short(ev.skew_label or top_label)}, one task read "
                f"{ev.skew_ratio:.1f}× its stage's median, {_pct(share)} of task time beyond it")
    elif category == "scan":
        io = f", {_pct(ev.scan_io_share)} waiting on input (est.)" if ev.scan_io_share >= 0.05 else ""
        what = "reading the cached table" if ev.scan_cached else "reading and decoding input"
        text = f"Scan-bound: {_short(ev.scan_label)} holds {_pct(share)} of task time ({what}{io})"
    elif category == "shuffle":
        who = f" in {_short(ev.exchange_label)}" if ev.exchange_label else ""
        text = f"Shuffle-bound: {_pct(share)} of task time{who} (serialise, write, fetch)"
    elif category == "memory":
        text = (f"Memory-bound: {_short(ev.spill_label)} spilled {fmt.nbytes(ev.spill_bytes)}, "
                f"{_pct(share)} of task time")
    elif category == "gc":
        text = f"GC-bound: {_pct(share)} of task time in JVM garbage collection"
        if top_label:
            text += f", top operator {top_label}"
    elif category in ("cpu", "core_wait"):
        label = HEADLINES[category]
        text = (f"{label}: {_pct(shares.get('cpu', 0.0))} of task time on CPU"
                + (f", {_pct(shares.get('core_wait', 0.0))} waiting for a core"
                   if shares.get("core_wait", 0.0) >= 0.05 else ""))
        if top_label:
            text += f"; top operator {top_label} ({_pct(top.get('share', 0.0))})"
    elif category == "other_wait":
        text = (f"Unexplained wait: {_pct(share)} of task time Spark does not time; "
                "a CPU profile of that code would explain it")
    elif category == "overhead":
        text = f"Overhead-bound: {_pct(share)} of task time in scheduling and (de)serialisation"
    else:
        top3 = sorted((c for c in shares if shares[c] >= 0.1), key=lambda c: -shares[c])[:3]
        text = "No single bottleneck: " + ", ".join(
            f"{_pct(shares[c])} {SHORT.get(c, c)}" for c in top3)
    return _fit(text)


def _executor_names(lost: tuple[dict, ...] | list[dict]) -> str:
    ids = [str(x["executor_id"]) for x in lost]
    if len(ids) == 1:
        return f"executor {ids[0]}"
    return f"executors {', '.join(ids[:-1])} and {ids[-1]}"


def memory_lead(lost: tuple[dict, ...] | list[dict]) -> tuple[str, str, str]:
    """(headline, headline text, sizing clause) for executors lost to memory: "Executor 1
    lost to memory (exit 52)"; "Out of memory: executor 1 was lost (exit 52,
    java.lang.OutOfMemoryError) at heap 480 MiB of 512 MiB (measured)" (its last reported
    peaks); "the sizing answer: spark.executor.memory=1g (measured)" ('' when there is
    none). The first lost executor's numbers; the others are named."""
    first = lost[0]
    code = first.get("exit_code")
    heap = first["memory"] == "heap"
    what = "java.lang.OutOfMemoryError" if heap else \
        "SIGKILL: the OS's OOM killer or its container's memory limit"
    why = f"exit {code}, {what}" if code is not None else what
    were = "was" if len(lost) == 1 else "were"
    headline = (f"{_executor_names(lost)} lost to memory"
                + (f" (exit {code})" if code is not None else ""))
    headline = headline[0].upper() + headline[1:]
    text = (f"{'Out of memory' if heap else 'Killed for memory'}: {_executor_names(lost)} "
            f"{were} lost ({why})")

    def known(key: str) -> float | None:
        value = first.get(key)
        return float(value) if isinstance(value, (int, float)) and value == value and \
            value > 0 else None

    peak, limit, rss = known("heap_bytes"), known("heap_limit_bytes"), known("process_rss_bytes")
    said = ([f"heap {fmt.nbytes(peak)}" + (f" of {fmt.nbytes(limit)}" if limit else "")]
            if peak else []) + ([f"process RSS {fmt.nbytes(rss)}"] if rss and not heap else [])
    if said:      # its last reported peaks
        whose = f" (executor {first['executor_id']})" if len(lost) > 1 else ""
        text += f" at {', '.join(said)}{whose} (measured)"
    sized = next((x for x in lost if x.get("setting") and x.get("value")), None)
    pairs = (sized.get("settings") or [[sized["setting"], sized["value"]]]) if sized else []
    clause = (f"the sizing answer: {', '.join(f'{k}={v}' for k, v in pairs)} "
              f"({sized.get('kind') or 'estimated'})") if sized else ""
    return headline, text, clause


def _lead_with_memory(v: Verdict, lost: tuple[dict, ...]) -> Verdict:
    """``v`` led by the executors lost to memory: category "oom", their headline (the
    sidebar's badge), their line first in the sentence and as the headline text; the
    bottleneck's headline text becomes the first bullet, its sentence follows."""
    headline, text, clause = memory_lead(lost)
    lead = text + (f"; {clause}" if clause else "")
    bullets = ([clause[0].upper() + clause[1:]] if clause else []) + \
        ([v.headline_text] if v.headline_text else []) + list(v.bullets)
    if len(bullets) > MAX_BULLETS:
        bullets = bullets[:MAX_BULLETS - 1] + ["; ".join(bullets[MAX_BULLETS - 1:])]
    hints = [{"cause": "oom", "hint": HINTS["oom"]}] + [h for h in v.hints if h["cause"] != "oom"]
    return Verdict(f"{lead}. {v.sentence}", "oom", headline, hints, _fit(text), bullets)


def verdict(wall_ms: float, n_tasks: int, driver_gap_ms: float, shares: dict[str, float],
            whatif: dict, stragglers: dict, evidence: Evidence | None = None) -> Verdict:
    """The verdict from the summary's parts: led by the executors lost to memory when the
    window lost any (``evidence.lost_to_memory``: category "oom", :func:`memory_lead`), then
    the bottleneck's (:func:`bottleneck_verdict`)."""
    ev = evidence or Evidence()
    v = bottleneck_verdict(wall_ms, n_tasks, driver_gap_ms, shares, whatif, stragglers, ev)
    return _lead_with_memory(v, ev.lost_to_memory) if ev.lost_to_memory else v


def bottleneck_verdict(wall_ms: float, n_tasks: int, driver_gap_ms: float,
                       shares: dict[str, float], whatif: dict, stragglers: dict,
                       evidence: Evidence | None = None) -> Verdict:
    """The bottleneck's verdict from the summary's parts.

    The category is the first in :data:`ORDER` whose evidence holds (module docstring): an
    operator kind or a component holding at least ``DOMINANT`` of the task time (GC:
    ``GC_SHARE``; data skew: ``SKEW_SHARE`` of the task time beyond the median); else "No
    single bottleneck" (category ``none``). Python advice needs ``evidence.python``; a
    straggler saving is the one of the flagged stragglers only (``flagged_stragglers_ms``).
    """
    ev = evidence or Evidence()
    if n_tasks == 0 and (ev.stages_without_tasks or ev.tasks_unread):
        ran = (f"{ev.stages_without_tasks} stage(s) ran, but their" if ev.stages_without_tasks
               else "Spark work ran, but its")
        sentence = (f"{ran} task attempts could not be read (see the warnings): no time "
                    "breakdown.")
        return Verdict(sentence, "none", "Tasks not collected", [], _fit(sentence), [])
    if n_tasks == 0:
        sentence = f"No Spark tasks ran: all {fmt.ms(wall_ms)} were driver time."
        return Verdict(sentence, "none", "No Spark tasks",
                       [{"cause": "driver", "hint": HINTS["driver"]}], _fit(sentence), [])
    hints: list[str] = []
    bullets: list[str] = []
    saved = {k: (wall_ms - whatif[k]) / wall_ms if wall_ms > 0 else 0.0
             for k in ("infinite_network_ms", "infinite_disk_ms", "no_gc_ms",
                       "flagged_stragglers_ms", "slots_x2_ms") if k in whatif}
    lost = sum(shares.get(c, 0.0) for c in CONTEXT)     # other processes' part, estimated
    shares = without_context(shares)      # the bottleneck never moves with the host's load
    gap_share = driver_gap_ms / wall_ms if wall_ms > 0 else 0.0
    category, cat_share = _choose(shares, gap_share, ev)
    headline = "No single bottleneck" if category == "none" else \
        "Driver-bound" if category == "driver" else HEADLINES[category]
    ranked = sorted(shares, key=lambda c: -shares[c])
    if category == "driver":
        cat = ranked[0]
        head = (f"Driver-bound: no Spark task ran for {_pct(gap_share)} of the time; "
                f"inside tasks {_pct(shares[cat])} went to {CATEGORY_TEXT[cat][1]}")
        hints.append("driver")
    elif category in ("cpu", "core_wait"):
        head = f"{headline}: {_pct(shares[category])} of task time on {CATEGORY_TEXT[category][1]}"
        other = "core_wait" if category == "cpu" else "cpu"
        if shares.get(other, 0.0) >= 0.05:
            head += f" and {_pct(shares[other])} on {CATEGORY_TEXT[other][1]}"
        hints.append(category)
    elif category == "python":
        udf = f" (the Python UDF {ev.python_udf})" if ev.python_udf else ""
        head = (f"Python UDF-bound: {_pct(cat_share)} of task time in "
                f"{ev.python_label or 'Python evaluation'}{udf}")
        hints.append("python_arrow" if ev.python_arrow else "python")
    elif category == "skew":
        head = (f"Data skew: {ev.skew_label or 'a stage'} has a task that read "
                f"{ev.skew_ratio:.1f}× its stage's median task's data and ran "
                f"{_pct(cat_share)} of the task time beyond its stage's median task")
        hints.append("data_skew")
    elif category == "scan":
        head = (f"Scan-bound: {_pct(cat_share)} of task time in {ev.scan_label}"
                + (f", {_pct(ev.scan_io_share)} of it waiting on input (estimated)"
                   if ev.scan_io_share >= 0.05 else ", decoding more than waiting on input"))
        hints.append("scan_cached" if ev.scan_cached else "scan")
    elif category == "shuffle" and ev.exchange_share > shares.get("shuffle", 0.0):
        head = (f"Shuffle-bound: {_pct(cat_share)} of task time in {ev.exchange_label} "
                f"(serialising rows, writing and fetching shuffle files; "
                f"{_pct(shares.get('shuffle', 0.0))} on {CATEGORY_TEXT['shuffle'][1]})")
        hints += ["shuffle_write", "shuffle_read"]
    elif category == "memory":
        head = (f"Memory-bound (spill): {_pct(cat_share)} of task time in {ev.spill_label}, "
                f"which spilled {fmt.nbytes(ev.spill_bytes)} to disk")
        hints.append("memory")
    elif category == "other_wait":
        head = (f"{HEADLINES['other_wait']}: {_pct(cat_share)} of task time on "
                f"{CATEGORY_TEXT['other_wait'][1]}, which no operator or measured component "
                "explains: a CPU profile of that code would")
        hints.append("other_wait")
    elif category != "none":
        label, what = CATEGORY_TEXT[category]
        head = f"{label}: {_pct(shares[category])} of task time on {what}"
        hints.append(category)
    else:
        top = [c for c in ranked[:3] if shares[c] >= 0.1] or ranked[:1]
        head = "No single bottleneck: " + ", ".join(
            f"{_pct(shares[c])} of task time on {CATEGORY_TEXT[c][1]}" for c in top)
        hints += [c for c in top if shares[c] >= 0.25]
    parts = [head]
    top = ev.top_operator
    if top and top.get("share", 0.0) > 0:
        label = top.get("label") or top["name"]
        clause = (f"top operator: {label} ({_pct(top['share'])} of task time, "
                  f"{top.get('kind', 'estimated')}{', skewed' if top.get('skew') else ''})")
        line = top.get("line")
        if line:
            text = line["text"] if len(line["text"]) <= 60 else line["text"][:57] + "..."
            clause += f", cell line {line['line']}: {text}"
        parts.append(clause)
        if category not in ("python", "scan", "memory", "skew") and label not in head:
            bullets.append(clause[0].upper() + clause[1:])
    clause = host_context(ev.host_busy_share, ev.host_own_share, lost)
    if clause:
        core = shares.get("core_wait", 0.0)
        parts.append(clause
                     + (f", so {_pct(core)} of task time is taken as waiting for a core "
                        "(estimated)" if core >= 0.05 and category not in ("core_wait", "cpu") else ""))
        bullets.append(clause[0].upper() + clause[1:])
        if core >= 0.05:
            hints.append("core_wait")
        if lost >= LOST:
            hints.append("contention")
    savings = (f"an infinitely fast network would save at most "
               f"{_pct(saved['infinite_network_ms'])}, disk at most "
               f"{_pct(saved['infinite_disk_ms'])}")
    parts.append(savings)
    if shares.get("gc", 0) >= 0.1 or saved["no_gc_ms"] >= 0.1:
        parts.append(f"no GC would save {_pct(saved['no_gc_ms'])}")
        savings += f"; no GC {_pct(saved['no_gc_ms'])}"
        hints.append("gc")
    # data skew is named (and advised on) only where it costs time: stragglers.SKEW_MATTERS
    n, skew = stragglers.get("count", 0), ev.skew_tasks
    by = stragglers.get("by_cause", {})
    noise_only = n and all(v == 0 for c, v in by.items() if c != "host_noise")
    if n:
        reasons = [f"{v} {CAUSES[c]}" for c, v in sorted(by.items(), key=lambda kv: -kv[1]) if v]
        noun = "straggler" if n == 1 else "stragglers"
        fact = (f"{n} {noun} ({', '.join(reasons) or 'cause unknown'}) "
                f"{'costs' if n == 1 else 'cost'} up to "
                f"{_pct(saved.get('flagged_stragglers_ms', 0.0))}")
        parts.append(fact)
        # stragglers are worth a bullet and advice only when they cost something: a few
        # per cent on a busy or noisy host come and go between runs of the same query
        if saved.get("flagged_stragglers_ms", 0.0) >= LOST:
            bullets.append(fact[0].upper() + fact[1:])
            hints += [c for c, v in by.items() if v and (c != "host_noise" or noise_only)]
    if skew:
        # the data decide skew, so the size is in data (as the skew category says it)
        size = f" (up to {ev.skew_ratio:.1f}× its stage's median task's data)"
        fact = f"{skew} data-skewed {'task' if skew == 1 else 'tasks'}{size}"
        if ev.skew_key:
            fact += f", hot key in {ev.skew_key}"
        parts.append(fact)
        if category != "skew":
            bullets.append(fact[0].upper() + fact[1:])
        hints.append("data_skew")
    if ev.limit_risks:
        fact = "OOM risk: " + "; ".join(ev.limit_risks) + " (measured)"
        parts.append(fact)
        bullets.append(fact)
    notes = merge_notes(ev.notes)
    parts += notes
    if notes:
        bullets.append("; ".join(notes))
    if saved["slots_x2_ms"] >= 0.2:
        # a range where the run lacks host CPU samples on a shared host (whatif_range)
        high = whatif.get("slots_x2_high_ms")
        least = (wall_ms - high) / wall_ms if high is not None and wall_ms > 0 else None
        amount = (_pct(saved["slots_x2_ms"]) if least is None
                  else f"{max(least, 0.0) * 100:.0f}–{_pct(saved['slots_x2_ms'])}")
        parts.append(f"twice the slots would save {amount}")
        savings += f"; twice the slots {amount}"
        hints.append("slots")
    bullets.append(savings[0].upper() + savings[1:])
    if shares.get("shuffle", 0) >= 0.2:
        hints += ["shuffle_write", "shuffle_read"]
    if shares.get("overhead", 0) >= 0.2:
        hints.append("scheduler_delay")
    unexplained = shares.get("other_wait", 0.0) + shares.get("io", 0.0)
    if ev.python and (shares.get("python", 0.0) >= 0.05 or unexplained >= 0.2
                      or ev.python_share >= 0.2):
        hints.append("python_arrow" if ev.python_arrow else "python")
    seen: list[str] = []
    for h in hints:
        if h in HINTS and h not in seen and (not h.startswith("python") or ev.python):
            seen.append(h)
    if len(bullets) > MAX_BULLETS:           # the last ones share a bullet
        bullets = bullets[:MAX_BULLETS - 1] + ["; ".join(bullets[MAX_BULLETS - 1:])]
    return Verdict("; ".join(parts) + ".", category, headline,
                   [{"cause": h, "hint": HINTS[h]} for h in seen],
                   _headline_text(category, cat_share, shares, gap_share, ev), bullets)
