"""Cheap live progress of a measurement window, from Spark's status tracker via py4j.

A poll costs a handful of py4j calls (the window's jobs by tag, their stages,
the executors) whatever the number of tasks: progress is counted by Spark, not
by streaming task events to the browser.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Callable

from ..errors import one_line
from .periodic import PeriodicSampler


@dataclasses.dataclass
class StageProgress:
    stage_id: int
    name: str
    num_tasks: int
    completed: int
    active: int
    failed: int

    @property
    def done(self) -> bool:
        return self.num_tasks > 0 and self.completed >= self.num_tasks


@dataclasses.dataclass
class ProgressSnapshot:
    elapsed_s: float
    jobs_started: int
    jobs_done: int
    stages: list[StageProgress]          # every stage seen so far, in id order
    executors: int
    cores: int
    peak_memory_bytes: float | None
    finished: bool = False

    @property
    def active_stages(self) -> list[StageProgress]:
        return [s for s in self.stages if s.active > 0 or (not s.done and s.completed > 0)]

    def key(self) -> tuple:
        """What a display shows: an update is only needed when this changes."""
        return (self.jobs_started, self.jobs_done, self.executors, self.cores,
                self.peak_memory_bytes, self.finished,
                tuple((s.stage_id, s.completed, s.active, s.failed) for s in self.stages),
                int(self.elapsed_s))


class StatusReader:
    """Reads the window's jobs and stages from the JVM's SparkStatusTracker.

    Every py4j call is a round trip to the JVM (~0.1-0.3 ms of this process's CPU, twice a
    second while a cell runs), so what cannot change is read once: a job's stage ids (fixed
    when it is submitted), a stage's name, whether a job has ended; an int
    array comes back as one string (``java.util.Arrays.toString``) rather than one call per
    element."""

    def __init__(self, sc, tag: str):
        self.sc = sc
        self.tag = tag
        self._tracker = None
        self._scala_sc = None
        self._arrays = None
        self._stages: dict[int, StageProgress] = {}
        self._job_stages: dict[int, list[int]] = {}
        self._ended_jobs: set[int] = set()

    def tracker(self):
        if self._tracker is None:
            self._scala_sc = self.sc._jsc.sc()
            self._tracker = self._scala_sc.statusTracker()
            self._arrays = self.sc._jvm.java.util.Arrays
        return self._tracker

    def _ints(self, java_array) -> list[int]:
        text = str(self._arrays.toString(java_array)).strip("[]")
        return [int(v) for v in text.split(",")] if text.strip() else []

    def read(self, started: float, peak_memory_bytes: float | None) -> ProgressSnapshot:
        tr = self.tracker()
        job_ids = self._ints(tr.getJobIdsForTag(self.tag))
        done = 0
        for job_id in job_ids:
            if job_id in self._ended_jobs:
                done += 1
                continue
            info = tr.getJobInfo(job_id)
            if not info.isDefined():
                continue
            job = info.get()
            ended = str(job.status().toString()) in ("SUCCEEDED", "FAILED")
            stage_ids = self._job_stages.get(job_id)
            if stage_ids is None:
                stage_ids = self._job_stages[job_id] = self._ints(job.stageIds())
            for stage_id in stage_ids:      # read after the status: as fresh as it
                self._read_stage(tr, stage_id)
            if ended:
                self._ended_jobs.add(job_id)
                done += 1
        n_exec = len(tr.getExecutorInfos())
        cores = self._scala_sc.defaultParallelism()
        return ProgressSnapshot(
            elapsed_s=time.monotonic() - started, jobs_started=len(job_ids), jobs_done=done,
            stages=[self._stages[k] for k in sorted(self._stages)],
            executors=max(n_exec - 1, 1) if n_exec > 1 else n_exec, cores=int(cores),
            peak_memory_bytes=peak_memory_bytes)

    def _read_stage(self, tr, stage_id: int) -> None:
        known = self._stages.get(stage_id)
        if known is not None and known.done and known.active == 0:
            return                                    # finished stages need no more calls
        info = tr.getStageInfo(stage_id)
        if not info.isDefined():
            return
        s = info.get()
        self._stages[stage_id] = StageProgress(
            stage_id=stage_id,
            name=known.name if known is not None else str(s.name()),
            num_tasks=int(s.numTasks()),     # a retried stage's new attempt: fewer
            completed=int(s.numCompletedTasks()), active=int(s.numActiveTasks()),
            failed=int(s.numFailedTasks()))


class ProgressPoller(PeriodicSampler):
    """Calls ``on_update(snapshot)`` at most ``rate`` times a second, only on change."""

    def __init__(self, reader: StatusReader, on_update: Callable[[ProgressSnapshot], None],
                 peak_memory: Callable[[], float | None] = lambda: None, rate: float = 2.0):
        super().__init__("jupyter-perf-progress", 1.0 / rate)
        self.reader = reader
        self.on_update = on_update
        self.peak_memory = peak_memory
        self.started = time.monotonic()
        self.updates = 0
        self.last: ProgressSnapshot | None = None
        self.error = ""
        self._last_key: tuple | None = None

    def sample(self) -> None:
        self.poll()

    def poll(self, finished: bool = False) -> None:
        try:
            snap = self.reader.read(self.started, self.peak_memory())
        except Exception as exc:   # the JVM is busy or gone: keep the last view
            self.error = one_line(exc)
            return
        snap.finished = finished
        self.last = snap
        if snap.key() != self._last_key:
            self._last_key = snap.key()
            self.updates += 1
            try:
                self.on_update(snap)
            except Exception as exc:   # a broken display must not stop the measurement
                self.error = f"progress display: {one_line(exc)}"

    def stop(self) -> ProgressSnapshot | None:
        """Stop polling (no thread is left behind) and deliver one final snapshot."""
        self.halt(timeout=10)
        self.poll(finished=True)
        return self.last
