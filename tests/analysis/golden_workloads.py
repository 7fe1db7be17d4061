"""The golden-verdict workloads (issue W item 5): small real queries, each with one clear
bottleneck a Spark expert would name. Importable by name from tests/analysis.

Every workload takes the session and returns nothing; its data are made inside it (or by
``prepare``, not measured), sized to run in about a second on a quiet 2-core machine.
"""
from __future__ import annotations

import os
import tempfile

# The main session's settings (tests/analysis/test_golden_verdicts.py): 4 shuffle partitions
# from the session (not Spark's default 200), AQE on as in Spark 3.5/4.x but without
# coalescing, so a hot key stays one task of several (coalescing packs this little data into
# one partition, where no task can be compared with another).
SESSION_CONF = {"spark.sql.shuffle.partitions": "4",
                "spark.sql.adaptive.coalescePartitions.enabled": "false"}
# The spill case's own session: executors keep 2% of the heap for execution and storage.
SPILL_CONF = {"spark.sql.shuffle.partitions": "2", "spark.memory.fraction": "0.02"}


def skewed_join(spark) -> None:
    """70% of the left side's rows on key 0, sort-merge joined with a small table (the
    ``merge`` hint: no broadcast), then hashes per joined row: the hot key's reduce task
    does most of the work (enough of it that the driver's planning between AQE's stages
    stays well under half the wall time, even on a busy host). Five SHA-512 rounds per joined
    row: with three, the hot task's time beyond its stage's median was 30-38% of the task
    time on Spark 4, and in a fresh CI session's first workload it fell under the verdict's
    25% (SKEW_SHARE; called CPU-bound); with five it is 42-44%."""
    from pyspark.sql import functions as F
    big = spark.range(0, 300_000, 1, 4).selectExpr(
        "CASE WHEN id % 10 < 7 THEN 0 ELSE id % 1000 + 1 END AS k",
        "sha2(cast(id AS string), 256) AS h")
    small = spark.range(0, 1001, 1, 2).selectExpr("id AS k", "cast(id AS string) AS v")
    (big.join(small.hint("merge"), "k")
        .selectExpr("sha2(sha2(sha2(sha2(sha2(concat(h, v), 512), 512), 512), 512), 512) AS x")
        .agg(F.count("x")).collect())


def uniform_aggregate(spark) -> None:
    """Every task does the same CPU-heavy work (a SHA-256 per row), aggregated by key."""
    from pyspark.sql import functions as F
    (spark.range(0, 1_000_000, 1, 4)
          .selectExpr("id % 1000 AS k", "sha2(cast(id AS string), 256) AS h")
          .groupBy("k").agg(F.max("h").alias("m"), F.count("*").alias("n")).collect())


def python_udf(spark) -> None:
    """A row-at-a-time Python UDF doing CPU work per row."""
    from pyspark.sql import functions as F
    from pyspark.sql.functions import udf

    @udf("long")
    def slow_bucket(x):
        acc = 0
        for i in range(300):
            acc += (x * i) % 7
        return acc % 10

    # 36k rows, as pandas_udf below: at 12k a fresh Spark 4 environment once made the
    # driver's gaps 53% of the window ("Driver-bound") in a run on a quiet host
    spark.range(0, 36_000, 1, 2).select(slow_bucket("id").alias("b")).agg(F.sum("b")).collect()


def pandas_udf(spark) -> None:
    """A vectorised (Arrow) pandas UDF whose body still loops in Python."""
    from pyspark.sql import functions as F
    from pyspark.sql.functions import pandas_udf as _pandas_udf

    @_pandas_udf("long")
    def slow_score(s):
        return s.apply(lambda v: sum((v * i) % 7 for i in range(300)))

    # 36k rows (three times the first version's): the tasks' Python time dwarfs the driver's
    # own share of the window even when other processes slow the driver (at 12k rows a
    # loaded host once made the driver's gaps 52 % of the window on Spark 4: "Driver-bound")
    spark.range(0, 36_000, 1, 2).select(slow_score("id").alias("b")).agg(F.sum("b")).collect()


_DIR = os.path.join(tempfile.gettempdir(), f"jp-golden-{os.getuid()}")


def parquet_path() -> str:
    return os.path.join(_DIR, "wide.parquet")


def prepare(spark) -> None:
    """The Parquet file the scan reads (written once, not measured)."""
    path = parquet_path()
    if not os.path.exists(os.path.join(path, "_SUCCESS")):
        cols = [f"sha2(cast(id * {i} AS string), 256) AS c{i}" for i in range(8)]
        spark.range(0, 300_000, 1, 2).selectExpr("id", *cols).write.mode("overwrite").parquet(path)


