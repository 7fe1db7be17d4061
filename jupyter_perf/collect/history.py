"""Read a whole application from a Spark History Server or a live UI into a ``Run`` (kind ``rest``).

    run = load_rest("http://localhost:18080", "app-20261122015800-0001")

Jobs (``/jobs``), every stage attempt (``/stages/{id}``) with every task attempt (paged
``taskList``, 1000 a page), executors including removed ones (``/allexecutors``) and the
application's own start/end (``/applications/{id}``). With several attempts of the app
(YARN/Kubernetes retries) the latest is read unless ``attempt`` is given, and the others are
listed in a warning. When Spark's retained-data limits (``spark.ui.retainedTasks``,
``spark.ui.retainedStages``, ``spark.ui.retainedJobs``) evicted data, the run says so.

The REST API does not expose stage parent IDs, so ``stages.parent_ids`` is empty here; the
schedule replay then relies on task intervals alone (see docs/eventlogs.md for when this can
matter).
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from ..model import Run
from .executors_lost import note_memory_losses
from .fields import KEPT_PROPERTIES, parse_spark_time, sorted_stage_memory
from .rest import RestError, RestNotFound, RestUnreachable, SparkRest, describe_json
from .rest_run import answered, eviction_warnings, fetch_executors, fetch_jobs, read_stages, text
from .sql import read_sql


def _attempt_key(a: dict[str, Any]) -> tuple:
    attempt = str(a.get("attemptId") or "")
    return (parse_spark_time(a.get("startTime")), int(attempt) if attempt.isdigit() else -1, attempt)


def choose_attempt(app: dict[str, Any], attempt: str | None) -> tuple[dict[str, Any], list[str]]:
    """The application attempt to read (latest by default) and warnings about the others."""
    attempts = list(app.get("attempts") or [{}])
    warnings: list[str] = []
    if attempt is not None:
        match = [a for a in attempts if str(a.get("attemptId") or "") == str(attempt)]
        if not match:
            ids = [str(a.get("attemptId")) for a in attempts if a.get("attemptId") is not None]
            raise RestError(f"application {app.get('id')} has no attempt {attempt!r}; "
                            f"attempts: {', '.join(ids) or 'none (single-attempt app)'}")
        return match[0], warnings
    chosen = max(attempts, key=_attempt_key)
    others = [str(a.get("attemptId")) for a in attempts if a is not chosen]
    if others:
        warnings.append(f"application {app.get('id')} has {len(attempts)} attempts: read the latest "
                        f"({chosen.get('attemptId')}); pass attempt= one of {', '.join(others)} "
                        "for another")
    return chosen, warnings


def list_applications(url: str, *, timeout: float = 30.0,
                      deadline: float | None = None) -> list[dict[str, Any]]:
    """The applications a History Server or live UI at ``url`` lists (``/api/v1/applications``).

    Raises :class:`RestUnreachable` when nothing answers and :class:`RestError` for any
    other problem (one line naming the URL and what came back).
    """
    rest = SparkRest(base_url(url), "", timeout=timeout, deadline=deadline)
    try:
        listing = f"{rest.base_url}/api/v1/applications"
        apps = rest.fetch(listing)
        if not isinstance(apps, list) or not all(isinstance(a, dict) and "id" in a for a in apps):
            raise RestError(f"{listing} answered {describe_json(apps)}, not Spark's list of "
                            "applications; is this a Spark UI or History Server?")
        return apps
    finally:
        rest.close()


def base_url(url: str) -> str:
    """``http://host:port`` from what a user typed (a trailing ``/`` or ``/api/v1`` dropped)."""
    base = url.rstrip("/")
    return base[: -len("/api/v1")] if base.endswith("/api/v1") else base


def load_rest(url: str, app_id: str, attempt: str | None = None, *, timeout: float = 30.0,
              deadline: float | None = None, collection_deadline: float | None = None) -> Run:
    """A whole application from a History Server or live UI at ``url`` -> ``Run`` (kind ``rest``).

    ``timeout`` bounds each socket read, ``deadline`` each request and ``collection_deadline``
    the whole load (seconds; ``None``: the environment variables
    ``JUPYTER_PERF_REST_DEADLINE`` / ``JUPYTER_PERF_REST_COLLECTION_DEADLINE``, else 60 s /
    300 s). Raises :class:`~jupyter_perf.collect.rest.RestError` (one line, with the next step)
    when the server cannot be reached, does not know the application, is too slow, or answers
    something that is not Spark's REST API.
    """
    base = base_url(url)
    rest = SparkRest(base, app_id, timeout=timeout, deadline=deadline,
                     collection_deadline=collection_deadline)
    try:
        with rest.collection():
            return _load(rest, base, app_id, attempt)
    finally:
        rest.close()


