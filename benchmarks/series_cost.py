"""What a cell's series costs the kernel's report and the sidebar's list (issue T, part 2).

In a temporary run store, ``--runs`` hand-built runs of one cell (tests/compare_synth.py: the
store, its index and each run.json are real; the task data is made up), plus ``--others``
cells of two runs each. Times, each the minimum of ``--repeat``:

* ``report_series`` of the newest run with empty caches (a fresh kernel's first report: reads
  each run.json of the cell once), then after one more run is stored (the next cell's report:
  only the new run.json is read, the series is judged again);
* ``GET runs``' sparklines for a page of 50 rows, with empty caches (the server's first poll),
  and again with nothing new (every later poll).

    python benchmarks/series_cost.py [--runs 100] [--others 20] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[1:1] = [str(HERE.parent / "tests"), str(HERE.parent / "tests" / "analysis")]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--others", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    os.environ["JUPYTER_PERF_HOME"] = tempfile.mkdtemp(prefix="series-cost-")
    from compare_synth import cell_run, stored

    from jupyter_perf.service import history
    from jupyter_perf.store import default_store

    load = os.getloadavg()[0]
    ids = [stored(cell_run([100 + k % 7, 100, 100, 100], label="bench")) for k in range(args.runs)]
    for j in range(args.others):
        for _ in range(2):
            stored(cell_run([50, 50], label=f"other {j}", cell_id=f"cell-o{j}"))
    store = default_store()
    sizes = [os.path.getsize(os.path.join(store.run_dir(i), "run.json")) for i in ids[:5]]

    def clear() -> None:
        history._ROW_CACHE.clear()
        history._FRAME_CACHE.clear()

    def timed(fn, prepare=None) -> float:
        best = float("inf")
        for _ in range(args.repeat):
            if prepare:
                prepare()
            t = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t)
        return best * 1000

    newest = store.load(ids[-1])
    cold = timed(lambda: history.report_series(newest, store), clear)
    # the next cell: one more run of the cell stored, the row cache warm
    history.report_series(newest, store)
    extra = [stored(cell_run([101, 100, 100, 100], label="bench"))]
    nxt = store.load(extra[0])

    def one_more() -> None:
        history._FRAME_CACHE.clear()

    warm = timed(lambda: history.report_series(nxt, store), one_more)
    rows = store.list(limit=50)
    poll_cold = timed(lambda: history.sparklines(store, rows), clear)
    history.sparklines(store, rows)
    poll_warm = timed(lambda: history.sparklines(store, rows))
    print(f"series_cost: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after; "
          f"{args.runs} runs of one cell + {args.others} cells of 2 runs; "
          f"run.json {min(sizes) / 1024:.0f}–{max(sizes) / 1024:.0f} KiB (synthetic runs)")
    print(f"report_series, empty caches (first report in a kernel): {cold:8.1f} ms")
    print(f"report_series, the next run of the cell:                {warm:8.1f} ms")
    print(f"sparklines of a 50-row page, empty caches (first poll): {poll_cold:8.1f} ms")
    print(f"sparklines of a 50-row page, nothing new (later polls): {poll_warm:8.1f} ms")
    print(f"(minimum of {args.repeat}; measured wall time of the calls)")


if __name__ == "__main__":
    main()
