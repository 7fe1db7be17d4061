"""The Python UDF workers' samples in a profiled window (py-spy), on real Spark ``local[2]``,
issue P item 3.

A Python UDF whose hot function is known by construction (``burn_rows``: pure-Python
arithmetic per row; ``burn_batch``: the same loop in a pandas UDF) runs in a profiled window:
the hot functions include it with its file and line, attributed to the plan's Python
evaluation operator (BatchEvalPython, ArrowEvalPython), with the Python samples labelled with
py-spy's method. With py-spy unavailable (the one injected fault: ``JUPYTER_PERF_PY_SPY``
naming no file) the run still has its JVM profile and one line saying why Python has none.
"""
from __future__ import annotations

import os
import re

import pytest
from sparkhelpers import make_spark

import jupyter_perf as jp
from jupyter_perf.collect import profiler, pyprofiler

pytestmark = pytest.mark.spark4     # both legs: pyspark's workers differ between 3.5 and 4

# The UDFs' source, written to a file of its own so their file and lines are known; executed
# under a module name nobody can import, so cloudpickle ships them by value to the workers.
UDF_SOURCE = '''\
import pandas as pd


def burn_rows(x):
    total = 0
    for i in range(12000):
        total += (x * i) % 7
    return total


def burn_batch(s: pd.Series) -> pd.Series:
    out = []
    for x in s:
        total = 0
        for i in range(12000):
            total += (x * i) % 7
        out.append(total)
    return pd.Series(out)
'''
LINES = {name: i + 1 for i, line in enumerate(UDF_SOURCE.splitlines())
         for name in ("burn_rows", "burn_batch") if line.startswith(f"def {name}(")}


@pytest.fixture(scope="module")
def spark():
    session = make_spark("local[2]", **{"spark.sql.adaptive.enabled": "false"})
    yield session
    session.stop()


@pytest.fixture(scope="module")
def udfs(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("udfs") / "burn_udfs.py")
    with open(path, "w") as fh:
        fh.write(UDF_SOURCE)
    namespace = {"__name__": "jupyter_perf_test_burn_udfs"}
    exec(compile(UDF_SOURCE, path, "exec"), namespace)
    return path, namespace


def python_udf(spark, udfs):
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType

    burn = F.udf(udfs[1]["burn_rows"], LongType())
    spark.range(0, 1500, 1, 4).select(burn("id").alias("b")).agg(F.sum("b")).collect()


def pandas_udf(spark, udfs):
    from pyspark.sql import functions as F

    burn = F.pandas_udf(udfs[1]["burn_batch"], "long")
    spark.range(0, 1500, 1, 4).select(burn("id").alias("b")).agg(F.sum("b")).collect()


CASES = {"python": (python_udf, "burn_rows", "BatchEvalPython"),
         "pandas": (pandas_udf, "burn_batch", "ArrowEvalPython")}


@pytest.mark.skipif(pyprofiler.py_spy_binary() is None,
                    reason="no py-spy binary (pip install py-spy: a dependency of the package)")
@pytest.mark.parametrize("case", sorted(CASES))
def test_udf_function_and_line_on_its_operator(spark, udfs, case):
    workload, name, operator = CASES[case]
    run = jp.measure(lambda: workload(spark, udfs), spark=spark, store=False, profile=True)
    record = run.extra["profile"]
    assert record["method"] == profiler.METHOD, run.warnings       # the JVM part is there
    python = record["python"]
    if python["samples"] == 0 and "py-spy on process" in python["note"]:
        pytest.skip(f"py-spy may not read the workers here (ptrace): {python['note']}")
    assert python["method"] == "py-spy" and python["samples"] > 0, python
    assert python["interval_ms"] == 1000 / pyprofiler.RATE_HZ
    assert "not sampled" in python["sample"] and python["note"] == "", python
    # the Python rows: their own root, the executor the worker ran for (local: the driver)
    rows = [r for r in record["stacks"] if r[0].startswith(pyprofiler.PY_ROOT)]
    assert rows and all(len(r) == 3 and r[2] == "driver" for r in rows), rows[:3]
    assert sum(r[1] for r in rows) == python["samples"]
    a = jp.analyze(run)
    summary = a.summary()["profile"]
    assert summary["python"]["method"] == "py-spy"
    assert summary["python"]["samples"] == python["samples"]
    assert summary["python"]["sampled_cpu_ms"] == python["samples"] * python["interval_ms"]
    # the JVM's task-thread samples are counted apart (they are what Spark's CPU time measures)
    jvm = sum(c for f, c, *_ in a.profile.stacks if not f[0].startswith(pyprofiler.PY_ROOT))
    assert summary["samples"] == jvm
    # the UDF among the hottest functions, with its file and its def line, on its operator
    hot = a.hot_functions
    pattern = rf"^{name} \(.*burn_udfs\.py:{LINES[name]}\)$"
    mine = hot[hot["function"].str.contains(pattern, regex=True)]
    assert len(mine) == 1, hot.head(10)[["function", "self_samples", "operator"]].to_string()
    row = mine.iloc[0]
    assert row["self_samples"] > 0 and row["kind"] == "python"
    assert row["executor_ids"] == ["driver"]
    top = set(hot.head(5)["function"])
    assert row["function"] in top, hot.head(10)[["function", "self_samples"]].to_string()
    ops = run.operators
    node = ops[(ops["execution_id"] == row["execution_id"]) & (ops["node_id"] == row["node_id"])]
    # Spark 4 may run a plain Python UDF Arrow-optimised (spark.sql.execution.pythonUDF.arrow
    # .enabled): then its one Python evaluation operator is an ArrowEvalPython
    names = {operator, "ArrowEvalPython"} if spark.version >= "4" else {operator}
    python_nodes = [n for n in ops["name"] if n.endswith("EvalPython")]
    assert len(python_nodes) == 1 and python_nodes[0] in names, list(ops["name"])
    assert len(node) == 1 and node.iloc[0]["name"] == python_nodes[0], (row, list(ops["name"]))
    stages = {int(s) for s in run.stages["stage_id"]}
    assert set(row["stage_ids"]) and set(row["stage_ids"]) <= stages
    # the Profile tab's operator list has the Python samples on that operator
    op_row = [o for o in summary["operators"] if o["execution_id"] == row["execution_id"]
              and o["node_id"] == row["node_id"]]
    assert op_row and op_row[0]["python_samples"] >= row["self_samples"], summary["operators"]


