"""What CPU profiling (issue P: ``jp.measure(fn, profile=True)``, ``%%perfmeasure --profile``)
adds to the query part of a measured cell, side by side in one process.

One Spark session (``local[2]`` by default, or ``--master local-cluster[2,1,1024]``: the agent
loaded into each executor JVM with jcmd), one workload run as pairs — measured without and
with the profile, the order alternating each pair. The query part is the measuring window's
wall time (``run.wall_ms``: from the window's start to the end of the last job), so the
profiler's start, stop and dump are inside it. Printed: per pair the two times and their
ratio, then the median ratio and the samples' CPU against Spark's executor CPU.

    python benchmarks/profile_overhead.py [--pairs 7] [--rows 30000000] [--master local[2]]

``--python``: what sampling the Python UDF workers with py-spy (collect/pyprofiler.py) adds. The
workload is a Python UDF (pure-Python arithmetic per row; ``--rows`` rows, default 2000 then),
and each pair is two *profiled* windows: with py-spy unavailable (``JUPYTER_PERF_PY_SPY``
naming no file) and with it; printed as "plain" and "profiled".

Issue P's budget: <= 3% at the default rate (collect/profiler.INTERVAL_MS); on by default
only if <= 2%.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=7)
    p.add_argument("--rows", type=int, default=30_000_000)
    p.add_argument("--master", default="local[2]")
    p.add_argument("--python", action="store_true",
                   help="the cost of py-spy on a Python UDF (both sides profiled)")
    args = p.parse_args()
    if args.python and args.rows == p.get_default("rows"):
        args.rows = 2000

    from sparkhelpers import make_spark

    import jupyter_perf as jp
    from jupyter_perf.collect.profiler import INTERVAL_MS
    from jupyter_perf.collect.pyprofiler import BINARY_ENV

    spark = make_spark(args.master, warm_up=True, **{"spark.sql.shuffle.partitions": "8"})

    def query():
        (spark.range(0, args.rows, 1, 8)
         .selectExpr("id % 100003 AS k", "sha2(cast(id AS string), 256) AS h")
         .groupBy("k").agg({"h": "max"}).collect())

    if args.python:
        from pyspark.sql import functions as F

        def burn_rows(x):
            total = 0
            for i in range(10000):
                total += (x * i) % 7
            return total

        burn = F.udf(burn_rows, "long")

        def query():  # noqa: F811 (the Python workload instead)
            spark.range(0, args.rows, 1, 8).select(burn("id").alias("b")).agg(F.sum("b")).collect()

    def measured(profile: bool):
        if not args.python:
            return jp.measure(query, spark=spark, store=False, profile=profile)
        saved = os.environ.get(BINARY_ENV)
        if not profile:
            os.environ[BINARY_ENV] = "/nonexistent/py-spy"
        try:
            return jp.measure(query, spark=spark, store=False, profile=True)
        finally:
            if saved is None:
                os.environ.pop(BINARY_ENV, None)
            else:
                os.environ[BINARY_ENV] = saved

    query()                                           # warm: JIT, caches
    ratios, rows = [], []
    for i in range(args.pairs):
        order = (False, True) if i % 2 == 0 else (True, False)
        wall = {}
        for profile in order:
            run = measured(profile)
            wall[profile] = run.wall_ms
            if profile:
                s = jp.analyze(run).summary().get("profile") or {}
                rows.append((s.get("sampled_cpu_ms"), s.get("spark_cpu_ms"), s.get("samples"),
                             [w for w in run.warnings if "profile" in w]))
                if args.python:
                    py = s.get("python") or {}
                    print(f"  py-spy: {py.get('samples')} samples, sampled Python CPU "
                          f"{py.get('sampled_cpu_ms')} ms {py.get('note') or ''}", flush=True)
        ratios.append(wall[True] / wall[False])
        print(f"pair {i + 1}: plain {wall[False] / 1000:.2f} s, profiled {wall[True] / 1000:.2f} s,"
              f" ratio {ratios[-1]:.3f}", flush=True)
    print(f"\nmaster {args.master}, interval {INTERVAL_MS} ms, {args.pairs} pairs, "
          f"{'python UDF, py-spy off / on, ' if args.python else ''}"
          f"load {os.getloadavg()[0]:.1f}")
    print(f"median ratio profiled / plain: {statistics.median(ratios):.3f} "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f})")
    for sampled, spark_cpu, samples, warnings in rows[:3]:
        print(f"  samples {samples}: sampled CPU {sampled} ms vs Spark's executor CPU "
              f"{spark_cpu} ms {warnings or ''}")
    spark.stop()


if __name__ == "__main__":
    main()
