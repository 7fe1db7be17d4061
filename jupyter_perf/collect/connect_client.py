"""What the Spark Connect client itself sees of a window's operations.

Two things arrive with every operation's results, pushed by the server:

* progress (pyspark >= 4, ``spark.registerProgressHandler``): the operation's stages with
  their task counts, tasks done and input bytes read, and how many tasks are running;
* execution info (pyspark >= 4, ``DataFrame.executionInfo``): the physical plan's nodes with
  their SQL metrics, and the query's observed metrics (``df.observe``).

They feed the live display when the server's REST API cannot be polled, and the client-only
report when it cannot be read at all (or the server died mid-cell). pyspark hands execution
info only to the DataFrame the user holds, and a profiler of a whole cell does not hold it, so
the client's ``_execute_and_fetch`` is wrapped, for the window's thread only: the one private
pyspark API this package touches. Where it differs (another pyspark), the report says the plan
metrics are missing instead of failing.

Only operations run on the window's own thread are recorded: the client tag the window sets
(``spark.addTag``) is per thread too, so these are the operations the server tags.
"""
from __future__ import annotations

import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .progress import ProgressSnapshot, StageProgress


@dataclass
class OperationSeen:
    operation_id: str
    first_ms: float
    last_ms: float
    done: bool = False
    inflight_tasks: int = 0
    stages: dict[int, dict[str, Any]] = field(default_factory=dict)
    plan_metrics: list[dict[str, Any]] | None = None   # None: the client gave none (yet)
    observed: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"operation_id": self.operation_id, "first_ms": self.first_ms,
                "last_ms": self.last_ms, "done": self.done,
                "stage_ids": sorted(self.stages), "plan_metrics": self.plan_metrics,
                "observed": self.observed}


def _plain(value: Any) -> Any:
    """A JSON-able form of a metric value (numbers and text as they are)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def plan_metrics_rows(metrics: Any) -> list[dict[str, Any]]:
    """pyspark's PlanMetrics list -> [{name, plan_id, parent_plan_id, metrics: [...]}]."""
    rows = []
    for node in metrics or []:
        rows.append({
            "name": str(getattr(node, "name", "")),
            "plan_id": int(getattr(node, "plan_id", -1)),
            "parent_plan_id": int(getattr(node, "parent_plan_id", -1)),
            "metrics": [{"name": str(getattr(m, "name", "")), "value": _plain(getattr(m, "value", None)),
                         "metric_type": str(getattr(m, "metric_type", ""))}
                        for m in getattr(node, "metrics", []) or []],
        })
    return rows


def observed_rows(observed: Any) -> list[dict[str, Any]]:
    rows = []
    for item in observed or []:
        try:
            pairs = {str(k): _plain(v) for k, v in dict(item.pairs).items()}
        except Exception:
            continue
        if str(getattr(item, "name", "")).startswith("__"):     # pyspark's own accumulators
            continue
        rows.append({"name": str(getattr(item, "name", "")), "values": pairs})
    return rows


class _FetchTap:
    """Wraps one client's ``_execute_and_fetch`` once; hands each result to the observer
    registered for the calling thread (none: the call passes through untouched)."""

    def __init__(self, client):
        self.listeners: dict[int, "ClientObserver"] = {}
        original = client._execute_and_fetch

        def tapped(*args, **kwargs):
            result = original(*args, **kwargs)
            listener = self.listeners.get(threading.get_ident())
            if listener is not None:
                request = args[0] if args else kwargs.get("req")
                listener._on_result(request, result)
            return result

        client._execute_and_fetch = tapped


_taps: "weakref.WeakKeyDictionary[Any, _FetchTap]" = weakref.WeakKeyDictionary()
_taps_lock = threading.Lock()


def _tap_for(client) -> _FetchTap | None:
    if not callable(getattr(client, "_execute_and_fetch", None)):
        return None
    with _taps_lock:
        tap = _taps.get(client)
        if tap is None:
            tap = _taps[client] = _FetchTap(client)
        return tap


