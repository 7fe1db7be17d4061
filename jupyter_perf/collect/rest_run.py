"""Read jobs, stage attempts, every task attempt and executors from Spark's REST API."""
from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Callable, Iterable, Iterator, TypeVar

import numpy as np
import pandas as pd

from ..errors import one_line
from ..model import conform
from .executors_lost import resubmission_adjusted
from .rest import RestError, SparkRest, describe_json
from .rest_fields import conform_rest

T = TypeVar("T")

# What a field of the wrong type or value raises while an answer is converted.
SHAPE_ERRORS = (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError,
                RecursionError)


@contextlib.contextmanager
def answered(url: str, what: str, item: Any = None) -> Iterator[None]:
    """Report a field of the wrong type or value met inside the block as one RestError line
    naming the URL (a server that is not Spark, or a Spark version we do not know)."""
    try:
        yield
    except SHAPE_ERRORS as exc:
        where = f"; in {describe_json(item)}" if item is not None else ""
        raise RestError(f"{url} answered {what} Spark does not write ({one_line(exc)}{where}); "
                        "is this a Spark UI or History Server?") from None


def converted(url: str, what: str, fn: Callable[[], T]) -> T:
    """``fn()`` converting (part of) ``url``'s answer; shape problems as one RestError line."""
    with answered(url, what):
        return fn()


def text(value: Any) -> str:
    """A text field as a string ('' for null; other JSON types as their text)."""
    return value if isinstance(value, str) else "" if value is None else str(value)


COUNTERS = ("numCompleteTasks", "numFailedTasks", "numKilledTasks")


def _int(value: Any) -> int:
    """A counter or id as the model reads it (null → 0); anything else not a number raises."""
    return 0 if value is None else int(value)


@dataclasses.dataclass
class StageRead:
    """The stage attempts and task attempts :func:`read_stages` found, and what Spark's UI no
    longer had (``evicted``: stage ids; ``partial``: {(stage, attempt): (task attempts kept,
    task attempts run)} by Spark's own counters)."""

    stages: pd.DataFrame
    tasks: pd.DataFrame
    evicted: list[int]
    partial: dict[tuple[int, int], tuple[int, int]]
    #: per stage attempt and executor: its memory peaks (model ``stage_memory``)
    memory: pd.DataFrame = dataclasses.field(default_factory=lambda: conform("stage_memory"))


def stage_memory_records(stage: dict[str, Any]) -> list[dict[str, Any]]:
    """A stage attempt's ``executorSummary`` items that carry ``peakMemoryMetrics`` (Spark >=
    3.1), each with its executor id and the stage attempt's ids; the map and the task map
    are taken out of ``stage`` (they are not stage columns)."""
    summary = stage.pop("executorSummary", None)
    stage.pop("tasks", None)
    if not isinstance(summary, dict):
        return []
    return [{"stageId": stage.get("stageId"), "attemptId": stage.get("attemptId"),
             "executorId": str(executor), "peakMemoryMetrics": item["peakMemoryMetrics"]}
            for executor, item in summary.items()
            if isinstance(item, dict) and isinstance(item.get("peakMemoryMetrics"), dict)]


def read_stages(rest: SparkRest, stage_ids: Iterable[int]) -> StageRead:
    """Stage attempts and all their task attempts, matched by (stage id, attempt): one
    request per stage and one per 1000 task attempts, whatever the application ran before.

    The stage and task tables are each converted once (one ``conform`` of all records, each
    task record tagged with its stage attempt): a DataFrame per stage and per task page cost
    a short cell more than the requests themselves."""
    raw_stages, raw_tasks, raw_memory = [], [], []
    evicted: list[int] = []
    partial: dict[tuple[int, int], tuple[int, int]] = {}
    for stage_id in sorted(set(int(s) for s in stage_ids)):
        try:
            attempts = rest.stage_attempts(stage_id, executors=True)
        except KeyError:
            evicted.append(stage_id)
            continue
        url = f"{rest.app_url}/stages/{stage_id}"
        for stage in attempts:
            with answered(url, "a stage's executorSummary", stage):
                raw_memory += stage_memory_records(stage)
            raw_stages.append(stage)
            with answered(url, "a stage", stage):
                status = text(stage.get("status"))
                attempt = _int(stage.get("attemptId"))
                expected = sum(_int(stage.get(c)) for c in COUNTERS)
            if status in ("SKIPPED", "PENDING"):
                continue
            got = 0
            for page in rest.task_pages(stage_id, attempt):
                got += len(page)
                raw_tasks += [{**task, "stage_id": stage_id, "stage_attempt": attempt}
                              for task in page]
            if got < expected:
                partial[(stage_id, attempt)] = (got, expected)
    stages = converted(f"{rest.app_url}/stages", "stages",
                       lambda: conform_rest("stages", raw_stages))
    tasks = converted(f"{rest.app_url}/stages/…/taskList", "task attempts",
                      lambda: conform_rest("tasks", raw_tasks))
    memory = converted(f"{rest.app_url}/stages", "stage memory peaks",
                       lambda: conform_rest("stage_memory", raw_memory))
    # a lost executor's finished map outputs re-run: counted as failures, listed once
    partial = resubmission_adjusted(partial, tasks)
    return StageRead(stages, tasks, evicted, partial, memory)


