"""Issue N7: the Jupyter server's memory while it renders large reports again and again.

    python benchmarks/server_memory.py [--tasks 200000] [--runs 3] [--renders 9] [--parallel 3]

Stores ``--runs`` synthetic runs of ``--tasks`` task attempts each (``analysis_scale.py``'s
generator) in a temporary run store, starts a real ``jupyter server`` on a free port with
jupyter_perf enabled, then:

1. asks ``GET jupyter-perf/api/runs/{id}/report?refresh=1`` (a fresh render each time)
   ``--renders`` times, one request at a time, cycling over the runs;
2. asks for ``--parallel`` reports of different runs at once, three times;
3. asks for each run's report without ``refresh`` (served from the cache on disk), three
   times.

After every answer it samples the server process's resident set size (psutil) and, at the
end, its peak (``VmHWM`` from /proc). Prints one line per sample and a summary; the numbers
go to docs/benchmarks.md by hand.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from analysis_scale import build_run

from jupyter_perf.service.saving import analysis_or_none
from jupyter_perf.store import RunStore

MB = 1024 * 1024


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def peak_rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


class Server:
    def __init__(self, home: str, root: str):
        self.port, self.token = free_port(), secrets.token_hex(16)
        env = dict(os.environ, JUPYTER_PERF_HOME=home)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root", f"--port={self.port}",
             "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
             f"--ServerApp.root_dir={root}",
             "--ServerApp.jpserver_extensions={'jupyter_perf': True}"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                self.get("jupyter-perf/api/version")
                return
            except OSError as err:
                if self.proc.poll() is not None:
                    raise SystemExit("jupyter server exited at startup") from err
                time.sleep(0.5)
        raise SystemExit("jupyter server did not answer in 180 s")

    def get(self, path: str) -> bytes:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/{path}",
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=1800) as response:
            return response.read()

    def rss(self) -> int:
        return psutil.Process(self.proc.pid).memory_info().rss

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=200_000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--renders", type=int, default=9)
    p.add_argument("--parallel", type=int, default=3)
    args = p.parse_args()

    work = tempfile.mkdtemp(prefix="jp-server-memory-")
    home, root = os.path.join(work, "store"), os.path.join(work, "root")
    os.makedirs(root)
    store = RunStore(home)
    ids = []
    for seed in range(args.runs):
        run = build_run(args.tasks, seed=seed)
        _, summary = analysis_or_none(run)
        store.save(run, summary=summary)
        ids.append(run.run_id)
        del run
    print(f"tasks={args.tasks:,} runs={args.runs} renders={args.renders} "
          f"parallel={args.parallel} cpus={os.cpu_count()}")
    server = Server(home, root)
    samples = []

    def sample(what: str, seconds: float, size: int) -> None:
        rss = server.rss()
        samples.append(rss)
        print(f"{what:<34} rss_mb={rss / MB:7.1f}  answer_mb={size / MB:5.1f}  "
              f"s={seconds:6.1f}  load1={os.getloadavg()[0]:.1f}", flush=True)

    def report(run_id: str, refresh: bool) -> tuple[float, int]:
        t0 = time.monotonic()
        body = server.get(f"jupyter-perf/api/runs/{run_id}/report"
                          + ("?refresh=1" if refresh else ""))
        return time.monotonic() - t0, len(body)

    try:
        sample("started", 0.0, len(server.get("jupyter-perf/api/runs")))
        start_rss = samples[-1]
        for i in range(args.renders):
            sample(f"render {i + 1} (run {i % args.runs + 1})", *report(ids[i % args.runs], True))
        with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
            for round_ in range(3):
                t0 = time.monotonic()
                sizes = list(pool.map(lambda rid: report(rid, True)[1],
                                      [ids[j % args.runs] for j in range(args.parallel)]))
                sample(f"{args.parallel} at once, round {round_ + 1}", time.monotonic() - t0,
                       max(sizes))
        for round_ in range(3):
            for run_id in ids:
                sample(f"from the cache, round {round_ + 1}", *report(run_id, False))
        peak = peak_rss(server.proc.pid)
        print(f"summary: rss after start {start_rss / MB:.0f} MB; after the serial renders "
              f"{samples[args.renders] / MB:.0f} MB; max sampled {max(samples) / MB:.0f} MB; "
              f"peak (VmHWM) {peak / MB:.0f} MB; final {samples[-1] / MB:.0f} MB")
        print(json.dumps({"start_mb": round(start_rss / MB), "peak_mb": round(peak / MB),
                          "final_mb": round(samples[-1] / MB),
                          "max_sampled_mb": round(max(samples) / MB)}))
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
