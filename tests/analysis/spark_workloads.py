"""Spark workloads the analysis tests measure (importable by name from tests/analysis)."""
from __future__ import annotations


def hot_key_count(spark, rows: int = 2_000_000) -> None:
    """60% of the rows on one key, repartitioned by key and counted: one hot reduce task."""
    # Every row carries the same incompressible 64-character hash, so shuffled bytes grow
    # with rows on every partition (a constant key compresses better than varied ones and
    # would make the hot partition look slow *per byte*).
    df = spark.range(0, rows, 1, 6).selectExpr(
        "CASE WHEN id % 10 < 6 THEN 0 ELSE id % 997 + 1 END AS k",
        "sha2(cast(id AS string), 256) AS h")
    # count(x), not count(): the optimizer would prune the hashing
    (df.repartition(6, "k").selectExpr("k", "sha2(h, 256) AS x")
       .groupBy("k").agg({"x": "count"}).collect())