def test_no_py_spy_gives_the_jvm_profile_and_one_line(spark, udfs, monkeypatch):
    missing = os.path.join(os.sep, "nonexistent", "py-spy")
    monkeypatch.setenv(pyprofiler.BINARY_ENV, missing)
    run = jp.measure(lambda: python_udf(spark, udfs), spark=spark, store=False, profile=True)
    record = run.extra["profile"]
    assert record["method"] == profiler.METHOD, run.warnings
    assert not [w for w in run.warnings if "profile" in w.lower()], run.warnings
    python = record["python"]
    assert python["method"] == "none" and python["samples"] == 0
    assert python["note"].startswith("no Python profile: py-spy not found") and \
        missing in python["note"] and "\n" not in python["note"], python
    assert not [r for r in record["stacks"] if r[0].startswith(pyprofiler.PY_ROOT)]
    a = jp.analyze(run)
    assert a.summary()["profile"]["python"]["note"] == python["note"]
    assert a.summary()["profile"]["samples"] > 0           # the JVM part
    assert not a.hot_functions["kind"].eq("python").all()
    assert not any(re.match(r"burn_rows ", f) for f in a.hot_functions["function"])
    assert a.summary()["stages"] and a.summary()["verdict"]


# -- the record and the rule, without Spark ------------------------------------------------
def test_parse_raw_leaves_out_process_frames():
    text = ('process 7:"python -m pyspark.daemon";process 9:"python -m pyspark.daemon";'
            "manager (pyspark/daemon.py:85);burn_rows (/tmp/u.py:4) 12\n"
            "garbage\n"
            'process 7:"python -m pyspark.daemon";<module> (pyspark/daemon.py:1) 0\n')
    assert pyprofiler.parse_raw(text) == [
        (["manager (pyspark/daemon.py:85)", "burn_rows (/tmp/u.py:4)"], 12)]


def test_python_rows_go_to_the_busiest_python_operator():
    import pandas as pd

    from jupyter_perf.analysis.profile import profile_of
    from jupyter_perf.model import Run

    def op(node, name, stages):
        return {"execution_id": 1, "node_id": node, "parent_ids": [], "name": name,
                "description": "", "codegen_id": -1, "cluster_id": -1,
                "stage_attempts": [[s, 0] for s in stages]}

    run = Run(kind="function")
    run.operators = pd.DataFrame([op(1, "BatchEvalPython", [3]), op(2, "ArrowEvalPython", [4]),
                                  op(3, "Range", [3, 4])])
    run.tasks = pd.DataFrame({"task_id": [1, 2], "stage_id": [3, 4], "stage_attempt": [0, 0],
                              "index": [0, 0], "executor_id": ["0", "1"],
                              "launch_ms": [0.0] * 2, "finish_ms": [1000.0] * 2,
                              "duration_ms": [1000.0] * 2, "run_ms": [900.0] * 2,
                              "cpu_ms": [100.0, 600.0], "deserialize_cpu_ms": [0.0] * 2,
                              "status": ["SUCCESS"] * 2})
    jvm = profiler.profile_record(
        "[Executor task launch worker for task 0.0 in stage 4.0 (TID 1) tid=1];"
        "java/lang/Thread.run;org/apache/spark/api/python/BasePythonRunner$ReaderIterator."
        "hasNext 5\n", 10)
    root = pyprofiler.PY_ROOT
    python = {"method": "py-spy", "interval_ms": 10.0, "rate_hz": 100, "sample": "s",
              "note": "", "samples": 20, "processes": 1,
              "counts": {(f"{root};manager (daemon.py:85);burn (/u.py:4)", "1"): 15,
                         (f"{root};manager (daemon.py:85)", "0"): 5}}
    run.extra["profile"] = record = profiler.merge_python(jvm, python)
    assert "counts" not in record["python"] and record["python"]["samples"] == 20
    assert [r[2] for r in record["stacks"] if r[0].startswith(root)] == ["1", "0"]
    result = profile_of(run)
    assert result.samples == 5 and result.sampled_cpu_ms == 50.0        # the JVM's alone
    assert result.python["samples"] == 20 and result.python["sampled_cpu_ms"] == 200.0
    hot = result.hot.set_index("function")
    # stage 4 ran more CPU: its ArrowEvalPython takes the Python workers' samples
    assert hot.loc["burn (/u.py:4)", "operator"] == "ArrowEvalPython #2"
    assert hot.loc["burn (/u.py:4)", "self_samples"] == 15
    assert hot.loc["burn (/u.py:4)", "share"] == pytest.approx(15 / 25)
    assert hot.loc["burn (/u.py:4)", "executor_ids"] == ["1"]
    arrow = next(o for o in result.operators if o["node_id"] == 2)
    assert arrow["samples"] == 25 and arrow["python_samples"] == 20
    assert arrow["sampled_ms"] == 250.0
