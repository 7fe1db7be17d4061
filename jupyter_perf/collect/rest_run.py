"""Read jobs, stage attempts, every task attempt and executors from Spark's REST API."""
from __future__ import annotations

from typing import Iterable

import pandas as pd

from ..model import conform
from .rest import SparkRest


def fetch_stages(rest: SparkRest, stage_ids: Iterable[int]) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Stage attempts and all their task attempts, matched by (stage id, attempt)."""
    raw_stages, task_frames, warnings = [], [], []
    for stage_id in sorted(set(int(s) for s in stage_ids)):
        try:
            attempts = rest.stage_attempts(stage_id)
        except KeyError:
            warnings.append(f"stage {stage_id} is no longer in Spark's UI store "
                            "(raise spark.ui.retainedStages to keep it)")
            continue
        for stage in attempts:
            raw_stages.append(stage)
            row = conform("stages", [stage], "rest").iloc[0]
            if row["status"] in ("SKIPPED", "PENDING"):
                continue
            pages = [conform("tasks", page, "rest", stage_id=row["stage_id"],
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
    stages = conform("stages", raw_stages, "rest")
    tasks = pd.concat(task_frames, ignore_index=True) if task_frames else conform("tasks")
    return stages, tasks, warnings


def fetch_executors(rest: SparkRest) -> pd.DataFrame:
    return conform("executors", rest.all_executors(), "rest")
