"""Real Spark applications written as event logs, and a real History Server reading them.

``spark_apps(root)`` runs each application once per test session (Spark startup costs ~10 s
each) and returns {name: event-log path}; later callers get the cached logs. Applications:

* ``local``: ``local[2]``, plain log; a DataFrame groupBy, and an RDD shuffle reused by a
  second job so that job's map stage is **skipped**.
* ``retry``: ``local[2,2]``, lz4-compressed log; one task raises on attempt 0 and succeeds
  when retried.
* ``cluster``: ``local-cluster[2,1,1024]``, a rolled (``eventlog_v2_*``) zstd-compressed log;
  two executor JVMs, a real remote shuffle.
"""
from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import time
from pathlib import Path

import requests

APPS = ("local", "retry", "cluster")


def _run_app(name: str, log_dir: str, marker: str) -> None:
    from sparkhelpers import make_spark

    master = {"local": "local[2]", "retry": "local[2,2]",
              "cluster": "local-cluster[2,1,1024]"}[name]
    conf = {"spark.eventLog.enabled": "true", "spark.eventLog.dir": log_dir,
            "spark.sql.adaptive.enabled": "false"}
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


def spark_apps(root: str) -> dict[str, str]:
    """{app name: event log path} under ``root``/logs, generated once per ``root``."""
    log_dir = os.path.join(root, "logs")
    os.makedirs(log_dir, exist_ok=True)
    out = {}
    for name in APPS:
        marker = os.path.join(root, f"{name}.appid")
        if not os.path.exists(marker):
            _run_app(name, log_dir, marker)
        with open(marker) as fh:
            app_id = fh.read().strip()
        found = [n for n in os.listdir(log_dir) if app_id in n]
        assert len(found) == 1, (app_id, os.listdir(log_dir))
        out[name] = os.path.join(log_dir, found[0])
    return out


def app_ids(root: str) -> dict[str, str]:
    """{app name: Spark application id} of the apps :func:`spark_apps` wrote under ``root``."""
    out = {}
    for name in APPS:
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


# -- pytest fixtures (import them into a test module: ``from sparkapps import apps, ...``) ----
import pytest  # noqa: E402


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
    """{name: event-log path}: ``local`` (plain), ``retry`` (lz4), ``cluster`` (rolled, zstd)."""
    return spark_apps(str(apps_root))