def id_ranges(ids: Iterable[int], most: int = 8) -> str:
    """'3, 5–7, 9' for ids (runs of consecutive ids as ranges; at most ``most`` parts)."""
    out: list[tuple[int, int]] = []
    for i in sorted(set(int(i) for i in ids)):
        if out and out[-1][1] == i - 1:
            out[-1] = (out[-1][0], i)
        else:
            out.append((i, i))
    parts = [f"{a}" if a == b else f"{a}–{b}" for a, b in out]
    return ", ".join(parts[:most]) + (", …" if len(parts) > most else "")


LISTENER_NOTE = ("sparkmeasure's listener (without the task's index in its stage, attempt "
                 "number or failure reason)")


def eviction_warnings(read: StageRead, filled_stages: dict[int, int] | None = None,
                      filled_tasks: dict[tuple[int, int], int] | None = None) -> list[str]:
    """What Spark's UI evicted, which setting keeps it, and what was filled in from
    sparkmeasure's listener instead (``filled_stages``: {stage id: task attempts added};
    ``filled_tasks``: {(stage, attempt): task attempts added})."""
    filled_stages, filled_tasks = filled_stages or {}, filled_tasks or {}
    out = []
    gone = [s for s in read.evicted if s not in filled_stages]
    if gone:
        one = len(gone) == 1
        out.append(f"stage{'' if one else 's'} {id_ranges(gone)} {'is' if one else 'are'} no longer "
                   "in Spark's UI store (evicted by spark.ui.retainedStages; raise it to keep "
                   f"{'it' if one else 'them'}); {'it is' if one else 'they are'} missing from "
                   "the report")
    if filled_stages:
        one = len(filled_stages) == 1
        out.append(f"stage{'' if one else 's'} {id_ranges(filled_stages)} {'is' if one else 'are'} no "
                   "longer in Spark's UI store (evicted by spark.ui.retainedStages; raise it to "
                   f"keep {'it' if one else 'them'}): {sum(filled_stages.values())} task "
                   f"attempts come from {LISTENER_NOTE}")
    if read.partial:
        parts = {k: read.partial[k] for k in sorted(read.partial)}
        added = sum(filled_tasks.get(k, 0) for k in parts)
        short = sum(ran - kept - filled_tasks.get(k, 0) for k, (kept, ran) in parts.items())
        if len(parts) == 1:
            [((s, a), (kept, ran))] = parts.items()
            head = f"stage {s}.{a}: Spark kept {kept} of {ran} task attempts"
        else:
            head = ("Spark kept only part of the task attempts of stages "
                    + ", ".join(f"{s}.{a} ({kept} of {ran})"
                                for (s, a), (kept, ran) in list(parts.items())[:10])
                    + (", …" if len(parts) > 10 else ""))
        tail = []
        if added:
            tail.append(f"{added} more come from {LISTENER_NOTE}")
        if short > 0:
            tail.append("task-level numbers are partial")
        out.append("; ".join([f"{head} (evicted by spark.ui.retainedTasks; raise it to keep "
                              "them)", *tail]))
    return out


