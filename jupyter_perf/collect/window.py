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
from ..model import Run, conform, new_run_id
from .executors_lost import lost_executor_warnings, note_memory_losses
from .fields import sorted_stage_memory
from .hostcpu import HostCpuSampler, executors_on_this_host
from .listener import ListenerUnavailable, conform_sparkmeasure_tasks, listeners_for
from .profiler import ProfilerUnavailable, WindowProfiler, is_single_jvm, merge_python
from .progress import ProgressPoller, ProgressSnapshot, StatusReader
from .pyprofiler import PythonProfiler, not_sampled
from .redact import redact
from .rest import RestError, SparkRest
from .rest_fields import conform_rest, heap_peak
from .rest_run import eviction_warnings, fetch_executors, fill_from_listener, id_ranges, read_stages
from .sampler import MemorySampler, memory_rows
from .session_state import session_state
from .sessionconf import with_session_conf
from .sql import SqlMark, collect_sql, mark_sql

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


# {application id: its SparkContext's settings, redacted}. A running SparkContext's conf does
# not change (pyspark's getConf() copies it), and reading it costs two py4j calls a setting
# (~12-15 ms) on the kernel's thread before every measured cell's query: read once per
# application. The session's own settings, which do change, are read at every cell's end
# (sessionconf.py).
_STARTUP_CONF: dict[str, dict[str, str]] = {}


def startup_conf(sc) -> dict[str, str]:
    """``sc``'s settings as it was started, redacted (a copy: the run owns it)."""
    app_id = str(sc.applicationId)
    conf = _STARTUP_CONF.get(app_id)
    if conf is None:
        conf = _STARTUP_CONF[app_id] = redact(sc.getConf().getAll())
    return dict(conf)


