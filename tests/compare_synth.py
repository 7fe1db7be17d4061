"""Hand-built runs of one notebook cell for the comparison tests that need no Spark: saved
to the test's own run store as a kernel would save them (the store, the index and the
noise lookups are all real; only the task data is made up)."""
from __future__ import annotations

from analysis_synth import make_run, task

import jupyter_perf as jp
from jupyter_perf.store import default_store

SOURCE = "df.groupBy('k').count().collect()"


def cell_run(durations, *, slots=2, source=SOURCE, conf=None, cell_id="cell-1", label="",
             notebook="nb.ipynb"):
    """A run of a notebook cell: one stage, one job, tasks of ``durations`` ms on ``slots``."""
    tasks, per = [], [0.0] * slots
    for i, d in enumerate(durations):
        s = min(range(slots), key=lambda k: per[k])
        tasks.append(task(per[s], d, index=i, executor_id="driver", input_bytes=1000 * d,
                          input_records=10 * d))
        per[s] += d
    run = make_run(tasks, slots=slots, start=0.0, stages=[
        {"stage_id": 0, "attempt": 0, "status": "COMPLETE", "num_tasks": len(durations),
         "name": "collect at /tmp/ipykernel_1/1.py:1", "submission_ms": 0.0}],
        jobs=[{"job_id": 0, "stage_ids": [0], "status": "SUCCEEDED"}])
    run.source, run.notebook, run.label, run.master = source, notebook, label, f"local[{slots}]"
    run.spark_version = "3.5.9"
    run.extra["spark_conf"] = dict(conf or {"spark.sql.shuffle.partitions": "200"})
    if cell_id:
        run.extra["cell_id"] = cell_id
    return run


def stored(run):
    """``run`` saved with its analysis summary, as the magic saves it; returns its id."""
    default_store().save(run, jp.analyze(run).summary())
    return run.run_id
