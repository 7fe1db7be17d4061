"""Measure one window of driver code on a Spark Connect session as a ``Run``.

A ``window.ClassicWindow`` whose session-facing steps are the client's, so a Connect run is collected
by the same ``finish()`` as a classic one (jobs, stage attempts, every task attempt, executors,
memory from the REST API through ``rest_run``):

* tagging: a client tag (``spark.addTag``), which the server writes on every job as
  ``…_Session_<session id>_Tag_<tag>``; only those jobs are read, whatever other sessions
  (Connect or classic) run on the same server at the same time;
* the jobs: no py4j status tracker and no listener bus to drain, so the tagged jobs are read
  from the REST API once they have settled there;
* where the REST API is: ``connect.find_ui`` (explicit URL, the session's, the environment,
  or the in-process server's own UI);
* without a reachable REST API (none known, unreachable, or the server died mid-cell) the run
  is what the client saw (``connect_client``): a partial report that says what is missing;
* on interrupt, the window's operations are interrupted by tag (``spark.interruptTag``).
"""
from __future__ import annotations

import ipaddress
import socket
import threading
import time
from typing import Any

import pandas as pd

from ..errors import one_line
from .connect import endpoint, find_ui, in_process_ui, server_conf, server_tag_matches, session_id
from .connect_client import ClientObserver
from .connect_progress import RestStatusReader
from .hostcpu import HostCpuSampler, executors_on_this_host
from .profiler import ProfilerUnavailable, ServerDumpProfiler
from .progress import ProgressPoller
from .redact import redact
from .rest import RestError, SparkRest
from .sampler import MemorySampler
from .window import ClassicWindow, parse_memory

INTERRUPT_WAIT_S = 10.0
SETTLE_POLL_S = 0.2


def _on_this_host(host_port: str) -> bool:
    host = host_port.rsplit(":", 1)[0].strip("[]") if host_port else ""
    if not host:
        return False
    if host in ("localhost", socket.gethostname(), socket.getfqdn()):
        return True
    try:
        return ipaddress.ip_address(socket.gethostbyname(host)).is_loopback
    except (OSError, ValueError):
        return False


