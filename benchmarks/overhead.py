"""Overhead of %%perfmeasure: the same >= 5 s query, measured and unmeasured, alternating.

Prints two medians of per-pair ratios, both measured side by side in one run:
  query   — time of the cell body (what measurement does to Spark: job tag,
            listeners, the 2 Hz memory sampler, the 2 Hz live progress display).
            Target <= 1.03x.
  cell    — the whole cell as the user waits for it, including collection,
            analysis, storing and rendering the report after the query.

    python benchmarks/overhead.py [--pairs 9] [--rows 60000000]
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

QUERY = ('rows = spark.range(0, {rows}, 1, 16).selectExpr("id % 100003 as k", "id * 7 % 1000 as v")'
         '.groupBy("k").agg({{"v": "sum"}}).collect()')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--rows", type=int, default=60_000_000)
    parser.add_argument("--master", default="local[*]")
    args = parser.parse_args()
    os.environ.setdefault("JUPYTER_PERF_HOME", tempfile.mkdtemp(prefix="jp-overhead-"))
    # the live progress display runs too (poller + display updates), as in a notebook
    os.environ.setdefault("JUPYTER_PERF_PROGRESS", "html")

    from IPython.testing.globalipapp import start_ipython

    import jupyter_perf as jp

    spark = jp.spark_session(master=args.master)
    shell = start_ipython()
    shell.user_ns["spark"] = spark
    shell.run_cell("%load_ext jupyter_perf")
    query = QUERY.format(rows=args.rows)
    for _ in range(2):                     # warm up the JIT and Spark SQL
        shell.run_cell(query)

    query_ratios, cell_ratios, plain_times = [], [], []
    for i in range(args.pairs):
        order = ["plain", "measured"] if i % 2 == 0 else ["measured", "plain"]
        times: dict[str, float] = {}
        for mode in order:
            source = query if mode == "plain" else "%%perfmeasure --no-report\n" + query
            t0 = time.perf_counter()
            result = shell.run_cell(source)
            times[mode] = time.perf_counter() - t0
            assert result.error_in_exec is None, result.error_in_exec
            if mode == "measured":
                times["query"] = jp.last_run().wall_ms / 1000.0
        plain_times.append(times["plain"])
        query_ratios.append(times["query"] / times["plain"])
        cell_ratios.append(times["measured"] / times["plain"])
        print(f"pair {i + 1}: plain {times['plain']:.2f} s, measured query {times['query']:.2f} s, "
              f"measured cell {times['measured']:.2f} s", flush=True)
    print(f"\nquery: {args.rows:,} rows, median plain time {statistics.median(plain_times):.2f} s, "
          f"master {args.master}")
    print(f"median ratio, query under measurement / plain: {statistics.median(query_ratios):.3f}x "
          f"(target <= 1.03x)")
    print(f"median ratio, whole measured cell incl. report / plain: "
          f"{statistics.median(cell_ratios):.3f}x")
    spark.stop()


if __name__ == "__main__":
    main()
