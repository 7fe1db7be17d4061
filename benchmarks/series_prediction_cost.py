"""What checking a prediction costs the report's History tab (issue T, item 6).

In a temporary run store, ``--runs`` hand-built runs of one cell on 2 slots, then one on 4
(tests/compare_synth.py: the store, its index and each run.json are real, the task data is
made up; ``--tasks`` tasks per run). Times, each the minimum of ``--repeat``:

* ``report_series`` of the newest run with empty caches and an empty record of predictions
  (the first report after the change: the two runs around it are loaded and analysed, and
  the check recorded);
* the same with empty caches but the record holding the check (every later report, in any
  process: read back from accuracy.jsonl, no run loaded);
* the same series with no change a prediction covers (the newest run on 2 slots too).

    python benchmarks/series_prediction_cost.py [--runs 20] [--tasks 2000] [--repeat 3]
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
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--tasks", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    os.environ["JUPYTER_PERF_HOME"] = tempfile.mkdtemp(prefix="series-prediction-cost-")
    from compare_synth import cell_run, stored

    from jupyter_perf.service import history
    from jupyter_perf.store import accuracy, default_store

    load = os.getloadavg()[0]
    tasks = [100.0 + k % 7 for k in range(args.tasks)]
    for _ in range(args.runs):
        stored(cell_run(tasks, label="bench"))
    changed = stored(cell_run(tasks, label="bench", slots=4))
    for _ in range(args.runs):
        stored(cell_run(tasks, label="same", cell_id="cell-same"))
    store = default_store()

    def clear(record: bool) -> None:
        history._ROW_CACHE.clear()
        history._FRAME_CACHE.clear()
        history._NO_PREDICTION.clear()
        if record and os.path.exists(accuracy.path_of(store.root)):
            os.remove(accuracy.path_of(store.root))

    def timed(run_id: str, record: bool) -> float:
        best = float("inf")
        run = store.load(run_id)                # the kernel has the run it reports in hand
        for _ in range(args.repeat):
            clear(record)
            t = time.perf_counter()
            s = history.report_series(run, store)
            best = min(best, time.perf_counter() - t)
            assert s is not None
        return best * 1000

    first = timed(changed, record=True)
    later = timed(changed, record=False)
    same = store.list(limit=1, text="same")[0]["run_id"]
    none = timed(same, record=True)
    print(f"{args.runs} + 1 runs of {args.tasks} tasks; load average {load:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after; minimum of {args.repeat} (measured)")
    print(f"report_series, first report after a slots change:   {first:8.1f} ms")
    print(f"report_series, the check read back from the record: {later:8.1f} ms")
    print(f"report_series, no change a prediction covers:       {none:8.1f} ms")


if __name__ == "__main__":
    main()
