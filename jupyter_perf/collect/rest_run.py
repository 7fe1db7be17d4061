"""Read jobs, stage attempts, every task attempt and executors from Spark's REST API."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterable, Iterator, TypeVar

import pandas as pd

from ..errors import one_line
from .rest_fields import conform_rest
from .rest import RestError, SparkRest, describe_json

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


def fetch_stages(rest: SparkRest, stage_ids: Iterable[int]) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Stage attempts and all their task attempts, matched by (stage id, attempt).

    The stage and task tables are each converted once (one ``conform`` of all records, each
    task record tagged with its stage attempt): a DataFrame per stage and per task page cost
    a short cell more than the requests themselves."""
    raw_stages, raw_tasks, warnings = [], [], []
    for stage_id in sorted(set(int(s) for s in stage_ids)):
        try:
            attempts = rest.stage_attempts(stage_id)
        except KeyError:
            warnings.append(f"stage {stage_id} is no longer in Spark's UI store "
                            "(raise spark.ui.retainedStages to keep it)")
            continue
        url = f"{rest.app_url}/stages/{stage_id}"
        for stage in attempts:
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
                warnings.append(
                    f"stage {stage_id}.{attempt}: Spark kept {got} of {expected} "
                    "task attempts (evicted by spark.ui.retainedTasks); task-level numbers are partial")
    stages = converted(f"{rest.app_url}/stages", "stages",
                       lambda: conform_rest("stages", raw_stages))
    tasks = converted(f"{rest.app_url}/stages/…/taskList", "task attempts",
                      lambda: conform_rest("tasks", raw_tasks))
    return stages, tasks, warnings


def fetch_executors(rest: SparkRest) -> pd.DataFrame:
    return converted(f"{rest.app_url}/allexecutors", "executors",
                     lambda: conform_rest("executors", rest.all_executors()))


def fetch_jobs(rest: SparkRest, jobs: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """The job table of ``jobs`` (raw ``/jobs`` records), by job id."""
    return converted(f"{rest.app_url}/jobs", "jobs",
                     lambda: conform_rest("jobs", list(jobs)).sort_values("job_id",
                                                                              kind="stable"))
