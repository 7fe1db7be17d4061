"""The What-if tab's data. The answers themselves are computed in the browser
(``labextension/src/report/replay.ts``, from the per-task arrays and ``tasks_meta``: the slider
stops, the replay's constants) and equal ``Analysis.whatif``; this part carries the words and
the numbers that qualify them: the model error, the driver gaps, what the host's CPU allows.

Labels of the sliders and toggles name the breakdown components as ``analysis/components.py``
does (the browser never spells a component itself)."""
from __future__ import annotations

from ...analysis import Analysis
from ...analysis.components import BY_KEY, COMPONENTS
from ...analysis.hostcpu import host_cores


def _label(key: str) -> str:
    return BY_KEY[key].label


def present_components(a: Analysis) -> list[str]:
    """Keys of the components with any time in ``a``, in stacking order (the legend)."""
    return [c.key for c in COMPONENTS if a.breakdown[c.key]["ms"] > 0] or [COMPONENTS[0].key]


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
    }
