"""``analyze(run) -> Analysis``: the object the report, the CLI and users read."""
from __future__ import annotations

import functools
import math
import re
from typing import Any

import numpy as np
import pandas as pd

from .. import fmt
from ..model import Run
from . import breakdown as _bd
from . import components
from . import memory as _memory
from .callsite import run_call_site
from .hints import cause_hints, one_per_setting, operator_hints, udf_name
from .hostcpu import (
    busy_share,
    host_cores,
    needs_range,
    no_spare_share,
    own_share,
    range_reason,
    wait_shares,
    with_floor,
)
from .operators import (
    EXCHANGE,
    PYTHON_NODE,
    OperatorResult,
    attribute,
    cell_line,
    has_python,
    plan_nodes,
    python_ms_per_task,
    python_stage_tasks,
    stage_operators,
)
from .profile import ProfileResult, empty_hot, profile_of, sampled_split
from .replay import ReplayResult, replay
from .resources import ResourceParams, io_time_bound, resource_model
from .stragglers import (
    MIN_EXCESS_MS,
    THRESHOLD,
    analyze_stragglers,
    skewed_stages,
    straggler_summary,
)
from .timeline import Timeline, build_timeline, parse_parent_ids
from .verdict import Evidence, Verdict, host_context, verdict
from .whatif import ScenarioInputs, busy_estimate, predict, scenario_durations

# scans that read stored data (a file, a table, a cached table): not Range / local rows
STORED_SCAN = re.compile(r"^(Scan|FileScan|BatchScan|InMemoryTableScan|HiveTableScan|"
                         r"RowDataSourceScan)")

# operators that only produce or pass rows on (no join, aggregate, sort, scan of stored data)
ROW_MOVING = re.compile(r"^(Range|Project|Filter|LocalTableScan|ColumnarToRow|RowToColumnar|"
                        r"AQEShuffleRead|ShuffleQueryStage|InputAdapter|WholeStageCodegen|"
                        r"AdaptiveSparkPlan|ResultQueryStage)")
WRITE_COMMAND = re.compile(r"^(OverwriteByExpression|AppendData|WriteToDataSourceV2|"
                           r"OverwritePartitionsDynamic)")

STAGE_KEYS = ["stage_id", "attempt", "status", "num_tasks", "executor_run_time_ms",
              "executor_cpu_time_ms", "jvm_gc_time_ms", "shuffle_fetch_wait_ms",
              "shuffle_write_time_ms", "input_bytes", "output_bytes", "shuffle_read_bytes",
              "shuffle_write_bytes", "failed_tasks"]


