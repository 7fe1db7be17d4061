"""How accurate is the replay? Real workloads on real Spark, side by side in one run.

1. Replay model error on every run: |simulated baseline - actual| / actual (target median <= 3%).
2. Slots what-if: predict a local[2] run from a local[1] run of the same job with
   ``whatif(slots_factor=2)`` and compare with the measured local[2] runs (target <= 10%).
   Printed twice: with the host CPU floor (what the product reports, analysis/hostcpu.py) and
   with the plain replay, so the floor's effect is measured, not assumed.
3. Held-out coverage of the range (issue T item 6): the same local[1] runs with their host CPU
   samples dropped — what an event log or the History Server has — get a range from
   ``whatif_range(slots_factor=2)``; does the measured local[2] wall fall inside it?

Every session runs in a fresh Python process (its own JVM: pyspark keeps one JVM per process,
and a JIT warmed by an earlier session would favour whichever master ran second). Each
workload runs ``--warmups`` times unmeasured, then ``--repeats`` times measured; ``--rounds``
alternates local[1] and local[2] processes so both see the same machine over time. Per
workload the prediction (median over the local[1] runs) is compared with the median measured
local[2] run; the spread of the local[2] runs around their median is printed as the noise floor
no prediction can beat.

    python benchmarks/accuracy.py [--rounds 2 --repeats 3 --warmups 3]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile

WORKLOADS = ("groupby", "join", "sort", "skew", "python_rdd")


def workloads(spark):
    from pyspark.sql import functions as F

    def groupby():
        (spark.range(0, 16_000_000, 1, 12).selectExpr("id % 5003 AS k", "id AS v")
              .groupBy("k").agg(F.sum("v")).collect())

    def join():
        left = spark.range(0, 6_000_000, 1, 8).selectExpr("id % 200000 AS k", "id AS a")
        right = spark.range(0, 200_000, 1, 4).selectExpr("id AS k", "id * 2 AS b")
        left.join(right.hint("shuffle_hash"), "k").agg(F.sum("b")).collect()

    def sort():
        (spark.range(0, 5_000_000, 1, 8).selectExpr("sha2(cast(id AS string), 256) AS h")
              .orderBy("h").limit(10).collect())

    def skew():
        df = spark.range(0, 5_000_000, 1, 8).selectExpr(
            "CASE WHEN id % 10 < 5 THEN 0 ELSE id % 997 + 1 END AS k", "id AS v")
        (df.repartition(8, "k").selectExpr("k", "sha2(cast(v AS string), 256) AS h")
           .groupBy("k").count().collect())

    def python_udf():
        spark.sparkContext.parallelize(range(1_200_000), 8).map(lambda x: (x % 97) ** 2).sum()

    return {"groupby": groupby, "join": join, "sort": sort, "skew": skew,
            "python_rdd": python_udf}


def plain_slots(a, factor: float) -> float:
    """``whatif(slots_factor=factor)`` without the host CPU floor (the paper's replay)."""
    from jupyter_perf.analysis.replay import replay
    from jupyter_perf.analysis.whatif import predict

    sim = replay(a.timeline, a.timeline.duration, factor).total_ms
    return predict(a.actual_ms, a.driver_gap_ms, a.simulated_baseline_ms, sim)


def child(master: str, repeats: int, warmups: int) -> None:
    """One session: measure every workload; print one JSON line per measured run."""
    import jupyter_perf as jp

    spark = jp.spark_session(master=master, warm_up=True, **{
        "spark.sql.shuffle.partitions": "8", "spark.sql.adaptive.enabled": "false",
        "spark.ui.port": "0"})
    for name, fn in workloads(spark).items():
        for _ in range(warmups):
            fn()
        for _ in range(repeats):
            run = jp.measure(fn, spark=spark)
            a = jp.analyze(run)
            w = a.whatif_summary()
            # the same run as a log has it: no host samples -> a range
            held_out = jp.analyze(dataclasses.replace(run, host_cpu=run.host_cpu.iloc[0:0]))
            rng = held_out.whatif_range(slots_factor=2.0)
            print("RESULT " + json.dumps({
                "workload": name, "master": master, "wall_ms": a.wall_ms,
                "model_error": a.model_error, "x2_ms": a.whatif(slots_factor=2.0),
                "x2_plain_ms": plain_slots(a, 2.0),
                "x2_low_ms": rng["predicted_low_ms"], "x2_high_ms": rng["predicted_high_ms"],
                "busy_share": w["host_cpu_busy_share"], "cores": w["host_cores"]}), flush=True)
    spark.stop()


def session(master: str, repeats: int, warmups: int) -> list[dict]:
    out = subprocess.run([sys.executable, __file__, "--child", master, "--repeats", str(repeats),
                          "--warmups", str(warmups)], capture_output=True, text=True)
    rows = [json.loads(line[7:]) for line in out.stdout.splitlines() if line.startswith("RESULT ")]
    if out.returncode != 0 or not rows:
        tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"the {master} session failed: {tail}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmups", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("JUPYTER_PERF_HOME", tempfile.mkdtemp(prefix="jp-accuracy-"))
    if args.child:
        child(args.child, args.repeats, args.warmups)
        return

    rows: list[dict] = []
    for _ in range(args.rounds):
        for master in ("local[1]", "local[2]"):
            rows += session(master, args.repeats, args.warmups)

    med = statistics.median
    errors = [r["model_error"] for r in rows]
    floor_err, plain_err, spreads = [], [], []
    print(f"{'workload':<11} {'local[1] s':>10} {'busy':>5} {'predicted x2':>12} "
          f"{'(plain)':>8} {'local[2] s':>10} {'error':>7} {'(plain)':>8} {'noise':>6}")
    for name in WORKLOADS:
        one = [r for r in rows if r["workload"] == name and r["master"] == "local[1]"]
        two = [r for r in rows if r["workload"] == name and r["master"] == "local[2]"]
        actual = med([r["wall_ms"] for r in two])
        pred = med([r["x2_ms"] for r in one])
        plain = med([r["x2_plain_ms"] for r in one])
        noise = med([abs(r["wall_ms"] - actual) / actual for r in two])
        busy = med([r["busy_share"] or 0.0 for r in one])
        floor_err.append(abs(pred - actual) / actual)
        plain_err.append(abs(plain - actual) / actual)
        spreads.append(noise)
        print(f"{name:<11} {med([r['wall_ms'] for r in one]) / 1000:>10.2f} {busy:>5.0%} "
              f"{pred / 1000:>10.2f} s {plain / 1000:>6.2f} s {actual / 1000:>8.2f} s "
              f"{(pred - actual) / actual:>+7.1%} {(plain - actual) / actual:>+8.1%} {noise:>6.1%}")
    print(f"\nreplay model error: median {med(errors):.1%}, max {max(errors):.1%} over "
          f"{len(errors)} runs (target median <= 3%)")
    print(f"slots what-if (local[1] x2 -> local[2]), with the host CPU floor: median error "
          f"{med(floor_err):.1%}, max {max(floor_err):.1%} over {len(floor_err)} workloads "
          f"(target <= 10%)")
    print(f"  plain replay, no floor: median {med(plain_err):.1%}, max {max(plain_err):.1%}")
    print(f"  noise floor: local[2] runs of one workload spread {med(spreads):.1%} (median) "
          f"around their median")
    coverage(rows)


def coverage(rows: list[dict]) -> None:
    """Held-out: the range predicted from local[1] runs without host samples (medians of its
    ends over the runs) against the median measured local[2] wall."""
    med = statistics.median
    inside = 0
    print(f"\n{'workload':<11} {'range low':>10} {'range high':>11} {'local[2] s':>10} "
          f"{'inside':>6} {'width':>6}")
    for name in WORKLOADS:
        one = [r for r in rows if r["workload"] == name and r["master"] == "local[1]"
               and r.get("x2_high_ms") is not None]
        two = [r["wall_ms"] for r in rows if r["workload"] == name and r["master"] == "local[2]"]
        if not one or not two:
            continue
        lo, hi = med([r["x2_low_ms"] for r in one]), med([r["x2_high_ms"] for r in one])
        actual = med(two)
        ok = lo <= actual <= hi
        inside += ok
        print(f"{name:<11} {lo / 1000:>8.2f} s {hi / 1000:>9.2f} s {actual / 1000:>8.2f} s "
              f"{'yes' if ok else 'no':>6} {(hi - lo) / actual:>6.0%}")
    print(f"held-out range (local[1] without host samples, x2 -> local[2]): the measured wall "
          f"inside the range for {inside} of {len(WORKLOADS)} workloads")


if __name__ == "__main__":
    main()
