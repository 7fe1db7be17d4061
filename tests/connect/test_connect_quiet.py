"""Quiet everywhere (issue U7): ``jp.spark_session(remote="local[2]")`` starts as quietly as a
classic session. What a notebook cell shows is the kernel's stdout and stderr, and the JVM is a
child that inherits them: each test starts a session in a new Python process (a kernel's
stand-in), runs a query of several stages and a stage slow enough for Spark's console progress
bar, and reads everything that process and its JVM printed.

Spark's console progress bar is off in jupyter-perf's settings (``DEFAULT_CONF``); the tests
turn it on (``spark.ui.showConsoleProgress=true``) so that the JVM does draw one, and show that
it lands in the log file with Spark's log4j banner and WARN lines, not in the cell. The classic
session (3.5 and 4.x) is checked the same way, as a regression guard.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from connectservers import CLIENT_ENV

pytestmark = [pytest.mark.spark4, pytest.mark.fresh_jvm]

SCRIPT = """
import sys
import jupyter_perf as jp
from pyspark.sql import functions as F

conf = {"spark.ui.port": "0", "spark.sql.shuffle.partitions": "2",
        "spark.ui.showConsoleProgress": "true"}
if sys.argv[1] == "connect":
    spark = jp.spark_session(remote="local[2]", **conf)
else:
    spark = jp.spark_session(master="local[2]", **conf)
counts = spark.range(10**6).groupBy((F.col("id") % 3).alias("k")).count().collect()
slow = (spark.range(0, 4, 1, 2)
        .selectExpr("id % 2 AS k", "java_method('java.lang.Thread', 'sleep', cast(1500 as bigint)) AS s")
        .groupBy("k").agg(F.count("s")).collect())
print("counts", sorted(r["count"] for r in counts), len(slow))
spark.stop()
"""

# What Spark itself prints: none of it may reach the cell
NOISE = (
    (re.compile(r"\bWARN\b"), "a log4j WARN line"),
    (re.compile(r"\bERROR\b"), "a log4j ERROR line"),
    (re.compile(r"Using Spark's default log4j profile"), "the log4j banner"),
    (re.compile(r"Setting default log level"), "the log4j banner"),
    (re.compile(r"\[Stage \d+:"), "a console progress bar"),
    (re.compile(r"WARNING: Using incubator modules"), "the JVM's own warning"),
)
STARTED = re.compile(r"Spark (\d+\.\d+\.\d+) started in \d+ s"
                     r"(?P<connect> \(Spark Connect server at sc://localhost:\d+\))?, log: (?P<log>\S+)")
# Spark's own lines, one at least in every log (which ones depends on the version and machine:
# 3.5 with Ivy resolving sparkmeasure prints no log4j banner)
SPARK_SAID = re.compile(r"Using Spark's default log4j profile|:: resolving dependencies"
                        r"|^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (?:WARN|ERROR|INFO) ", re.MULTILINE)
# the classic session on this machine cannot resolve sparkmeasure for Spark 4 (no _2.13
# artifact): its one fallback line is jupyter-perf's, and allowed
OURS = "jupyter-perf: sparkmeasure ("


def run_session(mode: str, home) -> tuple[list[str], list[str]]:
    env = {k: v for k, v in os.environ.items() if k not in CLIENT_ENV}
    env["JUPYTER_PERF_HOME"] = str(home)
    out = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True,
                         timeout=900, env=env)
    assert out.returncode == 0, (out.stdout + out.stderr)[-4000:]
    return out.stdout.splitlines(), out.stderr.splitlines()


def assert_quiet(stdout: list[str], stderr: list[str], home, connect: bool) -> None:
    import pyspark

    shown = "\n".join(stdout + stderr)
    for pattern, what in NOISE:
        assert not pattern.search(shown), f"{what} reached the cell:\n{shown[-4000:]}"
    [started, counted] = stdout               # one line from jupyter-perf, one from the cell
    found = STARTED.fullmatch(started)
    assert found, started
    assert found.group(1) == pyspark.__version__
    assert bool(found.group("connect")) == connect, started
    assert counted == "counts [333333, 333333, 333334] 2"
    assert all(line.startswith(OURS) for line in stderr), stderr
    if connect:
        assert stderr == []
    log = found.group("log")
    assert os.path.dirname(log) == str(home / "logs")
    text = open(log, encoding="utf-8", errors="replace").read()
    assert SPARK_SAID.search(text), text[-3000:]             # Spark's output went here...
    assert re.search(r"\[Stage \d+:", text), text[-3000:]     # ... its progress bar too


def test_a_connect_local_session_starts_quietly(tmp_path):
    import pyspark

    if int(pyspark.__version__.split(".")[0]) < 4:
        pytest.skip("Spark Connect servers ship with pyspark 4.x only: run make test-spark4")
    stdout, stderr = run_session("connect", tmp_path)
    assert_quiet(stdout, stderr, tmp_path, connect=True)


def test_a_classic_session_starts_quietly(tmp_path):
    stdout, stderr = run_session("classic", tmp_path)
    assert_quiet(stdout, stderr, tmp_path, connect=False)
