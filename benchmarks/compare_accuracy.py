"""Predicted vs measured through ``jp.compare``: slots ×2 on local mode and on local-cluster.

Issue J's record of predictions (``store/accuracy.py``, printed by ``jupyter-perf accuracy``)
filled by the product's own path over the replay benchmark's workloads (``accuracy.py``:
groupBy, shuffle-hash join, sort, skewed repartition, Python RDD map):

* local mode: run A on ``local[1]``, run B on ``local[2]``;
* local-cluster: run A on ``local-cluster[1,1,1024]`` (one executor JVM, one core), run B on
  ``local-cluster[2,1,1024]`` (two).

Every session is a fresh Python process with its own JVM, started with the session warm-up
and ``--warmups`` unmeasured runs of each workload, then ``--repeats`` measured runs stored in
one temporary run store (``JUPYTER_PERF_HOME``, or ``--home``). ``--rounds`` alternates the A
and B processes (A first in even rounds, B first in odd ones) so both see the same machine.
Then, per mode, workload and round, the i-th A run is compared with the i-th B run by
``jp.compare(A, B)``, which appends A's ``whatif(slots_factor=2)`` beside B's wall time to the
store's ``accuracy.jsonl``; ``jupyter-perf accuracy`` (the product's CLI) prints the record and
this script a summary per mode and workload.

Diagnostics beside the record (not part of it): the plain replay's prediction without the host
CPU floor, the host's busy share while A's tasks ran (all processes of the machine: other
users' load counts), and the most task intervals of A that overlap on one executor before the
timeline caps them at the executor's cores (a task's finish is stamped after its result is
fetched, so a 1-core executor can show 2).

    python benchmarks/compare_accuracy.py [--modes local local-cluster] [--rounds 2]
        [--repeats 2] [--warmups 2] [--workloads groupby join ...] [--home DIR]
        [--first-round N]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import accuracy as replay_bench  # benchmarks/accuracy.py: the workloads, plain_slots()

MODES = {"local": ("local[1]", "local[2]"),
         "local-cluster": ("local-cluster[1,1,1024]", "local-cluster[2,1,1024]")}


def raw_overlap(run) -> int:
    """The most tasks whose [launch, finish] intervals overlap on one executor."""
    t = run.tasks
    best = 0
    for _, g in t.dropna(subset=["launch_ms", "finish_ms"]).groupby("executor_id"):
        events = sorted([(s, 1) for s in g["launch_ms"]] + [(e, -1) for e in g["finish_ms"]],
                        key=lambda x: (x[0], x[1]))          # a finish before a launch at ties
        level = 0
        for _, step in events:
            level += step
            best = max(best, level)
    return best


def child(master: str, names: list[str], repeats: int, warmups: int) -> None:
    """One session: warm up and measure each workload; one JSON line per measured run."""
    import jupyter_perf as jp

    conf = {"spark.sql.shuffle.partitions": "8", "spark.sql.adaptive.enabled": "false",
            "spark.ui.port": "0"}
    if master.startswith("local-cluster"):
        conf["spark.executor.memory"] = "512m"       # two executors of 1024 MB fit beside others
    spark = jp.spark_session(master=master, warm_up=True, **conf)
    fns = replay_bench.workloads(spark)
    for name in names:
        for _ in range(warmups):
            fns[name]()
        for _ in range(repeats):
            run = jp.measure(fns[name], spark=spark, label=f"{name} on {master}")
            a = jp.analyze(run)
            print("RESULT " + json.dumps({
                "workload": name, "master": master, "run_id": run.run_id, "status": run.status,
                "wall_ms": a.wall_ms, "slots": run.slots,
                "x2_plain_ms": replay_bench.plain_slots(a, 2.0),
                "busy_share": a.whatif_summary()["host_cpu_busy_share"],
                "overlap": raw_overlap(run)}), flush=True)
    spark.stop()


def session(master: str, names: list[str], repeats: int, warmups: int) -> list[dict]:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)    # executors' Python workers too
    out = subprocess.run([sys.executable, __file__, "--child", master, "--repeats", str(repeats),
                          "--warmups", str(warmups), "--workloads", *names],
                         capture_output=True, text=True, env=env)
    rows = [json.loads(line[7:]) for line in out.stdout.splitlines() if line.startswith("RESULT ")]
    if out.returncode != 0 or len(rows) != len(names) * repeats:
        tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"the {master} session failed: {tail}")
    bad = [r for r in rows if r["status"] != "ok"]
    if bad:
        raise SystemExit(f"the {master} session: {bad[0]['workload']} ended {bad[0]['status']}")
    return rows


def load() -> str:
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    parser.add_argument("--workloads", nargs="+", choices=replay_bench.WORKLOADS,
                        default=list(replay_bench.WORKLOADS))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--warmups", type=int, default=2)
    parser.add_argument("--first-round", type=int, default=0,
                        help="number of the first round (odd: B's process first), to add rounds "
                             "to an earlier --home")
    parser.add_argument("--home", help="the run store to fill (default: a new temporary one)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.workloads, args.repeats, args.warmups)
        return
    home = args.home or tempfile.mkdtemp(prefix="jp-compare-accuracy-")
    os.environ["JUPYTER_PERF_HOME"] = home
    print(f"store {home}; load average at start {load()}", flush=True)

    import jupyter_perf as jp

    pairs = []      # (mode, workload, A row, B row, comparison's prediction)
    for mode in args.modes:
        a_master, b_master = MODES[mode]
        for rnd in range(args.first_round, args.first_round + args.rounds):
            order = (a_master, b_master) if rnd % 2 == 0 else (b_master, a_master)
            rows = {m: session(m, args.workloads, args.repeats, args.warmups) for m in order}
            print(f"{mode} round {rnd + 1}: done, load average {load()}", flush=True)
            for name in args.workloads:
                runs_a = [r for r in rows[a_master] if r["workload"] == name]
                runs_b = [r for r in rows[b_master] if r["workload"] == name]
                for ra, rb in zip(runs_a, runs_b):
                    s = jp.compare(ra["run_id"], rb["run_id"]).summary()
                    [p] = [p for p in s["predicted_vs_measured"] or [] if p["kind"] == "slots"]
                    pairs.append((mode, name, ra, rb, p))

    print("\n$ jupyter-perf accuracy", flush=True)
    cli = os.path.join(os.path.dirname(sys.executable), "jupyter-perf")
    subprocess.run([cli, "accuracy"], check=True)

    med = statistics.median
    print(f"\n{'mode':<14} {'workload':<11} {'pairs':>5} {'A s':>6} {'busy':>5} {'overlap':>7} "
          f"{'predicted':>9} {'(plain)':>8} {'B s':>6} {'|error|':>7} {'signed':>7} "
          f"{'(plain)':>8} {'B noise':>7}")
    for mode in args.modes:
        errors = []
        for name in args.workloads:
            mine = [x for x in pairs if x[0] == mode and x[1] == name]
            b_walls = [x[3]["wall_ms"] for x in mine]
            b_med = med(b_walls)
            errs = [p["error"] for *_, p in mine]
            errors += errs
            plain = [(x[2]["x2_plain_ms"] - x[4]["measured_ms"]) / x[4]["measured_ms"]
                     for x in mine]
            busy = [x[2]["busy_share"] for x in mine if x[2]["busy_share"] is not None]
            print(f"{mode:<14} {name:<11} {len(mine):>5} "
                  f"{med([x[2]['wall_ms'] for x in mine]) / 1000:>6.2f} "
                  f"{(f'{med(busy):.0%}' if busy else 'n/a'):>5} "
                  f"{max(x[2]['overlap'] for x in mine):>7} "
                  f"{med([p['predicted_ms'] for *_, p in mine]) / 1000:>7.2f} s "
                  f"{med([x[2]['x2_plain_ms'] for x in mine]) / 1000:>6.2f} s "
                  f"{b_med / 1000:>6.2f} {med(errs):>7.1%} "
                  f"{med([p['signed_error'] for *_, p in mine]):>+7.1%} {med(plain):>+8.1%} "
                  f"{med([abs(w - b_med) / b_med for w in b_walls]):>7.1%}")
        print(f"{mode}: median absolute error {med(errors):.1%}, max {max(errors):.1%} over "
              f"{len(errors)} pairs")
    print(f"\nload average at end {load()}")


if __name__ == "__main__":
    main()
