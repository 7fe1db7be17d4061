"""Spark Connect sessions for ``jp.spark_session(remote=...)``.

``remote="local[N]"`` starts a Spark Connect server inside this Python process, as pyspark's
own ``SparkSession.builder.remote("local[N]")`` does (same token, same ``spark.stop()``
behaviour), with three differences: the server's gRPC port is a free one (pyspark's is always
15002, so a second notebook on the machine could not start one), the server gets the
settings that make short cells measurable (``session_state.DEFAULT_CONF``), and its Python
workers run the kernel's interpreter unless the user chose one
(``session_state.worker_python``). Its UI is found by the window without help. And it starts
as quietly as a classic session: pyspark would launch the server's JVM with the kernel's
stdout and stderr, so Spark's log4j banner, its WARN lines and anything else the JVM prints
would land under the cell; here the JVM is launched first through ``jvm.launch`` with its
output in ``<store>/logs/spark-<time>-<pid>.log`` (pyspark's server start then reuses that
gateway), and the cell shows one line, "Spark 4.x started in N s (Spark Connect server at
sc://localhost:PORT), log: …".

``remote="sc://host:port"`` connects to a running server. Its Spark UI cannot be discovered
from the client: name it with ``ui_url=`` (or ``JUPYTER_PERF_SPARK_UI``) for full reports;
without it runs are client-only and say so. A classic session can stay open next to it.
"""
from __future__ import annotations

import json
import os
import socket
import time
import uuid
from typing import Any

from ..errors import one_line
from . import jvm
from .connect import endpoint, remember_ui
from .session_state import (
    DEFAULT_CONF,
    SessionError,
    check_java,
    python_workers,
    session_state,
    warmed,
    worker_python,
)

CONNECT_SERVICE = "org.apache.spark.sql.connect.service.SparkConnectService$"
CONNECT_PLUGIN = "SparkConnectPlugin"
TOKEN_ENV = "SPARK_CONNECT_AUTHENTICATE_TOKEN"
# what pyspark's _start_connect_server sets over the user's settings (pyspark 4.x)
SERVER_CONF = {
    "spark.plugins": "org.apache.spark.sql.connect.SparkConnectPlugin",
    "spark.sql.artifact.isolation.enabled": "true",
    "spark.sql.artifact.isolation.alwaysApplyClassloader": "true",
}
CLIENT_DEPS = ("pip install 'jupyter-perf[connect]' (pandas, pyarrow, grpcio, grpcio-status, "
               "googleapis-common-protos, zstandard)")


def connect_session(remote: str, ui_url: str | None = None, app_name: str = "jupyter-perf",
                    warm_up: bool = True, **conf: Any):
    """A Spark Connect session: ``remote`` is ``"local[N]"`` or ``"sc://host:port"``."""
    ConnectSession = _client_class()
    remote = str(remote).strip()
    settings = {k: str(v) for k, v in conf.items()}
    started, server = time.monotonic(), None
    if remote.startswith("local"):
        spark, server = _local(ConnectSession, remote, app_name, settings)
    elif remote.startswith("sc://"):
        spark = _remote(ConnectSession, remote, settings)
    else:
        raise SessionError(f"remote={remote!r}: use 'local[N]' (a Spark Connect server in this "
                           "kernel) or 'sc://host:port' (a running Spark Connect server)")
    if ui_url:
        remember_ui(spark, ui_url)
    try:
        warmed(spark, warm_up)
    except Exception as exc:
        raise SessionError(f"the Spark Connect server at {endpoint(spark) or remote} did not run "
                           f"a first query: {one_line(exc)}") from exc
    if server is not None:   # as the classic session: one line, once the first query ran
        version, port, log = server
        print(f"Spark {version} started in {time.monotonic() - started:.0f} s (Spark Connect "
              f"server at sc://localhost:{port})" + (f", log: {log}" if log else ""))
    return spark


# gRPC's fork handlers: in a process whose gRPC client runs, a fork that goes straight to exec
# (subprocess.Popen, pyspark launching a classic session's JVM, a notebook's `!cmd`) can abort
# the child before its exec (grpc/grpc#43055). Measured here with a Connect session up: 6 of
# 300 `Popen(["/bin/true"])` children died with SIGABRT; 0 of 300 with the handlers off. A
# kernel forks only to exec, so the handlers are turned off — unless the user chose a value —
# before the client first imports grpc (gRPC reads the variable at import).
FORK_SUPPORT_ENV = "GRPC_ENABLE_FORK_SUPPORT"


def _without_grpc_fork_handlers() -> None:
    import sys

    if "grpc" not in sys.modules:
        os.environ.setdefault(FORK_SUPPORT_ENV, "0")


def _client_class():
    _without_grpc_fork_handlers()
    try:
        from pyspark.sql.connect.session import SparkSession as ConnectSession
    except Exception as exc:   # ImportError, or pyspark's own dependency check
        raise SessionError(f"pyspark's Spark Connect client cannot load ({one_line(exc)}): "
                           f"{CLIENT_DEPS}") from exc
    return ConnectSession


def _local_port(sc) -> int:
    service = getattr(getattr(sc._jvm, CONNECT_SERVICE), "MODULE$")
    return int(service.localPort())


