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

from ..model import Run, conform, parse_spark_time
from .rest import RestError, SparkRest
from .rest_run import fetch_executors, fetch_stages


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


def load_rest(url: str, app_id: str, attempt: str | None = None, *, timeout: float = 30.0) -> Run:
    """A whole application from a History Server or live UI at ``url`` -> ``Run`` (kind ``rest``).

    Raises :class:`~jupyter_perf.collect.rest.RestError` (one line, with the next step) when the
    server cannot be reached or does not know the application.
    """
    base = url.rstrip("/")
    if base.endswith("/api/v1"):
        base = base[: -len("/api/v1")]
    probe = SparkRest(base, app_id, timeout=timeout)
    try:
        try:
            app = probe.application()
        except RestError as exc:
            if "unreachable" in str(exc):
                raise RestError(f"no Spark UI or History Server answers at {base}: check the URL "
                                "and that the server is running") from None
            raise RestError(f"{base} does not know application {app_id!r}: list them at "
                            f"{base}/api/v1/applications") from None
    finally:
        probe.close()
    chosen, warnings = choose_attempt(app, attempt)
    attempt_id = chosen.get("attemptId")
    rest = SparkRest(base, app_id, str(attempt_id) if attempt_id is not None else None,
                     timeout=timeout)
    try:
        jobs_raw = rest.jobs()
        stage_list = rest.stages()
        stage_ids = ({int(s["stageId"]) for s in stage_list}
                     | {int(s) for j in jobs_raw for s in j.get("stageIds", [])})
        stages, tasks, stage_warnings = fetch_stages(rest, stage_ids)
        warnings.extend(stage_warnings)
        executors = fetch_executors(rest)
        try:
            env = rest.environment()
        except KeyError:
            env = {}
    except KeyError as exc:
        raise RestError(f"{base} lost application {app_id} while reading it ({exc}); retry") from None
    finally:
        rest.close()

    jobs = conform("jobs", jobs_raw, "rest").sort_values("job_id", kind="stable")
    known_jobs = {int(j["jobId"]) for j in jobs_raw}
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
    run = Run(kind="rest", label=app.get("name", ""), status="ok",
              start_ms=start if start == start else 0.0, end_ms=end if end == end else 0.0,
              app_id=app.get("id", app_id), app_name=app.get("name", ""),
              spark_version=chosen.get("appSparkVersion", "") or "",
              master=props.get("spark.master", ""), collector="rest", warnings=warnings,
              jobs=jobs, stages=stages, tasks=tasks, executors=executors,
              extra={"source": base, "attempt_id": attempt_id, "user": chosen.get("sparkUser", ""),
                     "completed": completed})
    if run.jobs.empty:
        run.status = "no-jobs"
    return run
