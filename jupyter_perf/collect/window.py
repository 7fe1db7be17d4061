"""Measure one window of driver code (a notebook cell or a function) as a ``Run``.

The window tags every Spark job it starts with a unique job tag, so only its
own work is attributed, even when other threads run jobs at the same time.
When it ends it waits for Spark's listener bus to drain (listener lag), then
reads the tagged jobs, their stage attempts and every task attempt from the
live REST API, plus sparkmeasure's stage metrics and memory samples.
"""
from __future__ import annotations

import time
from typing import Any, Callable

import pandas as pd

from ..errors import one_line
from ..model import Run, new_run_id
from .session_state import session_state
from .hostcpu import HostCpuSampler, executors_on_this_host
from .listener import ListenerUnavailable, conform_sparkmeasure_tasks, listeners_for
from .progress import ProgressPoller, ProgressSnapshot, StatusReader
from .redact import redact
from .sessionconf import with_session_conf
from .rest import RestError, SparkRest
from .rest_fields import conform_rest
from .rest_run import fetch_executors, fetch_stages
from .sampler import MemorySampler, memory_rows
from .sql import collect_sql

TAG_PREFIX = "jupyter-perf-"
SETTLE_TIMEOUT_S = 15.0


def parse_memory(text: str | None) -> int | None:
    if not text:
        return None
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    t = str(text).strip().lower().rstrip("b")
    try:
        return int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)
    except ValueError:
        return None


