"""Runs for the render tests: a real Spark run (skewed join, GC pressure, a hostile job
description), hostile strings injected into a copy of it, and synthetic runs at scale."""
from __future__ import annotations

import copy
import os
import sys

import numpy as np
import pandas as pd

from jupyter_perf.model import Run

HOSTILE = "<img src=x onerror=window.__xss=1>"
BENCHMARKS = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "benchmarks")


def skewed_join_run(spark) -> Run:
    """One hot key (half the rows) in a shuffle join, then collect_list into big groups."""
    from pyspark.sql import functions as F

    import jupyter_perf as jp

    sc = spark.sparkContext

    def job():
        sc.setJobDescription(f"{HOSTILE} skewed join")
        facts = spark.range(0, 400_000, 1, 6).select(
            F.when(F.col("id") % 2 == 0, F.lit(0)).otherwise(F.col("id") % 500).alias("k"),
            F.col("id").alias("v"))
        dims = spark.range(0, 500).select(F.col("id").alias("k"), (F.col("id") * 3).alias("w"))
        joined = facts.join(dims, "k").groupBy("k").agg(F.sum("w").alias("s"),
                                                         F.collect_list("v").alias("vs"))
        out = joined.select("k", F.size("vs").alias("n")).collect()
        sc.setJobDescription(None)
        return len(out)

    return jp.measure(job, spark=spark, label=f"<b>skew</b> {HOSTILE}", store=False)


def hostile_copy(run: Run) -> Run:
    """The same run with HTML in every user string the report shows."""
    r = copy.deepcopy(run)
    r.label = f"label {HOSTILE}"
    r.source = f"df.collect()  # {HOSTILE} costs $$x^2$$ \\(y\\)"   # math must not load MathJax
    r.error = ""
    stages = r.stages.copy()
    stages["name"] = [f"{HOSTILE} stage {s}" for s in stages["stage_id"]]
    r.stages = stages
    jobs = r.jobs.copy()             # the description stays the one Spark recorded
    jobs["name"] = f"{HOSTILE} name"
    r.jobs = jobs
    tasks = r.tasks.copy()
    tasks["host"] = f"{HOSTILE}host"
    tasks["executor_id"] = tasks["executor_id"].astype(str) + f"{HOSTILE}"
    r.tasks = tasks
    ex = r.executors.copy()
    ex["host"] = f"{HOSTILE}host"
    ex["executor_id"] = ex["executor_id"].astype(str) + f"{HOSTILE}"
    r.executors = ex
    mem = r.memory.copy()
    mem["executor_id"] = mem["executor_id"].astype(str) + f"{HOSTILE}"
    r.memory = mem
    r.warnings = list(r.warnings) + [f"warning {HOSTILE}"]
    return r


def synthetic(n_tasks: int = 3000, slots: int = 16, per_stage: int = 400) -> Run:
    """analysis_scale's generator: multi-stage groups, a DAG barrier, failed attempts."""
    sys.path.insert(0, os.path.abspath(BENCHMARKS))
    try:
        from analysis_scale import build_run
    finally:
        sys.path.pop(0)
    return build_run(n_tasks, slots, per_stage=per_stage)


def with_speculative(run: Run) -> Run:
    r = copy.deepcopy(run)
    t = r.tasks.copy()
    t.loc[t.index[::97], "speculative"] = True
    t.loc[t.index[5::211], "status"] = "KILLED"
    t.loc[t.index[7::131], "memory_spilled_bytes"] = 1 << 20
    r.tasks = t
    return r


def with_skipped(run: Run, n: int = 3) -> Run:
    """``n`` SKIPPED stages (no task ran: Spark reused their shuffle output) listed by the last
    job, as the REST API reports stages of a job that reran a shuffle it already had."""
    r = copy.deepcopy(run)
    st = r.stages
    listed = [int(x) for ids in r.jobs["stage_ids"] for x in (ids or [])]
    first = max([int(st["stage_id"].max())] + listed) + 1
    extra = pd.DataFrame([{**st.iloc[0].to_dict(), "stage_id": first + k, "attempt": 0,
                           "status": "SKIPPED", "num_tasks": 8, "parent_ids": []}
                          for k in range(n)])
    r.stages = pd.concat([st, extra], ignore_index=True)
    jobs = r.jobs.copy()
    last = jobs.index[-1]
    jobs.at[last, "stage_ids"] = list(jobs.at[last, "stage_ids"]) + list(range(first, first + n))
    r.jobs = jobs
    return r


