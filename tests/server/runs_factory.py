"""Runs for the handler tests, built from records shaped exactly as Spark's REST API returns them."""
from __future__ import annotations

import pandas as pd

from jupyter_perf.collect.rest_fields import conform_rest
from jupyter_perf.model import Run
from jupyter_perf.store import RunStore


def rest_task(task_id: int, stage_id: int, launch: str, duration: int, run_ms: int,
              cpu_ns: int, gc: int = 0, fetch_wait: int = 0, write_ns: int = 0,
              input_bytes: int = 0, shuffle_read: int = 0, shuffle_write: int = 0,
              status: str = "SUCCESS") -> dict:
    """One ``taskList`` item shaped exactly as Spark's REST API returns it (ns where Spark uses ns)."""
    return {
        "taskId": task_id, "index": task_id % 4, "attempt": 0, "launchTime": launch,
        "duration": duration, "executorId": "driver", "host": "localhost", "status": status,
        "speculative": False, "schedulerDelay": 3, "gettingResultTime": 0,
        "taskLocality": "PROCESS_LOCAL",
        "taskMetrics": {
            "executorDeserializeTime": 5, "executorDeserializeCpuTime": 4_000_000,
            "executorRunTime": run_ms, "executorCpuTime": cpu_ns, "jvmGcTime": gc,
            "resultSerializationTime": 1, "peakExecutionMemory": 1 << 20,
            "inputMetrics": {"bytesRead": input_bytes, "recordsRead": input_bytes // 8},
            "outputMetrics": {"bytesWritten": 0, "recordsWritten": 0},
            "shuffleReadMetrics": {"fetchWaitTime": fetch_wait, "remoteBytesRead": 0,
                                   "localBytesRead": shuffle_read, "recordsRead": 4},
            "shuffleWriteMetrics": {"bytesWritten": shuffle_write, "writeTime": write_ns,
                                    "recordsWritten": 4 if shuffle_write else 0},
        },
    }


def make_run(label: str = "", source: str = "df.groupBy('k').count().collect()\n",
             notebook: str = "", status: str = "ok") -> Run:
    """A two-stage groupBy as Spark's REST API describes it (map stage, then reduce stage)."""
    t0 = "2026-11-22T02:01:04.{:03d}GMT"
    map_tasks = conform_rest("tasks",
        [rest_task(i, 0, t0.format(100 + i), 400 + 90 * i, 380 + 90 * i, 300_000_000 + i * 1e7,
                   gc=10 * i, write_ns=2_000_000, input_bytes=1 << 20, shuffle_write=4096)
         for i in range(4)], stage_id=0, stage_attempt=0)
    reduce_tasks = conform_rest("tasks",
        [rest_task(10 + i, 1, t0.format(700 + i), 120, 100, 60_000_000, fetch_wait=15,
                   shuffle_read=4096) for i in range(4)], stage_id=1, stage_attempt=0)
    tasks = pd.concat([map_tasks, reduce_tasks], ignore_index=True)
    stages = pd.DataFrame([
        {"stage_id": 0, "attempt": 0, "name": "groupBy at <cell>:1", "status": "COMPLETE",
         "num_tasks": 4},
        {"stage_id": 1, "attempt": 0, "name": "collect at <cell>:1", "status": "COMPLETE",
         "num_tasks": 4}])
    jobs = pd.DataFrame([{"job_id": 0, "name": "collect", "status": "SUCCEEDED"}])
    start = float(map_tasks["launch_ms"].min()) - 50
    end = float(reduce_tasks["finish_ms"].max()) + 30
    return Run(label=label, source=source, notebook=notebook, status=status, start_ms=start,
               end_ms=end, app_id="local-1763776864000", spark_version="3.5.9",
               master="local[2]", collector="rest", tasks=tasks, stages=stages, jobs=jobs,
               executors=pd.DataFrame([{"executor_id": "driver", "host": "localhost",
                                        "total_cores": 2}]))


def save_run(store: RunStore, run: Run) -> Run:
    from jupyter_perf.service.saving import analysis_or_none

    _, summary = analysis_or_none(run)
    store.save(run, summary=summary)
    return run
