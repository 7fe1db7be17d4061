"""Where a measured cell's extra time goes while its query runs: the CPU time of the kernel
process (all its threads) and of the Spark JVM from execute request to idle, for the same
groupBy as a plain cell and as a ``%%perfmeasure`` cell, in turns, in one real kernel
(jupyter_client) and one Spark session. The report's finishing after the cell (until its MIME
output arrives) is not counted: CPU is read at the idle message. Issue Q (whole cell <= 1.05x):
on 2 cores a query that keeps both busy pays about half of any extra CPU as wall time.

    python benchmarks/cell_cpu_split.py [--rows 500000] [--pairs 15]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

from jupyter_client.manager import start_new_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from always_on import MIME_PREFIX, QUERY, Bench  # noqa: E402 -- this directory, on sys.path above

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of ``pid``, all its threads (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class Split(Bench):
    def timed(self, code: str, pids: list[int], want_report: bool) -> tuple[float, list[float]]:
        """(seconds to idle, CPU seconds of each of ``pids`` to idle); waits for the report."""
        before = [cpu_seconds(p) for p in pids]
        t0 = time.perf_counter()
        msg_id = self.kc.execute(code, allow_stdin=False)
        at_idle = None
        display_ids: set[str] = set()
        while True:
            msg = self.kc.get_iopub_msg(timeout=600)
            kind, content = msg["msg_type"], msg["content"]
            mine = msg["parent_header"].get("msg_id") == msg_id
            if mine and kind in ("display_data", "update_display_data") and "collecting" in \
                    content.get("data", {}).get("text/plain", ""):
                display_ids.add(content["transient"]["display_id"])
            if mine and kind == "status" and content["execution_state"] == "idle":
                at_idle = (time.perf_counter() - t0, [cpu_seconds(p) - b for p, b in zip(pids, before)])
                if not want_report:
                    break
            if at_idle and kind == "update_display_data" and \
                    content["transient"].get("display_id") in display_ids and \
                    any(k.startswith(MIME_PREFIX) for k in content.get("data", {})):
                break
        self.kc.get_shell_msg(timeout=600)
        return at_idle


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=500_000)
    ap.add_argument("--pairs", type=int, default=15)
    args = ap.parse_args()
    env = dict(os.environ, JUPYTER_PERF_HOME=tempfile.mkdtemp(prefix="jp-cpu-split-"),
               PYSPARK_PYTHON=sys.executable,
               PYSPARK_SUBMIT_ARGS="--conf spark.ui.port=0 pyspark-shell")
    load = os.getloadavg()[0]
    km, kc = start_new_kernel(kernel_name="python3", env=env)
    b = Split(kc)
    try:
        b.cell("%load_ext jupyter_perf\nimport jupyter_perf as jp\n"
               "spark = jp.spark_session(master='local[*]')")
        pids = [km.provisioner.process.pid, int(b.value("spark.sparkContext._gateway.proc.pid"))]
        query = QUERY.format(rows=args.rows)
        for _ in range(2):
            b.cell(query)
            b.cell("%%perfmeasure\n" + query, want_report=True)
        got: dict[str, list] = {"plain": [], "measured": []}
        for i in range(args.pairs):
            for kind in (("plain", "measured") if i % 2 == 0 else ("measured", "plain")):
                code = query if kind == "plain" else "%%perfmeasure\n" + query
                got[kind].append(b.timed(code, pids, want_report=kind == "measured"))
        print(f"{args.rows:,} rows, {args.pairs} pairs in turns, {os.cpu_count()} cores, load "
              f"{load:.2f} -> {os.getloadavg()[0]:.2f}")
        for kind, rows in got.items():
            wall = statistics.median(r[0] for r in rows)
            kernel = statistics.median(r[1][0] for r in rows)
            jvm = statistics.median(r[1][1] for r in rows)
            print(f"  {kind:<9} to idle: wall {wall:.3f} s, kernel CPU {kernel:.3f} s, "
                  f"JVM CPU {jvm:.3f} s (medians)")
        diffs = [[m[1][k] - p[1][k] for p, m in zip(got["plain"], got["measured"])] for k in (0, 1)]
        print(f"  measured - plain, median of the pairs: kernel CPU "
              f"{statistics.median(diffs[0]) * 1e3:+.0f} ms, JVM CPU "
              f"{statistics.median(diffs[1]) * 1e3:+.0f} ms (JVM per pair "
              f"{min(diffs[1]) * 1e3:+.0f} to {max(diffs[1]) * 1e3:+.0f} ms)")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()
