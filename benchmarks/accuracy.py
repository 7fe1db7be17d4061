"""How accurate is the replay? Real workloads on real Spark, side by side in one run.

1. Replay model error on every run: |simulated baseline - actual| / actual (target median <= 3%).
2. Slots what-if: predict a local[2] run from a local[1] run of the same job with
   ``whatif(slots_factor=2)`` and compare with the measured local[2] run (target <= 10%).

    python benchmarks/accuracy.py [--repeats 2]
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile


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


def run_all(master: str, repeats: int) -> dict[str, list]:
    import jupyter_perf as jp

    spark = jp.spark_session(master=master, warm_up=True, **{"spark.sql.shuffle.partitions": "8",
                                               "spark.sql.adaptive.enabled": "false",
                                               "spark.ui.port": "0"})
    results: dict[str, list] = {}
    for name, fn in workloads(spark).items():
        fn()                                           # warm-up, unmeasured
        results[name] = [jp.analyze(jp.measure(fn, spark=spark)) for _ in range(repeats)]
    spark.stop()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    os.environ.setdefault("JUPYTER_PERF_HOME", tempfile.mkdtemp(prefix="jp-accuracy-"))

    # local[1] and local[2] sessions alternate, so both see the same machine over time
    one: dict[str, list] = {}
    two: dict[str, list] = {}
    for _ in range(args.repeats):
        for master, into in (("local[1]", one), ("local[2]", two)):
            for name, analyses in run_all(master, 1).items():
                into.setdefault(name, []).extend(analyses)

    errors, slot_errors = [], []
    print(f"{'workload':<12} {'master':<9} {'wall s':>7} {'model err':>9}   "
          f"{'local[1] x2 predicted':>22} {'local[2] measured':>18} {'error':>6}")
    for name in one:
        for a1, a2 in zip(one[name], two[name]):
            errors += [a1.model_error, a2.model_error]
            predicted = a1.whatif(slots_factor=2.0)
            actual = a2.wall_ms
            err = abs(predicted - actual) / actual
            slot_errors.append(err)
            print(f"{name:<12} {'local[1]':<9} {a1.wall_ms / 1000:>7.2f} {a1.model_error:>8.1%}")
            print(f"{name:<12} {'local[2]':<9} {a2.wall_ms / 1000:>7.2f} {a2.model_error:>8.1%}   "
                  f"{predicted / 1000:>20.2f} s {actual / 1000:>16.2f} s {err:>6.1%}")
    print(f"\nreplay model error: median {statistics.median(errors):.1%}, "
          f"max {max(errors):.1%} over {len(errors)} runs (target median <= 3%)")
    print(f"slots what-if (local[1] x2 -> local[2]): median error "
          f"{statistics.median(slot_errors):.1%}, max {max(slot_errors):.1%} over "
          f"{len(slot_errors)} pairs (target <= 10%)")


if __name__ == "__main__":
    main()
