"""The Summary tab's data: verdict and hints (each with its ready-to-run cell), collection
warnings, the time breakdown (measured / estimated per component), the key numbers, the
what-if headlines, the jobs and the cell's source. Drawn by
``labextension/src/report/tabs/summary.ts``.

Key numbers are rows of *items*: a string is text; ``{"v", "f", "key"}`` is a number the
browser formats (``f``: "ms" | "bytes" | "int" | "pct") and tags with ``data-key``; ``{"t",
"c"}`` is text with a style ("est": estimated, "muted"). The words stay here, beside the
numbers they describe; the browser only formats.

``basic(run)`` is the same tab for a Run the analysis could not handle (``fallback_data``):
the breakdown, key numbers and stages from the Run alone.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from ...analysis import Analysis
from ...analysis.breakdown import task_breakdown, totals
from ...analysis.callsite import call_site_shown
from ...analysis.components import BY_KEY, COMPONENTS
from ...model import Run
from ..advice import ready_cell
from ..style import ESTIMATED_HATCH
from .series import with_context


def num(value: Any, f: str, key: str) -> dict:
    """A number item: ``value`` (None when unknown), its format, its test key."""
    v = pd.to_numeric(value, errors="coerce") if value is not None else None
    return {"v": None if v is None or pd.isna(v) else float(v), "f": f, "key": key}


def noun(n, word: str, plural: str | None = None) -> str:
    """``word`` for one, its plural otherwise (after a number item)."""
    return word if n == 1 else (plural or word + "s")


def est(text: str) -> dict:
    return {"t": text, "c": "est"}


def slots_x2_items(w: dict) -> list:
    """The "2× slots" what-if: a point, or the range where the run lacks what a point needs
    (``Analysis.whatif_range``: no host CPU samples on a shared host), with why."""
    if w.get("slots_x2_high_ms") is None:
        return [num(w["slots_x2_ms"], "ms", "slots_x2_ms"), " ", est("(estimated)")]
    return [num(w.get("slots_x2_low_ms"), "ms", "slots_x2_ms"), "–",
            num(w["slots_x2_high_ms"], "ms", "slots_x2_high_ms"), " ",
            est(f"({w.get('slots_x2_range_reason') or 'estimated; no host CPU samples'})")]


def breakdown_segments(breakdown: dict[str, dict]) -> list[dict]:
    """The stacked bar's segments, in stacking order: the components with time (the first
    one when none has): key, label, kind, colour, ms, share, Spark metric, hatch."""
    names = [c.key for c in COMPONENTS if c.key in breakdown and breakdown[c.key]["ms"] > 0]
    names = names or [COMPONENTS[0].key]
    out = []
    for k in names:
        c, comp = breakdown.get(k, {}), BY_KEY[k]
        estimated = (c.get("kind") or comp.kind) == "estimated"
        out.append({"key": k, "label": c.get("label") or comp.label, "short": comp.short,
                    "kind": c.get("kind") or comp.kind, "color": comp.color,
                    "ms": float(c.get("ms") or 0.0), "share": float(c.get("share") or 0.0),
                    "spark_metric": c.get("spark_metric") or comp.spark_metric,
                    "hatch": ESTIMATED_HATCH if estimated else " "})
    return out


def legend_colors() -> dict:
    """The swatches of the bar's legend line: a measured and an estimated component's."""
    return {"measured": BY_KEY["cpu"].color, "estimated": BY_KEY["io_wait_est"].color}


def _max(frame: pd.DataFrame, col: str):
    if frame.empty or col not in frame:
        return None
    v = pd.to_numeric(frame[col], errors="coerce").max()
    return None if pd.isna(v) else float(v)


def _spark_row(run: Run) -> list:
    items: list = [f"{run.spark_version} on {run.master} · app {run.app_id} {run.app_name} · "
                   f"collected with {run.collector or 'n/a'}"]
    if run.extra.get("spark_log"):
        items.append(f" · Spark's log {run.extra['spark_log']}")
    return items


def memory_row(ex: pd.DataFrame, memory: dict | None = None) -> dict:
    """The key numbers' memory row: the executors' peaks against their limits (measured by
    Spark's executor metrics), then the sizing line of ``summary()["memory"]`` when it sizes
    something, labelled with its kind (estimated: a spill's what-if; measured: peaks)."""
    items: list = [
        "peak executor JVM heap ", num(_max(ex, "peak_jvm_heap_bytes"), "bytes",
                                       "peak_jvm_heap_bytes"),
        " of ", num(_max(ex, "jvm_heap_limit_bytes"), "bytes", "jvm_heap_limit_bytes"),
        " · peak execution memory ", num(_max(ex, "peak_on_heap_execution_bytes"), "bytes",
                                         "peak_on_heap_execution_bytes"),
        " of ", num(_max(ex, "max_memory_bytes"), "bytes", "max_memory_bytes"),
        " unified (measured by Spark's executor metrics)"]
    memory = memory or {}
    if memory.get("sizing") and memory.get("sizing_line"):
        kind = memory.get("sizing_kind") or "estimated"
        label = f"({kind})"
        items += [" · sizing: ", str(memory["sizing_line"]), " ",
                  est(label) if "estimated" in kind else label]
    return {"key": "memory", "label": "memory", "items": items}


def key_numbers(a: Analysis, s: dict) -> list[dict]:
    """The key numbers table (``render/tabs/summary.py``'s ``_key_numbers``) as items."""
    run = a.run
    st = s["stages"]

    def tot(key: str) -> float:
        return float(sum((r.get(key) or 0) for r in st))

    failed = sum((r.get("failed_tasks") or 0) for r in st)
    skipped = sum(1 for r in st if r.get("status") == "SKIPPED")
    ran = len(st) - skipped
    ex = run.executors
    w = s["whatif"]
    work: list = [num(len(run.jobs), "int", "jobs"), f" {noun(len(run.jobs), 'job')} · ",
                  num(ran, "int", "stages_ran"), f" {noun(ran, 'stage')} ran"]
    if skipped:
        work += [" (", num(skipped, "int", "stages_skipped"), " skipped: output reused)"]
    work += [" · ", num(s["task_attempts"], "int", "task_attempts"),
             f" {noun(s['task_attempts'], 'task attempt')} that ran"]
    if failed:
        work += [" (", num(failed, "int", "failed_tasks"), " failed)"]
    work += [" · ", num(s["slots"], "int", "slots"), f" {noun(s['slots'], 'slot')}"]
    strag = s["stragglers"]
    return [
        {"key": "wall", "label": "wall time",
         "items": [dict(num(s["wall_ms"], "ms", "wall_ms"), strong=True), " (measured)"]},
        {"key": "running", "label": "tasks running",
         "items": [num(a.actual_ms, "ms", "actual_ms"), " · driver / no task running ",
                   num(a.driver_gap_ms, "ms", "driver_gap_ms")]},
        {"key": "work", "label": "work", "items": work},
        {"key": "task_time", "label": "task time",
         "items": [num(s["task_time_ms"], "ms", "task_time_ms"),
                   " summed over the attempts that ran"]},
        {"key": "data", "label": "data",
         "items": ["input ", num(tot("input_bytes"), "bytes", "input_bytes"),
                   " · output ", num(tot("output_bytes"), "bytes", "output_bytes"),
                   " · shuffle write ", num(tot("shuffle_write_bytes"), "bytes",
                                            "shuffle_write_bytes"),
                   " · shuffle read ", num(tot("shuffle_read_bytes"), "bytes",
                                           "shuffle_read_bytes"),
                   " (remote ", num(tot("shuffle_remote_bytes"), "bytes", "shuffle_remote_bytes"),
                   ") · spill ", num(tot("memory_spilled_bytes"), "bytes", "memory_spilled_bytes"),
                   " memory / ", num(tot("disk_spilled_bytes"), "bytes", "disk_spilled_bytes"),
                   " disk"]},
        memory_row(ex, s.get("memory")),
        {"key": "whatif", "label": "what-if",
         "items": ["∞ disk ", num(w["infinite_disk_ms"], "ms", "infinite_disk_ms"), " ",
                   est("(upper bound)"),
                   " · ∞ network ", num(w["infinite_network_ms"], "ms", "infinite_network_ms"),
                   " · no GC ", num(w["no_gc_ms"], "ms", "no_gc_ms"),
                   " · no stragglers ", num(w["no_stragglers_ms"], "ms", "no_stragglers_ms"),
                   " · 2× slots ", *slots_x2_items(w)]},
        {"key": "model_error", "label": "model error",
         "items": [num(w["model_error"] or 0.0, "pct", "model_error"), " (replayed ",
                   num(w["simulated_baseline_ms"], "ms", "simulated_baseline_ms"), " vs ",
                   num(w["actual_ms"], "ms", "whatif_actual_ms"),
                   " actual; it cancels out of the what-if numbers)"]},
        {"key": "stragglers", "label": "stragglers",
         "items": [num(strag["count"], "int", "stragglers"),
                   f" {noun(strag['count'], 'straggler')} · ",
                   num(strag["data_skew_count"], "int", "data_skew"),
                   f" data-skewed {noun(strag['data_skew_count'], 'task')}"]},
        {"key": "spark", "label": "Spark", "items": _spark_row(run)},
    ]


def job_rows(a: Analysis, s: dict) -> list[dict]:
    """Per job: stages that ran, stages skipped, and the task attempts that ran in them — the
    same attempts the Summary counts (Spark's own per-job task count includes skipped stages).
    A stage listed by several jobs belongs to the first (by submission) that lists it; a
    listed stage the window has no record of counts as neither (today's tab counted it as
    ran, so a job's "stages ran" could exceed the stages that ran)."""
    run = a.run
    status = {int(r["stage_id"]): str(r.get("status") or "") for r in s["stages"]}
    attempts = run.tasks.groupby("stage_id").size().to_dict() if len(run.tasks) else {}
    jobs = sorted(s["jobs"], key=lambda j: (j.get("submission_ms") is None
                                             or pd.isna(j.get("submission_ms")),
                                             j.get("submission_ms") or 0, j.get("job_id") or 0))
    owner: dict[int, object] = {}
    for j in jobs:
        for sid in j.get("stage_ids") or []:
            if status.get(int(sid), "SKIPPED") != "SKIPPED":    # unknown stages did not run here
                owner.setdefault(int(sid), j.get("job_id"))
    by_id = {j.get("job_id"): j for j in s["jobs"]}

    def text(v) -> str:
        return "" if v is None or (not isinstance(v, (list, dict)) and pd.isna(v)) else str(v)

    out = []
    for rec in run.jobs.to_dict("records"):
        j = by_id.get(rec.get("job_id"), {})
        listed = list(dict.fromkeys(int(x) for x in (j.get("stage_ids") or [])))
        mine = [x for x in listed if owner.get(x) == rec.get("job_id")]
        jid = pd.to_numeric(rec.get("job_id"), errors="coerce")
        out.append({
            "job_id": -1 if pd.isna(jid) else int(jid),
            "description": text(rec.get("description")), "name": text(rec.get("name")),
            **dict(zip(("call_site", "call_site_text"), call_site_shown(run, rec.get("name")))),
            "status": text(rec.get("status")),
            "duration_ms": j.get("duration_ms") or 0.0,
            "stages": len(mine),
            "skipped": sum(1 for x in listed if status.get(x) == "SKIPPED"),
            "attempts": int(sum(attempts.get(x, 0) for x in mine)),
        })
    return out


def hint_items(run: Run, hints: list) -> list[dict]:
    out = []
    for h in hints or []:
        if isinstance(h, dict):
            out.append({"text": str(h.get("text") or h.get("hint") or ""),
                        "setting": h.get("setting"), "value": h.get("value"),
                        "cell": ready_cell(run, h)})
        else:
            out.append({"text": str(h), "setting": None, "value": None, "cell": None})
    return out


def data(a: Analysis, ctx) -> dict:
    s = ctx.summary
    run = a.run
    return {
        "verdict": s["verdict"],
        "headline": s.get("verdict_headline_text") or "",
        "bullets": [str(b) for b in (s.get("verdict_bullets") or [])],
        "hints": hint_items(run, s.get("hints") or []),
        "warnings": [str(w) for w in (s.get("warnings") or [])],
        "breakdown": breakdown_segments(s["breakdown"]),
        "legend": legend_colors(),
        "key_numbers": with_context(key_numbers(a, s), getattr(ctx, "series", None)),
        "jobs": job_rows(a, s) if len(run.jobs) else [],
        "source": run.source or "",
    }


# -- the fallback: the Run alone -------------------------------------------------------

STAGE_COLUMNS = [
    ("stage_id", "stage", "int"), ("attempt", "attempt", "int"), ("status", "status", "text"),
    ("name", "name", "text"), ("task_attempts", "tasks", "int"),
    ("executor_run_time_ms", "executorRunTime", "ms"),
    ("executor_cpu_time_ms", "executorCpuTime", "ms"), ("jvm_gc_time_ms", "jvmGcTime", "ms"),
    ("shuffle_fetch_wait_ms", "fetchWaitTime", "ms"),
    ("shuffle_write_time_ms", "shuffle writeTime", "ms"),
    ("input_bytes", "input", "bytes"), ("output_bytes", "output", "bytes"),
    ("shuffle_read_bytes", "shuffle read", "bytes"),
    ("shuffle_write_bytes", "shuffle write", "bytes"), ("failed_tasks", "failed", "int"),
]


def time_split(run: Run) -> dict[str, dict]:
    """The analysis' own breakdown of task time (a pure function of the Run)."""
    return totals(task_breakdown(run))


def basic(run: Run) -> dict:
    """The Summary tab of a Run the analysis could not handle (``render/basic.py``'s
    content): key numbers, the breakdown, the collection warnings and the stages."""
    st = run.stage_table()
    split = time_split(run)
    total = float(sum(v["ms"] for v in split.values()))
    ex = run.executors
    failed = int((run.tasks["status"] == "FAILED").sum()) if len(run.tasks) else 0

    def col_sum(col: str) -> float:
        return float(pd.to_numeric(st[col], errors="coerce").sum()) if col in st else 0.0

    work: list = [num(run.wall_ms, "ms", "wall_ms") | {"strong": True}, " wall (measured) · ",
                  num(len(run.jobs), "int", "jobs"), f" {noun(len(run.jobs), 'job')} · ",
                  num(len(run.stages), "int", "stages"), f" {noun(len(run.stages), 'stage')} · ",
                  num(len(run.tasks), "int", "task_attempts"),
                  f" {noun(len(run.tasks), 'task attempt')}"]
    if failed:
        work += [" (", num(failed, "int", "failed_tasks"), " failed)"]
    work += [" · ", num(run.slots, "int", "slots"), f" {noun(run.slots, 'slot')}"]
    rows = [
        {"key": "work", "label": "run", "items": work},
        {"key": "task_time", "label": "task time",
         "items": [num(total, "ms", "task_time_ms"), " (per component below)"]},
        {"key": "data", "label": "data",
         "items": ["read ", num(col_sum("input_bytes"), "bytes", "input_bytes"),
                   " · written ", num(col_sum("output_bytes"), "bytes", "output_bytes"),
                   " · shuffled ", num(col_sum("shuffle_write_bytes"), "bytes",
                                       "shuffle_write_bytes"),
                   " (remote reads ", num(col_sum("shuffle_remote_bytes"), "bytes",
                                          "shuffle_remote_bytes"), ") — measured"]},
        memory_row(ex),
        {"key": "spark", "label": "Spark", "items": _spark_row(run)},
    ]
    stages = []
    for rec in st.to_dict("records"):
        stages.append({k: rec.get(k) for k, _, _ in STAGE_COLUMNS})
    return {
        "basic": True,
        "warnings": [str(w) for w in run.warnings],
        "breakdown": breakdown_segments(split) if len(run.tasks) else [],
        "legend": legend_colors(),
        "key_numbers": rows,
        "stage_columns": [{"key": k, "title": t, "format": f} for k, t, f in STAGE_COLUMNS],
        "stages": stages,
        "source": run.source or "",
    }
