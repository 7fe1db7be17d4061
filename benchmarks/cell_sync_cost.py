"""What a measured cell adds around its own body on the kernel's thread, in a real kernel.

A ``%%perfmeasure`` cell runs its body between the window's start (before) and its seal
(after); the collection, analysis and report come after the cell returned (finishing.py).
Everything outside the body delays the cell: this measures it. One ipykernel
(jupyter_client), one Spark session (``jupyter_perf.spark_session()``, local[*]), the same
~0.5 s groupBy measured ``--cells`` times, the finish of each awaited before the next; inside
the kernel the magic's ``_cell`` and ``_run_plain`` (the body) are timed (wall and the main
thread's CPU), and the parts of the start and the seal. Medians over the cells after the
first two (the session's first measured cells load classes).

    python benchmarks/cell_sync_cost.py [--cells 12]

The tree measured is the one the kernel imports: to compare two commits, run it from each
(``PYTHONPATH=<worktree> python benchmarks/cell_sync_cost.py``) on the same host, in turns.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

from jupyter_client.manager import start_new_kernel

SETUP = r'''
import time, jupyter_perf as jp
from jupyter_perf.kernel import magic as M
from jupyter_perf.kernel import finishing as F
from jupyter_perf.collect import window as W, sessionconf as SC
spark = jp.spark_session()
get_ipython().run_line_magic('load_ext', 'jupyter_perf')
T = []
def _timed(name, fn, cpu=False):
    def wrapper(*a, **k):
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            return fn(*a, **k)
        finally:
            if T:
                T[-1][name] = (1000 * (time.perf_counter() - t0), 1000 * (time.thread_time() - c0))
    return wrapper
M.PerfMagics._cell = _timed("cell", M.PerfMagics._cell)
M.PerfMagics._run_plain = _timed("body", M.PerfMagics._run_plain)
W.ClassicWindow.start = _timed("window start", W.ClassicWindow.start)
F.seal = _timed("seal", F.seal)
SC.with_session_conf = _timed("session settings", SC.with_session_conf)
spark.range(0, 100000).selectExpr('id % 100 as k').groupBy('k').count().collect()
'''
CELL = ("%%perfmeasure\nrows = spark.range(0, 1_500_000, 1, 4).selectExpr('id % 1003 as k')"
        ".groupBy('k').count().collect()")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=12)
    args = ap.parse_args()
    km, kc = start_new_kernel(kernel_name="python3")

    def run(code: str) -> str:
        mid = kc.execute(code)
        out = []
        while True:
            msg = kc.get_iopub_msg(timeout=600)
            if msg["parent_header"].get("msg_id") != mid:
                continue
            if msg["msg_type"] == "stream":
                out.append(msg["content"]["text"])
            if msg["msg_type"] == "error":
                raise SystemExit("\n".join(msg["content"]["traceback"]))
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return "".join(out)

    try:
        load = os.getloadavg()[0]
        run(SETUP)
        for _ in range(args.cells):
            run("T.append({})")
            run(CELL)
            run("from jupyter_perf.kernel.handoff import wait_pending; wait_pending()")
        rows = json.loads(run("import json; print(json.dumps(T))").strip().splitlines()[-1])
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    rows = rows[2:]
    out_wall = [r["cell"][0] - r["body"][0] for r in rows]
    out_cpu = [r["cell"][1] - r["body"][1] for r in rows]
    print(f"{len(rows)} measured cells, load {load:.1f} -> {os.getloadavg()[0]:.1f}; "
          f"body median {statistics.median(r['body'][0] for r in rows):.0f} ms")
    print(f"outside the body: median wall {statistics.median(out_wall):.1f} ms "
          f"(range {min(out_wall):.1f}-{max(out_wall):.1f}), main-thread CPU "
          f"{statistics.median(out_cpu):.1f} ms")
    for part in ("window start", "seal", "session settings"):
        vals = [r[part][0] for r in rows if part in r]
        if vals:
            print(f"  {part}: median wall {statistics.median(vals):.1f} ms")


if __name__ == "__main__":
    sys.exit(main())
