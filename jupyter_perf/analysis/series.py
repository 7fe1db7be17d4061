"""A cell's runs as a series: which runs are warm, how much warm repeats vary, which runs are
regressions or improvements, and where the level moved (issue T). The ONE noise rule of
``jp.compare``'s ``within_noise``, the advice re-run's verdict and ``jp.history``.

**Warm and cold.** A run is *cold* when it is the first run of its code in its Spark
application (fresh JVM: classes loaded, whole-stage code generated and compiled, Python
workers started) or when an executor was added after the previous run of that code in the
same application (a fresh executor JVM). Cold runs are marked and never teach the noise: they
are slower for reasons that do not repeat. Without an application id warmth is unknown
(``None``); such runs count as warm (nothing says otherwise).

**Noise.** Learned from the warm runs with the same code and settings fingerprints, on
``ln(wall)`` (run-to-run variation is multiplicative): the median ``m`` and the scaled median
absolute deviation ``s = 1.4826 × MAD`` (the standard deviation for normal noise, with Croux
and Rousseeuw's small-sample factor; one slow run cannot widen it, unlike a standard
deviation), floored at :data:`MIN_LOG_SD`. The band a new run is expected in is
``m ± K × s × √(1 + π / 2n) × (1 + SMALL_N / n)`` (:data:`BAND_K`; the root for the
uncertainty of a median of ``n`` runs, the last factor for that of a MAD of few runs), and at
least :data:`MIN_HALF_MS` wide on either side. A run outside it is a regression (slower) or
an improvement (faster); inside, "within noise". With fewer than :data:`MIN_WARM_RUNS` warm
runs the noise is unknown and the answer says how many more runs would settle it.
``docs/compare.md`` argues the constants and records their measured power.

**Change points.** A slow drift moves the level a little per run, never far enough for one
pair to leave the band. ``change_points`` runs PELT (``ruptures``) with a least-squares cost
on the warm runs' ``ln(wall)``, standardised by the noise of successive differences (which
a level shift or a drift hardly affects) and clipped at :data:`CLIP_SD` so an outlier cannot
make a segment, with a BIC-like penalty :data:`PENALTY_PER_LOG_N` × ln n; a segment must
hold :data:`MIN_SEGMENT` runs, and a shift smaller than :data:`MIN_SHIFT` is not reported.

Pure: numpy, pandas, ruptures and the standard library.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

#: Warm runs with the same code and settings needed before the noise is known. Five is the
#: fewest for which a median and a MAD mean something (the MAD of 5 is its 3rd smallest
#: deviation); fewer would make the band a guess.
MIN_WARM_RUNS = 5
#: Half-width of the band in (scaled) MADs. A normal tail beyond 4 s is 6e-5 per run; the
#: margin pays for MADs learned from 5–10 runs and a busy host's heavier tails (measured
#: in docs/compare.md: no false alarm in the benchmark's warm unchanged runs).
BAND_K = 4.0
#: The band widens by (1 + SMALL_N / n) for a MAD of few runs (×1.4 at 5 runs, ×1.1 at 20):
#: the MAD of 5–10 runs is often half the true spread, and the first judged runs are the
#: ones a false alarm would come from (simulated in docs/compare.md).
SMALL_N = 2.0
#: MAD -> standard deviation for normal noise.
MAD_TO_SD = 1.4826
#: Floor on the standard deviation of ln(wall): 2 %. Five quiet runs can agree to 0.5 % by
#: chance; a floor keeps the band at least ±8 % (with BAND_K) instead of flagging jitter.
MIN_LOG_SD = 0.02
#: Floor on each side of the band in ms: the wall time is read from Spark's job times (ms)
#: and the driver's own scheduling; a 200 ms cell moves by tens of ms for no reason.
MIN_HALF_MS = 25.0
#: How many of the latest warm repeats a band is learned from (older ones may predate drift).
WINDOW = 30
#: Change points: the fewest runs on each side, the penalty per ln(n) (standardised
#: least squares; 2 would be BIC), outliers clipped at this many SDs, the smallest shift shown.
MIN_SEGMENT = 4
PENALTY_PER_LOG_N = 4.0
CLIP_SD = 4.0
MIN_SHIFT = 0.05


# -- the noise of repeats ---------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Noise:
    """How much warm repeats vary and where the next one is expected (or that it is unknown)."""

    runs: int                          # warm repeats it was learned from
    median_ms: float | None = None
    log_sd: float | None = None        # scaled MAD of ln(wall), after the floor
    log_low: float | None = None       # band on ln(wall), relative to the median
    log_high: float | None = None
    floored: bool = False              # the floor, not the runs, set the width
    min_ms: float | None = None
    max_ms: float | None = None

    @property
    def known(self) -> bool:
        return self.runs >= MIN_WARM_RUNS and self.median_ms is not None

    @property
    def more(self) -> int:
        """Warm runs still needed before the noise is known."""
        return max(0, MIN_WARM_RUNS - self.runs)

    @property
    def low_ms(self) -> float | None:
        return None if not self.known else self.median_ms * math.exp(self.log_low)

    @property
    def high_ms(self) -> float | None:
        return None if not self.known else self.median_ms * math.exp(self.log_high)

    def judge(self, wall_ms: float) -> str | None:
        """None (noise unknown) | "within" | "slower" | "faster"."""
        if not self.known:
            return None
        if wall_ms > self.high_ms:
            return "slower"
        if wall_ms < self.low_ms:
            return "faster"
        return "within"

    def as_dict(self) -> dict[str, Any]:
        return {"known": self.known, "runs": self.runs, "needed": MIN_WARM_RUNS,
                "more": self.more, "median_ms": self.median_ms, "low_ms": self.low_ms,
                "high_ms": self.high_ms, "log_sd": self.log_sd, "floored": self.floored,
                "min_ms": self.min_ms, "max_ms": self.max_ms, "k": BAND_K,
                "rule": "warm runs, same code and settings: median ± "
                        f"{BAND_K:g}×1.4826×MAD of ln(wall) (sd ≥ {MIN_LOG_SD:.0%}, "
                        f"≥ {MIN_HALF_MS:g} ms each side)"}


def _clean(walls: Iterable[Any]) -> np.ndarray:
    out = []
    for w in ([] if walls is None else walls):
        try:
            v = float(w)
        except (TypeError, ValueError):
            continue
        if math.isfinite(v) and v > 0:
            out.append(v)
    return np.asarray(out, dtype="float64")


#: Croux and Rousseeuw's small-sample factors for the MAD (n = 2..9; n/(n − 0.8) above):
#: the MAD of a few runs understates the spread, these make it unbiased for normal noise.
_MAD_SMALL_N = {2: 1.196, 3: 1.495, 4: 1.363, 5: 1.206, 6: 1.200, 7: 1.140, 8: 1.129, 9: 1.107}


def robust_sd(logs: np.ndarray) -> float:
    """Scaled MAD of ``logs``, with the small-sample factor (0 for fewer than two values)."""
    n = len(logs)
    if n < 2:
        return 0.0
    factor = _MAD_SMALL_N.get(n, n / (n - 0.8))
    return float(factor * MAD_TO_SD * np.median(np.abs(logs - np.median(logs))))


def learn(walls: Iterable[Any]) -> Noise:
    """The noise of warm repeats (wall ms, oldest first; the latest :data:`WINDOW` count)."""
    w = _clean(walls)[-WINDOW:]
    n = len(w)
    if n == 0:
        return Noise(runs=0)
    lo, hi = float(w.min()), float(w.max())
    if n < MIN_WARM_RUNS:
        return Noise(runs=n, min_ms=lo, max_ms=hi)
    logs = np.log(w)
    center = float(np.median(logs))
    raw = robust_sd(logs)
    sd = max(raw, MIN_LOG_SD)
    half = BAND_K * sd * math.sqrt(1.0 + math.pi / (2.0 * n)) * (1.0 + SMALL_N / n)
    median = math.exp(center)
    up = max(half, math.log1p(MIN_HALF_MS / median))
    down = max(half, -math.log1p(-min(MIN_HALF_MS / median, 0.99)))
    return Noise(runs=n, median_ms=median, log_sd=sd, log_low=-down, log_high=up,
                 floored=raw < MIN_LOG_SD or up > half, min_ms=lo, max_ms=hi)


# -- warm and cold ------------------------------------------------------------------------------
def mark_warm(runs: pd.DataFrame) -> pd.DataFrame:
    """``runs``, oldest first (columns ``run_id``, ``start_ms``, ``app_id``, ``code`` and
    optionally ``executor_added_ms``: the latest time a non-driver executor was added) with
    ``warm`` (True | False | None) and ``cold_reason`` added."""
    out = runs.copy()
    warm: list[bool | None] = []
    reasons: list[str] = []
    order = out.index
    last_start: dict[tuple, float] = {}
    verdicts: dict[Any, tuple[bool | None, str]] = {}
    added = out["executor_added_ms"] if "executor_added_ms" in out else pd.Series(np.nan,
                                                                                  index=out.index)
    for i in order:
        app = str(out.at[i, "app_id"] or "")
        start = float(out.at[i, "start_ms"] or 0.0)
        if not app:
            verdicts[i] = (None, "")
            continue
        key = (app, str(out.at[i, "code"] or ""))
        prev = last_start.get(key)
        new_exec = pd.to_numeric(added.get(i), errors="coerce")
        if prev is None:
            verdicts[i] = (False, "first run of this code in its Spark application")
        elif pd.notna(new_exec) and float(new_exec) > prev:
            verdicts[i] = (False, "executors added since the previous run")
        else:
            verdicts[i] = (True, "")
        last_start[key] = start
    for i in out.index:
        v, r = verdicts[i]
        warm.append(v)
        reasons.append(r)
    out["warm"] = pd.Series(warm, index=out.index, dtype="object")
    out["cold_reason"] = reasons
    return out


# -- a series judged --------------------------------------------------------------------------
def is_cold(warm: Any) -> bool:
    """``warm`` is known to be False (None / NaN: unknown, counted as warm)."""
    if warm is None or (isinstance(warm, float) and math.isnan(warm)) or warm is pd.NA:
        return False
    return not bool(warm)


def judge_series(runs: pd.DataFrame) -> pd.DataFrame:
    """``runs`` (oldest first; ``wall_ms``, ``warm``, ``group``: the code and settings
    fingerprint) with the band each run was expected in, learned from the warm runs before it:
    with its own group's when there are :data:`MIN_WARM_RUNS`, else with the latest earlier
    group that had as many (the cell's usual time before a change). Adds ``expected_low_ms``,
    ``expected_high_ms``, ``noise_runs``, ``more_runs_needed``, ``basis`` (``same`` | ``before
    the change`` | ``""``), ``regression``, ``improvement``. Cold runs are shown their band but
    never flagged (their first-run costs are expected)."""
    out = runs.reset_index(drop=True).copy()
    cols: dict[str, list] = {k: [] for k in ("expected_low_ms", "expected_high_ms", "noise_runs",
                                             "more_runs_needed", "basis", "regression",
                                             "improvement")}
    seen: dict[Any, list[float]] = {}
    latest_known: Any = None
    for i in range(len(out)):
        group = out.at[i, "group"]
        wall = float(out.at[i, "wall_ms"] or 0.0)
        own = learn(seen.get(group, []))
        noise, basis = own, "same"
        if not own.known and latest_known is not None and latest_known != group:
            noise, basis = learn(seen[latest_known]), "before the change"
        if not noise.known:
            basis = ""
        cold = is_cold(out.at[i, "warm"])
        verdict = noise.judge(wall) if not cold and wall > 0 else None
        cols["expected_low_ms"].append(noise.low_ms if noise.known else np.nan)
        cols["expected_high_ms"].append(noise.high_ms if noise.known else np.nan)
        cols["noise_runs"].append(own.runs if basis != "before the change" else noise.runs)
        cols["more_runs_needed"].append(own.more)
        cols["basis"].append(basis)
        cols["regression"].append(verdict == "slower")
        cols["improvement"].append(verdict == "faster")
        if not cold and wall > 0:
            seen.setdefault(group, []).append(wall)
            if learn(seen[group]).known:
                latest_known = group
    for k, v in cols.items():
        out[k] = v
    return out


def change_points(walls: Sequence[float]) -> list[dict[str, Any]]:
    """Where the level of a series of warm wall times moved (PELT, ``ruptures``): one dict per
    change, ``index`` (the first run of the new level, 0-based in ``walls``), ``before_ms`` and
    ``after_ms`` (the segments' medians) and ``shift`` (after / before − 1)."""
    import ruptures

    w = _clean(walls)
    n = len(w)
    if n < 2 * MIN_SEGMENT:
        return []
    x = np.log(w)
    d = np.diff(x)
    sd = max(float(MAD_TO_SD * np.median(np.abs(d - np.median(d)))) / math.sqrt(2.0), MIN_LOG_SD)
    z = np.clip((x - np.median(x)) / sd, -CLIP_SD, CLIP_SD).reshape(-1, 1)
    ends = ruptures.Pelt(model="l2", min_size=MIN_SEGMENT, jump=1).fit(z).predict(
        pen=PENALTY_PER_LOG_N * math.log(n))
    out = []
    starts = [0] + list(ends[:-1])
    for k in range(1, len(starts)):
        before = w[starts[k - 1]:starts[k]]
        after = w[starts[k]:ends[k]]
        b, a = float(np.median(before)), float(np.median(after))
        shift = a / b - 1.0
        if abs(math.log(a / b)) >= math.log1p(MIN_SHIFT):
            out.append({"index": int(starts[k]), "before_ms": b, "after_ms": a, "shift": shift})
    return out
