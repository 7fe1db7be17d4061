"""Helpers of the Spark Connect tests (importable by name: ``from connectservers import ...``).

Real parts only: pyspark 4's own Connect server (``sbin/start-connect-server.sh``, its own
process, free gRPC and UI ports, on loopback), its Spark UI read over HTTP, and a small real
HTTP reverse proxy that serves a UI under a path prefix, as Jupyter's server proxy, Knox or
an ingress do.
"""
from __future__ import annotations

import http.server
import os
import signal
import socket
import subprocess
import threading
import time

import pytest
import requests
from sparkapps import free_port  # the tests import it from here too


def skip_unless_spark4() -> None:
    """Skip the calling test module (one line) where pyspark has no Connect server (3.5)."""
    import pyspark

    if int(pyspark.__version__.split(".")[0]) < 4:
        pytest.skip("Spark Connect servers ship with pyspark 4.x only: run make test-spark4",
                    allow_module_level=True)

# the client env of a remote("local[N]") session must not leak into a separate server
CLIENT_ENV = ("SPARK_REMOTE", "SPARK_LOCAL_REMOTE", "SPARK_CONNECT_MODE_ENABLED",
              "SPARK_CONNECT_AUTHENTICATE_TOKEN")


class ConnectServer:
    """pyspark's Spark Connect server in its own process (``local[2]``), started from sbin/."""

    CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"

    def __init__(self, work_dir: str, conf: dict[str, str] | None = None):
        import pyspark

        from jupyter_perf.collect.session_state import DEFAULT_CONF

        self.home = os.path.dirname(pyspark.__file__)
        self.port = free_port()
        self.ui_port = free_port()
        self.url = f"sc://127.0.0.1:{self.port}"
        self.ui = f"http://127.0.0.1:{self.ui_port}"
        self.work_dir = work_dir
        self.app_id = ""
        self.env = {k: v for k, v in os.environ.items() if k not in CLIENT_ENV}
        self.env.update({
            "SPARK_HOME": self.home,
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOG_DIR": os.path.join(work_dir, "log"),
            "SPARK_PID_DIR": os.path.join(work_dir, "pid"),
            "SPARK_IDENT_STRING": f"jpc{self.port}",
        })
        settings = dict(DEFAULT_CONF) | {
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.ui.port": str(self.ui_port),
            "spark.sql.shuffle.partitions": "4",
        } | (conf or {})
        self.args = ["--master", "local[2]"]
        for key, value in settings.items():
            self.args += ["--conf", f"{key}={value}"]

    def _sbin(self, script: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", os.path.join(self.home, "sbin", script), *args],
                              env=self.env, capture_output=True, text=True, timeout=120)

    def start(self, timeout: float = 240.0) -> "ConnectServer":
        out = self._sbin("start-connect-server.sh", *self.args)
        if out.returncode != 0:
            raise RuntimeError(f"start-connect-server.sh failed: {out.stderr or out.stdout}")
        started = time.monotonic()
        last = ""
        while time.monotonic() < started + timeout:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=2).close()
                apps = requests.get(f"{self.ui}/api/v1/applications", timeout=10).json()
                if apps:
                    self.app_id = apps[0]["id"]
                    return self
            except (OSError, requests.RequestException, ValueError) as exc:
                last = repr(exc)
            if self.pid() is None and time.monotonic() > started + 20:
                break                                   # the daemon died: say why below
            time.sleep(0.5)
        raise RuntimeError(f"the Connect server did not come up ({last}); its log:\n{self.log()}")

    def pid_file(self) -> str:
        return os.path.join(self.env["SPARK_PID_DIR"],
                            f"spark-{self.env['SPARK_IDENT_STRING']}-{self.CLASS}-1.pid")

    def pid(self) -> int | None:
        try:
            with open(self.pid_file()) as fh:
                pid = int(fh.read().strip())
            os.kill(pid, 0)
            return pid
        except (OSError, ValueError):
            return None

    def log(self) -> str:
        log_dir = self.env["SPARK_LOG_DIR"]
        text = ""
        for name in sorted(os.listdir(log_dir)) if os.path.isdir(log_dir) else []:
            with open(os.path.join(log_dir, name), errors="replace") as fh:
                text += fh.read()[-3000:]
        return text

    def kill(self) -> None:
        """SIGKILL the server process (a crash, not a shutdown) and wait until it is gone."""
        pid = self.pid()
        if pid is None:
            return
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while self.pid() is not None and time.monotonic() < deadline:
            time.sleep(0.1)

    def stop(self) -> None:
        if self.pid() is not None:
            self._sbin("stop-connect-server.sh")
        if self.pid() is not None:
            self.kill()


