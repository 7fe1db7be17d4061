"""analysis/series.py on synthetic series: the one noise rule (issue T). Outliers do not widen
the band, the noise is unknown until five warm runs, cold runs are marked and never judged, a
slow drift no single pair shows is found as a change point, and a clear step is flagged."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from jupyter_perf.analysis import series
from jupyter_perf.analysis.series import (
    MIN_WARM_RUNS,
    change_points,
    judge_series,
    learn,
    mark_warm,
)


def _noisy(n: int, sd: float = 0.02, level: float = 2000.0, seed: int = 7) -> list[float]:
    rng = np.random.default_rng(seed)
    return list(level * np.exp(rng.normal(0.0, sd, n)))


def test_unknown_until_enough_warm_runs_and_says_how_many_more():
    for n in range(MIN_WARM_RUNS):
        noise = learn([2000.0 + k for k in range(n)])
        assert not noise.known and noise.judge(9e9) is None
        assert noise.more == MIN_WARM_RUNS - n
    noise = learn([2000.0 + k for k in range(MIN_WARM_RUNS)])
    assert noise.known and noise.more == 0 and noise.judge(2002.0) == "within"


def test_outliers_do_not_widen_the_band():
    quiet = _noisy(10)
    clean = learn(quiet)
    # two wild runs (a disturbed host) among ten: a standard deviation would grow ×10
    wild = learn(quiet[:8] + [20_000.0, 9_000.0])
    assert wild.known
    assert wild.high_ms / wild.median_ms < 1.3
    assert wild.high_ms == pytest.approx(clean.high_ms, rel=0.1)
    sd = float(np.std(np.log(quiet[:8] + [20_000.0, 9_000.0]), ddof=1))
    assert sd > 5 * wild.log_sd                     # what the old rule would have used
    assert wild.judge(2000.0 * 1.5) == "slower"     # a 50 % slowdown is still flagged


def test_the_floor_keeps_identical_runs_from_flagging_jitter():
    noise = learn([1000.0] * 8)                       # MAD 0
    assert noise.floored and noise.log_sd == series.MIN_LOG_SD
    assert noise.judge(1030.0) == "within"            # 3 % jitter
    assert noise.judge(1300.0) == "slower" and noise.judge(700.0) == "faster"
    small = learn([100.0] * 8)                        # 100 ms cell: the ms floor
    assert small.high_ms == pytest.approx(100.0 + series.MIN_HALF_MS)


def test_cold_runs_are_marked_first_of_their_code_in_an_application_or_fresh_executors():
    runs = pd.DataFrame({
        "run_id": list("abcdefg"),
        "start_ms": [0, 10, 20, 30, 40, 50, 60],
        "app_id": ["app1", "app1", "app1", "app2", "app2", "app2", ""],
        "code": ["x", "x", "y", "x", "x", "x", "x"],
        "executor_added_ms": [np.nan, np.nan, np.nan, np.nan, np.nan, 45.0, np.nan]})
    out = mark_warm(runs)
    assert out["warm"].tolist() == [False, True, False, False, True, False, None]
    assert out.loc[2, "cold_reason"].startswith("first run of this code")
    assert out.loc[5, "cold_reason"] == "executors added since the previous run"


def _series(walls, warm=None, groups=None) -> pd.DataFrame:
    n = len(walls)
    return judge_series(pd.DataFrame({
        "wall_ms": walls, "warm": warm if warm is not None else [True] * n,
        "group": groups if groups is not None else ["g"] * n}))


def test_warm_unchanged_runs_are_never_flagged_and_a_step_is_the_only_regression():
    walls = _noisy(20, sd=0.02, seed=3)             # a quiet host (see docs/compare.md)
    out = _series([30_000.0] + walls, warm=[False] + [True] * 20)     # a cold first run
    assert not out["regression"].any() and not out["improvement"].any()
    assert out.loc[0, "basis"] == "" and math.isnan(out.loc[0, "expected_low_ms"])
    assert (out["more_runs_needed"].iloc[1:MIN_WARM_RUNS + 1] > 0).sum() == MIN_WARM_RUNS
    # a settings change that costs 40 %: judged against the usual before the change
    out = _series(walls + [walls[-1] * 1.4], groups=["a"] * 20 + ["b"])
    assert out["regression"].tolist() == [False] * 20 + [True]
    assert out.loc[20, "basis"] == "before the change"
    faster = _series(walls + [walls[-1] * 0.6], groups=["a"] * 20 + ["b"])
    assert faster["improvement"].tolist() == [False] * 20 + [True]


def test_a_slow_drift_no_pair_shows_is_a_change_point():
    rng = np.random.default_rng(11)
    x = rng.normal(0.0, 0.015, 40) + np.concatenate([np.zeros(10), np.arange(30) * 0.01])
    walls = list(2000.0 * np.exp(x))
    judged = _series(walls)
    # one run to the next moves ~1 %: no run leaves the band the runs before it set
    assert not judged["regression"].any()
    points = change_points(walls)
    assert points and all(p["shift"] > series.MIN_SHIFT for p in points)
    assert 8 <= points[0]["index"] <= 30


def test_no_change_point_in_noise_or_from_one_outlier():
    for seed in range(5):
        walls = _noisy(30, sd=0.03, seed=seed)
        assert change_points(walls) == []
        walls[15] *= 5.0                                   # one disturbed run
        assert change_points(walls) == []
    assert change_points([1000.0] * 5) == []               # too short to say