def jsonable(value: Any) -> Any:
    """numpy/pandas scalars and containers -> plain JSON types (NaN/inf -> None)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray, pd.Series)):
        return [jsonable(v) for v in list(value)]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    if value is None or value is pd.NaT:
        return None
    if isinstance(value, str):
        return value
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return str(value)


class Analysis:
    """Everything the analysis knows about one :class:`~jupyter_perf.model.Run`.

    ``whatif(...)`` answers one question in ms; ``summary()`` is the JSON-able digest;
    ``stragglers`` a DataFrame (one row per straggler or data-skewed task);
    ``task_breakdown`` one row per task attempt.
    """

    def __init__(self, run: Run, *, straggler_threshold: float = THRESHOLD,
                 straggler_min_ms: float = MIN_EXCESS_MS,
                 resource_params: ResourceParams | None = None) -> None:
        self.run = run
        self.straggler_threshold = straggler_threshold
        self.straggler_min_ms = straggler_min_ms
        self.resource_params = resource_params or ResourceParams()
        self.timeline: Timeline = build_timeline(run)
        self._cache: dict[tuple, float] = {}
        self._makespans: dict[tuple, np.ndarray] = {}   # (scenario, slots factor) -> per group
        self._stretch: np.ndarray | None = None     # per task: contention share (task_breakdown)

    # -- pieces -----------------------------------------------------------
    @functools.cached_property
    def task_breakdown(self) -> pd.DataFrame:
        t = self.run.tasks
        rest = np.maximum(t["run_ms"] - t["cpu_ms"] - t["gc_ms"] - t["fetch_wait_ms"]
                          - t["shuffle_write_time_ms"], 0.0).to_numpy(dtype="float64")
        python = python_ms_per_task(self.run, self.plan, rest)
        # A task thread blocked on a Python worker Spark did not time is not waiting for a
        # core (it is not runnable): its stage's unexplained time stays the Python node's.
        waits_on_python = python_stage_tasks(self.run, self.plan) & (python <= 0)
        self._stretch = np.where(waits_on_python, 0.0, self.contention_share)
        return _bd.task_breakdown(self.run, self.timeline.duration,
                                  python_ms=python if python.any() else None,
                                  core_wait_share=np.where(waits_on_python, 0.0,
                                                           self.core_wait_share),
                                  contention_share=self._stretch,
                                  io_bound_ms=io_time_bound(self.run, self.timeline,
                                                            self.resource_params))

    @functools.cached_property
    def verdict_shares(self) -> dict[str, float]:
        """The category shares the verdict ranks (``breakdown.category_shares`` when no other
        process loaded the host). Other processes holding the cores stretch every wall-clock
        component of a task, not only the time Spark leaves unexplained: scheduler delay, GC,
        deserialization and shuffle times are timed by the clock, CPU time is not. So each
        task's components but CPU are taken as if the host had been quiet — times
        ``1 − contention_share`` (estimated), the share of the task's time other processes held
        cores it could have run on — before the shares are ranked; the share of task time lost
        to those processes (``contention``) rides along as context."""
        shares = _bd.category_shares(self.breakdown)
        lost = shares.get("contention", 0.0)
        bd = self.task_breakdown
        stretch = self._stretch
        if lost <= 0 or stretch is None or not len(bd):
            return shares
        keep = pd.Series(1.0 - np.clip(stretch, 0.0, 1.0), index=bd.index)
        quiet = bd.drop(columns=["contention_est"]).mul(keep, axis=0)
        quiet["cpu"] = bd["cpu"]
        sums = quiet.sum(axis=0)
        total = float(sums.sum())
        if total <= 0:
            return shares
        out = {cat: (1.0 - lost) * float(sum(sums.get(c, 0.0) for c in comps)) / total
               for cat, comps in _bd.CATEGORIES.items() if cat not in _bd.CONTEXT}
        return out | {cat: shares.get(cat, 0.0) for cat in _bd.CONTEXT}

    @functools.cached_property
    def _wait_shares(self) -> tuple[np.ndarray, np.ndarray]:
        return wait_shares(self.run, self.timeline)

    @property
    def core_wait_share(self) -> np.ndarray:
        """Per task row: the share of its unexplained time spent waiting for a core, from the
        host's measured CPU saturation by this application's own processes while it ran (all
        of the saturation when their load was not sampled; 0 without host samples)."""
        return self._wait_shares[0]

    @property
    def contention_share(self) -> np.ndarray:
        """Per task row: the share of its unexplained time lost to other processes holding the
        host's cores (estimated; 0 when this application's load was not sampled)."""
        return self._wait_shares[1]

    @functools.cached_property
    def breakdown(self) -> dict[str, dict]:
        return _bd.totals(self.task_breakdown)

    @functools.cached_property
    def _stragglers(self) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray]:
        return analyze_stragglers(self.run, self.timeline, self.task_breakdown,
                                  self.straggler_threshold, self.straggler_min_ms)

    @property
    def stragglers(self) -> pd.DataFrame:
        """One row per straggler (``kind == 'straggler'``, with ``causes``) or data-skewed
        task (``kind == 'data_skew'``, ``data_skew`` True)."""
        return self._stragglers[0]

    @functools.cached_property
    def flagged_stragglers_ms(self) -> float:
        """Predicted wall time (ms) with only the stragglers flagged in ``stragglers`` brought
        to their stage's median rate: the saving a verdict may attribute to them (the
        ``stragglers=False`` what-if evens out every task slower than the median)."""
        tl = self.timeline
        flagged = self._stragglers[2]
        changed = flagged != tl.duration
        if not changed.any():
            return self.wall_ms
        groups = np.zeros(tl.n_groups, dtype=bool)
        groups[tl.group[changed]] = True          # only their groups need a new replay
        r = replay(tl, flagged, 1.0, only=groups)
        sim = float(np.where(groups, r.makespan, self.baseline.makespan).sum())
        return predict(self.actual_ms, self.driver_gap_ms, self.simulated_baseline_ms, sim)

    @functools.cached_property
    def even_skew_ms(self) -> float:
        """Predicted wall time (ms) with the data of every data-skewed stage spread evenly over
        its tasks (each at the stage's mean task duration): what the skew costs."""
        tl = self.timeline
        even = self._stragglers[3]
        changed = even != tl.duration
        if not changed.any():
            return self.wall_ms
        groups = np.zeros(tl.n_groups, dtype=bool)
        groups[tl.group[changed]] = True
        r = replay(tl, even, 1.0, only=groups)
        sim = float(np.where(groups, r.makespan, self.baseline.makespan).sum())
        return predict(self.actual_ms, self.driver_gap_ms, self.simulated_baseline_ms, sim)

    @functools.cached_property
    def skewed_stages(self) -> dict[int, dict]:
        """Per stage id with data-skewed tasks: the bytes of its largest and median task."""
        return skewed_stages(self.run, self.stragglers)

    @functools.cached_property
    def _inputs(self) -> ScenarioInputs:
        return ScenarioInputs.build(self.run, self.timeline.duration, self.task_breakdown,
                                    self._stragglers[1])

    @functools.cached_property
    def baseline(self) -> ReplayResult:
        """The replay of the measured durations, with simulated starts per task."""
        return replay(self.timeline, self.timeline.duration, 1.0, want_starts=True)

    @functools.cached_property
    def cpu_share(self) -> np.ndarray:
        """Per group: measured share of the host's cores busy while it ran (0 without host
        samples); the floor under more-slots scenarios (see ``analysis/hostcpu.py``)."""
        return busy_share(self.run, self.timeline)

    # -- numbers ----------------------------------------------------------
    @property
    def wall_ms(self) -> float:
        return self.timeline.wall_ms

    @property
    def actual_ms(self) -> float:
        """Time tasks of the run spanned inside its window (the replay's ground truth)."""
        return self.timeline.actual_ms

    @property
    def driver_gap_ms(self) -> float:
        return self.timeline.driver_gap_ms

    @property
    def simulated_baseline_ms(self) -> float:
        return self.baseline.total_ms

    @property
    def model_error(self) -> float:
        actual = self.actual_ms
        if actual <= 0:
            return 0.0
        return abs(self.simulated_baseline_ms - actual) / actual

    def simulate(self, disk: float = 1.0, network: float = 1.0, slots_factor: float = 1.0,
                 gc: bool = True, stragglers: bool = True) -> float:
        """Raw simulated time of the task groups for a scenario (no driver gaps, not scaled)."""
        key = (float(disk), float(network), float(slots_factor), bool(gc), bool(stragglers))
        if key not in self._cache:
            self._cache[key] = self._replay_total((key[0], key[1], key[3], key[4]), key[2])
        return self._cache[key]

    def _makespan(self, scenario: tuple, slots_factor: float) -> np.ndarray:
        """Per group: the replay's makespan of a scenario's durations (``scenario``: disk,
        network, gc, stragglers as :func:`scenario_durations` takes them) at ``slots_factor``.
        Computed once per pair: the point and the range of one what-if, and the host floor of
        every disk/network scenario, replay the same durations."""
        key = (*scenario, float(slots_factor))
        if key not in self._makespans:
            d = scenario_durations(self._inputs, *scenario)
            if d is self.timeline.duration and slots_factor == 1.0:
                self._makespans[key] = self.baseline.makespan        # nothing changed
            else:
                self._makespans[key] = replay(self.timeline, d, slots_factor).makespan
        return self._makespans[key]

    def _at_measured(self, scenario: tuple) -> np.ndarray:
        """The makespans the host floor scales (``analysis/hostcpu.py``): the scenario's
        durations without its disk/network savings, at the measured slots."""
        return self._makespan((1.0, 1.0, *scenario[2:]), 1.0)

    def _replay_total(self, scenario: tuple, slots_factor: float) -> float:
        """The replay of a scenario, floored by the host's measured CPU work where more slots
        or a faster disk/network cannot beat it (see ``analysis/hostcpu.py``)."""
        makespan = self._makespan(scenario, slots_factor)
        io = scenario[0] != 1.0 or scenario[1] != 1.0
        share = self.cpu_share
        if not (slots_factor > 1.0 or io) or not share.any():
            return float(makespan.sum())  # the host floor cannot bind (see analysis/hostcpu.py)
        return float(with_floor(makespan, self._at_measured(scenario), share).sum())

    def whatif(self, disk: float = 1.0, network: float = 1.0, slots_factor: float = 1.0,
               gc: bool = True, stragglers: bool = True) -> float:
        """Predicted wall time (ms) of the run in a changed world.

        ``disk``/``network``: speed-up factors (1 = as measured, ``float('inf')`` = free);
        ``slots_factor``: multiply every group's slots; ``gc=False``: no GC time;
        ``stragglers=False``: stragglers brought to their stage's median progress rate.
        Driver gaps stay fixed; task time is scaled by the replay:
        ``driver_gap_ms + actual_ms × simulate(scenario) / simulate(baseline)`` — so
        ``whatif()`` with no arguments is exactly ``wall_ms``.
        """
        sim = self.simulate(disk, network, slots_factor, gc, stragglers)
        return predict(self.actual_ms, self.driver_gap_ms, self.simulated_baseline_ms, sim)

    def whatif_range(self, disk: float = 1.0, network: float = 1.0, slots_factor: float = 1.0,
                     gc: bool = True, stragglers: bool = True) -> dict:
        """``whatif(...)`` as a range where the run lacks what a point needs: more slots for
        executors on the driver's host with no host CPU samples (``analysis/hostcpu.py``).
        ``predicted_ms`` is ``whatif(...)``; ``predicted_low_ms`` (= it: the plain replay) and
        ``predicted_high_ms`` (the floor of a host with only the run's slots as cores) and
        ``range_reason`` are None for a point."""
        low = self.whatif(disk, network, slots_factor, gc, stragglers)
        out = {"predicted_ms": low, "predicted_low_ms": None, "predicted_high_ms": None,
               "range_reason": None}
        if float(slots_factor) <= 1.0 or not needs_range(self.run) or not len(self.run.tasks):
            return out
        scenario = (float(disk), float(network), bool(gc), bool(stragglers))
        sim = float(with_floor(self._makespan(scenario, float(slots_factor)),
                               self._at_measured(scenario), self.no_spare_share).sum())
        high = predict(self.actual_ms, self.driver_gap_ms, self.simulated_baseline_ms, sim)
        return out | {"predicted_low_ms": low, "predicted_high_ms": max(high, low),
                      "range_reason": range_reason(self.run)}

    @functools.cached_property
    def no_spare_share(self) -> np.ndarray:
        """Per group: the busy share of a host with only the group's slots as cores, from the
        tasks' time outside I/O waits (estimated; the high end of ``whatif_range``)."""
        return no_spare_share(busy_estimate(self._inputs), self.timeline,
                              self.baseline.makespan)

    @functools.cached_property
    def resources(self) -> dict:
        """The monotask model (seed 004): ideal time per resource and the bottleneck."""
        return resource_model(self.run, self.timeline, self.resource_params)

    # -- tables -----------------------------------------------------------
    def stage_table(self) -> pd.DataFrame:
        """The run's stage table (:meth:`~jupyter_perf.model.Run.stage_table`): stages with sums
        over all their task attempts, as Spark's REST /stages reports them. A copy: callers
        may add columns."""
        return self._stages.copy()

    @functools.cached_property
    def _stages(self) -> pd.DataFrame:
        """The stage table, grouped once (a groupby over every task attempt: ~65 ms for 250k)
        and only read here: the summary and the exchange share both use it."""
        return self.run.stage_table()

    def _jobs(self) -> list[dict]:
        out = []
        for rec in self.run.jobs.to_dict("records"):
            sub = pd.to_numeric(rec.get("submission_ms"), errors="coerce")
            comp = pd.to_numeric(rec.get("completion_ms"), errors="coerce")
            out.append({
                "job_id": rec.get("job_id"), "name": rec.get("name"),
                "status": rec.get("status"), "submission_ms": sub, "completion_ms": comp,
                "duration_ms": (comp - sub) if pd.notna(sub) and pd.notna(comp) else None,
                "stage_ids": parse_parent_ids(rec.get("stage_ids")),
                "num_tasks": rec.get("num_tasks"), "num_failed_tasks": rec.get("num_failed_tasks"),
                "cell_line": run_call_site(self.run, rec.get("name")),
            })
        return out

    # -- the digest -------------------------------------------------------
    def whatif_summary(self) -> dict:
        inf = float("inf")
        return {
            "simulated_baseline_ms": self.simulated_baseline_ms,
            "actual_ms": self.actual_ms,
            "driver_gap_ms": self.driver_gap_ms,
            "model_error": self.model_error,
            "infinite_disk_ms": self.whatif(disk=inf),
            "infinite_network_ms": self.whatif(network=inf),
            "no_gc_ms": self.whatif(gc=False),
            "no_stragglers_ms": self.whatif(stragglers=False),
            "flagged_stragglers_ms": self.flagged_stragglers_ms,
            "even_skew_ms": self.even_skew_ms,
            "slots_x2_ms": self.whatif(slots_factor=2.0),
            # a range where the run lacks host CPU samples on a shared host (else None)
            **{f"slots_x2_{k}": v for k, v in self._slots_x2_range.items()},
            "disk_is_upper_bound": True,
            # measured: how busy the host's cores were while tasks ran (local masters only)
            "host_cores": host_cores(self.run),
            "host_cpu_busy_share": self.host_cpu_busy_share,
            "groups": int(self.timeline.n_groups),
            "slots_used": int(self.timeline.group_slots.max(initial=0)),
        }

    @functools.cached_property
    def _slots_x2_range(self) -> dict:
        r = self.whatif_range(slots_factor=2.0)
        return {"low_ms": r["predicted_low_ms"], "high_ms": r["predicted_high_ms"],
                "range_reason": r["range_reason"]}

    @functools.cached_property
    def host_cpu_busy_share(self) -> float | None:
        """Measured busy share of the host's cores over the task time (None: not sampled)."""
        share, span = self.cpu_share, self.timeline.group_actual
        if not share.any() or span.sum() <= 0:
            return None
        return float((share * span).sum() / span.sum())

    @functools.cached_property
    def host_cpu_own_share(self) -> float | None:
        """Of ``host_cpu_busy_share``, the part this process tree (driver, JVM, Python workers)
        kept busy, over the task time (None: not sampled)."""
        busy = self.host_cpu_busy_share
        own, span = own_share(self.run, self.timeline), self.timeline.group_actual
        if busy is None or own is None or span.sum() <= 0:
            return None
        return min(float((own * span).sum() / span.sum()), busy)

    def host_cpu(self) -> dict:
        """The host's CPU while tasks ran (local masters): ``busy_share`` (measured),
        ``own_share`` / ``other_share`` (this process tree's and other processes' parts,
        sampled; None when not sampled), ``lost_share`` (estimated share of task time lost to
        other processes) and ``context`` (the verdict's clause about it, '' when none)."""
        busy, own = self.host_cpu_busy_share, self.host_cpu_own_share
        lost = float(self.breakdown["contention_est"]["share"])
        return {"cores": host_cores(self.run), "busy_share": busy, "own_share": own,
                "other_share": None if busy is None or own is None else busy - own,
                "lost_share": lost, "kind": "measured (own/other: sampled process CPU time; "
                                            "lost_share: estimated)",
                "context": host_context(busy, own, lost)}

    @functools.cached_property
    def _digest(self) -> tuple[dict, dict, Verdict]:
        """(what-if summary, straggler summary, verdict): computed once."""
        run = self.run
        whatif = self.whatif_summary()
        strag = straggler_summary(self.stragglers, threshold=self.straggler_threshold)
        strag["potential_saving_ms"] = max(0.0, self.wall_ms - whatif["flagged_stragglers_ms"])
        shares = self.verdict_shares
        evidence = Evidence(host_busy_share=self.host_cpu_busy_share,
                            host_own_share=self.host_cpu_own_share,
                            python=has_python(run, self.breakdown),
                            notes=tuple(self._operators.notes),
                            top_operator=self.top_operator,
                            stages_without_tasks=0 if not run.tasks.empty else
                            int((run.stages["status"] != "SKIPPED").sum()),
                            tasks_unread=bool(run.extra.get("tasks_unread")),
                            lost_to_memory=tuple(_memory.lost_to_memory(run,
                                                                        self.memory_sizing)),
                            limit_risks=tuple(_memory.limit_risks(self.memory_table)),
                            **self._operator_evidence(whatif))
        v = verdict(self.wall_ms, len(run.tasks), self.driver_gap_ms, shares, whatif, strag,
                    evidence)
        return whatif, strag, v

    def _shuffle_only_share(self, table: pd.DataFrame, total: float) -> float:
        """Share of task time in stages that only move rows through a shuffle: an exchange,
        and besides it nothing but generating, projecting or filtering rows (and writes that
        wrote nothing): their CPU is producing, serialising and reading the shuffled rows."""
        if not len(table) or total <= 0:
            return 0.0
        stages = self._stages
        wrote = {int(r["stage_id"]): float(r.get("output_bytes") or 0.0)
                 for r in stages.to_dict("records")}
        members: dict[int, list[str]] = {}
        for rec in table.to_dict("records"):
            for sid in rec["stage_ids"] or []:
                members.setdefault(int(sid), []).append(str(rec["name"]))
        pure = {sid for sid, names in members.items()
                if any(EXCHANGE.match(n) for n in names)
                and all(EXCHANGE.match(n) or ROW_MOVING.match(n)
                        or (WRITE_COMMAND.match(n) and not wrote.get(sid)) for n in names)}
        if not pure:
            return 0.0
        t = self.run.tasks
        mask = t["stage_id"].isin(pure).to_numpy()
        return float(self.timeline.duration[mask].sum()) / total

    def _operator_evidence(self, whatif: dict) -> dict:
        """The verdict's evidence from the operator table and the data skew (verdict.Evidence
        fields): per kind of operator its share of task time and its most expensive one."""
        table = self.operators
        out: dict[str, Any] = {"cell_line": (self.top_operator or {}).get("line")}
        total = float(self.timeline.duration.sum())
        if len(table) and total > 0:
            busy = table[table["task_time_ms"] > 0]

            def kind(pattern: re.Pattern) -> pd.DataFrame:
                return busy[busy["name"].astype(str).str.match(pattern)]

            py = kind(PYTHON_NODE)
            if len(py):
                out.update(python_share=float(py["share"].sum()),
                           python_label=str(py.iloc[0]["label"]),
                           python_udf=udf_name(py.iloc[0]["description"]))
            scans = kind(STORED_SCAN)
            if len(scans):
                io = sum(float((b or {}).get("io_wait_est", 0.0)) for b in scans["breakdown"])
                out.update(scan_share=float(scans["share"].sum()),
                           scan_label=str(scans.iloc[0]["label"]),
                           scan_io_share=io / total,
                           scan_cached=str(scans.iloc[0]["name"]).startswith("InMemoryTableScan"))
            ex = kind(EXCHANGE)
            if len(ex):
                out.update(exchange_share=max(float(ex["share"].sum()),
                                              self._shuffle_only_share(table, total)),
                           exchange_label=str(ex.iloc[0]["label"]))
            if len(py):
                out["python_arrow"] = not str(py.iloc[0]["name"]).startswith("BatchEvalPython")
            spill = busy[pd.to_numeric(busy["spill_bytes"], errors="coerce").fillna(0) > 0]
            if len(spill):
                out.update(spill_share=float(spill["share"].sum()),
                           spill_label=str(spill.iloc[0]["label"]),
                           spill_bytes=float(pd.to_numeric(spill["spill_bytes"]).sum()))
        skew = self.skewed_stages
        if skew and self.wall_ms > 0:
            from .hints import hot_key
            excess = sum(v["excess_ms"] for v in skew.values())
            out["skew_share"] = excess / total if total > 0 else 0.0
            out["skew_tasks"] = sum(v["tasks"] for v in skew.values())
            out["skew_ratio"] = max(min(v["ratio"], 1e6) for v in skew.values())
            keyed = [r for r in (table.to_dict("records") if len(table) else [])
                     if set(r["stage_ids"] or []) & set(skew) and r["task_time_ms"] > 0
                     and hot_key(r)]
            keyed.sort(key=lambda r: (not str(r["name"]).startswith(("SortMergeJoin",
                                                                     "ShuffledHashJoin")),
                                      -r["task_time_ms"]))
            if keyed:
                out["skew_label"] = str(keyed[0]["label"])
                out["skew_key"] = hot_key(keyed[0])
        return out

    # -- operators (SQL plan <-> stages <-> tasks) -------------------------
    @functools.cached_property
    def plan(self) -> dict:
        """The run's plan nodes with their metrics (``analysis/operators.plan_nodes``)."""
        return plan_nodes(self.run)

    @functools.cached_property
    def _operators(self) -> OperatorResult:
        return attribute(self.run, self.timeline, self.task_breakdown, self.plan)

    @functools.cached_property
    def operators(self) -> pd.DataFrame:
        """One row per plan operator, most expensive first (``analysis/operators.COLUMNS``).
        ``skew``: the operator ran in a stage with data-skewed tasks (bytes per task against
        the stage's median, :attr:`skewed_stages`), never from durations alone (a slow task
        on uniform data is host noise or a measured cause); ``skew_ratio`` stays the longest
        task over the median one, as the Query tab shows it."""
        table = self._operators.table
        if self.profile is not None and self.profile.samples:
            # the split inside a codegen stage from CPU samples (analysis/profile.py)
            table = sampled_split(table, self.profile, self.run,
                                  float(self.timeline.duration.sum()))
        if len(table):
            skewed = set(self.skewed_stages)
            table = table.assign(skew=[bool(set(ids or []) & skewed) and t > 0 for ids, t
                                       in zip(table["stage_ids"], table["task_time_ms"])])
        return table

    @functools.cached_property
    def top_operator(self) -> dict | None:
        """The operator with the most task time, with the cell line Spark's call site points
        to (``line``: ``{"line", "text"}`` or None)."""
        table = self.operators
        busy = table[table["task_time_ms"] > 0] if len(table) else table
        if busy.empty:
            return None
        top = jsonable(busy.iloc[0].to_dict())
        top["line"] = cell_line(self.run, int(top["execution_id"]))
        return top

    @property
    def operators_note(self) -> str:
        """What the operator table cannot say, in one line ('' when it covers everything)."""
        total = float(self.timeline.duration.sum())
        if self.run.sql.empty and self.run.operators.empty:
            return ("No SQL ran in this window: RDD work has no query plan, so no operator "
                    "is named." if len(self.run.tasks) else "")
        missed = self._operators.unattributed_ms
        if total > 0 and missed > 0.005 * total:
            return (f"{missed / total:.0%} of task time ran in stages no SQL operator lists "
                    "(RDD work, or a plan the collector could not map to stages).")
        return ""

    @functools.cached_property
    def stage_operators(self) -> dict[int, str]:
        """Per stage id: its plan operators from input to output ('' for RDD stages)."""
        return stage_operators(self.plan)

    @functools.cached_property
    def hints(self) -> list[dict]:
        """Advice with values: ``{operator, text, setting, value, predicted_ms, cause}``,
        the operators' first, then the memory sizing's (``analysis/memory.advice``: with
        ``evidence`` and ``kind``), then the verdict's causes; never two for one setting
        (``analysis/hints.py``)."""
        whatif, _, v = self._digest
        return one_per_setting(
            operator_hints(self.run, self.plan, self.operators, self._operators.notes,
                           self.skewed_stages)
            + _memory.advice(self.run, self.memory_sizing) + cause_hints(v.hints, whatif))

    # -- CPU profile (issue P) ---------------------------------------------
    @functools.cached_property
    def profile(self) -> ProfileResult | None:
        """The window's stack samples attributed to operators (``analysis/profile.py``), or
        None when the run has no profile."""
        return profile_of(self.run)

    @property
    def hot_functions(self) -> pd.DataFrame:
        """Per leaf function of the task threads' samples: ``function``, ``self_samples``,
        ``total_samples``, ``operator``, ``stage_ids`` (and ``share``, ``kind``), hottest first;
        empty without a profile."""
        return self.profile.hot if self.profile is not None else empty_hot()

    # -- memory (issue V: analysis/memory.py) -----------------------------
    @functools.cached_property
    def stage_memory(self) -> pd.DataFrame:
        """Per stage attempt x executor: its peaks while the stage ran (bytes, measured), the
        stage's memory operator and kind, spills, GC (``analysis/memory.stage_table``)."""
        return _memory.stage_table(self.run, self.operators)

    @property
    def memory(self) -> pd.DataFrame:
        """DESIGN.md's name for :attr:`stage_memory`."""
        return self.stage_memory

    @functools.cached_property
    def memory_table(self) -> pd.DataFrame:
        """Per executor (the driver included): this window's peaks and what set them, limits,
        spills, GC (``analysis/memory.executor_table``)."""
        return _memory.executor_table(self.run, self.stage_memory)

    @functools.cached_property
    def memory_sizing(self) -> list[dict]:
        """The sizing answer: hint dicts with setting, value, evidence and kind, one per
        setting; those that change something are also in :attr:`hints`."""
        return _memory.sizing(self.run, self.memory_table, self.stage_memory, self.operators)

    def memory_summary(self) -> dict:
        """``summary()["memory"]`` (``analysis/memory.summary``)."""
        return _memory.summary(self.run, self.memory_table, self.stage_memory,
                               self.memory_sizing)

    def summary(self) -> dict:
        """JSON-able digest with DESIGN.md's schema (and a few extra keys)."""
        run = self.run
        stages = self._stages
        stage_rows = []
        for rec in stages.to_dict("records"):
            row = {k: rec.get(k) for k in STAGE_KEYS}
            row.update(name=rec.get("name"), task_attempts=rec.get("task_attempts"),
                       operators=self.stage_operators.get(int(rec["stage_id"]), ""),
                       killed_tasks=rec.get("killed_tasks"),
                       succeeded_tasks=rec.get("succeeded_tasks"),
                       shuffle_remote_bytes=rec.get("shuffle_remote_bytes"),
                       memory_spilled_bytes=rec.get("memory_spilled_bytes"),
                       disk_spilled_bytes=rec.get("disk_spilled_bytes"),
                       cell_line=run_call_site(run, rec.get("name")))
            stage_rows.append(row)
        whatif, strag, v = self._digest
        out = {
            "run_id": run.run_id, "kind": run.kind, "label": run.label,
            "app_id": run.app_id, "app_name": run.app_name,
            "spark_version": run.spark_version,
            "wall_ms": self.wall_ms, "slots": int(run.slots),
            "start_ms": float(run.start_ms), "end_ms": float(run.end_ms),
            "jobs": self._jobs(),
            "stages": stage_rows,
            "task_attempts": int(len(run.tasks)),
            "task_time_ms": float(self.timeline.duration.sum()),
            "breakdown": self.breakdown,
            "components": components.as_json(),
            "whatif": whatif,
            "resources": self.resources,
            "stragglers": strag,
            "verdict": v.sentence,
            "verdict_category": v.category,
            "verdict_headline": v.headline,
            "verdict_headline_text": v.headline_text,
            "verdict_bullets": v.bullets,
            "host_cpu": self.host_cpu(),
            "hints": self.hints,
            "operators": self.operators.to_dict("records"),
            "top_operator": self.top_operator,
            "operators_note": self.operators_note,
            "memory": self.memory_summary(),
            "profile": self.profile.summary() if self.profile is not None else None,
            "warnings": list(run.warnings) + list(self.timeline.warnings),
        }
        return jsonable(out)

    def __repr__(self) -> str:
        return (f"<jupyter_perf.Analysis of {self.run.run_id}: {fmt.ms(self.wall_ms)} wall, "
                f"model error {self.model_error:.1%}>")


def analyze(run: Run, **options: Any) -> Analysis:
    """Analyse ``run``; ``options``: ``straggler_threshold``, ``straggler_min_ms``,
    ``resource_params`` (:class:`~.resources.ResourceParams`)."""
    return Analysis(run, **options)