class _ProxyHandler(http.server.BaseHTTPRequestHandler):
    prefix = ""
    target = ""

    def do_GET(self):  # http.server's name
        if not self.path.startswith(self.prefix + "/"):
            self.send_error(404, "not under the proxy's prefix")
            return
        upstream = requests.get(self.target + self.path[len(self.prefix):], timeout=60)
        body = upstream.content
        self.send_response(upstream.status_code)
        self.send_header("Content-Type", upstream.headers.get("Content-Type", "text/plain"))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):   # keep the test output short
        pass


class ReverseProxy:
    """A real HTTP reverse proxy serving ``target`` under ``http://127.0.0.1:<port><prefix>``."""

    def __init__(self, target: str, prefix: str):
        handler = type("Handler", (_ProxyHandler,), {"prefix": prefix.rstrip("/"),
                                                     "target": target.rstrip("/")})
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{prefix.rstrip('/')}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "ReverseProxy":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def shuffle_query(spark) -> list:
    """Two shuffles (aggregate, then a global sort) over 4 partitions: several jobs and stages."""
    df = spark.range(0, 400_000, 1, 4).selectExpr("id % 97 AS k", "id AS v")
    return df.groupBy("k").sum("v").orderBy("k").collect()


def rest_stage_attempts(ui: str, app_id: str) -> dict[tuple[int, int], dict]:
    stages = requests.get(f"{ui}/api/v1/applications/{app_id}/stages",
                          params={"details": "false"}, timeout=60).json()
    return {(s["stageId"], s["attemptId"]): s for s in stages}


# ours (the analysis' stage table) -> (Spark's REST /stages field, Spark's unit per ours)
REST_STAGE_FIELDS = {
    "num_tasks": ("numTasks", 1), "executor_run_time_ms": ("executorRunTime", 1),
    "executor_cpu_time_ms": ("executorCpuTime", 1e6), "jvm_gc_time_ms": ("jvmGcTime", 1),
    "shuffle_fetch_wait_ms": ("shuffleFetchWaitTime", 1),
    "shuffle_write_time_ms": ("shuffleWriteTime", 1e6), "input_bytes": ("inputBytes", 1),
    "output_bytes": ("outputBytes", 1), "shuffle_read_bytes": ("shuffleReadBytes", 1),
    "shuffle_write_bytes": ("shuffleWriteBytes", 1),
    "memory_spilled_bytes": ("memoryBytesSpilled", 1),
}


def assert_stages_equal_rest(run, ui: str) -> None:
    """Per stage attempt of ``run``: our sums over task attempts == the server's REST /stages."""
    import jupyter_perf as jp

    table = jp.analyze(run).stage_table()
    assert not table.empty
    spark_view = rest_stage_attempts(ui, run.app_id)
    for _, row in table.iterrows():
        s = spark_view[(int(row["stage_id"]), int(row["attempt"]))]
        assert row["status"] == s["status"], row["stage_id"]
        assert row["task_attempts"] == sum(s[k] for k in ("numCompleteTasks", "numFailedTasks",
                                                           "numKilledTasks"))
        for ours, (theirs, per_ours) in REST_STAGE_FIELDS.items():
            assert row[ours] == pytest.approx(s[theirs] / per_ours, abs=1e-3), \
                (ours, row["stage_id"])


def stage_structure(run) -> list[tuple]:
    """What a query's plan made Spark run, independent of ids and timing: per job in order,
    its stages' (status, tasks, shuffle write?, shuffle read?)."""
    table = run.stage_table().set_index("stage_id")
    out = []
    for _, job in run.jobs.sort_values("job_id").iterrows():
        stages = []
        for stage_id in sorted(job["stage_ids"]):
            if stage_id not in table.index:
                continue
            s = table.loc[stage_id]
            stages.append((s["status"], int(s["num_tasks"]), bool(s["shuffle_write_bytes"] > 0),
                           bool(s["shuffle_read_bytes"] > 0)))
        out.append(tuple(stages))
    return out
