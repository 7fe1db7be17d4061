"""The embedded default SparkSession, with sparkmeasure attached.

``spark_session()`` returns the active session if there is one (never a
second one); otherwise it builds ``local[*]`` with the sparkmeasure jar that
matches the running Spark's Scala version, and with settings that make
executor memory metrics arrive during short cells. On a local master its Python
workers run the kernel's own interpreter unless ``PYSPARK_PYTHON`` or
``spark.pyspark.python`` names another, so pandas and Arrow UDFs see the kernel's packages.
"""
from __future__ import annotations

import sys
import time
from typing import Any

from ..errors import one_line
from . import jvm
from .session_state import (
    DEFAULT_CONF,
    SessionError,
    check_java,
    python_workers,
    session_state,
    sparkmeasure_package,
    warmed,
    worker_python,
)


def active_session():
    """The active SparkSession, or None. Never creates one.

    ``getActiveSession()`` reads a per-thread value in the JVM: after a Ctrl-C, py4j drops the
    interrupted connection and the next call runs on a new JVM thread that has no active
    session. The process's instantiated session (its context still running) is the same
    session then; without this fallback every cell after an interrupt started "a new" one
    (found by the soak, tests/reliability/test_soak.py)."""
    from pyspark.sql import SparkSession

    found = SparkSession.getActiveSession()
    if found is None:
        default = getattr(SparkSession, "_instantiatedSession", None)
        if default is not None and getattr(default.sparkContext, "_jsc", None) is not None:
            return default
    return found


def spark_session(master: str | None = None, app_name: str = "jupyter-perf",
                  warm_up: bool = True, remote: str | None = None, ui_url: str | None = None,
                  **conf: Any):
    """The embedded default session: ``local[*]`` with sparkmeasure attached.

    ``remote="local[N]"`` or ``remote="sc://host:port"`` gives a Spark Connect session instead
    (``collect/connect_session.py``); ``ui_url`` names that server's Spark UI for the reports.

    Keyword arguments are Spark settings, e.g.
    ``spark_session(**{"spark.sql.shuffle.partitions": "8"})``. An active session is
    returned unchanged. If the sparkmeasure jar cannot be resolved (no network, or no
    artifact for this Scala version), Spark starts without it and runs are collected from
    the REST API only; the reason travels with the session (``session_state``) and is
    shown on every report.
    """

    if remote is not None:          # Spark Connect (issue I)
        from .connect_session import connect_session
        return connect_session(remote, ui_url=ui_url, app_name=app_name, warm_up=warm_up, **conf)
    if ui_url is not None:
        raise SessionError("ui_url= names a Spark Connect server's UI: pass remote= too")
    existing = active_session()
    if existing is not None:
        return existing
    check_java()
    settings = dict(DEFAULT_CONF)
    settings.update({k: str(v) for k, v in conf.items()})
    packages = [p for p in settings.get("spark.jars.packages", "").split(",") if p]
    if not any("spark-measure" in p for p in packages):
        packages.append(sparkmeasure_package())
    settings["spark.jars.packages"] = ",".join(packages)
    master = master or settings.pop("spark.master", "local[*]")
    started = time.monotonic()
    log = jvm.current_log() if jvm.running_gateway() is not None else jvm.new_log_path()
    since = jvm.log_size(log) if log else 0
    try:
        return _started(warmed(_build(master, app_name, settings, log), warm_up), started, log)
    except Exception as exc:  # JVM start or Ivy resolution failed
        first = _first_line(exc)
        if "JAVA_GATEWAY_EXITED" not in first and "Java gateway process exited" not in first:
            # Spark itself refused (a bad setting, a port, memory): say what it said
            raise SessionError(f"could not start Spark: {first}{_see(log)}") from exc
        reason = (jvm.failure_in_log(log, since) if log else "") or first
    # Retry without sparkmeasure: a profiler must not stop Spark from starting.
    others = [p for p in packages if "spark-measure" not in p]
    settings["spark.jars.packages"] = ",".join(others)
    since = jvm.log_size(log) if log else 0
    try:
        spark = _build(master, app_name, settings, log)
    except Exception as exc2:
        why = (jvm.failure_in_log(log, since) if log else "") or _first_line(exc2)
        raise SessionError(f"could not start Spark: {why}; check that JDK 17 is installed "
                           f"(java -version) and JAVA_HOME points at it{_see(log)}") from exc2
    warmed(spark, warm_up)
    problem = (f"sparkmeasure ({','.join(p for p in packages if 'spark-measure' in p)}) could "
               f"not be loaded ({reason}); collecting from Spark's REST API only")
    session_state(spark.sparkContext).jar_problem = problem
    _started(spark, started, log)
    print(f"jupyter-perf: {problem}", file=sys.stderr)
    return spark


def _see(log: str) -> str:
    return f" (Spark's log: {log})" if log else ""


def _started(spark, started: float, log: str):
    """Say in one line that Spark is up, and where its own output goes."""
    session_state(spark.sparkContext).log_path = log
    print(f"Spark {spark.version} started in {time.monotonic() - started:.0f} s"
          + (f", log: {log}" if log else ""))
    return spark


def _first_line(exc: BaseException) -> str:
    """The JVM's own message for a Py4JJavaError (its Python text is a Java stack trace)."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            text = str(java.toString())
            if text.strip():
                return one_line(Exception(text), with_type=False)
        except Exception:
            pass
    return one_line(exc, with_type=False)


def _build(master: str, app_name: str, settings: dict[str, str], log: str = ""):
    """The session; the first one of the process starts the JVM with its output in ``log``.

    Its Python workers run the kernel's interpreter on a local master unless the user chose
    one (``session_state.worker_python``)."""
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    conf = SparkConf().setMaster(master).setAppName(app_name)
    for key, value in settings.items():
        if value != "":
            conf.set(key, value)
    with python_workers(worker_python(master, settings)):
        if log and jvm.running_gateway() is None:
            SparkContext(conf=conf, gateway=jvm.launch(conf, log))
        return SparkSession.builder.config(conf=conf).getOrCreate()
