"""A real Spark standalone cluster on this machine: one Master and Workers, each its own JVM.

pyspark's wheel ships no ``sbin/start-master.sh``, so each daemon is started the way that
script would, with ``$SPARK_HOME/bin/spark-class org.apache.spark.deploy.{master.Master,
worker.Worker}`` (``SPARK_HOME`` = pyspark's package folder), everything bound to 127.0.0.1 on
free ports. Each daemon leads its own process group: a Worker starts its executors as child
processes (``ExecutorRunner``), so killing a Worker's group kills its executors with it, and
teardown leaves no JVM behind.
"""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import requests


def free_port() -> int:
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """One ``spark-class`` JVM, its output in ``log``, leading its own process group."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], log: Path,
                 ui_port: int):
        self.name, self.log, self.ui_port = name, log, ui_port
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def children(self) -> list[int]:
        """Live processes in this daemon's group other than the daemon (a Worker's executors);
        zombies (dead, not yet reaped by whoever adopted them) are not counted."""
        out = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == self.pid:
                continue
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == self.pid and fields[0] != "Z":    # pgrp, state
                out.append(int(entry))
        return out

    def kill(self) -> None:
        """SIGKILL the daemon and everything it started (its process group)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=30)

    def tail(self, chars: int = 3000) -> str:
        try:
            return f"--- {self.name} ({self.log}) ---\n" + self.log.read_text(
                errors="replace")[-chars:]
        except OSError as exc:
            return f"--- {self.name}: {exc} ---"


class StandaloneCluster:
    """``StandaloneCluster(workdir, workers=2).start()``; ``.master_url`` for the session,
    ``.stop()`` kills every daemon's process group."""

    def __init__(self, workdir: Path, workers: int = 2, cores: int = 1, memory: str = "1g",
                 reverse_proxy: bool = False):
        import pyspark

        self.home = os.path.dirname(pyspark.__file__)
        self.workdir = Path(workdir)
        self.n_workers, self.cores, self.memory = workers, cores, memory
        self.port, self.ui_port = free_port(), free_port()
        self.master_url = f"spark://127.0.0.1:{self.port}"
        self.ui_url = f"http://127.0.0.1:{self.ui_port}"
        self.env = dict(os.environ)
        self.env.update({"SPARK_HOME": self.home, "SPARK_LOCAL_IP": "127.0.0.1"})
        if reverse_proxy:    # the Master serves the Workers' and applications' UIs (/proxy/…)
            for daemon in ("MASTER", "WORKER"):
                self.env[f"SPARK_{daemon}_OPTS"] = "-Dspark.ui.reverseProxy=true"
        self.master: Daemon | None = None
        self.workers: list[Daemon] = []

    def _spark_class(self, cls: str, *args: str) -> list[str]:
        return [os.path.join(self.home, "bin", "spark-class"), cls, *args]

    def start(self, timeout: float = 120.0) -> "StandaloneCluster":
        try:
            self.master = Daemon("master", self._spark_class(
                "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                "--port", str(self.port), "--webui-port", str(self.ui_port)),
                self.env, self.workdir / "master.log", self.ui_port)
            self.wait(lambda state: state is not None, timeout, "the Master's web UI to answer")
            for i in range(self.n_workers):
                work, ui_port = self.workdir / f"worker{i}", free_port()
                work.mkdir(parents=True, exist_ok=True)
                self.workers.append(Daemon(f"worker{i}", self._spark_class(
                    "org.apache.spark.deploy.worker.Worker", self.master_url,
                    "--host", "127.0.0.1", "--cores", str(self.cores), "--memory", self.memory,
                    "--webui-port", str(ui_port), "--work-dir", str(work)),
                    self.env, self.workdir / f"worker{i}.log", ui_port))
            self.wait(lambda state: state is not None and len(self.alive_workers(state))
                      == self.n_workers, timeout, f"{self.n_workers} ALIVE workers")
        except BaseException:
            self.stop()
            raise
        return self

    def state(self) -> dict | None:
        """The Master's own JSON view (workers, applications), or None while it starts."""
        try:
            return requests.get(f"{self.ui_url}/json/", timeout=5).json()
        except (requests.RequestException, ValueError):
            return None

    @staticmethod
    def alive_workers(state: dict) -> list[dict]:
        return [w for w in state.get("workers", []) if w.get("state") == "ALIVE"]

    def wait(self, condition, timeout: float, what: str) -> dict | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = self.state()
            if condition(state):
                return state
            for daemon in [self.master, *self.workers]:
                if daemon is not None and daemon.proc.poll() is not None:
                    raise RuntimeError(f"{daemon.name} exited ({daemon.proc.returncode}) "
                                       f"while waiting for {what}\n{self.logs()}")
            time.sleep(0.3)
        raise RuntimeError(f"standalone cluster: no {what} in {timeout:.0f} s "
                           f"(last state: {self.state()})\n{self.logs()}")

    @staticmethod
    def executors_of(worker: Daemon) -> list[str]:
        """The ids of the executors a Worker runs now (its own JSON view)."""
        state = requests.get(f"http://127.0.0.1:{worker.ui_port}/json/", timeout=5).json()
        return sorted(str(e["id"]) for e in state.get("executors", []))

    def logs(self) -> str:
        return "\n".join(d.tail() for d in [self.master, *self.workers] if d is not None)

    def stop(self) -> None:
        for daemon in [*self.workers, self.master]:
            if daemon is not None:
                daemon.kill()
