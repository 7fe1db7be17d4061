"""Real Spark applications written as event logs, and a real History Server reading them.

``spark_apps(root)`` runs each application once per test session (Spark startup costs ~10 s
each) and returns {name: event-log path}; later callers get the cached logs. Applications:

* ``local``: ``local[2]``, plain log; a DataFrame groupBy, and an RDD shuffle reused by a
  second job so that job's map stage is **skipped**.
* ``retry``: ``local[2,2]``, lz4-compressed log; one task raises on attempt 0 and succeeds
  when retried.
* ``cluster``: ``local-cluster[2,1,1024]``, a rolled (``eventlog_v2_*``) zstd-compressed log;
  two executor JVMs, a real remote shuffle.
* ``sql_aqe`` / ``sql_noaqe``: ``local[2]``, AQE on / off, the SQL workloads of
  :func:`sql_workloads` (a shuffled join + aggregate, a broadcast join, a cached DataFrame
  read twice, a Python UDF), each its own SQL execution.
"""
from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests

APPS = ("local", "retry", "cluster")
SQL_APPS = ("sql_aqe", "sql_noaqe")
ALL_APPS = APPS + SQL_APPS
SQL_WORKLOADS = ("shuffled join + aggregate", "broadcast join", "cache", "cached read",
                 "python udf")


def sql_workloads(spark) -> None:
    """One SQL execution each, described by ``spark.job.description`` = its name."""
    from pyspark.sql import functions as F

    sc = spark.sparkContext
    facts = spark.range(0, 200_000, 1, 4).selectExpr("id", "id % 1000 AS k", "id % 7 AS v")
    dims = spark.range(0, 1000, 1, 2).selectExpr("id AS k", "concat('name-', id) AS name")
    sc.setJobDescription("shuffled join + aggregate")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    facts.join(dims, "k").groupBy("name").agg(F.sum("v").alias("s")).collect()
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", str(10 << 20))
    sc.setJobDescription("broadcast join")
    facts.join(F.broadcast(dims), "k").groupBy("v").count().collect()
    cached = facts.where("v < 3").cache()
    sc.setJobDescription("cache")
    cached.count()
    sc.setJobDescription("cached read")
    cached.groupBy("v").agg(F.max("id")).collect()

    @F.udf("long")
    def plus_one(x):
        return x + 1

    sc.setJobDescription("python udf")
    facts.limit(2000).select(plus_one("id").alias("p")).agg(F.sum("p")).collect()
    sc.setJobDescription(None)


def _run_app(name: str, log_dir: str, marker: str) -> None:
    from sparkhelpers import make_spark

    master = {"local": "local[2]", "retry": "local[2,2]", "cluster": "local-cluster[2,1,1024]",
              "sql_aqe": "local[2]", "sql_noaqe": "local[2]"}[name]
    # AQE's coalescing said explicitly: the first session of a test process starts the JVM
    # with its settings as JVM-wide defaults (collect/jvm.launch), which a later session
    # inherits unless it sets them (the golden verdicts' session turns coalescing off)
    conf = {"spark.eventLog.enabled": "true", "spark.eventLog.dir": log_dir,
            "spark.sql.adaptive.enabled": "true" if name == "sql_aqe" else "false",
            "spark.sql.adaptive.coalescePartitions.enabled": "true"}
    if name == "retry":
        conf.update({"spark.eventLog.compress": "true",
                     "spark.eventLog.compression.codec": "lz4"})
    if name == "cluster":
        conf.update({"spark.executor.memory": "768m", "spark.eventLog.compress": "true",
                     "spark.eventLog.compression.codec": "zstd",
                     "spark.eventLog.rolling.enabled": "true"})
    spark = make_spark(master, **conf)
    try:
        sc = spark.sparkContext
        if name == "local":
            spark.range(0, 200_000, 1, 4).selectExpr("id % 100 AS k", "id AS v") \
                .groupBy("k").sum("v").collect()
            pairs = sc.parallelize(range(20_000), 4).map(lambda i: (i % 50, i)).reduceByKey(
                lambda a, b: a + b)
            pairs.count()
            pairs.collect()              # the map stage's output is reused: a skipped stage
        elif name.startswith("sql_"):
            sql_workloads(spark)
        elif name == "retry":
            def boom_once(i):          # local, so cloudpickle ships it by value
                from pyspark import TaskContext

                ctx = TaskContext.get()
                if ctx.partitionId() == 1 and ctx.attemptNumber() == 0:
                    raise RuntimeError("planned failure on the first attempt")
                return i

            sc.setJobGroup("retry-group", "a task that fails once")
            sc.parallelize(range(1000), 4).map(boom_once).map(lambda i: (i % 7, 1)) \
                .reduceByKey(lambda a, b: a + b).collect()
        else:
            spark.range(0, 1_000_000, 1, 6).selectExpr("id % 500 AS k", "id AS v") \
                .groupBy("k").sum("v").collect()
        app_id = sc.applicationId
    finally:
        spark.stop()
    with open(marker, "w") as fh:
        fh.write(app_id)


def log_dir_of(root: str, name: str) -> str:
    """Where an app's log is: ``root``/logs, the SQL apps apart in ``root``/logs-sql (so a
    History Server on ``logs`` lists the three plain apps only)."""
    return os.path.join(root, "logs-sql" if name in SQL_APPS else "logs")


