"""What every Spark session of jupyter-perf shares, classic and Connect alike: the settings
that make short cells measurable, the Python workers' interpreter, the sparkmeasure package,
the Java check, the first query that warms a session up, and the state kept per SparkContext.

A leaf: it imports nothing of the package but ``errors``, so ``collect/session.py`` (classic),
``collect/connect_session.py`` (Connect) and the measuring windows can all read it without
importing each other.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import subprocess
import sys
import threading
import weakref
from typing import Any, Iterator, Mapping

from ..errors import JupyterPerfError

SPARKMEASURE_VERSION = "0.24"
SPARKMEASURE_GROUP = "ch.cern.sparkmeasure"

# Settings that make the measurements useful in short notebook cells.
DEFAULT_CONF: dict[str, str] = {
    "spark.ui.showConsoleProgress": "false",          # the report, not a text bar, shows progress
    "spark.executor.heartbeatInterval": "1s",          # executor metrics arrive during short cells
    "spark.executor.metrics.pollingInterval": "250ms",
    "spark.executor.processTreeMetrics.enabled": "true",
    "spark.eventLog.logStageExecutorMetrics": "true",
    "spark.ui.retainedTasks": "1000000",               # keep every task of a cell for the REST API
    "spark.sql.ui.retainedExecutions": "200",
}


# The Python workers' interpreter. pyspark takes it from the PYSPARK_PYTHON environment variable
# alone, else `python3` on PATH: the classic client when its SparkContext is made
# (`sc.pythonExec`, sent with every UDF), and a Spark Connect server's planner from its JVM's
# environment (fixed when the JVM is launched). A session started in a kernel ignores
# `spark.pyspark.python` (Spark reads it only when spark-submit runs a .py file). Measured with
# pyspark 3.5.9 and 4.3.0, PYSPARK_PYTHON unset: a pandas UDF under `local[1]` ran the
# /usr/bin/python3 found on PATH and died with "No module named 'pandas'" (3.5) or
# "'pyarrow'" (4.x), with that setting or without.
WORKER_PYTHON_ENV = "PYSPARK_PYTHON"
WORKER_PYTHON_CONF = "spark.pyspark.python"


def is_local_master(master: str | None) -> bool:
    """Whether ``master`` runs its executors on this machine (local, local[N], local-cluster)."""
    m = (master or "").strip().lower()
    return m == "local" or m.startswith(("local[", "local-cluster["))


def worker_python(master: str | None, conf: Mapping[str, str],
                  environ: Mapping[str, str] | None = None) -> str | None:
    """The interpreter this session's Python workers should run, or None for pyspark's own.

    The user's choice wins: ``spark.pyspark.python`` in ``conf`` (made to work, as Spark's
    documentation says it does; Spark's own order puts it above the environment), then the
    ``PYSPARK_PYTHON`` environment variable (left to pyspark). With neither, and executors on
    this machine, the kernel's own interpreter: pandas and Arrow UDFs see the kernel's
    packages. ``spark.pyspark.driver.python`` names the driver's Python (the kernel itself,
    already running), not the workers', so it chooses nothing here.
    """
    environ = os.environ if environ is None else environ
    chosen = str(conf.get(WORKER_PYTHON_CONF) or "").strip()
    if chosen:
        return chosen
    if environ.get(WORKER_PYTHON_ENV):
        return None
    return (sys.executable or None) if is_local_master(master) else None


@contextlib.contextmanager
def python_workers(python: str | None) -> Iterator[None]:
    """``PYSPARK_PYTHON=python`` while a session starts (its SparkContext and, if it is the
    first of the process, its JVM read it then); the kernel's environment as it was after.
    ``None`` changes nothing."""
    if not python:
        yield
        return
    before = os.environ.get(WORKER_PYTHON_ENV)
    os.environ[WORKER_PYTHON_ENV] = python
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(WORKER_PYTHON_ENV, None)
        else:
            os.environ[WORKER_PYTHON_ENV] = before


class SessionError(JupyterPerfError):
    """A one-line problem starting Spark, with the next step in the message."""


@dataclasses.dataclass
class SessionState:
    """What jupyter-perf knows about one SparkContext; it lives and dies with that context."""

    jar_problem: str = ""    # why sparkmeasure is missing, shown on every report of the session
    log_path: str = ""       # where the JVM writes its output (jvm.py), for the report's notes
    listeners: Any = None    # collect.listener.Listeners, created on first use, reused by cells
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False)


_states: "weakref.WeakKeyDictionary[Any, SessionState]" = weakref.WeakKeyDictionary()
_states_lock = threading.Lock()


def session_state(sc) -> SessionState:
    """The state attached to SparkContext ``sc`` (created empty on first use).

    Keyed by the context object itself, weakly: a stopped and collected context takes its
    state with it, and a new context never inherits the listeners of an old one.
    """
    with _states_lock:
        for old in [k for k in _states if k is not sc and getattr(k, "_jsc", None) is None]:
            del _states[old]          # stopped contexts: their listeners would keep them alive
        state = _states.get(sc)
        if state is None:
            state = _states[sc] = SessionState()
        return state


def scala_binary_version(pyspark_version: str | None = None) -> str:
    """'2.12' for Spark 3.x, '2.13' for Spark 4.x (read from the jars when they are there)."""
    import pyspark

    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    try:
        for name in os.listdir(jars):
            if name.startswith("scala-library-") and name.endswith(".jar"):
                return ".".join(name[len("scala-library-"):-4].split(".")[:2])
    except OSError:
        pass
    major = int((pyspark_version or pyspark.__version__).split(".")[0])
    return "2.13" if major >= 4 else "2.12"


def sparkmeasure_package(scala: str | None = None) -> str:
    return f"{SPARKMEASURE_GROUP}:spark-measure_{scala or scala_binary_version()}:{SPARKMEASURE_VERSION}"


def check_java() -> str:
    """Return the java version line, or raise a SessionError that says what to install."""
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    if not java or not os.path.exists(java):
        raise SessionError("no Java runtime found: install JDK 17 (e.g. `apt-get install "
                           "openjdk-17-jdk-headless`) or set JAVA_HOME")
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    return (out.stderr or out.stdout).splitlines()[0] if (out.stderr or out.stdout) else "java"



def warmed(spark, warm_up: bool):
    """Run one tiny SQL query so the first measured cell is not mostly class loading.

    A fresh JVM spends seconds loading and compiling Spark SQL on its first query (15-30 s
    on a busy 2-core machine); measured, that shows as "driver-bound" for a cell that is not.
    """
    if warm_up:
        spark.range(0, 10, 1, 1).selectExpr("id % 2 AS k").groupBy("k").count().collect()
    return spark
