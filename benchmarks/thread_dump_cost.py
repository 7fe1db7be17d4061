"""What one executor thread dump costs (issue P's coarser fallback, ``JUPYTER_PERF_PROFILER=
thread-dumps``: ``collect/profiler.ThreadDumpSampler``), and what sampling at the default rate
adds to a query, on ``local-cluster[2,1,1024]`` (two executor JVMs).

1. The latency of one ``GET /api/v1/applications/{app}/executors/{id}/threads`` (the driver
   asks the executor over RPC; it dumps every thread), idle and while a CPU-heavy query keeps
   both executors busy: what bounds the rate (a round dumps every executor in turn).
2. Pairs of the query measured without and with the thread-dump profile, order alternating:
   the query part is the window's wall time (``run.wall_ms``).

    python benchmarks/thread_dump_cost.py [--pairs 3] [--rows 8000000] [--idle 20]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--rows", type=int, default=8_000_000)
    p.add_argument("--idle", type=int, default=20)
    p.add_argument("--master", default="local-cluster[2,1,1024]")
    args = p.parse_args()

    import requests
    from sparkhelpers import make_spark

    import jupyter_perf as jp
    from jupyter_perf.collect import profiler

    spark = make_spark(args.master, warm_up=True, **{"spark.executor.memory": "512m"})
    sc = spark.sparkContext
    base = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}"
    http = requests.Session()

    def executors():
        return [e["id"] for e in http.get(f"{base}/executors", timeout=30).json()
                if e.get("totalCores")]

    def query():
        (spark.range(0, args.rows, 1, 4)
         .selectExpr("concat('abc', cast(id AS string), 'xyz') AS s")
         .where("s rlike '^a.*(1|2)3+x'").count())

    def dump_ms(ex):
        t0 = time.perf_counter()
        http.get(f"{base}/executors/{ex}/threads", timeout=30).raise_for_status()
        return (time.perf_counter() - t0) * 1000

    def cpu_ms(pids):
        """CPU time (user + system) of the processes so far, ms (Linux /proc)."""
        tick = os.sysconf("SC_CLK_TCK")
        total = 0.0
        for pid in pids:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) * 1000.0 / tick
        return total

    query()                                               # warm
    ids = executors()
    jvms = [int(sc._jvm.java.lang.ProcessHandle.current().pid())]
    jvms += list(profiler.executor_processes(str(sc.applicationId)))
    before_jvm, before_py = cpu_ms(jvms), time.process_time()
    idle = [dump_ms(ex) for _ in range(args.idle) for ex in ids]
    jvm_cpu = (cpu_ms(jvms) - before_jvm) / len(idle)
    py_cpu = (time.process_time() - before_py) * 1000 / len(idle)
    print(f"CPU per dump, idle executors: {jvm_cpu:.1f} ms in the driver and executor JVMs "
          f"({len(jvms)} JVMs), {py_cpu:.1f} ms in this Python process ({len(idle)} dumps)")
    busy: list[float] = []
    worker = threading.Thread(target=query)
    worker.start()
    while worker.is_alive():
        busy.extend(dump_ms(ex) for ex in ids)
    print(f"executors {ids}; load {os.getloadavg()[0]:.1f}")
    print(f"one dump, idle: median {statistics.median(idle):.1f} ms, p90 {pct(idle, .9):.1f} ms "
          f"({len(idle)} dumps)")
    print(f"one dump, busy: median {statistics.median(busy):.1f} ms, p90 {pct(busy, .9):.1f} ms "
          f"({len(busy)} dumps)")
    ratios = []
    for i in range(args.pairs):
        wall = {}
        for dumps in ((False, True) if i % 2 == 0 else (True, False)):
            if dumps:
                os.environ[profiler.METHOD_ENV] = "thread-dumps"
            run = jp.measure(query, spark=spark, store=False, profile=dumps)
            os.environ.pop(profiler.METHOD_ENV, None)
            wall[dumps] = run.wall_ms
            if dumps:
                s = jp.analyze(run).summary()["profile"]
                print(f"  {s['method']}: {s['samples']} samples, measured period "
                      f"{s['interval_ms']} ms", flush=True)
        ratios.append(wall[True] / wall[False])
        print(f"pair {i + 1}: plain {wall[False] / 1000:.2f} s, thread dumps "
              f"{wall[True] / 1000:.2f} s, ratio {ratios[-1]:.3f}", flush=True)
    print(f"median ratio {statistics.median(ratios):.3f} (min {min(ratios):.3f}, "
          f"max {max(ratios):.3f}); default rate {profiler.DUMP_INTERVAL_MS} ms; "
          f"load {os.getloadavg()[0]:.1f}")
    spark.stop()


if __name__ == "__main__":
    main()
