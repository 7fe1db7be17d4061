"""Which stage attempts each SQL plan node ran in, from the model's own tables only.

Works on ``run.operators`` / ``run.sql_metrics`` / ``run.sql`` rows plus the run's jobs,
stages and tasks, so every source (REST, History Server, event log) that fills those tables
equally gets equal ``stage_attempts``. The rule (docs/operators.md § Operators and stages):

1. **Pipelines.** Cutting the plan graph at exchanges splits it into pipelines; a pipeline
   runs inside one stage (per job that computes it). A shuffle ``Exchange`` belongs to two:
   its writing side (the pipeline below it) and its reading side (the pipeline above).
   ``BroadcastExchange``, ``SubqueryBroadcast`` and ``Subquery`` are driver-side work (their
   child runs as its own job): they get no stage. A WholeStageCodegen cluster node shares
   its inner nodes' pipeline.
2. **Stage annotations.** A timing or size metric shown with ``(stage S.A: task T)`` names
   the stage attempt of its largest task: the node's pipeline ran there (an Exchange's
   shuffle-read metrics name the reading pipeline's stage, its other metrics the writing
   one's).
3. **Counters.** A stage of the execution's jobs that no annotation claimed goes to the one
   pipeline with equal shuffle records read (the sum of its exchanges' "records read"),
   written ("shuffle records written") and input records (its file scans' "number of
   output rows") — the stage's successful tasks' totals — or, failing that, to the one
   pipeline with equal reads and input that writes a shuffle while the stage writes
   nothing (a sampling job of a range partitioning). A pipeline that reads a shuffle runs
   only in stages submitted after one of its writing pipeline's stages (stage ids grow in
   submission order; a reading stage is created after the map stage it reads): without that
   bound, a range partitioning's sampling stage whose counts happen to equal the next
   pipeline's (same rows read, nothing written, no input) fitted both. When a stage is part
   of several pipelines, only those whose reads not yet accounted for by the stages already
   placed on them cover the stage's are kept (TPC-H Q9's sampling or range map stage, 173
   read, was also "part" of the last join's pipeline, whose one stage had read all 3248).
   One pipeline and one stage left unmatched go together.
4. Every attempt of a matched stage that ran tasks is listed (retries included); SKIPPED
   stages are not. What stays ambiguous gets ``[]`` and a warning.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import pandas as pd

DRIVER_SIDE = ("BroadcastExchange", "SubqueryBroadcast", "Subquery")
READ_SIDE_METRICS = frozenset({
    "records read", "local bytes read", "remote bytes read", "remote bytes read to disk",
    "fetch wait time", "remote reqs duration", "local blocks read", "remote blocks read",
    "corrupt merged block chunks", "merged fetch fallback count", "remote merged blocks fetched",
    "local merged blocks fetched", "remote merged chunks fetched", "local merged chunks fetched",
    "remote merged bytes read", "local merged bytes read", "remote merged reqs duration"})


def _kind(name: str) -> str:
    if name.startswith(DRIVER_SIDE):
        return "driver"
    if name == "Exchange" or name.startswith(("Exchange ", "ShuffleExchange")):
        return "exchange"
    return "node"


class _Sets:
    def __init__(self, items: Iterable[int]) -> None:
        self.parent = {i: i for i in items}

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


SCANS = ("Scan ", "FileScan", "BatchScan")
COUNTERS = ["shuffle_read_records", "shuffle_write_records", "input_records"]


def stage_records(tasks: pd.DataFrame) -> dict[tuple[int, int], tuple[int, int, int]]:
    """{(stage, attempt): (shuffle records read, written, input records)} over successful
    task attempts."""
    if tasks.empty:
        return {}
    ok = tasks[tasks["status"] == "SUCCESS"]
    agg = ok.groupby(["stage_id", "stage_attempt"])[COUNTERS].sum()
    return {(int(s), int(a)): tuple(int(v) for v in row)
            for (s, a), row in zip(agg.index, agg.to_numpy())}


def assign(operators: list[dict[str, Any]], metrics: list[dict[str, Any]],
           job_stage_ids: Iterable[int], stages: pd.DataFrame, tasks: pd.DataFrame,
           warnings: list[str], records: dict | None = None) -> None:
    """Fill ``stage_attempts`` of one execution's operator rows, in place (``records``:
    :func:`stage_records` of ``tasks`` when the caller has it already)."""
    if not operators:
        return
    execution = operators[0]["execution_id"]
    by_id = {int(o["node_id"]): o for o in operators}
    kinds = {i: _kind(str(o["name"])) for i, o in by_id.items()}
    sets = _Sets(by_id)
    consumer_of: dict[int, list[int]] = defaultdict(list)     # exchange -> reading nodes
    for i, o in by_id.items():
        if o.get("cluster_id", -1) in by_id:
            sets.union(i, int(o["cluster_id"]))
        for parent in o.get("parent_ids") or []:
            if parent not in by_id or kinds[i] == "driver" or kinds[parent] == "driver":
                continue
            if kinds[i] == "exchange":
                consumer_of[i].append(parent)
            else:
                sets.union(i, parent)
    ran: dict[tuple[int, int], bool] = {}
    if not stages.empty:
        for s, a, status in zip(stages["stage_id"], stages["attempt"], stages["status"]):
            ran[(int(s), int(a))] = str(status) not in ("SKIPPED", "PENDING")
    wanted = {int(s) for s in job_stage_ids}
    claimed: dict[int, set[int]] = defaultdict(set)           # pipeline root -> stage ids
    read_records: dict[int, int] = defaultdict(int)
    write_records: dict[int, int] = {}
    input_rows: dict[int, int] = defaultdict(int)
    for m in metrics:
        node = int(m["node_id"])
        if node not in by_id or kinds[node] == "driver":
            continue
        read_side = kinds[node] == "exchange" and m["name"] in READ_SIDE_METRICS
        roots = ({sets.find(c) for c in consumer_of.get(node, [])} if read_side
                 else {sets.find(node)})
        if int(m["max_stage_id"]) >= 0:
            for root in roots:
                claimed[root].add(int(m["max_stage_id"]))
        if kinds[node] == "exchange" and m["name"] == "records read":
            for root in roots:
                read_records[root] += int(m["value"])
        if kinds[node] == "exchange" and m["name"] == "shuffle records written":
            write_records[sets.find(node)] = int(m["value"])
        if str(by_id[node]["name"]).startswith(SCANS) and m["name"] == "number of output rows":
            input_rows[sets.find(node)] += int(m["value"])
    pipelines = sorted({sets.find(i) for i, k in kinds.items() if k != "driver"})
    records = stage_records(tasks) if records is None else records
    mine = {p: (read_records.get(p, 0), write_records.get(p, 0), input_rows.get(p, 0))
            for p in pipelines}
    free = [s for s in sorted(wanted) if any(did for (st, _), did in ran.items() if st == s)
            and not any(s in c for c in claimed.values())]
    upstream: dict[int, set[int]] = defaultdict(set)          # reading -> writing pipelines
    for exchange, consumers in consumer_of.items():
        for consumer in consumers:
            upstream[sets.find(consumer)].add(sets.find(exchange))

    def after_writers(p: int, stage: int) -> bool:
        return all(stage > min(claimed[w]) for w in upstream.get(p, ()) if claimed.get(w))

    def spent(p: int) -> int:     # shuffle records read by the stages placed on p so far
        return sum(records.get(k, (0, 0, 0))[0] for k, did in ran.items()
                   if did and k[0] in claimed.get(p, ()))

    for stage in list(free):      # a stage whose counts fit one pipeline only
        sigs = {records.get(k, (0, 0, 0)) for k, did in ran.items() if k[0] == stage and did}
        able = [p for p in pipelines if after_writers(p, stage)]
        same = [p for p in able if mine[p] in sigs]
        # A pipeline run by several stages (the sampling job of a range partitioning runs
        # the pipeline below an ORDER BY once more, writing nothing) shows its reads summed
        # over them: a stage fits if it reads part of them, with the same input, and writes
        # the pipeline's shuffle or nothing.
        # A stage that counted nothing (no reads, writes or input: e.g. the task after a
        # limit's single-partition exchange) tells no pipeline apart: it is left for the
        # last step.
        part = [p for p in able if any(
            i == mine[p][2] and w in (0, mine[p][1]) and (0 < r <= mine[p][0] or r == mine[p][0])
            for r, w, i in sigs if (r, w, i) != (0, 0, 0))]
        if len(part) > 1:
            # Tie-break: those partial fits whose reads not yet accounted for by the stages
            # already placed on them still cover the stage's (a pipeline whose one stage
            # read all its records has none left for another).
            part = [p for p in part if any(
                0 < r <= mine[p][0] - spent(p) for r, w, i in sigs if (r, w, i) != (0, 0, 0))]
        pick = same if len(same) == 1 else part if len(part) == 1 else []
        if pick:
            claimed[pick[0]].add(stage)
            free.remove(stage)
    unclaimed = [p for p in pipelines if not claimed.get(p)]
    if len(unclaimed) == 1 and len(free) == 1:
        claimed[unclaimed[0]].add(free.pop())
    unplaced = []
    for i, o in by_id.items():
        if kinds[i] == "driver":
            o["stage_attempts"] = []
            continue
        stage_ids = set(claimed.get(sets.find(i), set()))
        for consumer in consumer_of.get(i, []):
            stage_ids |= claimed.get(sets.find(consumer), set())
        o["stage_attempts"] = sorted([s, a] for (s, a), did in ran.items()
                                     if did and s in stage_ids)
        if not o["stage_attempts"] and kinds[i] != "driver" and wanted:
            unplaced.append(i)
    if unplaced and any(ran.get(k) for k in ran if k[0] in wanted):
        warnings.append(f"SQL execution {execution}: {len(unplaced)} plan node(s) could not be "
                        "placed in a stage from what Spark reports (no stage annotation or "
                        "matching shuffle counts); their stage_attempts are empty")
