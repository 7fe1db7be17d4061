"""Issue E scale benchmark: ingesting a large, realistic Spark event log.

    python benchmarks/eventlog_scale.py [--tasks 250000] [--dir /tmp/jp-eventlog-bench]
                                        [--template LOG] [--zstd] [--skip-dicts] [--keep]
                                        [--modes orjson,dicts,cli,history] [--sql yes|no|both]
                                        [--repeat N]

Builds an event log in Spark's own JSON format from a real Spark 3.5 log (default template:
``tests/collect/data/gen-snappy.snappy``, written by Spark 3.5.9): its application and
environment events are kept, and its TaskStart/TaskEnd/Stage/Job events are replicated into
jobs of two stages (map -> reduce, real parent IDs) on 16 executors x 4 cores over 8 hosts,
with varied durations, CPU, GC, shuffle and input metrics. With SQL events (``--sql yes``,
the default) each job is a SQL execution (SQLExecutionStart with the template's final AQE
plan, its driver accumulator updates, SQLExecutionEnd), and the reader parses the SQL metric
updates of every TaskEnd; ``--sql no`` writes the same log without the SQL events (the jobs
of an RDD application). Either way every TaskEnd keeps the template's Task Info
accumulables: lines are as long as real SQL task-end events (~5 KB).

Then, each in a fresh process (peak RSS = that process's ``ru_maxrss``; ``load_eventlog``
reads a large plain log with worker processes, whose CPU time is counted in the CPU figure
and whose peak RSS is given apart), with the load average (``uptime``) before and after each:

* ``orjson``: ``load_eventlog``;
* ``dicts``: a naive loader for comparison: the same parse, but one flattened dict per task
  (``conform("tasks", list_of_dicts)``) instead of the typed column arrays ``load_eventlog``
  accumulates (it reads only TaskEnd events, so it does less than ``load_eventlog``);
* ``cli``: ``jupyter-perf analyze LOG --json`` end to end (load + full analysis + JSON);
* ``history``: Spark's own History Server (pyspark's ``sbin/``) on the same log, in the same
  run: seconds from starting it until ``/applications/{id}/stages`` answers (its listing scan
  and its replay of the whole log), its JVM's CPU time (all threads) and peak RSS; the other
  modes are also given as a ratio of it. On a shared host the CPU-time ratio is the steadier
  one: under heavy load a JVM's many threads get a larger share of the cores than one
  Python thread;
* with ``--zstd``: the same log zstd-compressed as Spark writes it (``.zstd``).

Targets (issue E/F): a 1 GB log within 2 GB peak; ``analyze --json`` on 250k tasks in
<= 30 s and <= 2 GB. Issue Q: 250k tasks (with and without SQL events) <= 0.3x the History
Server's time and <= 1.5 GB end to end; 1M tasks <= 40 s.
"""
from __future__ import annotations

import argparse
import copy
import heapq
import os
import random
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jupyter_perf.collect.eventlog.codecs import open_lines  # noqa: E402 -- on sys.path above

TEMPLATE = ROOT / "tests" / "collect" / "data" / "gen-snappy.snappy"
EXECUTORS, CORES, HOSTS = 16, 4, 8


def _events(template: Path) -> list[dict]:
    lines, _, handle = open_lines(str(template))
    try:
        return [orjson.loads(line) for line in lines if line.strip()]
    finally:
        handle.close()


