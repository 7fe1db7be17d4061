"""Issue H benchmark: which operator does the verdict name on TPC-H at SF 1?

    nice -n 5 python benchmarks/tpch_operators.py [--scale 1] [--queries 1,9,18 | --all]
                                                   [--repeats 1] [--json out.jsonl]

Generates (once, cached) TPC-H Parquet at ``--scale`` with ``tests/tpch.py`` (tpchgen-cli;
query texts from benchbox's qgen), starts one ``local[2]`` session with Spark's defaults
except AQE on (``spark.sql.adaptive.enabled=true``, the default since 3.2, set explicitly so
the run says so) and ``spark.ui.port=0``, and for each query runs it once unmeasured (warm-up)
and ``--repeats`` times under ``jp.measure`` (``collect()`` of the result). Per measured run it
prints the wall time, the verdict's headline, ``summary()["top_operator"]`` (name, share of
task time, measured/estimated) and the verdict's clause naming it, the top 3 operators with
their shares (operators by their label: node name plus keys or table), and for Q9 the name
(operators) of every stage that ran tasks. The load average before and after is printed too:
on a shared 2-core host the ranking of operators whose time is mostly waiting for a core can
follow the load, so read the table with it.

Nothing here is asserted: the reading goes in docs/benchmarks.md ("TPC-H top operators").
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "tests"):
    sys.path.insert(0, str(p))


def machine() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 2**20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"{os.cpu_count()} cores ({model or platform.machine()}){mem}, {platform.system()}"


def load() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def pct(x) -> str:
    return f"{100 * float(x):.0f}%"


def label(row: dict) -> str:
    """The operator as the product names it (``a.operators["label"]``)."""
    return str(row.get("label") or row.get("name") or "")


def verdict_clause(verdict: str) -> str:
    """The verdict's "top operator: …" clause, as the user reads it."""
    m = re.search(r"top operator: [^;]*", verdict)
    return m.group(0).rstrip(".") if m else "(the verdict names no operator)"


def op_text(row: dict) -> str:
    return f"{row['label']} {pct(row['share'])} ({row['kind']})"


def record(q: int, rep: int, a) -> dict:
    s = a.summary()
    top = s["top_operator"] or {}
    ops = [r for r in s["operators"] if r["task_time_ms"] > 0][:3]
    ran = set(int(x) for x in a.run.tasks["stage_id"].unique())
    stages = [{"stage_id": r["stage_id"], "tasks": r["num_tasks"], "operators": r["operators"]}
              for r in s["stages"] if int(r["stage_id"]) in ran]
    core = (s["breakdown"].get("core_wait_est") or {}) if isinstance(s["breakdown"], dict) else {}
    return {
        "query": q, "repeat": rep, "wall_s": round(s["wall_ms"] / 1000, 2),
        "task_time_s": round(s["task_time_ms"] / 1000, 2),
        "verdict_category": s["verdict_category"], "headline": s["verdict_headline"],
        "verdict": s["verdict"],
        "top_operator": {"name": top.get("name"), "label": label(top), "share": top.get("share"),
                         "kind": top.get("kind"), "measured_ms": top.get("measured_ms"),
                         "task_time_ms": top.get("task_time_ms"),
                         "breakdown": top.get("breakdown")} if top else None,
        "top3": [{"name": r["name"], "label": label(r), "node_id": r["node_id"],
                  "share": r["share"], "kind": r["kind"]} for r in ops],
        "stages": stages, "core_wait": core, "operators_note": s["operators_note"],
        "load_after": load(),
    }


def show(rec: dict, stages: bool) -> None:
    top = rec["top_operator"]
    print(f"Q{rec['query']} run {rec['repeat']}: wall {rec['wall_s']:.1f} s, "
          f"task time {rec['task_time_s']:.1f} s, load {rec['load_after']}")
    print(f"  verdict: {rec['headline']} ({rec['verdict_category']}); "
          f"{verdict_clause(rec['verdict'])}")
    if top:
        bd = top.get("breakdown") or {}
        parts = sorted(((v, k) for k, v in bd.items() if v), reverse=True)[:3]
        total = sum(v for v in bd.values() if v) or 1.0
        mix = ", ".join(f"{k} {v / total:.0%}" for v, k in parts)
        print(f"  top operator: {top['label']} {pct(top['share'])} of task time, {top['kind']} "
              f"(measured {top['measured_ms'] / 1000:.1f} s of {top['task_time_ms'] / 1000:.1f} s;"
              f" {mix})")
    else:
        print("  top operator: none")
    print("  top 3: " + "; ".join(op_text(r) for r in rec["top3"]))
    if rec["operators_note"]:
        print(f"  note: {rec['operators_note']}")
    if stages:
        for st in rec["stages"]:
            print(f"    stage {st['stage_id']} ({st['tasks']} tasks): {st['operators']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--queries", default="1,9,18")
    parser.add_argument("--all", action="store_true", help="all 22 queries")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--warmups", type=int, default=1)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--json", help="append one JSON line per measured run to this file")
    args = parser.parse_args()
    queries = list(range(1, 23)) if args.all else [int(q) for q in args.queries.split(",")]

    from tpch import data_dir, query, register

    import jupyter_perf as jp

    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; {machine()}; load {load()}")
    t0 = time.monotonic()
    root = data_dir(args.scale)
    print(f"TPC-H SF {args.scale:g} Parquet in {root} "
          f"({sum(f.stat().st_size for f in root.rglob('*') if f.is_file()) / 2**20:.0f} MiB, "
          f"{time.monotonic() - t0:.0f} s to generate or find)")
    spark = jp.spark_session(master=args.master, warm_up=True, **{
        "spark.sql.adaptive.enabled": "true", "spark.ui.port": "0"})
    print(f"Spark {spark.version}, {args.master}, AQE on, "
          f"{args.warmups} warm-up(s) and {args.repeats} measured run(s) per query")
    register(spark, args.scale)
    out = open(args.json, "a") if args.json else None
    records = []
    try:
        for q in queries:
            text = query(q)
            for _ in range(args.warmups):
                spark.sql(text).collect()
            for rep in range(1, args.repeats + 1):
                run = jp.measure(lambda text=text: spark.sql(text).collect(), spark=spark,
                                 label=f"TPC-H Q{q}", store=False)
                rec = record(q, rep, jp.analyze(run))
                rec.update(scale=args.scale, master=args.master)
                show(rec, stages=(q == 9))
                records.append(rec)
                if out:
                    out.write(json.dumps(rec, default=str) + "\n")
                    out.flush()
    finally:
        if out:
            out.close()
        spark.stop()
    print("\n| query | run | wall | verdict | top operator (share, kind) | 2nd | 3rd |")
    print("|---|---|---|---|---|---|---|")
    for r in records:
        top3 = [op_text(o) for o in r["top3"]] + ["", "", ""]
        print(f"| Q{r['query']} | {r['repeat']} | {r['wall_s']:.1f} s | {r['headline']} | "
              f"{top3[0]} | {top3[1]} | {top3[2]} |")
    print(f"done {datetime.now(timezone.utc):%H:%M} UTC; load {load()}")


if __name__ == "__main__":
    main()