OP_NAMES = ("Filter", "Project", "HashAggregate", "Exchange", "SortMergeJoin", "Sort",
            "BroadcastHashJoin", "Window")


def with_plan(run: Run, n_ops: int = 40, hostile: bool = False, execution_id: int = 0) -> Run:
    """A SQL execution of ``n_ops`` plan nodes (the model's contract, through
    ``tests/analysis/plan_synth``) over the stages that ran: a tree whose leaves are parquet
    scans and whose deeper nodes ran in earlier stages, with ``WholeStageCodegen`` clusters and
    ``InputAdapter`` wrappers to look through. ``hostile``: HTML in the descriptions and a
    scanned path, as column names, literals and paths carry user strings."""
    import random

    from plan_synth import attach, node

    r = copy.deepcopy(run)
    ran = sorted(int(s) for s in r.tasks["stage_id"].unique())
    rng = random.Random(n_ops)
    parent = {0: None}
    for i in range(1, n_ops):
        parent[i] = rng.randrange(max(0, i - 6), i)
    children = {i: [c for c, p in parent.items() if p == i] for i in parent}
    depth = {0: 0}
    for i in range(1, n_ops):
        depth[i] = depth[parent[i]] + 1
    deepest = max(depth.values()) or 1
    evil = f" {HOSTILE}" if hostile else ""
    nodes, next_id = [], n_ops
    for i in range(n_ops):
        stage = ran[min(len(ran) - 1, (deepest - depth[i]) * len(ran) // (deepest + 1))]
        if i == 0:
            nodes.append(node(0, "AdaptiveSparkPlan"))
            continue
        leaf = not children[i]
        name = "Scan parquet" if leaf else OP_NAMES[i % len(OP_NAMES)]
        desc = (f"FileScan parquet [c{i}#1L] Batched: true, Location: InMemoryFileIndex(1 paths)"
                f"[file:/data/table_{i}{evil}.parquet], ReadSchema: struct<c{i}:bigint>" if leaf
                else f"{name} [c{i}#1L = 'v{i}'{evil}]")
        up = parent[i]
        if i % 7 == 0 and up:                         # a wrapper in between, looked through
            nodes.append(node(next_id, "InputAdapter", parents=[up], stages=[stage]))
            up, next_id = next_id, next_id + 1
        nodes.append(node(i, name, parents=[up], stages=[stage],
                          metrics={"number of output rows": 1000 * (i + 1)}, description=desc,
                          codegen=stage + 1, cluster=n_ops + 10_000 + stage))
    for stage in ran:
        nodes.append(node(n_ops + 10_000 + stage, f"WholeStageCodegen ({stage + 1})"))
    return attach(r, nodes, execution_id=execution_id)


def with_host_cpu(run: Run, cores: int = 16) -> Run:
    """Host CPU samples over the run's window: every other stage group ran with the host's
    cores all busy, the rest with 35% busy, so the floor binds some groups of a more-slots
    scenario and not others."""
    from jupyter_perf.analysis.timeline import build_timeline

    r = copy.deepcopy(run)
    tl = build_timeline(r)
    t = np.sort(np.concatenate([tl.group_start, tl.group_end,
                                [tl.group_start.min() - 100.0, tl.group_end.max() + 100.0]]))
    mid = (t[:-1] + t[1:]) / 2
    inside = np.searchsorted(tl.group_start, mid, side="right") - 1
    busy_group = (inside >= 0) & (inside % 2 == 0) & (mid < tl.group_end[np.maximum(inside, 0)])
    share = np.where(busy_group, 1.0, 0.35)
    busy = np.concatenate([[0.0], np.cumsum(share * cores * np.diff(t))])
    r.host_cpu = pd.DataFrame({"time_ms": t, "busy_core_ms": busy, "cores": cores})
    return r


__all__ = ["HOSTILE", "hostile_copy", "pd", "skewed_join_run", "synthetic", "with_host_cpu",
           "with_plan", "with_skipped", "with_speculative"]
