"""Executors lost while a window ran (a worker, its executor JVM or its host died), and the
task attempts Spark ran again because of them.

When an executor dies mid-stage, Spark fails the attempts that were running on it
(``ExecutorLostFailure (executor 1 exited …) Reason: …``) and runs them elsewhere. With no
external shuffle service, the shuffle-map attempts it had already finished lose their output
with it: Spark runs those again too, posting a task end with reason ``Resubmitted`` for each.
Its UI counts that event as a failed task (``numFailedTasks``) while the finished attempt
stays listed as ``SUCCESS``, so the stage's counters exceed its task list by one per
re-run attempt; :func:`resubmission_adjusted` keeps that from looking like tasks evicted by
``spark.ui.retainedTasks``. :func:`lost_executor_warnings` names each lost executor, why
Spark says it went and what it cost, in one line of the run's warnings.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .. import fmt

LOST_FAILURE = re.compile(r"ExecutorLostFailure \(executor (\S+?) ")
# Removed on purpose (dynamic allocation releasing an idle executor, decommissioning): not lost
DELIBERATE = re.compile(r"killed by driver|decommission", re.IGNORECASE)

KEYS = ["stage_id", "stage_attempt", "index"]

# Why the executor's process ended, read from Spark's removal reason or the lost attempts'
# ExecutorLostFailure text: Spark's executor exits with code 52 (SparkExitCode.OOM) on a
# java.lang.OutOfMemoryError; 137 is a SIGKILL (128 + 9), what the OS's OOM killer and a
# container's memory limit send; YARN and Kubernetes name their memory kills.
OUT_OF_HEAP = re.compile(r"OutOfMemoryError|exit(?:ed)?(?: with)? (?:code|status):? 52\b",
                         re.IGNORECASE)
KILLED_FOR_MEMORY = re.compile(
    r"exit(?:ed)?(?: with)? (?:code|status):? 137\b|OOMKilled|exceeding (?:physical|virtual) "
    r"memory limits|running beyond (?:physical|virtual) memory", re.IGNORECASE)


def resubmitted(tasks: pd.DataFrame) -> np.ndarray:
    """Per task attempt (REST ``taskList`` rows in the model's names): True for a finished
    attempt that Spark ran again because the executor holding its shuffle output was lost —
    status SUCCESS, and a later attempt of the same task (stage attempt, index) launched after
    it finished. (A speculative copy is launched before the original finishes.)"""
    if tasks.empty or not set(KEYS + ["status", "launch_ms"]) <= set(tasks.columns):
        return np.zeros(len(tasks), dtype=bool)
    launch = pd.to_numeric(tasks["launch_ms"], errors="coerce")
    finish = pd.to_numeric(tasks.get("finish_ms", launch), errors="coerce")
    last_launch = launch.groupby([tasks[k] for k in KEYS], sort=False).transform("max")
    out = (tasks["status"] == "SUCCESS") & (launch < last_launch) & (finish <= last_launch)
    return out.to_numpy(dtype=bool)


def resubmission_adjusted(partial: dict[tuple[int, int], tuple[int, int]],
                          tasks: pd.DataFrame) -> dict[tuple[int, int], tuple[int, int]]:
    """``partial`` ({(stage, attempt): (task attempts listed, task attempts by Spark's
    counters)}) without the re-runs Spark counted as failures: a stage attempt whose list
    holds every attempt once those are taken off the counters is not partial."""
    if not partial:
        return partial
    again = tasks[resubmitted(tasks)]
    counts = {(int(s), int(a)): len(g) for (s, a), g in
              again.groupby(["stage_id", "stage_attempt"])} if len(again) else {}
    out = {}
    for key, (kept, ran) in partial.items():
        ran -= counts.get(key, 0)
        if kept < ran:
            out[key] = (kept, ran)
    return out


def lost_executors(executors: pd.DataFrame, tasks: pd.DataFrame, start_ms: float,
                   end_ms: float) -> list[dict]:
    """The executors lost while the window ran (``tasks``, ``executors``: the model's tables):
    removed between ``start_ms`` and ``end_ms`` for a reason other than a deliberate release,
    or named by a task attempt's ``ExecutorLostFailure``. Per executor: id, host, remove_ms,
    reason (Spark's, else the failure's), ``failed`` (attempts that failed with it), ``rerun``
    (finished attempts run again: their output was lost), ``finished`` (attempts it finished,
    all kept in the run), ``errors`` (up to three of those failures' texts)."""
    # only the attempts with an error are searched and, unless an executor was lost, nothing
    # else is computed per task (0.14 s for 250k attempts without a loss, before)
    error = tasks["error"]
    said_any = error.fillna("").astype(bool).to_numpy()     # an error text, not "" or None
    named = pd.Series(np.nan, index=tasks.index, dtype="object")
    if said_any.any():
        named[said_any] = error[said_any].astype(str).str.extract(LOST_FAILURE, expand=False)
    by_id = {} if executors is None or executors.empty else {
        str(e["executor_id"]): e for e in executors.to_dict("records")}
    failed = (tasks["status"] == "FAILED").to_numpy()
    failed_on = set(tasks["executor_id"][failed].astype(str))
    # removed in the window; or after it, having run one of its failed attempts: an executor
    # killed by its task's error (an OutOfMemoryError exits it with code 52) can be removed
    # just after the job failed and the cell ended
    ids = [eid for eid, ex in by_id.items()
           if start_ms <= _number(ex.get("remove_ms"))
           and (_number(ex.get("remove_ms")) <= end_ms or eid in failed_on)
           and not DELIBERATE.search(_text(ex.get("remove_reason")))]
    ids += sorted(set(named.dropna()) - set(ids))
    if not ids:
        return []
    errors = error.fillna("").astype(str)
    on = tasks["executor_id"].astype(str).to_numpy()
    succeeded = (tasks["status"] == "SUCCESS").to_numpy()
    again = resubmitted(tasks)
    rows = []
    for eid in ids:
        ex = by_id.get(eid, {})
        reason = _text(ex.get("remove_reason"))
        said = errors[named == eid]
        if not reason and len(said) and "Reason:" in said.iloc[0]:
            reason = said.iloc[0].split("Reason:", 1)[1].strip()
        removed = _number(ex.get("remove_ms"))
        mine = on == eid
        rows.append({"executor_id": eid, "host": _text(ex.get("host")),
                     "remove_ms": removed if removed == removed else None, "reason": reason,
                     "failed": len(said),
                     # what its lost attempts, or its own failed ones, said
                     "errors": [str(e) for e in said.head(3)] + [
                         str(e) for e in errors[mine & failed
                                                & (named != eid).to_numpy()].head(3)],
                     "rerun": int((again & mine).sum()),
                     "finished": int((succeeded & mine).sum())})
    return rows


def memory_cause(text: str) -> str:
    """What an executor's loss says about memory ("" when nothing)."""
    if OUT_OF_HEAP.search(text):
        return ("out of memory: its JVM heap was exhausted (java.lang.OutOfMemoryError; "
                "Spark's exit code 52)")
    if KILLED_FOR_MEMORY.search(text):
        return ("killed for memory: the OS's OOM killer or its container's memory limit "
                "(SIGKILL, exit code 137) — the process outgrew heap + overhead")
    return ""


EXIT_CODE = re.compile(r"exit(?:ed)?(?: with)? (?:code|status):? (\d+)\b", re.IGNORECASE)


def memory_losses(executors: pd.DataFrame, tasks: pd.DataFrame, start_ms: float,
                  end_ms: float) -> list[dict]:
    """The executors lost to memory while the window ran (:func:`lost_executors` whose reason
    or lost attempts say so), as plain records for ``run.extra["lost_to_memory"]``, which the
    analysis reads (the verdict's lead, the sidebar's badge): ``executor_id``, ``host``,
    ``remove_ms`` (or None), ``memory`` ("heap": an OutOfMemoryError, Spark's exit code 52;
    "killed": a SIGKILL or a YARN/Kubernetes memory kill), ``exit_code`` (or None),
    ``reason`` (Spark's words, at most 300 characters)."""
    out = []
    for lost in lost_executors(executors, tasks, start_ms, end_ms):
        text = " ".join([lost["reason"], *lost["errors"]])
        kind = "heap" if OUT_OF_HEAP.search(text) else \
            "killed" if KILLED_FOR_MEMORY.search(text) else ""
        if not kind:
            continue
        code = EXIT_CODE.search(text)
        out.append({"executor_id": lost["executor_id"], "host": lost["host"],
                    "remove_ms": lost["remove_ms"], "memory": kind,
                    "exit_code": int(code.group(1)) if code else None,
                    "reason": (lost["reason"] or (lost["errors"] or [""])[0])[:300]})
    return out


def note_memory_losses(run) -> None:
    """A loaded application's executors lost to memory (the whole application is the window),
    kept where a live window keeps them: ``run.extra["lost_to_memory"]`` (the verdict's lead,
    the sidebar's badge, the Memory tab)."""
    lost = memory_losses(run.executors, run.tasks, run.start_ms, run.end_ms)
    if lost:
        run.extra["lost_to_memory"] = lost


def lost_executor_warnings(executors: pd.DataFrame, tasks: pd.DataFrame, start_ms: float,
                           end_ms: float) -> list[str]:
    """One line per executor lost while the window ran (see :func:`lost_executors`)."""
    out = []
    for lost in lost_executors(executors, tasks, start_ms, end_ms):
        where = f" ({lost['host']})" if lost["host"] else ""
        when = (f" {(lost['remove_ms'] - start_ms) / 1000:.1f} s into the run"
                if lost["remove_ms"] is not None else "")
        why = f" ({lost['reason']})" if lost["reason"] else ""
        parts = []
        if lost["failed"]:
            parts.append(f"{_n(lost['failed'], 'task attempt')} running on it failed "
                         "(ExecutorLostFailure)")
        if lost["rerun"]:
            parts.append(f"{_n(lost['rerun'], 'finished shuffle-map attempt')} ran again "
                         f"elsewhere ({'its' if lost['rerun'] == 1 else 'their'} output was "
                         "lost with it)")
        finished = lost["finished"]
        parts.append("no attempt finished on it" if not finished else
                     "the attempt it finished is kept in the report" if finished == 1 else
                     f"all {finished} attempts it finished are kept in the report")
        memory = memory_cause(" ".join([lost["reason"], *lost["errors"]]))
        if memory:
            parts.insert(0, memory + _last_peaks(executors, lost["executor_id"]))
        out.append(f"executor {lost['executor_id']}{where} was lost{when}{why}: "
                   + "; ".join(parts))
    return out


def _last_peaks(executors: pd.DataFrame, executor_id: str) -> str:
    """", its last reported peaks: JVM heap X of its Y limit, …" (Spark keeps a lost
    executor's peaks, as its last heartbeat reported them), or ""."""
    if executors is None or executors.empty:
        return ""
    rows = executors[executors["executor_id"].astype(str) == executor_id]
    if rows.empty:
        return ""
    row = rows.iloc[0]
    said = []
    heap, limit = _number(row.get("peak_jvm_heap_bytes")), _number(row.get("jvm_heap_limit_bytes"))
    if heap == heap:
        said.append(f"JVM heap {fmt.nbytes(heap)}"
                    + (f" of its {fmt.nbytes(limit)} limit" if limit == limit else ""))
    for column, name in (("peak_process_rss_bytes", "process RSS"),
                         ("peak_python_rss_bytes", "Python workers' RSS")):
        value = _number(row.get(column))
        if value == value and value > 0:
            said.append(f"{name} {fmt.nbytes(value)}")
    return (", its last reported peaks (measured, before the loss): " + ", ".join(said)
            if said else "")


def _n(count: int, what: str) -> str:
    return f"{count} {what}{'' if count == 1 else 's'}"


def _number(value) -> float:
    try:
        return float(value) if value is not None else float("nan")
    except (TypeError, ValueError):
        return float("nan")


def _text(value) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return str(value)