def generate(template: Path, out: Path, n_tasks: int, seed: int = 7, sql: bool = True,
             per_stage: int = 5000) -> None:
    """Write a ~``n_tasks``-task application log in Spark's JSON format to ``out``; without
    ``sql`` the same log without its SQL events (no executions, no ``spark.sql.execution.id``:
    the jobs of an RDD application; task lines unchanged)."""
    rnd = random.Random(seed)
    ev = _events(template)
    by = {}
    for e in ev:
        by.setdefault(e["Event"], []).append(e)
    t_end = next(e for e in by["SparkListenerTaskEnd"] if e["Task Type"] == "ShuffleMapTask")
    job_start = by["SparkListenerJobStart"][0]
    ui = "org.apache.spark.sql.execution.ui."
    sql_start = by[ui + "SparkListenerSQLExecutionStart"][0]
    final_plan = by[ui + "SparkListenerSQLAdaptiveExecutionUpdate"][-1]
    driver_updates = by[ui + "SparkListenerDriverAccumUpdates"]
    st_sub, st_done = by["SparkListenerStageSubmitted"][0], by["SparkListenerStageCompleted"][0]
    t0 = by["SparkListenerApplicationStart"][0]["Timestamp"]
    dumps = orjson.dumps
    n_jobs = max(1, n_tasks // (2 * per_stage))
    task_id = 0
    stage_id = 0
    clock = float(t0 + 5000)
    with open(out, "wb", buffering=1 << 22) as fh:
        def w(event: dict) -> None:
            fh.write(dumps(event))
            fh.write(b"\n")

        for e in ev:   # the template's preamble: log start, env, app start, executors...
            if e["Event"] in ("SparkListenerLogStart", "SparkListenerResourceProfileAdded",
                              "SparkListenerEnvironmentUpdate", "SparkListenerApplicationStart"):
                w(e)
        for x in range(EXECUTORS):
            host = f"10.0.0.{x % HOSTS + 1}"
            w({"Event": "SparkListenerExecutorAdded", "Timestamp": t0 + 1000 + x,
               "Executor ID": str(x), "Executor Info": {"Host": host, "Total Cores": CORES,
                                                        "Log Urls": {}, "Attributes": {},
                                                        "Resources": {}, "Resource Profile Id": 0}})
            w({"Event": "SparkListenerBlockManagerAdded",
               "Block Manager ID": {"Executor ID": str(x), "Host": host, "Port": 40000 + x},
               "Maximum Memory": 2_000_000_000, "Timestamp": t0 + 1000 + x,
               "Maximum Onheap Memory": 2_000_000_000, "Maximum Offheap Memory": 0})
        slots = EXECUTORS * CORES
        for job in range(n_jobs):
            ids = [stage_id, stage_id + 1]
            js = copy.deepcopy(job_start)
            js.update({"Job ID": job, "Submission Time": int(clock), "Stage IDs": ids})
            props = {k: v for k, v in (js.get("Properties") or {}).items()
                     if not k.startswith("spark.sql.execution.")}
            if sql:
                props.update({"spark.sql.execution.id": str(job),
                              "spark.sql.execution.root.id": str(job)})
                # one SQL execution per job: the template's final plan, whose SQL metric
                # accumulators are the ones its TaskEnd accumulables update
                w(dict(sql_start, executionId=job, rootExecutionId=job, time=int(clock),
                       physicalPlanDescription=final_plan["physicalPlanDescription"],
                       sparkPlanInfo=final_plan["sparkPlanInfo"]))
            js["Properties"] = props
            infos = []
            for k, sid in enumerate(ids):
                info = dict(js["Stage Infos"][0])
                info.update({"Stage ID": sid, "Stage Attempt ID": 0, "Number of Tasks": per_stage,
                             "Parent IDs": [ids[0]] if k else [], "RDD Info": []})
                infos.append(info)
            js["Stage Infos"] = infos
            w(js)
            for k, sid in enumerate(ids):
                sub = copy.deepcopy(st_sub)
                sub["Stage Info"].update(infos[k])
                sub["Stage Info"]["Submission Time"] = int(clock)
                w(sub)
                free = [(clock + 5.0, s) for s in range(slots)]   # earliest-free slot
                pending = []
                for index in range(per_stage):
                    launch, s = free[0]
                    dur = max(5.0, rnd.lognormvariate(5.0, 0.6))  # ~150 ms median
                    if rnd.random() < 0.002:
                        dur *= 8                                  # stragglers
                    finish = launch + dur
                    heapq.heapreplace(free, (finish, s))
                    executor = str(s // CORES)
                    pending.append((launch, 0, task_id, index, executor, dur))
                    pending.append((finish, 1, task_id, index, executor, dur))
                    task_id += 1
                pending.sort()
                for when, kind, tid, index, executor, dur in pending:
                    info = {"Task ID": tid, "Index": index, "Attempt": 0, "Partition ID": index,
                            "Launch Time": int(when - (dur if kind else 0)),
                            "Executor ID": executor, "Host": f"10.0.0.{int(executor) % HOSTS + 1}",
                            "Locality": "PROCESS_LOCAL", "Speculative": False,
                            "Getting Result Time": 0, "Finish Time": int(when) if kind else 0,
                            "Failed": False, "Killed": False}
                    if not kind:
                        w({"Event": "SparkListenerTaskStart", "Stage ID": sid,
                           "Stage Attempt ID": 0, "Task Info": info | {"Accumulables": []}})
                        continue
                    end = dict(t_end)
                    info["Accumulables"] = t_end["Task Info"]["Accumulables"]
                    run_ms = int(dur * 0.9)
                    m = copy.deepcopy(t_end["Task Metrics"])
                    m.update({"Executor Deserialize Time": int(dur * 0.03),
                              "Executor Run Time": run_ms,
                              "Executor CPU Time": int(run_ms * rnd.uniform(0.4, 0.95) * 1e6),
                              "JVM GC Time": int(run_ms * rnd.uniform(0, 0.1)),
                              "Result Size": 2500 + rnd.randrange(500)})
                    if k == 0:
                        m["Input Metrics"] = {"Bytes Read": rnd.randrange(60 << 20, 70 << 20),
                                              "Records Read": 1_000_000}
                        m["Shuffle Write Metrics"] = {
                            "Shuffle Bytes Written": rnd.randrange(4 << 20, 6 << 20),
                            "Shuffle Write Time": int(run_ms * 0.05 * 1e6),
                            "Shuffle Records Written": 5000}
                    else:
                        srm = dict(m["Shuffle Read Metrics"])
                        srm.update({"Fetch Wait Time": int(run_ms * rnd.uniform(0, 0.2)),
                                    "Remote Bytes Read": rnd.randrange(4 << 20, 6 << 20),
                                    "Local Bytes Read": rnd.randrange(0, 1 << 20),
                                    "Total Records Read": 5000})
                        m["Shuffle Read Metrics"] = srm
                    end.update({"Stage ID": sid, "Stage Attempt ID": 0,
                                "Task Type": "ShuffleMapTask" if k == 0 else "ResultTask",
                                "Task Info": info, "Task Metrics": m})
                    w(end)
                clock = max(f for f, _ in free)
                done = copy.deepcopy(st_done)
                done["Stage Info"].update(infos[k])
                done["Stage Info"].update({"Submission Time": int(sub["Stage Info"]["Submission Time"]),
                                           "Completion Time": int(clock) + 2})
                w(done)
                stage_id += 1
            clock += 40
            w({"Event": "SparkListenerJobEnd", "Job ID": job, "Completion Time": int(clock),
               "Job Result": {"Result": "JobSucceeded"}})
            if sql:
                for update in driver_updates:
                    w(dict(update, executionId=job))
                w({"Event": ui + "SparkListenerSQLExecutionEnd", "executionId": job,
                   "time": int(clock) + 5, "errorMessage": ""})
            clock += rnd.uniform(100, 400)                   # driver time between jobs
        w({"Event": "SparkListenerApplicationEnd", "Timestamp": int(clock) + 100})


# -- measurements, each in a fresh process --------------------------------------------------
CHILD = textwrap.dedent("""
    import json, resource, sys, time
    sys.path.insert(0, {root!r})
    mode, path = sys.argv[1], sys.argv[2]
    t = time.perf_counter()
    if mode == "orjson":
        from jupyter_perf.collect.eventlog import load_eventlog
        run = load_eventlog(path)
        n = len(run.tasks)
    elif mode == "dicts":
        import orjson
        from jupyter_perf.collect.eventlog.parser import split_accumulables
        from jupyter_perf.collect.eventlog.fields import conform_eventlog
        from jupyter_perf.collect.fields import flatten
        rows = []
        with open(path, "rb") as fh:
            for line in fh:
                if b'"SparkListenerTaskEnd"' not in line[:40]:
                    continue
                e = orjson.loads(split_accumulables(line)[0])  # same parse as load_eventlog
                info = e["Task Info"]
                info.pop("Accumulables", None)
                row = flatten(e.get("Task Metrics") or {{}})
                row.update(flatten({{"Task Info": info}}))
                row["Stage ID"], row["Stage Attempt ID"] = e["Stage ID"], e["Stage Attempt ID"]
                rows.append(row)
        tasks = conform_eventlog("tasks", rows)
        n = len(tasks)
    elif mode == "cli":
        import io, contextlib
        from jupyter_perf.cli import main
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = main(["analyze", path, "--json", "--no-save"])
        assert code == 0
        n = json.loads(buf.getvalue())["task_attempts"]
    secs = time.perf_counter() - t
    use = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)    # the reader's worker processes
    rss = use.ru_maxrss * 1024
    print(json.dumps({{"mode": mode, "seconds": secs, "peak_rss": rss, "tasks": n,
                      "worker_peak_rss": kids.ru_maxrss * 1024,
                      "cpu_seconds": use.ru_utime + use.ru_stime + kids.ru_utime + kids.ru_stime,
                      "worker_cpu_seconds": kids.ru_utime + kids.ru_stime}}))
""")


def load_average() -> str:
    """The 1, 5 and 15-minute load averages (``uptime``), to state with each figure."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def measure(mode: str, path: Path) -> dict:
    code = CHILD.format(root=str(ROOT))
    env = dict(os.environ, JUPYTER_PERF_HOME=str(path.parent / "jphome"))
    before = load_average()
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, mode, str(path)], capture_output=True,
                         text=True, env=env, check=False)
    wall = time.perf_counter() - t
    if out.returncode != 0:
        raise SystemExit(f"{mode} failed: {out.stderr.strip()[-2000:]}")
    import json
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r.update(process_seconds=wall, load=f"{before} -> {load_average()}")
    return r


def _app_id(path: Path) -> str:
    with open(path, "rb") as fh:
        for line in fh:
            if line.startswith(b'{"Event":"SparkListenerApplicationStart"'):
                return orjson.loads(line)["App ID"]
    raise SystemExit(f"{path}: no SparkListenerApplicationStart")


def _vm_hwm(pid: int) -> int:
    """Peak RSS (VmHWM) of a live process, bytes."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system, all threads) a live process has used, seconds."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure_history(path: Path, tasks: int) -> dict:
    """Spark's own History Server (pyspark's ``sbin/``, default settings: in-memory store,
    ``SPARK_DAEMON_MEMORY`` 1g) on a directory holding only ``path``: seconds from starting it
    until ``/applications`` lists the application (it has scanned the log), until
    ``/applications/{id}/stages`` answers (it has replayed the whole log into its store), and
    the JVM's peak RSS. Checks that the answer counts every task."""
    import shutil

    import requests

    sys.path.insert(0, str(ROOT / "tests" / "collect"))
    from sparkapps import HistoryServer

    work = path.parent / f"hs-{path.name}"
    shutil.rmtree(work, ignore_errors=True)
    (work / "logs").mkdir(parents=True)
    os.link(path, work / "logs" / path.name)       # same file, no copy
    app = _app_id(path)
    before = load_average()
    server = HistoryServer(str(work / "logs"), str(work))
    t = time.perf_counter()
    server.start()
    try:
        base = f"{server.url}/api/v1/applications"
        listed = None
        while listed is None:
            if time.perf_counter() - t > 1800:
                raise SystemExit("History Server did not list the application in 30 min")
            try:
                if any(a["id"] == app for a in requests.get(base, timeout=30).json()):
                    listed = time.perf_counter() - t
                    break
            except (requests.RequestException, ValueError):
                pass
            time.sleep(0.1)
        answer = requests.get(f"{base}/{app}/stages", timeout=1800)
        answered = time.perf_counter() - t
        answer.raise_for_status()
        stages = answer.json()
        pid_files = list((work / "pid").glob("*.pid"))
        pid = int(pid_files[0].read_text().strip()) if pid_files else 0
        rss, cpu = (_vm_hwm(pid), _cpu_seconds(pid)) if pid else (0, float("nan"))
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    done = sum(s["numCompleteTasks"] + s["numFailedTasks"] + s["numKilledTasks"] for s in stages)
    if done != tasks:
        raise SystemExit(f"History Server /stages counts {done} task attempts, the log {tasks}")
    return {"mode": "history", "seconds": answered, "listed_s": listed,
            "stages_s": answered - listed, "peak_rss": rss, "tasks": done, "cpu_seconds": cpu,
            "load": f"{before} -> {load_average()}"}


def _bench(args, sql: bool) -> None:
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    log = d / f"app-bench-{args.tasks}{'' if sql else '-nosql'}"
    if not log.exists():
        t = time.perf_counter()
        generate(Path(args.template), log, args.tasks, sql=sql)
        print(f"generated {log} in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    size = log.stat().st_size
    print(f"log: {size / 1e6:.0f} MB, {'with' if sql else 'without'} SQL events, template "
          f"{Path(args.template).name}, python {sys.version.split()[0]}, {os.cpu_count()} cores, "
          f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}", flush=True)
    modes = [m for m in args.modes.split(",") if m and not (args.skip_dicts and m == "dicts")]
    ratios: dict[str, list[float]] = {}
    for round_ in range(args.repeat):
        if args.repeat > 1:
            print(f" round {round_ + 1} of {args.repeat}", flush=True)
        rows = {}
        for mode in modes:
            r = measure_history(log, args.tasks) if mode == "history" else measure(mode, log)
            r["mb_per_s"] = size / 1e6 / r["seconds"]
            rows[mode] = r
            extra = (f"  (listed {r['listed_s']:.1f} s, then /stages {r['stages_s']:.1f} s)"
                     if mode == "history" else
                     f"  (process {r['process_seconds']:.1f} s; of the CPU, worker processes "
                     f"{r['worker_cpu_seconds']:.1f} s, their peak RSS "
                     f"{r['worker_peak_rss'] / 2**20:.0f} MiB each)")
            print(f"  {mode:<7} {r['tasks']:>8} tasks  {r['seconds']:7.1f} s  "
                  f"{r['mb_per_s']:6.0f} MB/s  peak RSS {r['peak_rss'] / 2**20:6.0f} MiB  "
                  f"CPU {r['cpu_seconds']:.1f} s{extra}  load {r['load']}", flush=True)
        if "history" in rows:
            hs = rows["history"]
            for mode, r in rows.items():
                if mode != "history":
                    ratios.setdefault(mode, []).append(r["seconds"] / hs["seconds"])
                    print(f"  {mode} / History Server /stages: "
                          f"{r['seconds'] / hs['seconds']:.2f}x (whole process: "
                          f"{r['process_seconds'] / hs['seconds']:.2f}x; CPU time: "
                          f"{r['cpu_seconds'] / hs['cpu_seconds']:.2f}x)", flush=True)
    for mode, rs in ratios.items():
        if len(rs) > 1:     # a busy host moves one pair by +-0.05x: the median of the pairs
            print(f"  {mode} / History Server /stages over {len(rs)} rounds: median "
                  f"{statistics.median(rs):.2f}x (each: "
                  f"{', '.join(f'{x:.2f}' for x in rs)})", flush=True)
    if args.zstd:
        import zstandard
        zlog = d / (log.name + ".zstd")
        if not zlog.exists():
            with open(log, "rb") as src, open(zlog, "wb") as dst:
                zstandard.ZstdCompressor(level=1).copy_stream(src, dst)
        r = measure("orjson", zlog)
        r["mode"] = "orjson+zstd"
        r["mb_per_s"] = size / 1e6 / r["seconds"]
        print(f"  zstd    {r['tasks']:>8} tasks  {r['seconds']:7.1f} s  {r['mb_per_s']:6.0f} MB/s "
              f"(uncompressed)  peak RSS {r['peak_rss'] / 2**20:6.0f} MiB  "
              f"[{zlog.stat().st_size / 1e6:.0f} MB on disk]  load {r['load']}", flush=True)
        if not args.keep:
            zlog.unlink()
    if not args.keep:
        log.unlink()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=250_000)
    ap.add_argument("--dir", default="/tmp/jp-eventlog-bench")
    ap.add_argument("--template", default=str(TEMPLATE))
    ap.add_argument("--zstd", action="store_true", help="also measure a zstd-compressed copy")
    ap.add_argument("--skip-dicts", action="store_true", help="skip the dict-per-task loader")
    ap.add_argument("--modes", default="orjson,dicts,cli",
                    help="comma-separated subset of orjson,dicts,cli,history (history: Spark's "
                         "own History Server on the same log, timed to its /stages answer)")
    ap.add_argument("--sql", choices=("yes", "no", "both"), default="yes",
                    help="the log with SQL events, without them, or both logs in turn")
    ap.add_argument("--keep", action="store_true", help="keep the generated logs")
    ap.add_argument("--repeat", type=int, default=1,
                    help="measure the modes this many times in turn (the History Server and "
                         "the CLI side by side each round) and give the median ratio")
    args = ap.parse_args()
    for sql in {"yes": (True,), "no": (False,), "both": (True, False)}[args.sql]:
        _bench(args, sql)


if __name__ == "__main__":
    main()