def _by_attempt(tasks: pd.DataFrame, windows: list[tuple[int, float, float]]) -> pd.DataFrame:
    """``tasks`` of one stage, each given the stage attempt whose [submission, completion]
    holds its launch (the only attempt when there is one; sparkmeasure does not say)."""
    tasks = tasks.copy()
    if len(windows) == 1:
        tasks["stage_attempt"] = windows[0][0]
        return tasks
    launch = pd.to_numeric(tasks["launch_ms"], errors="coerce").to_numpy()
    attempt = np.full(len(tasks), -1)
    for a, begin, end in sorted(windows, key=lambda w: w[1]):
        begin = begin if begin == begin else -np.inf
        end = end if end == end else np.inf
        attempt[(launch >= begin) & (launch <= end)] = a
    tasks["stage_attempt"] = attempt
    return tasks[attempt >= 0]


def fill_from_listener(read: StageRead, listener_stages: pd.DataFrame,
                       listener_tasks: pd.DataFrame
                       ) -> tuple[dict[int, int], dict[tuple[int, int], int]]:
    """Fill what Spark's UI evicted from sparkmeasure's listener, which keeps every stage and
    task it saw since the window began: evicted stages get their attempts (numbered in
    submission order) and task attempts; stage attempts whose task list Spark cut get the
    task attempts it no longer had (matched by task id). Skipped stages
    never ran, so the listener has nothing for them (a SKIPPED stage repeats the task count
    of the stage that ran: it is matched by its own id, never by its counts).

    ``listener_stages``: sparkmeasure's stage rows (its names); ``listener_tasks``: its task
    rows in the model's names, with ``task_id`` (sparkmeasure's ``index`` field holds the
    task id, ``TaskInfo.taskId``; the task's index in its stage it does not record). Updates
    ``read`` in place; returns ({stage id: task attempts
    added}, {(stage, attempt): task attempts added})."""
    filled_stages: dict[int, int] = {}
    filled_tasks: dict[tuple[int, int], int] = {}
    if listener_stages is None or listener_tasks is None or listener_stages.empty:
        return filled_stages, filled_tasks
    new_stages, new_tasks = [], []
    for stage_id in read.evicted:
        rows = listener_stages[listener_stages["stageId"] == stage_id]
        if rows.empty:
            continue
        rows = rows.sort_values("submissionTime", kind="stable")
        windows = []
        for attempt, row in enumerate(rows.itertuples(index=False)):
            submitted, completed = float(row.submissionTime), float(row.completionTime)
            new_stages.append({"stage_id": stage_id, "attempt": attempt, "status": "COMPLETE",
                               "num_tasks": int(row.numTasks),
                               "submission_ms": submitted if submitted > 0 else np.nan,
                               "completion_ms": completed if completed > 0 else np.nan})
            windows.append((attempt, submitted, completed))
        tasks = _by_attempt(listener_tasks[listener_tasks["stage_id"] == stage_id], windows)
        new_tasks.append(tasks)
        filled_stages[stage_id] = len(tasks)
    stages = read.stages
    for (stage_id, attempt) in sorted(read.partial):
        theirs = listener_tasks[listener_tasks["stage_id"] == stage_id]
        if theirs.empty:
            continue
        ran = stages[(stages["stage_id"] == stage_id)
                     & ~stages["status"].isin(["SKIPPED", "PENDING"])]
        windows = [(int(a), float(b), float(c)) for a, b, c in
                   zip(ran["attempt"], ran["submission_ms"], ran["completion_ms"])]
        theirs = _by_attempt(theirs, windows)
        theirs = theirs[theirs["stage_attempt"] == attempt]
        mine = read.tasks[(read.tasks["stage_id"] == stage_id)
                          & (read.tasks["stage_attempt"] == attempt)]
        extra = theirs[~theirs["task_id"].isin(set(mine["task_id"]))]
        if len(extra):
            new_tasks.append(extra)
            filled_tasks[(stage_id, attempt)] = len(extra)
    if new_stages:
        read.stages = pd.concat([read.stages, conform("stages", new_stages)], ignore_index=True)
    if new_tasks:
        read.tasks = pd.concat([read.tasks, *[conform("tasks", t) for t in new_tasks]],
                               ignore_index=True)
    return filled_stages, filled_tasks


def fetch_executors(rest: SparkRest) -> pd.DataFrame:
    return converted(f"{rest.app_url}/allexecutors", "executors",
                     lambda: conform_rest("executors", rest.all_executors()))


def fetch_jobs(rest: SparkRest, jobs: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """The job table of ``jobs`` (raw ``/jobs`` records), by job id."""
    return converted(f"{rest.app_url}/jobs", "jobs",
                     lambda: conform_rest("jobs", list(jobs)).sort_values("job_id",
                                                                              kind="stable"))
