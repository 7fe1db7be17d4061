"""Live progress of a Spark Connect window from the server's REST API.

The classic reader asks the driver's status tracker through py4j; a Connect client has no
py4j, so this reader asks the REST API the same questions: the window's jobs (by the server's
form of the client tag), their stages' task counts, the active executors and their cores. A
poll costs one job list, one request per unfinished stage and one executor list, whatever the
number of tasks.
"""
from __future__ import annotations

import time

from .connect import server_tag_matches
from .progress import ProgressSnapshot, StageProgress
from .rest import SparkRest

DONE_STAGES = ("COMPLETE", "SKIPPED", "FAILED")


class RestStatusReader:
    """``read()`` -> ProgressSnapshot of the jobs carrying ``tag`` (of session ``sid``)."""

    def __init__(self, rest: SparkRest, tag: str, sid: str = ""):
        # its own HTTP session: the poller thread must not share the collector's
        self.rest = SparkRest(rest.base_url, rest.app_id, rest.attempt_id, timeout=10.0)
        self.tag = tag
        self.sid = sid
        self._stages: dict[int, StageProgress] = {}
        self._finished: set[int] = set()

    def read(self, started: float, peak_memory_bytes: float | None) -> ProgressSnapshot:
        jobs = [j for j in self.rest.jobs()
                if server_tag_matches(j.get("jobTags"), self.tag, self.sid)]
        done = sum(1 for j in jobs if j.get("status") in ("SUCCEEDED", "FAILED"))
        for job in jobs:
            for stage_id in job.get("stageIds", []):
                self._read_stage(int(stage_id))
        executors = [e for e in self.rest.get("/executors") if e.get("isActive", True)]
        workers = [e for e in executors if e.get("id") != "driver"] or executors
        return ProgressSnapshot(
            elapsed_s=time.monotonic() - started, jobs_started=len(jobs), jobs_done=done,
            stages=[self._stages[k] for k in sorted(self._stages)],
            executors=len(workers), cores=sum(int(e.get("totalCores", 0)) for e in workers),
            peak_memory_bytes=peak_memory_bytes)

    def _read_stage(self, stage_id: int) -> None:
        if stage_id in self._finished:
            return                                    # finished stages need no more requests
        try:
            attempts = self.rest.stage_attempts(stage_id)
        except KeyError:                              # not in the UI store (yet)
            return
        if not attempts:
            return
        s = max(attempts, key=lambda a: int(a.get("attemptId", 0)))
        self._stages[stage_id] = StageProgress(
            stage_id=stage_id, name=str(s.get("name", "")), num_tasks=int(s.get("numTasks", 0)),
            completed=int(s.get("numCompleteTasks", 0)), active=int(s.get("numActiveTasks", 0)),
            failed=int(s.get("numFailedTasks", 0)))
        if s.get("status") in DONE_STAGES:
            self._finished.add(stage_id)

    def close(self) -> None:
        self.rest.close()
