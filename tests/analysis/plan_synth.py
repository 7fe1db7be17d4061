"""Synthetic SQL tables that follow the model's contract (``run.sql``, ``run.operators`` with
``stage_attempts``, ``run.sql_metrics``), shaped like Spark 3.5's ``/sql?details=true``:
WholeStageCodegen cluster nodes, members with their codegen id, metrics by Spark's names."""
from __future__ import annotations

import pandas as pd

UNITS = {"time": "ms", "sort time": "ms", "scan time": "ms", "shuffle write time": "ms",
         "fetch wait time": "ms", "time to collect": "ms", "time to build": "ms",
         "time to broadcast": "ms", "time to execute Python code": "ms",
         "time to run Python workers": "ms", "duration": "ms",
         "data size": "bytes", "shuffle bytes written": "bytes", "local bytes read": "bytes",
         "remote bytes read": "bytes", "size of files read": "bytes", "spill size": "bytes",
         "peak memory": "bytes"}


def node(node_id, name, parents=(), stages=(), metrics=None, description="", codegen=-1,
         cluster=-1):
    return {"node_id": node_id, "name": name, "parent_ids": list(parents),
            "stage_attempts": [[s, 0] for s in stages], "metrics": metrics or {},
            "description": description, "codegen_id": codegen, "cluster_id": cluster}


def attach(run, nodes, execution_id=0, description="collect at /tmp/ipykernel_7/11.py:3",
           details="", max_of=None):
    """Add one execution's plan to ``run`` (its tables are extended, not replaced).
    ``max_of``: {(node_id, metric): (med, max)} per-task statistics."""
    max_of = max_of or {}
    ops, mets = [], []
    for n in nodes:
        ops.append({"execution_id": execution_id, **{k: v for k, v in n.items()
                                                      if k != "metrics"}})
        for name, value in n["metrics"].items():
            med, mx = max_of.get((n["node_id"], name), (float("nan"), float("nan")))
            mets.append({"execution_id": execution_id, "node_id": n["node_id"],
                         "accumulator_id": -1, "name": name,
                         "metric_type": "timing" if UNITS.get(name) == "ms" else "sum",
                         "unit": UNITS.get(name, "rows"), "value": float(value),
                         "min": float("nan"), "med": med, "max": mx, "text": str(value)})
    sql = {"execution_id": execution_id, "root_execution_id": -1, "description": description,
           "details": details, "plan_text": "", "job_ids": [], "status": "COMPLETED",
           "error": ""}
    run.sql = _extend(run.sql, [sql])
    run.operators = _extend(run.operators, ops)
    run.sql_metrics = _extend(run.sql_metrics, mets)
    return run


def _extend(frame: pd.DataFrame, rows: list[dict]) -> pd.DataFrame:
    new = pd.DataFrame(rows)
    if frame.empty:
        return new.reindex(columns=list(frame.columns) + [c for c in new.columns
                                                           if c not in frame.columns])
    return pd.concat([frame, new], ignore_index=True)
