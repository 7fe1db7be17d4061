"""Issue M benchmark: what one measured cell adds to a saved notebook (.ipynb), in bytes.

    python benchmarks/notebook_size.py [--no-spark]

For each run: the bytes a cell's report output adds to the ``.ipynb`` as JupyterLab saves it
(``nbformat``, indented JSON) — the renderer's payload, the static ``text/html`` summary and
``text/plain`` — split by entry, next to the standalone export (BokehJS inlined) and to the
old iframe output (the standalone document in ``srcdoc``, which every cell used to carry).
Runs: real Spark ``local[2]`` cells with ~100 and ~400 task attempts (a shuffled aggregation
and a skewed join), and synthetic runs of 100, 1,000 and 10,000 task attempts.
Target (issue M): a ~100-task cell adds ≤ 150 KB.
"""
from __future__ import annotations

import argparse
import html
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "render"))

import nbformat

from jupyter_perf.analysis import analyze
from jupyter_perf.render import inline, report_html


def added_bytes(data: dict) -> int:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%perfmeasure\n...")
    nb.cells = [cell]
    before = len(nbformat.writes(nb).encode())
    cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
    return len(nbformat.writes(nb).encode()) - before


def row(name: str, run) -> str:
    a = analyze(run)
    b = inline.bundle(run, a)
    total = added_bytes(b)
    parts = {k: added_bytes({k: v}) for k, v in b.items()}
    standalone = report_html(a)
    frame = f"<iframe srcdoc=\"{html.escape(standalone, quote=True)}\"></iframe>"
    old = added_bytes({"text/html": frame, "text/plain": run.describe()})
    return (f"| {name} | {len(run.tasks):,} | **{total / 1000:.1f} KB** | "
            f"{parts[inline.MIME] / 1000:.1f} / {parts['text/html'] / 1000:.1f} / "
            f"{parts['text/plain'] / 1000:.2f} KB | {len(standalone.encode()) / 1e6:.2f} MB | "
            f"{old / 1e6:.2f} MB |")


def spark_runs():
    from render_runs import skewed_join_run
    from sparkhelpers import make_spark

    import jupyter_perf as jp

    spark = make_spark("local[2]", **{"spark.sql.shuffle.partitions": "50",
                                      "spark.sql.adaptive.enabled": "false"})
    try:
        df = spark.range(0, 2_000_000, numPartitions=50)
        agg = jp.measure(lambda: df.groupBy((df.id % 1000).alias("k")).count().collect(),
                         spark=spark, label="groupBy, 50 + 50 partitions", store=False)
        yield "Spark local[2]: groupBy (50 + 50 partitions)", agg
        yield "Spark local[2]: skewed join (tests' workload)", skewed_join_run(spark)
    finally:
        spark.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-spark", action="store_true")
    args = ap.parse_args()
    from render_runs import synthetic

    print("| run | task attempts | added to the .ipynb | payload / text/html / text/plain "
          "| standalone export | old iframe output |")
    print("|---|---|---|---|---|---|")
    if not args.no_spark:
        for name, run in spark_runs():
            print(row(name, run), flush=True)
    for n in (100, 1000, 10_000):
        print(row(f"synthetic, {n:,} attempts", synthetic(n, 8, per_stage=max(n // 8, 1))),
              flush=True)
    print(json.dumps({"bokeh": __import__("bokeh").__version__}))


if __name__ == "__main__":
    main()