class ClientObserver:
    """Records the window thread's operations from the Connect client; a progress reader too."""

    def __init__(self, spark):
        self.spark = spark
        self.thread = threading.get_ident()
        self.operations: dict[str, OperationSeen] = {}
        self.progress_available = callable(getattr(spark, "registerProgressHandler", None))
        self.plan_metrics_available = False
        self.error = ""
        self._lock = threading.Lock()
        self._tap: _FetchTap | None = None
        self._registered = False

    def start(self) -> "ClientObserver":
        self.thread = threading.get_ident()
        if self.progress_available:
            try:
                self.spark.registerProgressHandler(self._on_progress)
                self._registered = True
            except Exception as exc:
                self.progress_available = False
                self.error = f"{type(exc).__name__}: {exc}".splitlines()[0]
        client = getattr(self.spark, "client", None) or getattr(self.spark, "_client", None)
        try:
            self._tap = _tap_for(client)
        except Exception:
            self._tap = None
        if self._tap is not None:
            self._tap.listeners[self.thread] = self
            self.plan_metrics_available = True
        return self

    def stop(self) -> None:
        if self._registered:
            self._registered = False
            try:
                self.spark.removeProgressHandler(self._on_progress)
            except Exception:
                pass
        if self._tap is not None and self._tap.listeners.get(self.thread) is self:
            del self._tap.listeners[self.thread]

    # -- callbacks (on the window's thread, inside the client's own calls: cheap) -------
    def _operation(self, operation_id: str) -> OperationSeen:
        now = time.time() * 1000.0
        op = self.operations.get(operation_id)
        if op is None:
            op = self.operations[operation_id] = OperationSeen(operation_id, now, now)
        op.last_ms = now
        return op

    def _on_progress(self, stages=None, inflight_tasks=0, operation_id=None, done=False,
                     **_: Any) -> None:
        if threading.get_ident() != self.thread:
            return
        with self._lock:
            op = self._operation(str(operation_id or ""))
            op.inflight_tasks = int(inflight_tasks or 0)
            op.done = op.done or bool(done)
            for s in stages or []:
                op.stages[int(s.stage_id)] = {
                    "num_tasks": int(s.num_tasks), "completed": int(s.num_completed_tasks),
                    "bytes_read": int(s.num_bytes_read), "done": bool(s.done)}

    def _on_result(self, request, result) -> None:
        try:
            operation_id = str(getattr(request, "operation_id", "") or "")
            metrics, observed = result[2], result[3]
            rows, seen = plan_metrics_rows(metrics), observed_rows(observed)
        except Exception:     # another pyspark's internals: say "missing", never break the query
            self.plan_metrics_available = False
            return
        with self._lock:
            op = self._operation(operation_id)
            op.done = True
            op.plan_metrics = rows
            op.observed = seen

    # -- what was seen ---------------------------------------------------------------
    def stage_rows(self) -> list[dict[str, Any]]:
        """One row per stage the client saw (attempts are not visible to it)."""
        rows = []
        with self._lock:
            for op in self.operations.values():
                for stage_id, s in op.stages.items():
                    if s["done"]:
                        status = "COMPLETE"
                    elif op.done and s["completed"] == 0:
                        status = "SKIPPED"      # never ran: its input was already there (AQE, reuse)
                    else:
                        status = "ACTIVE"       # the operation ended (or the server went) mid-stage
                    rows.append({"stage_id": stage_id, "attempt": 0, "status": status,
                                 "num_tasks": s["num_tasks"], "name": "",
                                 "client_completed_tasks": s["completed"],
                                 "client_input_bytes": s["bytes_read"],
                                 "operation_id": op.operation_id})
        return sorted(rows, key=lambda r: r["stage_id"])

    def stages_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.stage_rows())

    def summary(self) -> list[dict[str, Any]]:
        with self._lock:
            return [op.as_json() for op in self.operations.values()]

    @property
    def stage_ids(self) -> set[int]:
        with self._lock:
            return {s for op in self.operations.values() for s in op.stages}

    # -- a progress reader for ProgressPoller ------------------------------------------
    def read(self, started: float, peak_memory_bytes: float | None) -> "ClientSnapshot":
        with self._lock:
            ops = list(self.operations.values())
            stages: dict[int, StageProgress] = {}
            running = 0
            for op in ops:
                open_stages = [k for k, s in op.stages.items() if not s["done"]]
                if not op.done:
                    running += op.inflight_tasks
                for stage_id, s in op.stages.items():
                    # the client counts running tasks per operation: a stage gets them only
                    # when it is the operation's one unfinished stage
                    active = (op.inflight_tasks if not op.done and open_stages == [stage_id]
                              else None)
                    stages[stage_id] = StageProgress(
                        stage_id=stage_id, name="", num_tasks=s["num_tasks"],
                        completed=s["completed"], active=active, failed=0)
            return ClientSnapshot(
                elapsed_s=time.monotonic() - started, jobs_started=len(ops),
                jobs_done=sum(1 for op in ops if op.done),
                stages=[stages[k] for k in sorted(stages)], executors=0, cores=0,
                peak_memory_bytes=None, running_tasks=running,
                open_stage_ids={k for op in ops if not op.done
                                for k, s in op.stages.items() if not s["done"]})


@dataclass
class ClientSnapshot(ProgressSnapshot):
    """Progress as the Connect client sees it: operations (not jobs), no executors or memory."""

    running_tasks: int = 0
    open_stage_ids: set[int] = field(default_factory=set)

    @property
    def active_stages(self) -> list[StageProgress]:
        return [s for s in self.stages if s.stage_id in self.open_stage_ids]

    def header(self) -> str:
        return (f"Spark Connect: {self.jobs_done}/{self.jobs_started} operations · "
                f"{self.elapsed_s:.0f} s · {self.running_tasks} tasks running · executors and "
                "memory not visible from the client")

    def key(self) -> tuple:
        return (self.jobs_started, self.jobs_done, self.running_tasks, self.finished,
                tuple((s.stage_id, s.completed, s.active) for s in self.stages),
                int(self.elapsed_s))