class ClassicWindow:
    """``start()`` before the code, ``finish()`` after it (also on failure)."""

    def __init__(self, spark, *, kind: str = "cell", label: str = "", source: str = "",
                 notebook: str = "", sample_interval: float = 0.5,
                 settle_timeout: float = SETTLE_TIMEOUT_S,
                 on_progress: Callable[[ProgressSnapshot], None] | None = None,
                 profile: bool = False):
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
        self._sql_mark = None     # where Spark's SQL execution list ended at start (sql.py)
        self._first_job: int | None = None   # the id of the first job started after start()
        self.next_job_at_end: int | None = None   # the scheduler's job count when the cell ended
        self.profile = profile    # CPU stack samples of the window (collect/profiler.py)
        self.profiler: WindowProfiler | None = None
        self.pyprofiler: PythonProfiler | None = None   # its Python workers (pyprofiler.py)
        self._python_why = ""     # why they are not sampled ("" when they are, or no profile)

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
            run.extra["spark_conf"] = startup_conf(self.sc)
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
            run.extra["ui_url"] = ui.rstrip("/")     # the report links to its pages
            self.rest = SparkRest(ui, run.app_id)
            self._mark_sql()
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
        self._first_job = self._next_job_id()
        self.sc.addJobTag(self.tag)
        self._tagged = True
        if self.on_progress is not None:
            self.poller = ProgressPoller(StatusReader(self.sc, self.tag), self.on_progress,
                                         peak_memory=self._peak_memory)
            self.poller.start()
        if self.profile:
            self._start_profiler()
        run.start_ms = time.time() * 1000.0
        return self

    def _no_profile(self, why: str) -> None:
        """The one line a run without its asked-for profile carries."""
        self.run.warnings.append(f"no CPU profile: {why}")
        self.run.extra["profile"] = {"method": "none", "note": why}

    def _new_profiler(self):
        """The window's CPU profiler, started (raises ProfilerUnavailable)."""
        return WindowProfiler(self.sc).start()

    def _start_profiler(self) -> None:
        try:
            self.profiler = self._new_profiler()
        except ProfilerUnavailable as exc:
            self._no_profile(str(exc))
        except Exception as exc:     # py4j, the JVM, the UI: never let a profile break the cell
            self._no_profile(f"the profiler could not start ({one_line(exc)})")
        self._start_python_profiler()

    def _start_python_profiler(self) -> None:
        """The Python workers' sampler (py-spy), where they run on this host; a profile
        without it says why in ``record["python"]["note"]``, never as an error."""
        if self.sc is None:          # a Spark Connect server's workers are not this kernel's
            return
        if not executors_on_this_host(self.run.master):
            self._python_why = "the Python workers run on other hosts"
            return
        try:
            self.pyprofiler = PythonProfiler(
                "driver" if is_single_jvm(self.run.master) else "").start()
        except Exception as exc:     # psutil, the process table: never break the cell
            self._python_why = f"py-spy could not start ({one_line(exc)})"

    def _stop_python_profiler(self) -> dict[str, Any] | None:
        pyprofiler, self.pyprofiler = self.pyprofiler, None
        if pyprofiler is not None:
            try:
                return pyprofiler.stop()
            except Exception as exc:
                return not_sampled(f"py-spy failed ({one_line(exc)})")
        return not_sampled(self._python_why) if self._python_why else None

    def _record_settings(self) -> None:
        """The session's settings and the watched defaults, as the cell left them."""
        run = self.run
        run.extra["spark_conf"], run.extra["spark_defaults"] = with_session_conf(
            run.extra.get("spark_conf"), self.spark)

    def _stop_profiler(self) -> None:
        profiler, self.profiler = self.profiler, None
        python = self._stop_python_profiler()
        if profiler is not None:
            try:
                self.run.extra["profile"] = record = profiler.stop()
                if record.get("note"):          # some executors could not be sampled
                    self.run.warnings.append(f"CPU profile partial: {record['note']}")
            except Exception as exc:
                self._no_profile(str(exc) if isinstance(exc, ProfilerUnavailable) else
                                 f"async-profiler failed ({one_line(exc)})")
        record = self.run.extra.get("profile")
        if python is not None and isinstance(record, dict):
            self.run.extra["profile"] = merge_python(record, python)
        self._python_why = ""

    def _mark_sql(self) -> None:
        """Note where Spark's SQL execution list ends, so the finish reads only what comes
        after (a long session's list is not read again every cell)."""
        assert self.rest is not None
        try:
            self._sql_mark = self._sql_mark_from_store()
            return
        except Exception:  # noqa: BLE001 - py4j or an unexpected Spark: ask the REST API
            pass
        try:
            self._sql_mark = mark_sql(self.rest)
        except RestError:
            self._sql_mark = None    # the finish reads the whole list, as before

    def _sql_mark_from_store(self) -> SqlMark:
        """The mark from the store Spark's REST API lists (the session's SQL status store, in
        the driver's JVM): three small py4j answers (~0.4 ms) instead of an HTTP request to the
        UI (~8-20 ms) on the kernel's thread before the cell's code runs. The REST list is
        this store's executions in id order, so its length and last id are the same."""
        store = self.spark._jsparkSession.sharedState().statusStore()
        count = int(store.executionsCount())
        last = int(store.executionsList(count - 1, 1).head().executionId()) if count else -1
        return SqlMark(count, last)

    def _peak_memory(self) -> float | None:
        """The highest executor JVM heap peak reached in this window, for the live display:
        Spark's peaks never go down, so an executor's peak counts only once it rose above
        what its first sample in the window showed (a peak an earlier cell set is not this
        cell's). None until one rose."""
        rows = self.sampler.rows if self.sampler is not None else []
        # only the samples added since the last poll are read (the sampler appends in time
        # order): a long cell's display costs the same at its end as at its start
        seen = getattr(self, "_heap_seen", 0)
        first: dict = self.__dict__.setdefault("_heap_first", {})
        last: dict = self.__dict__.setdefault("_heap_last", {})
        new = rows[seen:]
        self._heap_seen = seen + len(new)
        for executor, heap in filter(None, map(heap_peak, new)):
            first.setdefault(executor, heap)
            last[executor] = heap
        rose = [heap for executor, heap in last.items() if heap > first[executor]]
        return float(max(rose)) if rose else None

    def stop_background(self) -> None:
        """Stop the sampler and poller threads without collecting (start() failed)."""
        self._stop_profiler()
        if self.poller is not None:
            self.poller.halt(timeout=10)
        if self.sampler is not None:
            self.sampler.stop()
        if self.host_cpu is not None:
            self.host_cpu.stop()
        self._untag()

    def end_cell(self) -> None:
        """What must be read on the cell's own thread the moment the cell ends, before it runs
        anything else (the finish may run later, on another thread, while the next cell
        runs): the job tag removed, the scheduler's job count (did the cell start a job?),
        the CPU profile stopped (the cell's samples, not the next cell's)."""
        self._untag()
        self.next_job_at_end = self._next_job_id()
        self._stop_profiler()

    def drain_quietly(self) -> None:
        """Wait for Spark's listener bus to deliver what the cell's jobs posted (bounded by
        the settle timeout); the finish reports a bus that did not drain."""
        try:
            self.sc._jsc.sc().listenerBus().waitUntilEmpty(int(self.settle_timeout * 1000))
        except Exception:
            pass

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
        self._stop_profiler()         # the window's samples, not the collection's
        # the session's SQL settings as the cell left them (compare's config diff, issue J)
        self._safely("read the session's settings", self._record_settings)
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
        elif run.jobs.empty and not self.stopped and self._first_job is not None:
            # a failed or interrupted cell without jobs: did the scheduler start any (then
            # they could not be collected) or did the cell fail before its first?
            end = self.next_job_at_end   # set at the seal (a later cell may have run jobs)
            if end is None:
                end = self._safely("read the scheduler's job count", self._next_job_id)
            if end is not None:
                run.extra["jobs_started"] = max(0, int(end) - int(self._first_job))
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
        found = [j for j in jobs if j is not None]
        gone = [j for j, job in zip(job_ids, jobs) if job is None]
        run.jobs = conform_rest("jobs", found)
        stage_ids = {int(s) for j in found for s in j.get("stageIds", [])}
        heard = self._listener_stages()
        gone = sorted(set(gone) | set(self._evicted_jobs(heard, job_ids)))
        if gone:
            stage_ids |= self._fill_jobs(gone, heard)
        read = read_stages(rest, stage_ids)
        filled: tuple[dict, dict] = ({}, {})
        if (read.evicted or read.partial) and heard is not None and self.listeners is not None:
            listeners = self.listeners
            # sparkmeasure's TaskVals.index is the task id (TaskInfo.taskId)
            tasks = self._safely("read sparkmeasure's task metrics",
                                 lambda: conform_sparkmeasure_tasks(
                                     listeners.task_metrics().rename(columns={"index": "task_id"})))
            if tasks is not None:
                filled = fill_from_listener(read, heard, tasks)
        run.stages, run.tasks = read.stages, read.tasks
        run.stage_memory = sorted_stage_memory(read.memory, run.tasks)    # per stage attempt, executor
        run.warnings.extend(eviction_warnings(read, *filled))
        window_jobs = sorted(set(job_ids) | set(gone))
        # SQL plans of the window's jobs (rest-sql's room), from where the list ended at start
        collect_sql(run, rest, window_jobs, since=self._sql_mark)
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
        # executors lost mid-window (a worker or its JVM died): named, with what it cost
        run.warnings.extend(lost_executor_warnings(run.executors, run.tasks, run.start_ms,
                                                   run.end_ms))
        note_memory_losses(run)   # the verdict leads with them (analysis/memory.lost_to_memory)

    def _settled_job(self, job_id: int) -> dict[str, Any] | None:
        """The job once Spark's status store marks it finished and none of its tasks still
        runs (bounded wait): a job cancelled by Ctrl-C or failed by one task is marked FAILED
        while its other tasks still run; read then, they stayed RUNNING with no metrics where
        Spark's REST API later counts them KILLED with their run time (found by the soak)."""
        assert self.rest is not None
        deadline = time.monotonic() + self.settle_timeout
        while True:
            try:
                job = self.rest.job(job_id)
            except KeyError:       # evicted (spark.ui.retainedJobs): _fill_jobs says so
                return None
            if job.get("status") != "RUNNING" and not job.get("numActiveTasks"):
                return job
            if time.monotonic() > deadline:
                self.run.warnings.append(
                    f"job {job_id} still running after {self.settle_timeout:.0f} s; "
                    "its numbers are partial")
                return job
            time.sleep(0.1)

    def _listener_stages(self) -> pd.DataFrame | None:
        """sparkmeasure's stage rows since the window began (None: no listener)."""
        if self.listeners is None:
            return None
        return self._safely("read sparkmeasure's stage metrics", self.listeners.stage_metrics)

    def _next_job_id(self) -> int | None:
        """The id Spark's scheduler gives its next job (None where py4j cannot say)."""
        try:
            return int(self.sc._jsc.sc().dagScheduler().numTotalJobs())
        except Exception:
            return None

    def _evicted_jobs(self, heard: pd.DataFrame | None, job_ids: list[int]) -> list[int]:
        """Jobs started while the window ran that Spark's UI no longer has.

        The status tracker's job-tag lookup reads Spark's UI store, so a job evicted by
        spark.ui.retainedJobs is missing from ``job_ids`` as well. The jobs started in the
        window are those with ids from the scheduler's job count at start to its count now,
        and those sparkmeasure's listener saw; one that the UI still has but ``job_ids``
        lacks is another thread's (untagged). One request per such job: the window's
        activity, not the session's age."""
        assert self.rest is not None
        started = set()
        end = self._next_job_id()
        if self._first_job is not None and end is not None:
            started |= set(range(self._first_job, end))
        if heard is not None:
            started |= {int(j) for j in heard["jobId"].dropna()}
        out = []
        for job_id in sorted(started - set(job_ids)):
            try:
                self.rest.job(job_id)
            except KeyError:
                out.append(job_id)
        return out

    def _fill_jobs(self, gone: list[int], heard: pd.DataFrame | None) -> set[int]:
        """Job rows for the window's jobs Spark's UI evicted, from sparkmeasure's stage rows
        (the stages that ran: skipped ones are not heard of), and the warning. Returns the
        stage ids to read."""
        run = self.run
        mine = (heard[heard["jobId"].isin(gone)] if heard is not None
                else pd.DataFrame(columns=["jobId"]))
        rows = []
        for job_id, stages in mine.groupby("jobId", sort=True):
            submitted = pd.to_numeric(stages["submissionTime"], errors="coerce")
            completed = pd.to_numeric(stages["completionTime"], errors="coerce")
            rows.append({"job_id": int(job_id), "status": "UNKNOWN",
                         "stage_ids": sorted({int(s) for s in stages["stageId"]}),
                         "submission_ms": float(submitted[submitted > 0].min()),
                         "completion_ms": float(completed[completed > 0].max()),
                         "num_tasks": int(stages["numTasks"].sum())})
        filled = [r["job_id"] for r in rows]
        missing = [j for j in gone if j not in filled]
        one = len(gone) == 1
        what = (f"job{'' if one else 's'} {id_ranges(gone)}, started while the window ran, "
                f"{'is' if one else 'are'} no longer in Spark's UI store (evicted by "
                f"spark.ui.retainedJobs; raise it to keep {'it' if one else 'them'})")
        if rows:
            run.jobs = pd.concat([run.jobs, conform("jobs", rows)], ignore_index=True) \
                .sort_values("job_id", kind="stable").reset_index(drop=True)
            run.warnings.append(f"{what}: the rows and stages of {len(rows)} come from "
                                "sparkmeasure's listener (the stages that ran; status UNKNOWN; "
                                "it keeps no job tags, so another thread's jobs of the same "
                                "time would be among them)"
                                + (f"; job(s) {id_ranges(missing)} are missing"
                                   if missing else ""))
        else:
            run.warnings.append(f"{what}; missing from the report")
        return {int(s) for r in rows for s in r["stage_ids"]}

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