def spark_apps(root: str) -> dict[str, str]:
    """{app name: event log path} under ``root``, generated once per ``root``."""
    out = {}
    for name in ALL_APPS:
        log_dir = log_dir_of(root, name)
        os.makedirs(log_dir, exist_ok=True)
        marker = os.path.join(root, f"{name}.appid")
        if not os.path.exists(marker):
            _run_app(name, log_dir, marker)
        with open(marker) as fh:
            app_id = fh.read().strip()
        found = [n for n in os.listdir(log_dir) if app_id in n]
        assert len(found) == 1, (app_id, os.listdir(log_dir))
        out[name] = os.path.join(log_dir, found[0])
    return out


def app_ids(root: str, names: tuple[str, ...] = APPS) -> dict[str, str]:
    """{app name: Spark application id} of the apps :func:`spark_apps` wrote under ``root``."""
    out = {}
    for name in names:
        with open(os.path.join(root, f"{name}.appid")) as fh:
            out[name] = fh.read().strip()
    return out


def free_port() -> int:
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HistoryServer:
    """Spark's own History Server (pyspark's ``sbin/``), on loopback and a private port."""

    def __init__(self, log_dir: str, work_dir: str):
        import pyspark

        self.home = os.path.dirname(pyspark.__file__)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ)
        self.env.update({
            "SPARK_HOME": self.home,
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOG_DIR": os.path.join(work_dir, "log"),
            "SPARK_PID_DIR": os.path.join(work_dir, "pid"),
            "SPARK_IDENT_STRING": f"jp{self.port}",
            "SPARK_HISTORY_OPTS": " ".join([
                f"-Dspark.history.fs.logDirectory=file://{log_dir}",
                f"-Dspark.history.ui.port={self.port}",
                "-Dspark.history.fs.update.interval=1s",
            ]),
        })

    def _sbin(self, script: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", os.path.join(self.home, "sbin", script)], env=self.env,
                              capture_output=True, text=True, timeout=120)

    def start(self) -> "HistoryServer":
        out = self._sbin("start-history-server.sh")
        if out.returncode != 0:
            raise RuntimeError(f"start-history-server.sh failed: {out.stderr or out.stdout}")
        return self

    def wait_for(self, app_ids, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        want = set(app_ids)
        last = ""
        while time.monotonic() < deadline:
            try:
                apps = requests.get(f"{self.url}/api/v1/applications", timeout=5).json()
                seen = {a["id"] for a in apps}
                if want <= seen:
                    return
                last = json.dumps(sorted(seen))
            except (requests.RequestException, ValueError) as exc:
                last = repr(exc)
            time.sleep(0.5)
        logs = ""
        log_dir = self.env["SPARK_LOG_DIR"]
        for name in os.listdir(log_dir) if os.path.isdir(log_dir) else []:
            with open(os.path.join(log_dir, name), errors="replace") as fh:
                logs += fh.read()[-3000:]
        raise RuntimeError(f"History Server did not list {sorted(want)} in {timeout:.0f} s "
                           f"(last: {last}); its log:\n{logs}")

    def stop(self) -> None:
        self._sbin("stop-history-server.sh")


def logged_sql_app(root: Path, body):
    """Run ``body(spark)`` in a real ``local[2]`` application (AQE on) writing an event log
    under ``root/logs``; returns (what ``body`` returned, the event-log path, the run a real
    History Server on that log gives from REST)."""
    from sparkhelpers import make_spark

    import jupyter_perf as jp

    logs = Path(root) / "logs"
    logs.mkdir()
    spark = make_spark("local[2]", **{"spark.eventLog.enabled": "true",
                                      "spark.eventLog.dir": str(logs),
                                      "spark.sql.adaptive.enabled": "true",
                                      # said explicitly: see _run_app
                                      "spark.sql.adaptive.coalescePartitions.enabled": "true"})
    try:
        result = body(spark)
        app_id = spark.sparkContext.applicationId
    finally:
        spark.stop()
    (log,) = [os.path.join(logs, n) for n in os.listdir(logs) if app_id in n]
    server = HistoryServer(str(logs), str(Path(root) / "history")).start()
    try:
        server.wait_for([app_id])
        history = jp.load_rest(server.url, app_id)
    finally:
        server.stop()
    return result, log, history


# -- pytest fixtures (tests/conftest.py loads this module as a plugin: any test names them) ----


@pytest.fixture(scope="session")
def apps_root(tmp_path_factory):
    """Directory with the real applications' logs (``logs/``) and their ids (``*.appid``)."""
    # JP_TEST_SPARK_APPS=<dir> keeps the generated logs between sessions (for development)
    cached = os.environ.get("JP_TEST_SPARK_APPS")
    root = Path(cached) if cached else tmp_path_factory.getbasetemp() / "spark-apps"
    root.mkdir(parents=True, exist_ok=True)
    spark_apps(str(root))
    return root


@pytest.fixture(scope="session")
def apps(apps_root):
    """{name: event-log path}: ``local`` (plain), ``retry`` (lz4), ``cluster`` (rolled, zstd),
    ``sql_aqe`` and ``sql_noaqe`` (SQL workloads, AQE on and off)."""
    return spark_apps(str(apps_root))
