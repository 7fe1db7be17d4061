"""The What-if tab's data. The answers themselves are computed in the browser
(``labextension/src/report/replay.ts``, from the per-task arrays and ``tasks_meta``: the slider
stops, the replay's constants) and equal ``Analysis.whatif``; this part carries the words and
the numbers that qualify them: the model error, the driver gaps, what the host's CPU allows,
and — for more slots on a shared host the run has no CPU samples of — the range's high-end
floor and its words (``slots_range``).

Labels of the sliders and toggles name the breakdown components as ``analysis/components.py``
does (the browser never spells a component itself)."""
from __future__ import annotations

from ...analysis import Analysis
from ...analysis.components import BY_KEY, COMPONENTS
from ...analysis.hostcpu import host_cores, needs_range, range_reason


def _label(key: str) -> str:
    return BY_KEY[key].label


def present_components(a: Analysis) -> list[str]:
    """Keys of the components with any time in ``a``, in stacking order (the legend)."""
    return [c.key for c in COMPONENTS if a.breakdown[c.key]["ms"] > 0] or [COMPONENTS[0].key]


def slots_range(a: Analysis) -> dict | None:
    """More slots on a shared host without host CPU samples: a range (``Analysis.whatif_range``).
    ``share``: per group, the high end's floor share (``Analysis.no_spare_share``, estimated);
    ``words``: the heading with ``{low}`` / ``{high}`` for the browser to fill; ``reason``: why
    it is a range; ``note``: the host-CPU note. None: every setting is a point."""
    if not needs_range(a.run) or not len(a.run.tasks):
        return None
    return {"share": [float(x) for x in a.no_spare_share],
            "words": "between {low} and {high}",
            "reason": f"({range_reason(a.run)})",
            "note": ("Added slots share this host's cores, but the run has no host CPU samples: "
                     "more slots give a range. Low: the plain replay (every added slot brings "
                     "an idle core). High: a host with only the measured slots as cores, each "
                     "stage group's task time outside I/O waits taken as CPU work "
                     "(estimated).")}


def data(a: Analysis, ctx) -> dict:
    share, cores = a.host_cpu_busy_share, host_cores(a.run)
    slots_used = int(a.timeline.group_slots.max(initial=0))
    return {
        "wall_ms": a.wall_ms,
        "actual_ms": a.actual_ms,
        "driver_gap_ms": a.driver_gap_ms,
        "simulated_baseline_ms": a.simulated_baseline_ms,
        "model_error": a.model_error,
        "slots_used": slots_used,
        # measured: the host's cores and how busy they were while tasks ran (None: no samples)
        "host_cpu": ({"busy_share": share, "cores": int(cores)}
                     if share is not None and cores else None),
        "labels": {
            "disk": (f"Disk speed — {_label('shuffle_write')}, {_label('shuffle_fetch_wait')} "
                     f"and {_label('io_wait_est')} (upper bound)"),
            "network": f"Network speed — {_label('shuffle_fetch_wait')}",
            "slots": f"Executor slots (measured: up to {slots_used} at once)",
            "gc": f"no GC (remove {_label('gc')} time)",
            "stragglers": "no stragglers (each at its stage's median progress rate)",
        },
        "components": present_components(a),
        "slots_range": slots_range(a),
    }
