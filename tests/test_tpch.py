"""The TPC-H helper (tests/tpch.py): data generated once by tpchgen-cli, 22 Spark SQL texts
from benchbox's qgen, temp views on a real Spark session."""
from __future__ import annotations

import os

import pyarrow.parquet as pq
import pytest
import tpch


def test_a_scale_factor_is_generated_once_and_kept(tmp_path, monkeypatch):
    monkeypatch.setenv(tpch.DIR_ENV, str(tmp_path))
    first = tpch.data_dir(0.001)
    assert first == tmp_path / "sf0.001"
    files = {t: first / f"{t}.parquet" for t in tpch.TABLES}
    stamps = {t: os.stat(p).st_mtime_ns for t, p in files.items()}
    # the specification's fixed-size tables
    assert pq.read_metadata(files["region"]).num_rows == 5
    assert pq.read_metadata(files["nation"]).num_rows == 25
    assert pq.read_metadata(files["lineitem"]).num_rows > pq.read_metadata(
        files["orders"]).num_rows > 0
    assert tpch.data_dir(0.001) == first
    assert {t: os.stat(p).st_mtime_ns for t, p in files.items()} == stamps   # not regenerated
    assert sorted(os.listdir(tmp_path)) == ["sf0.001"]                        # no temp dirs left


def test_default_cache_location(monkeypatch, tmp_path):
    monkeypatch.delenv(tpch.DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert tpch.cache_root() == tmp_path / "jupyter-perf" / "tpch"
    with pytest.raises(tpch.TpchError, match="scale factor must be positive"):
        tpch.data_dir(0)


def test_the_22_queries_are_spark_sql_texts():
    texts = {n: tpch.query(n) for n in range(1, 23)}
    assert all(t and not t.endswith(";") for t in texts.values())
    assert "lineitem" in texts[1] and "group by" in texts[1].lower()
    assert texts[18].rstrip().endswith("LIMIT 100")           # qgen's row count, as LIMIT
    assert texts[15].lstrip().lower().startswith("with")     # 15a: a CTE, no view
    for bad in (0, 23, "1"):
        with pytest.raises(tpch.TpchError, match="numbered 1 to 22"):
            tpch.query(bad)


def test_every_query_resolves_on_spark_and_q1_q6_run(spark_local):
    root = tpch.register(spark_local)
    assert root == tpch.data_dir()
    for n in range(1, 23):          # parsing and analysis are eager: names, types, functions
        spark_local.sql(tpch.query(n))
    q1 = spark_local.sql(tpch.query(1)).collect()
    flags = {(r["l_returnflag"], r["l_linestatus"]) for r in q1}
    assert flags == {("A", "F"), ("N", "F"), ("N", "O"), ("R", "F")}
    lineitem = spark_local.table("lineitem").count()
    assert sum(r["count_order"] for r in q1) <= lineitem
    assert len(spark_local.sql(tpch.query(6)).collect()) == 1
