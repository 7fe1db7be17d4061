"""Issue B scale benchmark: full analysis of a synthetic 1M-task run.

    python benchmarks/analysis_scale.py [--tasks 1000000] [--slots 64] [--tasks-per-stage 5000]

Builds a Run with ``--tasks`` task attempts (stages in waves on ``--slots`` slots; pairs of
concurrent stages and a child stage starting inside its parent's group, so the replay sees
multi-stage groups and DAG barriers; GC-heavy and skewed tasks; failed-and-retried attempts),
then times ``analyze(run).summary()`` — breakdown, baseline replay, every what-if of the
summary, stragglers with causes, the monotask model, the verdict — and prints the wall time
and the process's peak RSS. Target (DESIGN / issue B): ≤ 10 s and ≤ 2 GB on 2 cores.
"""
from __future__ import annotations

import argparse
import heapq
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jupyter_perf.analysis import analyze
from jupyter_perf.model import Run

T0 = 1_700_000_000_000.0
_NAMES = np.array([str(i) for i in range(4096)], dtype=object)   # shared str objects


class _Slots:
    """Spark's scheduler, roughly: each task launches on the earliest-free slot."""

    def __init__(self, slots: int, t0: float):
        self.free = [(t0, s) for s in range(slots)]

    def launch(self, dur: np.ndarray, ready: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        launch, slot = np.empty(len(dur)), np.empty(len(dur), dtype="int64")
        for i, d in enumerate(dur.tolist()):
            t, s = heapq.heappop(self.free)
            t = max(t, ready)
            launch[i], slot[i] = t, s
            heapq.heappush(self.free, (t + d + 1.0, s))    # 1 ms between tasks on a slot
        return launch, slot


def _durations(rng, n):
    nbytes = rng.integers(8 << 20, 12 << 20, n)
    dur = 200.0 * nbytes / (10 << 20) * rng.lognormal(0.0, 0.1, n)
    strag = rng.random(n) < 0.003
    dur[strag] *= rng.uniform(2.0, 4.0, strag.sum())
    gc = dur * 0.05
    gc[strag] = dur[strag] * 0.6             # GC-heavy stragglers
    skew = rng.random(n) < 0.002             # data skew: 4x the data, 4x the time
    nbytes[skew] *= 4
    dur[skew] *= 4
    gc[skew] *= 4
    return dur, gc, nbytes


def _tasks(stage_id, map_stage, launch, slot, dur, gc, nbytes):
    n = len(dur)
    return pd.DataFrame({
        "stage_id": stage_id, "stage_attempt": 0, "index": np.arange(n), "attempt": 0,
        "executor_id": _NAMES[slot // 4], "host": _NAMES[slot // 8],
        "launch_ms": T0 + launch, "finish_ms": T0 + launch + dur, "duration_ms": dur,
        "status": "SUCCESS", "scheduler_delay_ms": 2.0, "deserialize_ms": 1.0,
        "run_ms": dur - 3.0, "cpu_ms": (dur - 3.0) * 0.7, "gc_ms": gc,
        "fetch_wait_ms": 0.0 if map_stage else dur * 0.05,
        "shuffle_write_time_ms": dur * 0.05 if map_stage else 0.0,
        "input_bytes": nbytes if map_stage else 0,
        "shuffle_read_bytes": 0 if map_stage else nbytes,
        "shuffle_remote_bytes": 0 if map_stage else nbytes // 2,
        "shuffle_write_bytes": nbytes // 4 if map_stage else 0,
    })


def build_run(n_tasks: int = 1_000_000, slots: int = 64, seed: int = 0,
              per_stage: int = 5000) -> Run:
    """Jobs of three stages: A and B (independent, their tasks interleaved) and C (child of A,
    shuffle-reading), launched on the earliest-free of ``slots`` slots; 50 ms driver gaps."""
    rng = np.random.default_rng(seed)
    frames, stages, jobs = [], [], []
    t, sid, done, job = 0.0, 0, 0, 0
    while done < n_tasks:
        n = min(3 * per_stage, n_tasks - done)
        n_a = n_b = min(per_stage, n // 2)
        n_c = n - n_a - n_b
        sched = _Slots(slots, t)
        dur, gc, nb = _durations(rng, n_a + n_b)
        launch, slot = sched.launch(dur)
        a = np.arange(n_a + n_b) % 2 == 0          # interleave A and B
        frames.append(_tasks(sid, True, launch[a], slot[a], dur[a], gc[a], nb[a]))
        frames.append(_tasks(sid + 1, True, launch[~a], slot[~a], dur[~a], gc[~a], nb[~a]))
        end_a = float((launch[a] + dur[a]).max())
        end = float((launch + dur).max())
        stages += [{"stage_id": sid, "attempt": 0, "status": "COMPLETE", "parent_ids": []},
                   {"stage_id": sid + 1, "attempt": 0, "status": "COMPLETE", "parent_ids": []}]
        if n_c:
            dur, gc, nb = _durations(rng, n_c)
            launch, slot = sched.launch(dur, ready=end_a + 5.0)
            frames.append(_tasks(sid + 2, False, launch, slot, dur, gc, nb))
            end = max(end, float((launch + dur).max()))
            stages.append({"stage_id": sid + 2, "attempt": 0, "status": "COMPLETE",
                           "parent_ids": [sid]})
        jobs.append({"job_id": job, "submission_ms": T0 + t - 10.0,
                     "completion_ms": T0 + end + 10.0, "stage_ids": [sid, sid + 1, sid + 2]})
        done += n
        t = end + 50.0                               # driver gap between jobs
        sid += 3
        job += 1
    tasks = pd.concat(frames, ignore_index=True)
    del frames
    tasks["task_id"] = np.arange(len(tasks))
    # 0.1% of attempts failed; each is retried (attempt 1) right after, on the same slot.
    failed = tasks.sample(frac=0.001, random_state=seed).copy()
    tasks.loc[failed.index, "status"] = "FAILED"
    failed["attempt"] = 1
    failed["task_id"] = np.arange(len(tasks), len(tasks) + len(failed))
    failed["launch_ms"] = failed["finish_ms"] + 1.0
    failed["finish_ms"] = failed["launch_ms"] + failed["duration_ms"]
    tasks = pd.concat([tasks, failed], ignore_index=True).iloc[:n_tasks]
    executors = [{"executor_id": str(i), "host": str(i // 2), "total_cores": 4}
                 for i in range(slots // 4)]
    return Run(kind="eventlog", tasks=tasks, stages=stages, jobs=jobs,
               executors=executors, start_ms=T0, end_ms=T0 + t)


def _peak_mb() -> float:
    """VmHWM (peak RSS) from /proc, MB; falls back to getrusage."""
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _reset_peak() -> None:
    """Reset VmHWM to the current RSS (Linux), so the analysis' own peak can be read."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=1_000_000)
    ap.add_argument("--slots", type=int, default=64)
    ap.add_argument("--tasks-per-stage", type=int, default=5000)
    ap.add_argument("--json", action="store_true", help="print the summary's whatif too")
    ap.add_argument("--host-cpu", action="store_true",
                    help="attach host CPU samples (10 Hz, 80%% busy), as a local master's run "
                         "has: the 2x-slots scenario then also replays the host floor")
    args = ap.parse_args()
    t0 = time.perf_counter()
    run = build_run(args.tasks, args.slots, per_stage=args.tasks_per_stage)
    if args.host_cpu:
        t = np.arange(run.start_ms - 100.0, run.end_ms + 100.0, 100.0)
        run.host_cpu = pd.DataFrame({"time_ms": t, "busy_core_ms": np.arange(len(t)) * 80.0 * args.slots,
                                     "cores": args.slots})
    build_peak_mb = _peak_mb()
    _reset_peak()
    t1 = time.perf_counter()
    a = analyze(run)
    summary = a.summary()
    stragglers = a.stragglers
    t2 = time.perf_counter()
    json.dumps(summary)
    analysis_peak_mb = _peak_mb()
    peak_mb = max(build_peak_mb, analysis_peak_mb)
    print(f"tasks={len(run.tasks):,} stages={len(run.stages):,} groups={a.timeline.n_groups:,} "
          f"slots={args.slots}")
    print(f"build_run_s={t1 - t0:.2f}")
    print(f"analysis_s={t2 - t1:.2f}  (target <= 10 s)")
    print(f"peak_rss_mb={peak_mb:.0f}  (target <= 2048 MB; whole process, building the "
          f"synthetic Run included)")
    print(f"analysis_peak_rss_mb={analysis_peak_mb:.0f}  (process RSS high-water mark during "
          f"the analysis alone, the Run's {run.tasks.memory_usage(deep=True).sum() / 2**20:.0f} "
          f"MB of tasks included)")
    w = summary["whatif"]
    print(f"model_error={w['model_error']:.4f} wall_ms={summary['wall_ms']:.0f} "
          f"stragglers={summary['stragglers']['count']} "
          f"data_skew={summary['stragglers']['data_skew_count']} rows={len(stragglers)}")
    if args.json:
        print(json.dumps(w, indent=1))
    print("verdict:", summary["verdict"])


if __name__ == "__main__":
    main()
