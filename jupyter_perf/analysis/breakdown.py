"""Time breakdown of each task attempt (DESIGN.md "Time breakdown"), in ms.

Outside ``executorRunTime``: scheduler delay, deserialize, result serialization, getting
result (all measured by Spark), plus ``unaccounted`` = duration minus all of those and the run
time (estimated; usually 0). Inside ``executorRunTime``: CPU, GC, shuffle fetch wait, shuffle
write (measured) and the rest = run − CPU − GC − fetch wait − shuffle write (never negative),
which stock Spark's task metrics do not explain. Out of the rest, in this order:

* *Python UDF* (measured): where Spark's SQL metrics report Python time for an operator
  (``python_ms`` per task: see ``analysis/operators.py``), never more than the rest;
* *waiting for a core (estimated)*: the share ``core_wait_share`` (per task, from the host's
  measured CPU saturation by this application's own processes while it ran:
  ``analysis/hostcpu.py``) of what is left, and *host busy with other processes (estimated)*:
  the share ``contention_share`` (the rest of the saturation, other processes' CPU time);
* what is left after that is *input/output wait (estimated)* for attempts that read input or
  wrote output, up to ``io_bound_ms`` (the time their bytes would take at the disk's
  throughput: ``analysis/resources.io_time_bound``), and *other wait (estimated)* for the
  rest (locks, external calls, Python workers Spark did not time).

Failed and killed attempts are included: they used their slot.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..model import Run
from .components import COMPONENTS, KEYS  # the one definition of the components

# Coarse categories the verdict reasons about.
CATEGORIES: dict[str, tuple[str, ...]] = {
    "cpu": ("cpu",),
    "gc": ("gc",),
    "shuffle": ("shuffle_fetch_wait", "shuffle_write"),
    "io": ("io_wait_est",),
    "python": ("python_udf",),
    "core_wait": ("core_wait_est",),
    # context, never the bottleneck: the verdict ranks the others without it (CONTEXT)
    "contention": ("contention_est",),
    "overhead": ("scheduler_delay", "deserialize", "result_serialization", "getting_result",
                 "unaccounted"),
    "other_wait": ("other_wait_est",),
}


# Categories that describe the host, not the query: reported, never chosen as the bottleneck.
CONTEXT: tuple[str, ...] = ("contention",)


def task_breakdown(run: Run, durations: np.ndarray | None = None,
                   python_ms: np.ndarray | None = None,
                   core_wait_share: np.ndarray | None = None,
                   io_bound_ms: np.ndarray | None = None,
                   contention_share: np.ndarray | None = None) -> pd.DataFrame:
    """One row per task attempt (row order of ``run.tasks``), one ms column per component.

    ``python_ms``: Python time Spark measured, per task (0 where none); ``core_wait_share``:
    per task, the part in [0, 1] of its remaining unexplained time spent waiting for a core;
    ``contention_share``: the part lost to other processes holding the cores (with
    ``core_wait_share``, at most 1); ``io_bound_ms``: per task, the most input/output wait its
    bytes can explain (no bound when not given).
    """
    t = run.tasks
    run_ms = t["run_ms"].to_numpy(dtype="float64")
    cpu = t["cpu_ms"].to_numpy(dtype="float64")
    gc = t["gc_ms"].to_numpy(dtype="float64")
    fw = t["fetch_wait_ms"].to_numpy(dtype="float64")
    sw = t["shuffle_write_time_ms"].to_numpy(dtype="float64")
    rest = np.maximum(run_ms - cpu - gc - fw - sw, 0.0)
    python = np.zeros(len(t)) if python_ms is None else np.minimum(
        np.maximum(np.asarray(python_ms, dtype="float64"), 0.0), rest)
    rest = rest - python
    core_share = np.zeros(len(t)) if core_wait_share is None else np.clip(
        np.asarray(core_wait_share, dtype="float64"), 0.0, 1.0)
    other_share = np.zeros(len(t)) if contention_share is None else np.clip(
        np.asarray(contention_share, dtype="float64"), 0.0, 1.0 - core_share)
    core, contention = rest * core_share, rest * other_share
    rest = np.maximum(rest - core - contention, 0.0)
    does_io = ((t["input_bytes"].to_numpy() > 0) | (t["output_bytes"].to_numpy() > 0))
    io = np.where(does_io, rest, 0.0)
    if io_bound_ms is not None:
        io = np.minimum(io, np.maximum(np.asarray(io_bound_ms, dtype="float64"), 0.0))
    if durations is None:
        durations = t["duration_ms"].to_numpy(dtype="float64")
    outside = {
        "scheduler_delay": t["scheduler_delay_ms"].to_numpy(dtype="float64"),
        "deserialize": t["deserialize_ms"].to_numpy(dtype="float64"),
        "result_serialization": t["result_serialization_ms"].to_numpy(dtype="float64"),
        "getting_result": t["getting_result_ms"].to_numpy(dtype="float64"),
    }
    unaccounted = np.maximum(durations - run_ms - sum(outside.values()), 0.0)
    columns = {
        **outside,
        "cpu": cpu, "gc": gc, "shuffle_fetch_wait": fw, "shuffle_write": sw,
        "python_udf": python, "core_wait_est": core, "contention_est": contention,
        "io_wait_est": io,
        "other_wait_est": rest - io,
        "unaccounted": unaccounted,
    }
    return pd.DataFrame({k: columns[k] for k in KEYS}, index=t.index)


def totals(per_task: pd.DataFrame) -> dict[str, dict]:
    """Component -> {ms, share, kind, label, spark_metric}; shares of the summed components."""
    sums = per_task.sum(axis=0) if len(per_task) else pd.Series(0.0, index=list(KEYS))
    total = float(sums.sum())
    out: dict[str, dict] = {}
    for c in COMPONENTS:
        ms = float(sums.get(c.key, 0.0))
        out[c.key] = {"ms": ms, "share": (ms / total) if total > 0 else 0.0, "kind": c.kind,
                      "label": c.label, "spark_metric": c.spark_metric}
    return out


def category_shares(breakdown: dict[str, dict]) -> dict[str, float]:
    return {cat: sum(breakdown[c]["share"] for c in comps) for cat, comps in CATEGORIES.items()}


def without_context(shares: dict[str, float]) -> dict[str, float]:
    """Category shares of the task time without the ``CONTEXT`` categories (other processes'
    load), renormalised to sum as before: what the verdict ranks, so the bottleneck it names
    does not move with the host's load."""
    kept = {c: v for c, v in shares.items() if c not in CONTEXT}
    left = sum(kept.values())
    whole = left + sum(v for c, v in shares.items() if c in CONTEXT)
    if left <= 0 or whole <= 0:
        return kept
    return {c: v * whole / left for c, v in kept.items()}


def stage_breakdown(run: Run, per_task: pd.DataFrame) -> pd.DataFrame:
    """Component sums per stage attempt (index: stage_id, stage_attempt)."""
    keys = run.tasks[["stage_id", "stage_attempt"]]
    return per_task.join(keys).groupby(["stage_id", "stage_attempt"]).sum()
