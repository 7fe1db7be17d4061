"""What-if scenarios: new task durations, replayed, reported relative to the baseline replay.

Per task attempt, a resource that took ``r`` ms and becomes ``f`` times faster saves
``r × (1 − 1/f)`` (``f = inf`` removes it; ``f = 1`` changes nothing):

* ``network=f``: shuffle fetch wait (``shuffleFetchWaitTime``);
* ``disk=f``: shuffle write + shuffle fetch wait + estimated input/output wait — an upper
  bound, since the last is an estimate. With both changed, fetch wait uses the larger factor;
* ``gc=False``: GC time removed (``gc=True`` keeps GC as measured);
* ``stragglers=False``: stragglers removed — each successful task slower than its stage's
  median progress rate gets the median rate (``stragglers=True`` keeps them as measured);
* ``slots_factor=k``: every group replayed on ``round(k × slots)`` slots. When the executors
  share the driver's host and the run has no host CPU samples (an event log of a ``local``
  application) the answer is a range (``Analysis.whatif_range``): low the plain replay, high
  with a floor as if the host had only the run's slots as cores (``analysis/hostcpu.py``).

All savings come out of ``executorRunTime``, so a task never saves more than its run time;
when stragglers are also removed, savings shrink in proportion to the shortened duration.

**Reported numbers** (``predict``): the driver gaps stay fixed and the time tasks spanned is
scaled by the replay, ``driver_gap_ms + actual_ms × simulated_scenario / simulated_baseline``.
So the unchanged scenario predicts exactly ``wall_ms``, and the replay's own model error
cancels out of every comparison (NSDI'15 §2.3.2, footnote 4).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from ..model import Run


def _factor(name: str, f: float) -> float:
    f = float(f)
    if math.isnan(f) or f <= 0:
        raise ValueError(f"{name} speed-up must be > 0 (1 = as measured, inf = free), got {f!r}")
    return f


def _saved_share(f: float) -> float:
    """Fraction of a resource's time saved when it is ``f`` times faster."""
    return 1.0 if math.isinf(f) else 1.0 - 1.0 / f


@dataclasses.dataclass
class ScenarioInputs:
    """Per task row: what each scenario may take away (ms)."""

    duration: np.ndarray
    run: np.ndarray
    fetch_wait: np.ndarray
    disk_only: np.ndarray         # shuffle write + input/output wait (est.)
    gc: np.ndarray
    no_straggler: np.ndarray      # duration with stragglers at the median rate

    @classmethod
    def build(cls, run: Run, duration: np.ndarray, per_task: pd.DataFrame,
              no_straggler: np.ndarray) -> "ScenarioInputs":
        t = run.tasks
        return cls(
            duration=duration,
            run=t["run_ms"].to_numpy(dtype="float64"),
            fetch_wait=t["fetch_wait_ms"].to_numpy(dtype="float64"),
            disk_only=(t["shuffle_write_time_ms"].to_numpy(dtype="float64")
                       + per_task["io_wait_est"].to_numpy(dtype="float64")),
            gc=t["gc_ms"].to_numpy(dtype="float64"),
            no_straggler=no_straggler,
        )


def scenario_durations(inp: ScenarioInputs, disk: float = 1.0, network: float = 1.0,
                       gc: bool = True, stragglers: bool = True) -> np.ndarray:
    """New duration per task row for one scenario (slots are the replay's business)."""
    disk, network = _factor("disk", disk), _factor("network", network)
    d = inp.duration if stragglers else np.minimum(inp.duration, inp.no_straggler)
    saved = np.zeros_like(inp.duration)
    if disk != 1.0 or network != 1.0:
        fetch = network if disk == 1.0 else disk if network == 1.0 else max(disk, network)
        saved = saved + inp.fetch_wait * _saved_share(fetch)
    if disk != 1.0:
        saved = saved + inp.disk_only * _saved_share(disk)
    if not gc:
        saved = saved + inp.gc
    if not saved.any():
        return d
    saved = np.minimum(saved, inp.run)       # every saving is inside executorRunTime
    with np.errstate(divide="ignore", invalid="ignore"):
        keep = np.where(inp.duration > 0, 1.0 - saved / inp.duration, 1.0)
    return d * np.clip(keep, 0.0, None)


def busy_estimate(inp: ScenarioInputs) -> np.ndarray:
    """Per task row: the ms it is taken to keep a core busy when the host's load was not
    sampled — its run time less the measured and estimated I/O waits (shuffle fetch wait,
    shuffle write, estimated input/output wait), within [0, duration]. The high end of a
    more-slots range (``analysis/hostcpu.py``, ``no_spare_share``)."""
    busy = inp.run - inp.fetch_wait - inp.disk_only
    return np.clip(np.nan_to_num(busy), 0.0, np.maximum(inp.duration, 0.0))


def predict(actual_ms: float, driver_gap_ms: float, simulated_baseline_ms: float,
            simulated_scenario_ms: float) -> float:
    """``driver gaps + actual × simulated_scenario / simulated_baseline`` (ms)."""
    if simulated_baseline_ms <= 0:
        return driver_gap_ms + actual_ms
    return driver_gap_ms + actual_ms * simulated_scenario_ms / simulated_baseline_ms
