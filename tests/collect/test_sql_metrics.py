"""Spark's SQL metric display strings <-> normalised numbers (collect/sql_metrics.py)."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_perf.collect.sql_metrics import (
    AVERAGE_PREFIX,
    STATS_PREFIX,
    bytes_text,
    ms_text,
    parse,
    spark_text,
)

# Strings as Spark 3.5's /sql returned them for real queries (tests/collect/test_sql.py
# checks the live ones against Spark on every run).
REAL = [
    ("number of output rows", "100,000",
     dict(metric_type="sum", unit="rows", value=100_000.0, max_stage_id=-1)),
    ("spill size", "0.0 B", dict(metric_type="size", unit="bytes", value=0.0)),
    ("peak memory", "8.2 MiB", dict(metric_type="size", unit="bytes", value=8.2 * 2**20)),
    ("duration", "61 ms", dict(metric_type="timing", unit="ms", value=61.0)),
    ("time in aggregation build",
     "total (min, med, max (stageId: taskId))\n193 ms (2 ms, 65 ms, 115 ms (stage 21.0: task 18))",
     dict(metric_type="timing", unit="ms", value=193.0, min=2.0, med=65.0, max=115.0,
          max_stage_id=21, max_stage_attempt=0, max_task_id=18)),
    ("shuffle write time",
     "total (min, med, max (stageId: taskId))\n20 ms (1 ms, 6 ms, 11 ms (stage 21.0: task 20))",
     dict(metric_type="nsTiming", unit="ms", value=20.0, max_task_id=20)),
    ("peak memory", "total (min, med, max (stageId: taskId))\n1024.0 KiB (256.0 KiB, 256.0 KiB, "
     "256.0 KiB (stage 21.0: task 18))",
     dict(metric_type="size", value=1024.0 * 1024, min=256.0 * 1024)),
    ("duration", "total (min, med, max (stageId: taskId))\n1.8 s (134 ms, 734 ms, 739 ms "
     "(stage 21.0: task 18))", dict(value=1800.0, min=134.0)),
    ("avg hash probes per key", "1", dict(metric_type="average", unit="count", value=1.0)),
    ("avg hash probes per key",
     "(min, med, max (stageId: taskId)):\n(1.2, 1.5, 2 (stage 3.1: task 9))",
     dict(metric_type="average", min=1.2, med=1.5, max=2.0, max_stage_attempt=1,
          max_task_id=9)),
    ("time to build", "1.5 m", dict(value=90_000.0)),
    ("scan time", "total (min, med, max (stageId: taskId))\n1.25 h (0 ms, 0 ms, 1.25 h (driver))",
     dict(value=4_500_000.0, max_stage_id=-1, max=4_500_000.0)),
]


@pytest.mark.parametrize("name,text,want", REAL)
def test_real_spark_strings(name, text, want):
    got = parse(name, text)
    for key, value in want.items():
        assert got[key] == pytest.approx(value), key
    if "value" in want and want.get("metric_type") == "average" and "min" in want:
        assert math.isnan(got["value"])


def test_what_is_not_a_metric_string_is_refused():
    for text in ("", "fast", "total (min, med, max (stageId: taskId))\n1 ms", "1.0 XB", "1,0 s s"):
        with pytest.raises(ValueError):
            parse("x", text)


def test_spark_formatting_matches_sparks_own_strings():
    assert spark_text("sum", [99_000, 1_000], None) == "100,000"
    assert spark_text("size", [256 * 1024] * 4, (21, 0, 18)) == (
        STATS_PREFIX + "1024.0 KiB (256.0 KiB, 256.0 KiB, 256.0 KiB (stage 21.0: task 18))")
    assert spark_text("timing", [2, 65, 115, 11], (21, 0, 18)) == (
        STATS_PREFIX + "193 ms (2 ms, 65 ms, 115 ms (stage 21.0: task 18))")
    assert spark_text("timing", [61], (22, 0, 30)) == "61 ms"          # one value: no stats
    assert spark_text("nsTiming", [1_500_000, 2_600_000], (1, 0, 2)) == (
        STATS_PREFIX + "4 ms (1 ms, 2 ms, 2 ms (stage 1.0: task 2))")    # ns summed, then ms
    assert spark_text("average", [12, 15, 20], (3, 1, 9)) == AVERAGE_PREFIX + (
        "(1.2, 1.5, 2 (stage 3.1: task 9))")
    assert bytes_text(2 * 2**20) == "2.0 MiB" and bytes_text(2 * 2**20 - 1) == "2048.0 KiB"
    assert ms_text(999) == "999 ms" and ms_text(1250) == "1.3 s"         # Java rounds half up
    assert ms_text(3_600_000) == "1.00 h"


@settings(max_examples=300, deadline=None, database=None)
@given(kind=st.sampled_from(["sum", "size", "timing", "nsTiming"]),
       values=st.lists(st.integers(0, 2**50), min_size=1, max_size=6),
       where=st.tuples(st.integers(0, 10**6), st.integers(0, 5), st.integers(0, 10**9)))
def test_parse_reads_back_what_spark_writes(kind, values, where):
    name = {"sum": "number of output rows", "size": "data size", "timing": "duration",
            "nsTiming": "shuffle write time"}[kind]
    got = parse(name, spark_text(kind, values, where))
    assert got["metric_type"] == kind
    total = sum(values) // 1_000_000 if kind == "nsTiming" else sum(values)
    if kind == "sum":
        assert got["value"] == total                          # counts are exact
    else:
        # display precision: half a unit of the last digit shown (e.g. 1.1 s for 1135 ms)
        assert got["value"] == pytest.approx(total, rel=0.05, abs=1)
    if kind != "sum" and len(values) > 1:
        assert (got["max_stage_id"], got["max_stage_attempt"], got["max_task_id"]) == where
        assert got["min"] <= got["med"] <= got["max"]
