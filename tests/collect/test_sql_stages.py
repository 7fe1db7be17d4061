"""The operator -> stage rule (collect/sql_stages.py) on the one shape real Spark produced only
sometimes: TPC-H Q9 on local-cluster, AQE on (tests/collect/test_sql.py's local-cluster test
failed on it once in four runs). Its ORDER BY's range partitioning runs a sampling stage over
the final aggregate's pipeline whose counts (173 rows read, nothing written, no input) equal
those of the result stage after the sort's exchange; whether the run came out right depended
on which task's metrics Spark's max annotations happened to name. The tables below are that
failing run's, reduced to the nodes and counts the rule reads (real Spark cannot be made to
pick those annotations on demand)."""
from __future__ import annotations

import pandas as pd
import pytest

from jupyter_perf.collect import sql_stages

# graph: 0 Sort <- 1 AQEShuffleRead <- 2 Exchange (range) <- 3 HashAggregate (final)
#        <- 4 AQEShuffleRead <- 5 Exchange (hash) <- 6 HashAggregate (partial) <- 7 Scan parquet
NAMES = ["Sort", "AQEShuffleRead", "Exchange", "HashAggregate", "AQEShuffleRead", "Exchange",
         "HashAggregate", "Scan parquet"]
# stage: (shuffle records read, written, input records) of its one task, as the run had them;
# 54 is the sampling stage of the range partitioning, 56 its map stage, 59 the result stage
STAGES = {52: (0, 173, 60175), 54: (173, 0, 0), 56: (173, 173, 0), 59: (173, 0, 0)}


def assigned(names: list[str], stage_counts: dict, metrics: list[dict], execution_id: int):
    """Run the rule on a chain of plan nodes (node i's parent is i - 1) and one-task stages
    ({stage: (shuffle records read, written, input records)}): {node: stage ids}, warnings."""
    operators = [{"execution_id": execution_id, "node_id": i, "name": n, "cluster_id": -1,
                  "parent_ids": [i - 1] if i else [], "stage_attempts": []}
                 for i, n in enumerate(names)]
    stages = pd.DataFrame({"stage_id": list(stage_counts), "attempt": 0, "status": "COMPLETE"})
    tasks = pd.DataFrame([{"stage_id": s, "stage_attempt": 0, "status": "SUCCESS",
                           "shuffle_read_records": r, "shuffle_write_records": w,
                           "input_records": i} for s, (r, w, i) in stage_counts.items()])
    warnings: list[str] = []
    sql_stages.assign(operators, metrics, list(stage_counts), stages, tasks, warnings)
    return {o["node_id"]: [s for s, _ in o["stage_attempts"]] for o in operators}, warnings


def test_a_sampling_stage_goes_to_the_pipeline_it_samples_not_a_later_one():
    metric = {"execution_id": 11, "max_stage_id": -1}
    metrics = [metric | {"node_id": 5, "name": "shuffle records written", "value": 173},
               metric | {"node_id": 5, "name": "records read", "value": 173},
               metric | {"node_id": 2, "name": "shuffle records written", "value": 173},
               metric | {"node_id": 2, "name": "records read", "value": 173},
               metric | {"node_id": 7, "name": "number of output rows", "value": 60175},
               # the annotations of that run: the partial aggregate's and the final one's
               # largest tasks were in 52 and 56; nothing named 54 or 59
               metric | {"node_id": 6, "name": "peak memory", "value": 1, "max_stage_id": 52},
               metric | {"node_id": 3, "name": "peak memory", "value": 1, "max_stage_id": 56}]
    got, warnings = assigned(NAMES, STAGES, metrics, 11)
    assert got == {0: [59], 1: [59], 2: [54, 56, 59], 3: [54, 56], 4: [54, 56],
                   5: [52, 54, 56], 6: [52], 7: [52]}
    assert warnings == []


# TPC-H Q9 on local[2], AQE on (tests/analysis/test_tpch_operators.py failed on it about one
# run in three, Spark 3.5 and 4.x): the same ORDER BY over a final aggregate, below it the
# last join's pipeline (its partial aggregate). The final aggregate's pipeline runs in two
# 1-task stages, the range partitioning's sampling stage (173 read, nothing written) and its
# map stage (173 read, 173 written), so its exchange shows 346 records read. Spark's max
# annotations named only one of the two; the other fitted both the final aggregate's pipeline
# and the join's (3248 read, 173 written: 173 is "part" of 3248), though the join's one stage
# had read all of its 3248 already. Reduced from four such runs' REST records: the join's
# inputs cut down to one scan; stage ids of one of them.
# graph: 0 Sort <- 1 AQEShuffleRead <- 2 Exchange (range) <- 3 HashAggregate (final)
#        <- 4 AQEShuffleRead <- 5 Exchange (hash) <- 6 HashAggregate (partial)
#        <- 7 SortMergeJoin <- 8 Sort <- 9 AQEShuffleRead <- 10 Exchange <- 11 Scan parquet
Q9_NAMES = ["Sort", "AQEShuffleRead", "Exchange", "HashAggregate", "AQEShuffleRead", "Exchange",
            "HashAggregate", "SortMergeJoin", "Sort", "AQEShuffleRead", "Exchange",
            "Scan parquet"]
# 193 the scan, 204 the join, 216 the sampling stage, 228 the range's map stage, 241 result
Q9_STAGES = {193: (0, 3248, 3248), 204: (3248, 173, 0), 216: (173, 0, 0), 228: (173, 173, 0),
             241: (173, 0, 0)}


@pytest.mark.parametrize("annotated", [228, 216])
def test_a_stage_goes_to_the_pipeline_whose_reads_are_not_all_accounted_for(annotated):
    metric = {"execution_id": 3, "max_stage_id": -1}
    metrics = [metric | {"node_id": 10, "name": "shuffle records written", "value": 3248},
               metric | {"node_id": 10, "name": "records read", "value": 3248},
               metric | {"node_id": 11, "name": "number of output rows", "value": 3248},
               metric | {"node_id": 5, "name": "shuffle records written", "value": 173},
               metric | {"node_id": 5, "name": "records read", "value": 346},
               metric | {"node_id": 2, "name": "shuffle records written", "value": 173},
               metric | {"node_id": 2, "name": "records read", "value": 173},
               # the one annotation of the final aggregate's pipeline; none elsewhere
               metric | {"node_id": 3, "name": "peak memory", "value": 1,
                         "max_stage_id": annotated},
               metric | {"node_id": 5, "name": "local bytes read", "value": 1,
                         "max_stage_id": annotated}]
    got, warnings = assigned(Q9_NAMES, Q9_STAGES, metrics, 3)
    assert got == {0: [241], 1: [241], 2: [216, 228, 241], 3: [216, 228], 4: [216, 228],
                   5: [204, 216, 228], 6: [204], 7: [204], 8: [204], 9: [204],
                   10: [193, 204], 11: [193]}
    assert warnings == []