class ClassicWindow:
    """``start()`` before the code, ``finish()`` after it (also on failure)."""

    def __init__(self, spark, *, kind: str = "cell", label: str = "", source: str = "",
                 notebook: str = "", sample_interval: float = 0.5,
                 settle_timeout: float = SETTLE_TIMEOUT_S,
                 on_progress: Callable[[ProgressSnapshot], None] | None = None):
        self.spark = spark
        self.sc = self._context(spark)
        self.run = Run(run_id=new_run_id(), kind=kind, label=label, source=source,
                       notebook=notebook)
        self.tag = TAG_PREFIX + self.run.run_id
        self.sample_interval = sample_interval
        self.settle_timeout = settle_timeout
        self.listeners = None
        self.rest: SparkRest | None = None
        self.sampler: MemorySampler | None = None
        self.host_cpu: HostCpuSampler | None = None
        self.on_progress = on_progress
        self.poller: ProgressPoller | None = None
        self._tagged = False

    def _context(self, spark):
        """The driver's SparkContext (a Spark Connect window has none: connect_window.py)."""
        return spark.sparkContext

    # -- begin --------------------------------------------------------------
    def start(self) -> "ClassicWindow":
        run = self.run
        run.app_id = self.sc.applicationId
        run.app_name = self.sc.appName
        run.spark_version = self.sc.version
        run.master = self.sc.master
        try:   # the settings that shape performance, with secrets redacted as Spark does
            run.extra["spark_conf"] = redact(self.sc.getConf().getAll())
        except Exception as exc:
            run.warnings.append(f"could not read the Spark conf: {one_line(exc)}")
        try:
            self.listeners = listeners_for(self.spark)
            self.listeners.begin()
        except ListenerUnavailable as exc:
            run.warnings.append(session_state(self.sc).jar_problem or str(exc))
        if session_state(self.sc).log_path:    # the JVM's own output (a collection note)
            run.extra["spark_log"] = session_state(self.sc).log_path
        ui = self.sc.uiWebUrl
        if ui:
            self.rest = SparkRest(ui, run.app_id)
            self.sampler = MemorySampler(self.rest, self.sample_interval)
            self.sampler.start()
        else:
            run.warnings.append("Spark UI is disabled (spark.ui.enabled=false): listener-only "
                                "report without failed/killed attempts or memory; enable the UI "
                                "for full detail")
        if executors_on_this_host(run.master):
            sampler = HostCpuSampler()
            if sampler.available:    # first sample now, then every 0.1 s until finish()
                sampler.sample()
                sampler.start()
                self.host_cpu = sampler
        # the slots, for a run collected from the listener alone (no REST API, or Spark
        # stopped inside the window)
        self._slots = self._safely("read spark.default.parallelism",
                                   lambda: int(self.sc.defaultParallelism))
        self.sc.addJobTag(self.tag)
        self._tagged = True
        if self.on_progress is not None:
            self.poller = ProgressPoller(StatusReader(self.sc, self.tag), self.on_progress,
                                         peak_memory=self._peak_memory)
            self.poller.start()
        run.start_ms = time.time() * 1000.0
        return self

    def _peak_memory(self) -> float | None:
        rows = self.sampler.rows[-20:] if self.sampler is not None else []
        peak = conform_rest("memory", rows)["peak_jvm_heap_bytes"].max() if rows else None
        return float(peak) if peak and peak > 0 else None

    def stop_background(self) -> None:
        """Stop the sampler and poller threads without collecting (start() failed)."""
        if self.poller is not None:
            self.poller.halt(timeout=10)
        if self.sampler is not None:
            self.sampler.stop()
        if self.host_cpu is not None:
            self.host_cpu.stop()
        self._untag()

    def _untag(self) -> None:
        if self._tagged:
            self._tagged = False
            self._safely("remove the job tag", lambda: self.sc.removeJobTag(self.tag))

    def cancel(self) -> None:
        """Cancel this window's running jobs (on interrupt)."""
        try:
            self.sc.cancelJobsWithTag(self.tag)
        except Exception as exc:  # the JVM may be gone
            self.run.warnings.append(f"could not cancel jobs: {one_line(exc)}")

    # -- end ----------------------------------------------------------------
    def finish(self, status: str = "ok", error: str = "") -> Run:
        """Collect everything about the window. Never raises for a Spark that is busy,
        unreachable or gone: each missing part becomes a warning on a partial run."""
        run = self.run
        run.end_ms = time.time() * 1000.0
        run.status, run.error = status, error
        # the session's SQL settings as the cell left them (compare's config diff, issue J)
        self._safely("read the session's settings", lambda: run.extra.__setitem__(
            "spark_conf", with_session_conf(run.extra.get("spark_conf"), self.spark)))
        if self.host_cpu is not None:
            run.host_cpu = pd.DataFrame(self.host_cpu.stop())
            if self.host_cpu.error:
                run.warnings.append(f"host CPU sampling stopped: {self.host_cpu.error}")
        if self.stopped:
            self._finish_stopped()
        else:
            self._finish_running()
        if self.listeners is not None:
            stages = self._safely("read sparkmeasure's stage metrics", self.listeners.stage_metrics)
            if stages is not None:
                ids = {int(s) for s in run.stages["stage_id"]} if not run.stages.empty else set()
                run.listener_stages = stages[stages["stageId"].isin(ids)].reset_index(drop=True)
        if run.jobs.empty and status == "ok" and not self.stopped:
            run.status = "no-jobs"
        return run

    @property
    def stopped(self) -> bool:
        """The SparkContext was stopped (``spark.stop()``) since the window started."""
        return getattr(self.sc, "_jsc", None) is None

    def _finish_running(self) -> None:
        run = self.run
        self._untag()
        if self.listeners is not None:
            self._safely("stop the sparkmeasure listeners", self.listeners.end)
        self._drain_listener_bus()
        if self.poller is not None:
            self.poller.stop()     # final view after the bus drained; no poller outlives us
        job_ids = self._job_ids()
        try:
            if self.rest is not None:
                with self.rest.collection():    # one deadline for all of the window's reads
                    self._collect_rest(job_ids)
                run.collector = "sparkmeasure+rest" if self.listeners else "rest"
            elif self.listeners is not None:
                self._collect_listener_only(job_ids)
                run.collector = "sparkmeasure"
        except RestError as exc:
            run.warnings.append(f"{exc}; the report is partial")
            if self.listeners is not None and run.tasks.empty:
                self._safely("read sparkmeasure's task metrics",
                             lambda: self._collect_listener_only(job_ids))
                run.collector = "sparkmeasure"
        except Exception as exc:   # py4j: the JVM is gone (e.g. killed by an OutOfMemoryError)
            run.warnings.append(f"Spark stopped answering while collecting ({one_line(exc)}); "
                                "the report is partial — restart the Spark session")
        finally:
            if self.sampler is not None:
                rows = self.sampler.stop()
                if self.sampler.errors and not rows:
                    run.warnings.append(f"memory sampler failed: {self.sampler.last_error}")
                run.memory = conform_rest("memory", rows)
            if self.rest is not None:
                self.rest.close()

    def _finish_stopped(self) -> None:
        """Spark was stopped inside the window: its UI, REST API and status tracker are gone
        with the context, but the JVM still answers, and sparkmeasure's listeners kept every
        event posted before the stop (stopping drains the listener bus)."""
        run = self.run
        self._tagged = False                      # the tag went with the context
        if self.poller is not None:
            self.poller.stop()
        if self.listeners is None:
            run.warnings.append(
                "Spark was stopped during the cell (spark.stop()): its jobs cannot be read any "
                "more (the Spark UI and its REST API stop with it, and sparkmeasure is not "
                "loaded); nothing to profile")
        else:
            self._safely("stop the sparkmeasure listeners", self.listeners.end)
            self._safely("read sparkmeasure's task metrics",
                         lambda: self._collect_listener_only(None))
            run.collector = "sparkmeasure"
            run.warnings.append(
                "Spark was stopped during the cell (spark.stop()): the jobs that ran before "
                "the stop come from sparkmeasure's listener alone (every job since the cell "
                "started, no failed or killed attempts)")
        if self.sampler is not None:
            rows = self.sampler.stop()            # the samples taken before the stop
            run.memory = conform_rest("memory", rows)
            self.rest.close()

    def _safely(self, what: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception as exc:
            self.run.warnings.append(f"could not {what}: {one_line(exc)}")
            return None

    def _drain_listener_bus(self) -> None:
        """Block until Spark's listeners have seen every event posted so far (bounded)."""
        try:
            self.sc._jsc.sc().listenerBus().waitUntilEmpty(int(self.settle_timeout * 1000))
        except Exception as exc:
            self.run.warnings.append(
                f"Spark's listener bus did not drain within {self.settle_timeout:.0f} s "
                f"({one_line(exc)}); late task metrics may be missing")

    def _job_ids(self) -> list[int]:
        try:
            ids = self.sc._jsc.sc().statusTracker().getJobIdsForTag(self.tag)
            return sorted(int(i) for i in ids)
        except Exception:
            pass
        if self.rest is None:
            return []
        try:  # Spark without job-tag lookups: filter the REST job list by tag
            return sorted(int(j["jobId"]) for j in self.rest.jobs()
                          if self.tag in (j.get("jobTags") or []))
        except (RestError, KeyError):
            return []

    def _collect_rest(self, job_ids: list[int]) -> None:
        run, rest = self.run, self.rest
        assert rest is not None
        jobs = [self._settled_job(j) for j in job_ids]
        jobs = [j for j in jobs if j is not None]
        run.jobs = conform_rest("jobs", jobs)
        stage_ids = sorted({s for j in jobs for s in j.get("stageIds", [])})
        stages, tasks, warnings = fetch_stages(rest, stage_ids)
        run.stages, run.tasks = stages, tasks
        run.warnings.extend(warnings)
        collect_sql(run, rest, job_ids)   # SQL plans of the window's jobs (rest-sql's room)
        executors = fetch_executors(rest)
        if not executors.empty:
            # only executors alive at some point of the window (dynamic allocation keeps
            # the dead ones of the whole application in /allexecutors)
            removed = pd.to_numeric(executors["remove_ms"], errors="coerce")
            executors = executors[~(removed < run.start_ms)].reset_index(drop=True)
            executors = self._with_heap_limits(executors)
            run.executors = executors
            if self.sampler is not None:   # one last sample, after the window
                self.sampler.rows.extend(memory_rows(rest.all_executors(), time.time() * 1000.0))

    def _settled_job(self, job_id: int) -> dict[str, Any] | None:
        """The job once Spark's status store marks it finished (bounded wait)."""
        assert self.rest is not None
        deadline = time.monotonic() + self.settle_timeout
        while True:
            try:
                job = self.rest.job(job_id)
            except KeyError:
                self.run.warnings.append(f"job {job_id} is no longer in Spark's UI store")
                return None
            if job.get("status") != "RUNNING":
                return job
            if time.monotonic() > deadline:
                self.run.warnings.append(
                    f"job {job_id} still running after {self.settle_timeout:.0f} s; "
                    "its numbers are partial")
                return job
            time.sleep(0.1)

    def _with_heap_limits(self, executors: pd.DataFrame) -> pd.DataFrame:
        conf = self.sc.getConf()
        driver_heap = None
        try:
            driver_heap = int(self.sc._jvm.java.lang.Runtime.getRuntime().maxMemory())
        except Exception:
            driver_heap = parse_memory(conf.get("spark.driver.memory", "1g"))
        executor_heap = parse_memory(conf.get("spark.executor.memory", "1g"))
        executors["jvm_heap_limit_bytes"] = [
            driver_heap if e == "driver" else executor_heap for e in executors["executor_id"]]
        return executors

    def _collect_listener_only(self, job_ids: list[int] | None) -> None:
        """The run from sparkmeasure's buffers alone; ``job_ids`` None: every job they saw."""
        run = self.run
        assert self.listeners is not None
        raw = self.listeners.task_metrics()
        stages = self.listeners.stage_metrics()
        if job_ids is None:
            job_ids = sorted({int(j) for j in stages["jobId"]} |
                             ({int(j) for j in raw["jobId"]} if "jobId" in raw.columns else set()))
        if job_ids and "jobId" in raw.columns:
            raw = raw[raw["jobId"].isin(job_ids)]
        run.tasks = conform_sparkmeasure_tasks(raw.reset_index(drop=True))
        if job_ids:
            stages = stages[stages["jobId"].isin(job_ids)]
        run.stages = pd.DataFrame({
            "stage_id": stages["stageId"].astype(int), "attempt": 0, "status": "COMPLETE",
            "num_tasks": stages["numTasks"].astype(int),
            "submission_ms": stages["submissionTime"].astype(float),
            "completion_ms": stages["completionTime"].astype(float)})
        run.jobs = pd.DataFrame({"job_id": job_ids})
        run.executors = pd.DataFrame([{"executor_id": "driver" if run.master.startswith("local")
                                       else "unknown", "total_cores": self._slots}])
        run.warnings.append("slots estimated from spark.default.parallelism (no REST API)")
