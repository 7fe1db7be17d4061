"""The power of the one noise rule (issue T, ``analysis/series.py``) on real Spark (local[2]).

One Spark application, one measured function (``jp.measure``, stored in a temporary run
store): a groupBy over ``--rows`` rows on 8 shuffle partitions (AQE off), then a 4-partition
job whose tasks sleep ``d`` ms (0 for the unchanged runs). After ``--warmups`` unmeasured runs:

1. ``--warm`` unchanged measured runs (the first is cold: the first of its code in the
   application, marked and left out);
2. ``--repeats`` rounds of: for each slowdown ``p`` in ``--slowdowns`` (percent of the first
   unchanged runs' median), one run whose sleeping tasks add ``p`` % (4 tasks on 2 slots:
   2 × d = p × median), with a harmless setting of its own
   (``spark.jupyterperf.bench.slowdown``), so it is a "settings change" judged against the
   unchanged runs as ``jp.history`` judges a changed cell against its usual time; then one
   more unchanged run (interleaved, so both see the same host load).

Reports, from ``jp.history`` (the product's own path): false alarms among the warm unchanged
runs (flagged as regression or improvement), and per slowdown how many of its runs were
flagged as regressions; plus the band, the unchanged runs' spread and the load average.
``jp.compare`` (the same rule) is checked on one pair per level. ``--busy N`` runs N CPU
burners (bounded: they stop with the script) to measure a busy host.

    python benchmarks/noise_power.py [--warm 20] [--slowdowns 5 10 15 25] [--repeats 3]
        [--rows 1500000] [--warmups 2] [--busy 0] [--home DIR]
    python benchmarks/noise_power.py --simulate     # the rule on synthetic noise, no Spark
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time


def _burn(stop_at: float) -> None:
    x = 0
    while time.time() < stop_at:
        x = (x * 31 + 7) % 1_000_003


def simulate(seed: int = 5) -> None:
    """The rule on synthetic ln(wall) noise (docs/compare.md's simulated table)."""
    import numpy as np
    import pandas as pd

    from jupyter_perf.analysis import series

    rng = np.random.default_rng(seed)

    def draws(kind: str, sd: float, n: int) -> np.ndarray:
        return rng.normal(0, sd, n) if kind == "normal" else rng.standard_t(3, n) * sd

    def false_series(kind: str, sd: float, n: int = 25, trials: int = 400) -> float:
        bad = 0
        for _ in range(trials):
            out = series.judge_series(pd.DataFrame({
                "wall_ms": 2000 * np.exp(draws(kind, sd, n)), "warm": [True] * n,
                "group": ["g"] * n}))
            bad += bool(out["regression"].any() or out["improvement"].any())
        return bad / trials

    def detected(sd: float, slow: float, n: int = 10, trials: int = 600) -> float:
        hit = 0
        for _ in range(trials):
            w = 1000 * np.exp(rng.normal(0, sd, n + 1))
            w[-1] *= 1 + slow
            hit += series.learn(w[:n]).judge(w[-1]) == "slower"
        return hit / trials

    def drift(slope: float, trials: int = 200) -> float:
        return sum(bool(series.change_points(1000 * np.exp(rng.normal(0, 0.02, 30)
                                                           + np.arange(30) * slope)))
                   for _ in range(trials)) / trials

    for kind, sd in (("normal", 0.01), ("normal", 0.02), ("normal", 0.03), ("normal", 0.05),
                     ("t3", 0.02), ("t3", 0.03)):
        line = f"{kind} sd {sd:.0%}: series of 25 with a false flag {false_series(kind, sd):.1%}"
        if kind == "normal" and sd <= 0.03:
            line += "; flagged after 10 runs: " + ", ".join(
                f"+{p:.0%} {detected(sd, p):.0%}" for p in (0.10, 0.15, 0.25))
        print(line)
    noise_only = sum(bool(series.change_points(1000 * np.exp(rng.normal(0, 0.03, 40))))
                     for _ in range(300)) / 300
    print(f"change points in pure noise (normal sd 3%, n=40): {noise_only:.1%}")
    print("drift over 30 runs (sd 2%) found: " + ", ".join(
        f"{s:.1%}/run {drift(s):.0%}" for s in (0.005, 0.01)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--warm", type=int, default=20)
    p.add_argument("--slowdowns", type=float, nargs="+", default=[5, 10, 15, 25])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--rows", type=int, default=1_500_000)
    p.add_argument("--warmups", type=int, default=2)
    p.add_argument("--busy", type=int, default=0, help="CPU burner processes while measuring")
    p.add_argument("--home", default=None, help="run store (default: a temporary directory)")
    p.add_argument("--simulate", action="store_true", help="synthetic noise only, no Spark")
    args = p.parse_args(argv)
    if args.simulate:
        simulate()
        return 0
    os.environ["JUPYTER_PERF_HOME"] = args.home or tempfile.mkdtemp(prefix="jp-noise-power-")

    import jupyter_perf as jp
    from jupyter_perf import fmt
    from jupyter_perf.analysis import series

    spark = jp.spark_session(master="local[2]", **{"spark.sql.shuffle.partitions": "8",
                                                   "spark.sql.adaptive.enabled": "false"})
    sc = spark.sparkContext
    label = "noise-power"

    def job(sleep_ms: float) -> None:
        spark.range(0, args.rows, 1, 4).selectExpr("id % 1000 AS k", "id AS v") \
            .groupBy("k").sum("v").collect()
        d = sleep_ms / 1000.0
        sc.parallelize(range(4), 4).foreach(lambda _: time.sleep(d))

    burners = []
    if args.busy:
        stop_at = time.time() + 3600
        burners = [multiprocessing.Process(target=_burn, args=(stop_at,), daemon=True)
                   for _ in range(args.busy)]
        for b in burners:
            b.start()
    load_before = os.getloadavg()
    started = time.time()
    try:
        for _ in range(args.warmups):
            job(0.0)
        unchanged = [jp.measure(lambda: job(0.0), spark=spark, label=label)
                     for _ in range(args.warm)]
        base = statistics.median(r.wall_ms for r in unchanged[1:])
        slowed: dict[float, list] = {pct: [] for pct in args.slowdowns}
        # interleaved (a slowed run, then an unchanged one) so both see the same host load
        for _ in range(args.repeats):
            for pct in args.slowdowns:
                spark.conf.set("spark.jupyterperf.bench.slowdown", f"{pct:g}")
                sleep_ms = pct / 100.0 * base / 2.0      # 4 tasks on 2 slots: twice the sleep
                slowed[pct].append(jp.measure(lambda s=sleep_ms: job(s), spark=spark,
                                              label=label))
                spark.conf.unset("spark.jupyterperf.bench.slowdown")
                unchanged.append(jp.measure(lambda: job(0.0), spark=spark, label=label))
        checks = {pct: jp.compare(unchanged[-1], runs[0], record=False).summary()
                  for pct, runs in slowed.items()}
    finally:
        for b in burners:
            b.terminate()
    load_after = os.getloadavg()
    h = jp.history(label)
    ids = [r.run_id for r in unchanged]
    warm = h[h["run_id"].isin(ids)]
    judged = warm[warm["expected_low_ms"].notna() & (warm["warm"] == True)]  # noqa: E712
    false_alarms = int((judged["regression"] | judged["improvement"]).sum())
    walls = [r.wall_ms for r in unchanged[1:]]
    noise = series.learn(walls)
    print(f"noise_power: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{args.rows:,} rows, local[2], busy burners {args.busy}, "
          f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after, "
          f"{time.time() - started:.0f} s")
    print(f"unchanged runs: {len(unchanged)} (first cold: "
          f"{h.loc[h['run_id'] == ids[0], 'warm'].iloc[0] is False}), measured wall "
          f"{fmt.ms(min(walls))}–{fmt.ms(max(walls))}, median {fmt.ms(base)}, robust SD of "
          f"ln(wall) {series.robust_sd(__import__('numpy').log(walls)):.3f}")
    print(f"band from all {noise.runs} warm unchanged runs: {fmt.ms(noise.low_ms)}–"
          f"{fmt.ms(noise.high_ms)} (±{noise.high_ms / noise.median_ms - 1:.1%})")
    print(f"false alarms: {false_alarms} of {len(judged)} judged warm unchanged runs "
          f"({len(warm) - len(judged)} not judged: cold, or before {series.MIN_WARM_RUNS} warm "
          "runs)")
    for pct, runs in slowed.items():
        rows = h[h["run_id"].isin([r.run_id for r in runs])]
        added = [r.wall_ms / base - 1 for r in runs]
        c = checks[pct]
        print(f"slowdown {pct:>4g} %: flagged {int(rows['regression'].sum())} of {len(rows)} "
              f"(measured {statistics.median(added):+.0%} median vs the unchanged median); compare "
              f"of the first: "
              f"{c['noise_verdict']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
