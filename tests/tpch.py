"""TPC-H data and queries for the project's tests and benchmarks.

    from tpch import query, register           # tests: importable by name (tests/conftest.py)
    register(spark)                            # 8 temp views over cached SF 0.01 Parquet
    spark.sql(query(9)).collect()

    register(spark, scale=1)                   # benchmarks: SF 1 (~1 GB of rows, ~350 MB files)

Benchmarks under ``benchmarks/`` import it the same way after
``sys.path.insert(0, "<repo>/tests")``. From a shell, ``python tests/tpch.py --scale 1``
generates a scale factor ahead of time and prints its directory.

* **Data**: ``tpchgen-cli`` (PyPI, Apache-2.0; a Rust port of TPC's ``dbgen``) writes one
  Parquet file per table. Each scale factor is generated once per machine into
  ``$JUPYTER_PERF_TPCH_DIR`` or ``$XDG_CACHE_HOME/jupyter-perf/tpch`` (default
  ``~/.cache/jupyter-perf/tpch``), as ``sf<N>/<table>.parquet``. Generation goes to a
  temporary directory that is renamed into place, so concurrent test processes never see a
  half-written scale factor (the second one to finish discards its copy).
* **Queries**: the 22 query texts come from ``benchbox`` (PyPI, MIT), which runs TPC's own
  ``qgen`` on TPC's query templates with the specification's default substitution parameters
  (``qgen -d``; Q15 as its CTE variant 15a, no view) and turns row counts into ``LIMIT``.
  The one edit for Spark SQL here: the trailing ``;`` is dropped. Nothing is copied into
  this repository; the texts are produced from the installed package at run time.
* **Licences**: tpchgen-cli is Apache-2.0 and benchbox is MIT: both allow this use.
  ``qgen`` and its templates are the TPC's TPC-H Tools, distributed under the TPC's End
  User License Agreement, which allows their use for benchmarking; benchbox ships them and
  we only run them. Timings from these queries are not TPC-H results (no audit, no
  full benchmark rules) and are never presented as such.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

TABLES = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")
TEST_SCALE = 0.01     # ~60k lineitem rows: every query runs in seconds on local[2]
BENCH_SCALE = 1
DIR_ENV = "JUPYTER_PERF_TPCH_DIR"


class TpchError(RuntimeError):
    """TPC-H data or queries could not be produced; the message says why."""


def cache_root() -> Path:
    """Where scale factors are kept (see the module docstring)."""
    if os.environ.get(DIR_ENV):
        return Path(os.environ[DIR_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "jupyter-perf" / "tpch"


def _scale_name(scale: float) -> str:
    if not scale > 0:
        raise TpchError(f"scale factor must be positive, not {scale!r}")
    return f"sf{float(scale):g}"


def _tpchgen() -> str:
    """The tpchgen-cli executable of this Python environment (or on PATH)."""
    here = os.path.join(sysconfig.get_path("scripts"), "tpchgen-cli")
    found = here if os.path.exists(here) else shutil.which("tpchgen-cli")
    if not found:
        raise TpchError("tpchgen-cli is not installed: pip install -e '.[test]'")
    return found


def data_dir(scale: float = TEST_SCALE) -> Path:
    """The directory of ``<table>.parquet`` files at ``scale``, generated on first use."""
    target = cache_root() / _scale_name(scale)
    if all((target / f"{t}.parquet").exists() for t in TABLES):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        out = subprocess.run([_tpchgen(), "parquet", "--scale-factor", f"{float(scale):g}",
                              "--output-dir", str(work)], capture_output=True, text=True)
        if out.returncode != 0:
            raise TpchError(f"tpchgen-cli failed ({out.returncode}): "
                            f"{(out.stderr or out.stdout).strip()[:300]}")
        missing = [t for t in TABLES if not (work / f"{t}.parquet").exists()]
        if missing:
            raise TpchError(f"tpchgen-cli wrote no {', '.join(missing)} in {work}")
        try:
            os.rename(work, target)        # atomic; fails if another process got there first
        except OSError:
            if not all((target / f"{t}.parquet").exists() for t in TABLES):
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def register(spark, scale: float = TEST_SCALE) -> Path:
    """Create (or replace) the 8 TPC-H tables as temporary views on ``spark``; returns the
    data directory."""
    root = data_dir(scale)
    for table in TABLES:
        spark.read.parquet(str(root / f"{table}.parquet")).createOrReplaceTempView(table)
    return root


@functools.lru_cache(maxsize=None)
def query(number: int) -> str:
    """The Spark SQL text of TPC-H query ``number`` (1-22)."""
    if not isinstance(number, int) or not 1 <= number <= 22:
        raise TpchError(f"TPC-H queries are numbered 1 to 22, not {number!r}")
    try:
        text = _qgen().get_query(number)
    except (OSError, subprocess.SubprocessError, RuntimeError) as exc:
        raise TpchError(f"benchbox's qgen failed for query {number}: {exc}") from None
    return text.strip().rstrip(";").strip()


@functools.lru_cache(maxsize=1)
def _qgen():
    try:
        from benchbox.core.tpch.queries import TPCHQueries
    except ImportError as exc:
        raise TpchError(f"benchbox is not installed ({exc}): pip install -e '.[test]'") from None
    return TPCHQueries()


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="generate TPC-H Parquet once (cached)")
    parser.add_argument("--scale", type=float, default=TEST_SCALE)
    print(data_dir(parser.parse_args().scale))
    sys.exit(0)
