"""Time to build a measured cell's Bokeh report document (``render.report.report_document``).

This is the largest part of a short cell's fixed cost after its query (see "Short cells" in
docs/benchmarks.md). The runs are the synthetic ones of ``analysis_scale.py``; each size is
built ``--repeat`` times in one process and the minimum is printed (the least disturbed by
other load on the machine). Compare two commits by pointing PYTHONPATH at each checkout:

    PYTHONPATH=<checkout> python benchmarks/report_build.py [--tasks 100,2000,20000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(1, str(Path(__file__).resolve().parent))     # analysis_scale, after PYTHONPATH


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="100,2000,20000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import analysis_scale

    import jupyter_perf
    from jupyter_perf import analyze
    from jupyter_perf.render.report import report_document
    print(f"jupyter_perf from {os.path.dirname(jupyter_perf.__file__)}; "
          f"load average {os.getloadavg()[0]:.1f}")
    for n in (int(x) for x in args.tasks.split(",")):
        a = analyze(analysis_scale.build_run(n, slots=2))
        took = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            report_document(a)
            took.append(time.perf_counter() - t0)
        print(f"{n:>7,} tasks: report_document min {min(took):.3f} s, max {max(took):.3f} s")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
