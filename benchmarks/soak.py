"""The full soak (issue U5): one real Jupyter kernel through ≥ 300 cells.

The same driver as ``tests/reliability/test_soak.py`` (``tests/reliability/soakdriver.py``),
with the full profile: measured and plain cells, groupBy / join / sort / RDD / Python UDF /
SQL queries, failing cells (a bad column, a Python error after a Spark job, a failing UDF),
interrupts of running jobs (measured and plain). It prints the figures recorded in
docs/reliability.md ("Soak") and every rule the soak broke; exit status 1 if any.

    .venv/bin/python benchmarks/soak.py [--cells 320] [--home DIR]
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tests", "reliability"))

import soakdriver  # from the test folder, put on sys.path above


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=soakdriver.FULL_CELLS)
    parser.add_argument("--home", default=None, help="the store (default: a new temp dir)")
    args = parser.parse_args()
    print(f"soak: {args.cells} cells; {platform.python_version()} on {os.cpu_count()} cores; "
          f"load average at start {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}", flush=True)
    soak = soakdriver.run_soak(args.cells, home=args.home,
                               say=lambda line: print(line, flush=True))
    figures = soakdriver.figures(soak)
    print(soakdriver.format_figures(figures))
    print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    broken = soakdriver.problems(soak)
    for line in broken:
        print("BROKEN", line.splitlines()[0][:400] if line else line)
    print("soak: " + ("passed" if not broken else f"{len(broken)} rules broken"))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