def _load(rest: SparkRest, base: str, app_id: str, attempt: str | None) -> Run:
    try:
        app = rest.application()
    except RestUnreachable:
        raise RestUnreachable(f"no Spark UI or History Server answers at {base}: check the URL "
                              "and that the server is running") from None
    except RestNotFound:
        raise RestError(f"{base} does not know application {app_id!r}: list them at "
                        f"{base}/api/v1/applications") from None
    with answered(f"{base}/api/v1/applications/{app_id}", "an application"):
        chosen, warnings = choose_attempt(app, attempt)
    attempt_id = chosen.get("attemptId")
    rest.attempt_id = text(attempt_id) if attempt_id is not None else None
    try:
        jobs_raw = rest.jobs()
        stage_list = rest.stages()
        with answered(rest.app_url + "/stages", "a stage list"):
            stage_ids = ({int(s["stageId"]) for s in stage_list}
                         | {int(s) for j in jobs_raw for s in j.get("stageIds", [])})
        read = read_stages(rest, stage_ids)
        stages, tasks = read.stages, read.tasks
        warnings.extend(eviction_warnings(read))
        executors = fetch_executors(rest)
        try:
            env = rest.environment()
        except RestNotFound:
            env = {}
    except RestNotFound as exc:
        raise RestError(f"{base} lost application {app_id} while reading it ({exc}); "
                        "retry") from None
    jobs = fetch_jobs(rest, jobs_raw)
    *sql_tables, sql_warnings = read_sql(rest, None, stages, tasks, jobs)
    warnings.extend(sql_warnings)
    with answered(rest.app_url, "an application"):
        run = _assemble(app, app_id, base, chosen, warnings, jobs, stages, tasks, executors, env)
    run.sql, run.operators, run.sql_metrics = sql_tables
    run.stage_memory = sorted_stage_memory(read.memory, run.tasks)
    note_memory_losses(run)
    return run


def _assemble(app: dict[str, Any], app_id: str, base: str, chosen: dict[str, Any],
              warnings: list[str], jobs: pd.DataFrame, stages: pd.DataFrame, tasks: pd.DataFrame,
              executors: pd.DataFrame, env: dict[str, Any]) -> Run:
    known_jobs = set(jobs["job_id"]) if not jobs.empty else set()
    if known_jobs and len(known_jobs) < max(known_jobs) + 1:
        warnings.append(f"Spark kept {len(known_jobs)} of {max(known_jobs) + 1} jobs "
                        "(evicted by spark.ui.retainedJobs); the run covers the jobs kept")
    if not stages.empty:
        stages = stages.sort_values(["stage_id", "attempt"], kind="stable").reset_index(drop=True)
    if len(tasks):
        tasks = tasks.sort_values(["stage_id", "stage_attempt", "task_id"],
                                  kind="stable").reset_index(drop=True)
    if not executors.empty:
        executors = executors.sort_values("executor_id", kind="stable").reset_index(drop=True)
    props = dict(env.get("sparkProperties") or [])
    start = parse_spark_time(chosen.get("startTime"))
    end = parse_spark_time(chosen.get("endTime"))
    completed = bool(chosen.get("completed", True))
    if not completed or not end > 0:
        last = [t for t in (pd.to_numeric(jobs.get("completion_ms"), errors="coerce").max()
                            if not jobs.empty else None,
                            tasks["finish_ms"].max() if len(tasks) else None) if t == t and t]
        end = float(max(last)) if last else start
        warnings.append("the application is still running (or its log is incomplete): end time "
                        "taken from the last finished job or task")
    name = text(app.get("name"))
    run = Run(kind="rest", label=name, status="ok",
              start_ms=start if start == start else 0.0, end_ms=end if end == end else 0.0,
              app_id=text(app.get("id")) or app_id, app_name=name,
              spark_version=text(chosen.get("appSparkVersion")),
              master=text(props.get("spark.master")), collector="rest", warnings=warnings,
              jobs=jobs, stages=stages, tasks=tasks, executors=executors,
              extra={"source": base, "attempt_id": chosen.get("attemptId"),
                     "properties": {k: v for k, v in props.items() if k in KEPT_PROPERTIES},
                     "user": text(chosen.get("sparkUser")), "completed": completed})
    if run.jobs.empty:
        run.status = "no-jobs"
    return run