def _local(ConnectSession, master: str, app_name: str, settings: dict[str, str]):
    """The client session of a server in this process, and — when this call started the
    server — its Spark version, gRPC port and log file (None when it was already running)."""
    from pyspark import SparkContext

    check_java()
    sc = SparkContext._active_spark_context
    if sc is not None and CONNECT_PLUGIN not in (sc.getConf().get("spark.plugins") or ""):
        raise SessionError("a classic Spark session already runs in this kernel (one SparkContext "
                           "per process): stop it (spark.stop()) before jp.spark_session("
                           "remote='local[N]'), or connect to a separate server with "
                           "remote='sc://host:port'")
    server = None
    if sc is None:
        opts = {**DEFAULT_CONF, **settings, "spark.app.name": app_name}
        opts = {k: v for k, v in opts.items() if v != ""}
        opts.setdefault("spark.connect.grpc.binding.port", "0")   # free; the server says which
        os.environ["SPARK_LOCAL_REMOTE"] = "1"   # as pyspark: the client's stop() stops the server
        log = jvm.current_log() if jvm.running_gateway() is not None else ""
        try:   # the server's planner reads PYSPARK_PYTHON from the JVM's environment
            with python_workers(worker_python(master, opts)):
                if jvm.running_gateway() is None:
                    log = _quiet_jvm(master, opts)
                ConnectSession._start_connect_server(master, opts)
        except SessionError:
            os.environ.pop("SPARK_LOCAL_REMOTE", None)
            raise
        except Exception as exc:
            os.environ.pop("SPARK_LOCAL_REMOTE", None)
            raise SessionError(f"could not start a local Spark Connect server: {one_line(exc)}; "
                               f"check that JDK 17 is installed (java -version){_see(log)}") from exc
        sc = SparkContext._active_spark_context
        session_state(sc).log_path = log
        server = (sc.version, _local_port(sc), log)
    # the session itself takes only runtime SQL settings (the rest went to the server above)
    runtime = {str(c._1()) for c in sc._jvm.PythonSQLUtils.listRuntimeSQLConfigs()}
    session_opts = {k: v for k, v in settings.items() if k in runtime and v != ""}
    port = _local_port(sc)
    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"
    os.environ.setdefault("SPARK_LOCAL_REMOTE", "1")
    spark = ConnectSession.builder.config(map=session_opts).remote(f"sc://localhost:{port}").create()
    return spark, server


def _see(log: str) -> str:
    return f" (Spark's log: {log})" if log else ""


def _quiet_jvm(master: str, opts: dict[str, str]) -> str:
    """Launch the server's JVM with its output in a new log file (``jvm.launch``, as the classic
    session does) and hand its gateway to pyspark, whose ``_start_connect_server`` then makes
    the SparkContext on it instead of launching a JVM that writes into the cell. Returns the
    log's path.

    The JVM gets what pyspark's own launch would give it: the same settings on its command
    line (pyspark's ``PYSPARK_REMOTE_INIT_CONF_*``, the user's, the master, the Connect plugin)
    and the same environment, the authentication token included (the server reads it from its
    environment, so it is set here as pyspark would set it a moment later).
    """
    from pyspark import SparkConf, SparkContext

    conf = {}
    for i in range(int(os.environ.get("PYSPARK_REMOTE_INIT_CONF_LEN", "0") or 0)):
        conf = json.loads(os.environ[f"PYSPARK_REMOTE_INIT_CONF_{i}"])
    conf.update(opts)
    conf["spark.master"] = master
    for key in ("spark.remote", "spark.api.mode"):
        conf.pop(key, None)
    conf.update(SERVER_CONF)
    token_set = TOKEN_ENV not in os.environ
    if token_set:
        os.environ[TOKEN_ENV] = str(opts.get("spark.connect.authenticate.token") or uuid.uuid4())
    log = jvm.new_log_path()
    since = jvm.log_size(log)
    spark_conf = SparkConf(loadDefaults=False)
    spark_conf.setAll([(str(k), str(v)) for k, v in conf.items()])
    try:
        gateway = jvm.launch(spark_conf, log)
    except Exception as exc:
        if token_set:
            os.environ.pop(TOKEN_ENV, None)
        why = jvm.failure_in_log(log, since) or one_line(exc, with_type=False)
        raise SessionError(f"could not start a local Spark Connect server: {why}; check that "
                           f"JDK 17 is installed (java -version){_see(log)}") from exc
    SparkContext._ensure_initialized(gateway=gateway)
    return log


def _remote(ConnectSession, url: str, settings: dict[str, str]):
    try:
        try:
            from pyspark.sql.connect.client import DefaultChannelBuilder as Builder
        except ImportError:   # the pyspark 3.5 client: one concrete ChannelBuilder
            from pyspark.sql.connect.client import ChannelBuilder as Builder
        builder = Builder(url)
        host, _, port = str(builder.endpoint).rpartition(":")
        host, port = host.strip("[]"), int(port)
    except Exception as exc:
        raise SessionError(f"{url!r} is not a Spark Connect URL ({one_line(exc)}); "
                           "use sc://host:port") from exc
    active = ConnectSession.getActiveSession()
    if (active is not None and not getattr(active, "is_stopped", False)
            and endpoint(active) == builder.endpoint):
        return active
    try:   # the client's own retries would wait ~10 minutes for a server that is not there
        socket.create_connection((host, port), timeout=5).close()
    except OSError as exc:
        raise SessionError(f"no Spark Connect server answers at {host}:{port} "
                           f"({exc.strerror or type(exc).__name__}): start one "
                           "($SPARK_HOME/sbin/start-connect-server.sh) or check the address") from exc
    return ConnectSession.builder.config(map=settings).remote(url).create()
