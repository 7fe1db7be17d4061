"""Hand-built synthetic Runs for the analysis tests (no Spark anywhere)."""
from __future__ import annotations

import pandas as pd

from jupyter_perf.model import Run, conform

T0 = 1_700_000_000_000.0   # an epoch ms; tests speak in ms relative to it


def task(launch, dur, *, stage=0, index=None, **fields):
    """One task attempt; times relative to T0. By default all run time is CPU."""
    rec = {"stage_id": stage, "stage_attempt": 0, "attempt": 0, "executor_id": "1",
           "host": "h1", "status": "SUCCESS", "launch_ms": T0 + launch,
           "finish_ms": T0 + launch + dur, "duration_ms": dur, "run_ms": dur}
    rec.update(fields)
    rec.setdefault("cpu_ms", rec["run_ms"] - sum(rec.get(k, 0) for k in
                   ("gc_ms", "fetch_wait_ms", "shuffle_write_time_ms")))
    if index is not None:
        rec["index"] = index
    return rec


def make_run(tasks, *, slots=2, start=None, end=None, kind="cell", stages=None, jobs=None,
             executors=None):
    df = pd.DataFrame(tasks)
    df["task_id"] = range(len(df))
    if "index" not in df.columns:
        df["index"] = df.groupby("stage_id").cumcount()
    df["index"] = df["index"].fillna(df.groupby("stage_id").cumcount())
    launch = df["launch_ms"] - T0
    finish = df["finish_ms"] - T0
    start = float(launch.min()) if start is None else start
    end = float(finish.max()) if end is None else end
    if executors is None:
        executors = [{"executor_id": "driver", "host": "h1", "total_cores": slots}]
    if stages is None:
        stages = [{"stage_id": int(s), "attempt": int(a), "status": "COMPLETE",
                   "num_tasks": int(n)}
                  for (s, a), n in df.groupby(["stage_id", "stage_attempt"])["index"].nunique().items()]
    return Run(kind=kind, tasks=conform("tasks", df), executors=executors, stages=stages,
               jobs=jobs or [], start_ms=T0 + start, end_ms=T0 + end)