def parquet_scan(spark) -> None:
    """Read and decode every column of a Parquet file (no-op sink: nothing but the scan)."""
    spark.read.parquet(parquet_path()).write.format("noop").mode("overwrite").save()


def wide_shuffle(spark) -> None:
    """Wide rows repartitioned round robin: the time is the shuffle (serialise, write, fetch)."""
    (spark.range(0, 200_000, 1, 4)
          .selectExpr("id", "repeat(cast(id AS string), 40) AS pad")
          .repartition(4).write.format("noop").mode("overwrite").save())


def driver_collect(spark) -> None:
    """Many rows collected to the driver and walked in Python: the time is the driver's."""
    rows = spark.range(0, 150_000, 1, 2).selectExpr("id", "cast(id AS string) AS s").collect()
    total = 0
    for r in rows:
        total += len(r.s) + len(str(r.asDict()))
    assert total > 0


def spill_sort(spark) -> None:
    """A sort of more data than the execution memory holds (the spill session): each of the
    two tasks generates its rows and sorts them, spilling. 1.2M rows: at 400k the whole query
    took 0.3-0.7 s, a third of it the driver's planning and job set-up between tasks, and on
    a fresh CI machine with both cores hogged that share reached 52% (a driver-bound verdict
    for a query whose tasks spent all their time sorting and spilling); at 1.2M it is 11-17%,
    quiet or busy."""
    (spark.range(0, 1_200_000, 1, 2)
          .selectExpr("reverse(cast(id * 7919 % 1000003 AS string)) AS h",
                      "repeat('x', 40) AS pad")
          .sortWithinPartitions("h")
          .write.format("noop").mode("overwrite").save())


def gc_heavy(spark) -> None:
    """collect_list into a few very large groups: millions of short-lived JVM objects.
    Two million rows: at one million GC was 12-19% of task time quiet and, with the host
    hogged, the no-GC what-if saved 6-17% — the GC hint's 10% line fell inside that on a
    landing host. Two million measured 14-20% quiet and an 18-24% saving hogged, while GC
    stays under the 30% that makes a run GC-bound."""
    from pyspark.sql import functions as F
    (spark.range(0, 2_000_000, 1, 2)
          .selectExpr("id % 64 AS k", "repeat(cast(id AS string), 8) AS s")
          .groupBy("k").agg(F.collect_list("s").alias("l"))
          .selectExpr("size(l)").collect())


_CACHED = {}


def prepare_cached(spark):
    df = _CACHED.get(id(spark))
    if df is None:
        # 1.2M rows: at 400k the tasks were short enough that a busy landing host made the
        # driver's gaps 52% of the window once ("Driver-bound")
        df = spark.range(0, 1_200_000, 1, 4).selectExpr(
            "id % 1000 AS k", "sha2(cast(id AS string), 256) AS h").cache()
        df.count()
        _CACHED[id(spark)] = df
    return df


def cached_reread(spark) -> None:
    """A cached table re-read and aggregated: nothing is read from storage."""
    from pyspark.sql import functions as F
    prepare_cached(spark).groupBy("k").agg(F.max("h")).collect()


TPCH_SCALE = 0.1    # ~600k lineitem rows: Q1 runs in a few seconds on local[2]


def prepare_tpch(spark) -> None:
    """The TPC-H tables as temporary views (tests/tpch.py: tpchgen-cli data, generated once
    per machine; not measured)."""
    from tpch import register
    register(spark, scale=TPCH_SCALE)


def tpch_q1(spark) -> None:
    """TPC-H Q1 (benchbox's text of TPC's template): a scan of lineitem aggregated into four
    groups — the time is the aggregate's expression work on every row. (Q3, Q6, Q9 and Q18 at
    this scale are not goldens: their driver share sits near the 50% that makes a cell
    driver-bound, and Q9's top operator changes between runs: docs/verdicts.md.)"""
    from tpch import query
    spark.sql(query(1)).collect()


CASES = {
    "skewed_join": skewed_join,
    "uniform_aggregate": uniform_aggregate,
    "python_udf": python_udf,
    "pandas_udf": pandas_udf,
    "parquet_scan": parquet_scan,
    "wide_shuffle": wide_shuffle,
    "driver_collect": driver_collect,
    "gc_heavy": gc_heavy,
    "cached_reread": cached_reread,
    "tpch_q1": tpch_q1,
}
SPILL_CASES = {"spill_sort": spill_sort}