class ConnectWindow(ClassicWindow):
    """``start()`` before the code, ``finish()`` after it (also on failure)."""

    def __init__(self, spark, *, ui_url: str | None = None, **kwargs: Any):
        super().__init__(spark, **kwargs)
        self.session_id = session_id(spark)
        self.endpoint = endpoint(spark)
        self.ui_url = ui_url
        self.conf: dict[str, str] = {}
        self.ui_problem = ""
        self.rest_lost = ""
        self.client = ClientObserver(spark)
        self._status_reader: RestStatusReader | None = None

    def _context(self, spark):
        return None                       # a Connect client has no SparkContext

    @property
    def stopped(self) -> bool:
        """No SparkContext to stop here: a server that went away shows as REST errors."""
        return False

    # -- begin --------------------------------------------------------------
    def start(self) -> "ConnectWindow":
        run = self.run
        self._check_reachable()
        self.conf = server_conf(self.spark)
        run.app_id = self.conf.get("spark.app.id", "")
        run.app_name = self.conf.get("spark.app.name", "")
        run.master = self.conf.get("spark.master", "")
        run.spark_version = str(self.spark.version)
        run.extra["spark_conf"] = redact(self.conf)
        choice = find_ui(self.spark, run.app_id, self.ui_url)
        run.extra["connect"] = {"server": self.endpoint, "session_id": self.session_id,
                                "tag": self.tag, "ui_url": choice.url, "ui_source": choice.source}
        if choice.url:
            self.rest = SparkRest(choice.url, run.app_id)
            self._mark_sql()
            self.sampler = MemorySampler(self.rest, self.sample_interval)
            self.sampler.start()
        else:
            self.ui_problem = choice.problem
        in_process = bool(run.app_id and in_process_ui(run.app_id))
        if executors_on_this_host(run.master) and (in_process or _on_this_host(self.endpoint)):
            sampler = HostCpuSampler()
            if sampler.available:
                sampler.sample()
                sampler.start()
                self.host_cpu = sampler
        self.client.start()
        self.spark.addTag(self.tag)
        self._tagged = True
        reader = None
        if self.on_progress is not None and self.rest is not None:
            reader = self._status_reader = RestStatusReader(self.rest, self.tag, self.session_id)
        elif self.on_progress is not None and self.client.progress_available:
            reader = self.client          # the REST API cannot be polled: the client's view
        if reader is not None:
            self.poller = ProgressPoller(reader, self.on_progress, peak_memory=self._peak_memory)
            self.poller.start()
        if self.profile:
            self._start_profiler()
        run.start_ms = time.time() * 1000.0
        return self

    def _new_profiler(self):
        """The server's JVMs, through its UI's thread dumps (no SparkContext here)."""
        if self.rest is None:
            raise ProfilerUnavailable("no Spark UI of the server to read its thread dumps from"
                                      + (f" ({self.ui_problem})" if self.ui_problem else ""))
        return ServerDumpProfiler(self.rest.base_url, self.run.app_id).start()

    def _check_reachable(self) -> None:
        """Fail in seconds, not after the client's ~10 minutes of retries, when the server is
        not there: the caller then runs the cell unmeasured and says why."""
        host, _, port = self.endpoint.rpartition(":")
        if not host or not port.isdigit():
            return
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
        except OSError as exc:
            raise ConnectionError(f"no Spark Connect server answers at {self.endpoint} "
                                  f"({exc.strerror or type(exc).__name__})") from exc

    def _untag(self) -> None:
        if self._tagged:
            self._tagged = False
            # client-side state only (no server call), per thread like the tag itself
            self._safely("remove the client tag", lambda: self.spark.removeTag(self.tag))

    def stop_background(self) -> None:
        self.client.stop()
        super().stop_background()
        if self._status_reader is not None:
            self._status_reader.close()

    def cancel(self) -> None:
        """Interrupt this window's operations on the server (only them: by the window's tag).

        Bounded: a server that is gone must not hang the kernel in the client's retries."""
        outcome: list[Any] = []

        def interrupt() -> None:
            try:
                outcome.append(self.spark.interruptTag(self.tag))
            except Exception as exc:
                outcome.append(exc)

        thread = threading.Thread(target=interrupt, name="jupyter-perf-interrupt", daemon=True)
        thread.start()
        thread.join(INTERRUPT_WAIT_S)
        if not outcome:
            self.run.warnings.append(f"the Connect server did not confirm the interrupt within "
                                     f"{INTERRUPT_WAIT_S:.0f} s; its operations may still run")
        elif isinstance(outcome[0], Exception):
            self.run.warnings.append(f"could not interrupt the cell's operations: "
                                     f"{one_line(outcome[0])}")
        else:
            self.run.extra.setdefault("connect", {})["interrupted_operations"] = \
                [str(o) for o in outcome[0] or []]

    # -- end ----------------------------------------------------------------
    def finish(self, status: str = "ok", error: str = ""):
        self.client.stop()
        run = super().finish(status, error)
        if self._status_reader is not None:
            self._status_reader.close()
        if self.rest is None:
            self._client_only(self.ui_problem)
        elif self.rest_lost:
            self._client_only(f"the server's REST API stopped answering ({self.rest_lost}) — "
                              "was the Spark Connect server stopped?")
        else:
            run.collector = "connect+rest"
        run.extra.setdefault("connect", {})["operations"] = self.client.summary()
        client_only = self.rest is None or bool(self.rest_lost)
        if run.status == "no-jobs" and (not run.stages.empty
                                        or (client_only and self.client.operations)):
            run.status = status           # Spark work ran; the REST API could not list it
        return run

    def _drain_listener_bus(self) -> None:
        """Nothing to drain from here: ``_job_ids`` waits until the REST API has settled."""

    def _job_ids(self) -> list[int]:
        if self.rest is None:
            return []
        try:
            return [int(j["jobId"]) for j in self._settled_jobs()]
        except RestError as exc:
            self.rest_lost = str(exc)
            return []

    def _collect_rest(self, job_ids: list[int]) -> None:
        if self.rest_lost:
            return
        try:
            super()._collect_rest(job_ids)
        except RestError as exc:          # said once, by _client_only
            self.rest_lost = str(exc)

    def _tagged_jobs(self) -> list[dict[str, Any]]:
        assert self.rest is not None
        return [j for j in self.rest.jobs()
                if server_tag_matches(j.get("jobTags"), self.tag, self.session_id)]

    def _settled_jobs(self) -> list[dict[str, Any]]:
        """The window's jobs once Spark's status store has them all, finished (bounded wait).

        The REST store is filled by a listener on the server, behind the client: the job list
        counts as settled when no job runs, every stage the client saw belongs to a listed
        job, and two polls in a row list the same jobs."""
        deadline = time.monotonic() + self.settle_timeout
        previous: list[int] | None = None
        while True:
            jobs = self._tagged_jobs()
            ids = sorted(int(j["jobId"]) for j in jobs)
            listed = {int(s) for j in jobs for s in j.get("stageIds", [])}
            running = [int(j["jobId"]) for j in jobs if j.get("status") == "RUNNING"]
            unseen = self.client.stage_ids - listed
            if not running and not unseen and ids == previous:
                return jobs
            if time.monotonic() > deadline:
                if unseen:
                    self.run.warnings.append(
                        f"stage(s) {', '.join(map(str, sorted(unseen)))} seen by the client are "
                        "not in the server's REST API; they are missing from the report")
                return jobs            # jobs still running: _settled_job says so, per job
            previous = ids if not running and not unseen else None
            time.sleep(SETTLE_POLL_S)

    def _with_heap_limits(self, executors: pd.DataFrame) -> pd.DataFrame:
        """The heap limits from the server's settings (no JVM to ask from a client)."""
        driver = parse_memory(self.conf.get("spark.driver.memory", "1g"))
        worker = parse_memory(self.conf.get("spark.executor.memory", "1g"))
        executors["jvm_heap_limit_bytes"] = [driver if e == "driver" else worker
                                             for e in executors["executor_id"]]
        return executors

    def _client_only(self, reason: str) -> None:
        """What the Connect client saw, and exactly what that leaves out."""
        run = self.run
        seen = self.client.stages_frame()
        if run.tasks.empty and not seen.empty:
            run.stages = seen
        ops = self.client.summary()
        shown = [f"{len(ops)} operation(s) with their client-side times"]
        if self.client.plan_metrics_available:
            shown.append(f"plan and observed metrics of {sum(1 for o in ops if o['plan_metrics'])}")
        if not self.client.progress_available:
            shown.append("no stage progress (this pyspark client has no progress handlers)")
        elif seen.empty:
            shown.append("no stage progress (the server sends it every "
                         "spark.connect.progress.reportInterval, 2 s by default; shorter "
                         "operations send none)")
        else:
            shown.append(f"{len(seen)} stage(s) with task counts and input bytes (client progress)")
        shown = "; ".join(shown)
        if run.tasks.empty:
            run.collector = "connect-client"
            run.extra["tasks_unread"] = True     # the analysis: not "no task ran"
        run.warnings.append(
            f"client-only report: {reason}. Shown: {shown}. Missing: task attempts (so no time "
            "breakdown, stragglers or what-if), jobs, stage attempts, executors and slots, "
            "memory")
