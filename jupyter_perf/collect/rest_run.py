"""Read jobs, stage attempts, every task attempt and executors from Spark's REST API."""
from __future__ import annotations

from typing import Any, Iterable

import pandas as pd

from ..model import normalize_tasks, parse_spark_time
from .rest import SparkRest


def job_row(job: dict[str, Any]) -> dict[str, Any]:
    return {
        "job_id": int(job["jobId"]),
        "name": job.get("name", ""),
        "description": job.get("description", "") or "",
        "status": job.get("status", ""),
        "submission_ms": parse_spark_time(job.get("submissionTime")),
        "completion_ms": parse_spark_time(job.get("completionTime")),
        "stage_ids": [int(s) for s in job.get("stageIds", [])],
        "num_tasks": int(job.get("numTasks", 0)),
        "num_failed_tasks": int(job.get("numFailedTasks", 0)),
        "job_group": job.get("jobGroup", "") or "",
        "job_tags": list(job.get("jobTags", []) or []),
    }


def stage_row(stage: dict[str, Any]) -> dict[str, Any]:
    return {
        "stage_id": int(stage["stageId"]),
        "attempt": int(stage.get("attemptId", 0)),
        "name": stage.get("name", ""),
        "status": stage.get("status", ""),
        "num_tasks": int(stage.get("numTasks", 0)),
        "submission_ms": parse_spark_time(stage.get("submissionTime")),
        "first_task_launched_ms": parse_spark_time(stage.get("firstTaskLaunchedTime")),
        "completion_ms": parse_spark_time(stage.get("completionTime")),
        "parent_ids": None,   # the REST API does not say; event logs do
        "description": stage.get("description", "") or "",
        "failure_reason": stage.get("failureReason", "") or "",
        # Spark's own counters, kept to detect tasks evicted by spark.ui.retainedTasks
        "spark_complete_tasks": int(stage.get("numCompleteTasks", 0)),
        "spark_failed_tasks": int(stage.get("numFailedTasks", 0)),
        "spark_killed_tasks": int(stage.get("numKilledTasks", 0)),
    }


def executor_row(ex: dict[str, Any]) -> dict[str, Any]:
    peak = ex.get("peakMemoryMetrics") or {}
    return {
        "executor_id": str(ex.get("id", "")),
        "host": (ex.get("hostPort") or "").rsplit(":", 1)[0],
        "total_cores": int(ex.get("totalCores", 0)),
        "max_memory_bytes": int(ex.get("maxMemory", 0)),
        "add_ms": parse_spark_time(ex.get("addTime")),
        "remove_ms": parse_spark_time(ex.get("removeTime")),
        "is_active": bool(ex.get("isActive", True)),
        "peak_jvm_heap_bytes": peak.get("JVMHeapMemory"),
        "peak_on_heap_execution_bytes": peak.get("OnHeapExecutionMemory"),
        "peak_on_heap_storage_bytes": peak.get("OnHeapStorageMemory"),
        "peak_process_rss_bytes": peak.get("ProcessTreeJVMRSSMemory"),
        "jvm_heap_limit_bytes": None,
    }


def fetch_stages(rest: SparkRest, stage_ids: Iterable[int]) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Stage attempts and all their task attempts, matched by (stage id, attempt)."""
    stage_rows, task_frames, warnings = [], [], []
    for stage_id in sorted(set(int(s) for s in stage_ids)):
        try:
            attempts = rest.stage_attempts(stage_id)
        except KeyError:
            warnings.append(f"stage {stage_id} is no longer in Spark's UI store "
                            "(raise spark.ui.retainedStages to keep it)")
            continue
        for stage in attempts:
            row = stage_row(stage)
            stage_rows.append(row)
            if row["status"] in ("SKIPPED", "PENDING"):
                continue
            pages = [normalize_tasks(page, "rest", stage_id=row["stage_id"],
                                     stage_attempt=row["attempt"])
                     for page in rest.task_pages(row["stage_id"], row["attempt"])]
            got = sum(len(p) for p in pages)
            expected = (row["spark_complete_tasks"] + row["spark_failed_tasks"]
                        + row["spark_killed_tasks"])
            if got < expected:
                warnings.append(
                    f"stage {row['stage_id']}.{row['attempt']}: Spark kept {got} of {expected} "
                    "task attempts (evicted by spark.ui.retainedTasks); task-level numbers are partial")
            task_frames.extend(pages)
    stages = pd.DataFrame(stage_rows)
    tasks = (pd.concat(task_frames, ignore_index=True) if task_frames
             else normalize_tasks([], "rest"))
    return stages, tasks, warnings


def fetch_executors(rest: SparkRest) -> pd.DataFrame:
    return pd.DataFrame([executor_row(e) for e in rest.all_executors()])
