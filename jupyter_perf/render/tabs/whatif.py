"""The What-if tab: sliders and toggles whose answers come from ``report.js``'s port of the
replay, in the page, with no kernel — the same numbers ``Analysis.whatif`` returns."""
from __future__ import annotations

import dataclasses

from bokeh.layouts import column, row
from bokeh.models import CategoricalSlider, CheckboxGroup, ColumnDataSource, TabPanel

from ... import fmt
from ...analysis import Analysis
from ...analysis.components import BY_KEY
from ...analysis.hostcpu import host_cores
from ..payload import DISK_STOPS, SLOT_STOPS, stop_label
from ..widgets import div, present_components, timeline_legend
from .timeline import TimelineParts, lane_figure


@dataclasses.dataclass
class WhatIfParts:
    disk: CategoricalSlider
    network: CategoricalSlider
    slots: CategoricalSlider
    toggles: CheckboxGroup
    out: object
    state: ColumnDataSource
    sim: TimelineParts


def host_cpu_note(a: Analysis) -> str:
    """What bounds the slots scenarios on this host (measured), or why nothing does."""
    share, cores = a.host_cpu_busy_share, host_cores(a.run)
    if share is None or not cores:
        return ("<div class='muted'>Added slots are assumed to bring their own cores "
                "(no host CPU samples for this run).</div>")
    return (f"<div class='muted'>Added slots share this host's {int(cores)} cores: they were "
            f"<b>{100 * share:.0f}% busy</b> (measured) while tasks ran, so no slot count "
            "can finish a stage group faster than that share of its replay.</div>")


def whatif_tab(a: Analysis) -> tuple[TabPanel, WhatIfParts]:
    stops = [stop_label(f) for f in DISK_STOPS]
    slot_stops = [f"×{f:g}" for f in SLOT_STOPS]

    def label(key: str) -> str:
        return BY_KEY[key].label

    disk = CategoricalSlider(categories=stops, value=stops[0], name="jp-disk",
                             title=f"Disk speed — {label('shuffle_write')}, {label('shuffle_fetch_wait')} "
                                   f"and {label('io_wait_est')} (upper bound)", sizing_mode="stretch_width")
    network = CategoricalSlider(categories=stops, value=stops[0], name="jp-network",
                                title=f"Network speed — {label('shuffle_fetch_wait')}",
                                sizing_mode="stretch_width")
    slots = CategoricalSlider(categories=slot_stops, value="×1", name="jp-slots",
                              title="Executor slots (measured: up to "
                                    f"{int(a.timeline.group_slots.max(initial=0))} at once)",
                              sizing_mode="stretch_width")
    toggles = CheckboxGroup(labels=[f"no GC (remove {label('gc')} time)",
                                    "no stragglers (each at its stage's median progress rate)"],
                            active=[], name="jp-toggles")
    wall = a.wall_ms
    state = ColumnDataSource({"predicted_ms": [wall], "simulated_ms": [a.simulated_baseline_ms],
                              "disk": [1.0], "network": [1.0], "slots_factor": [1.0],
                              "gc": [True], "stragglers": [True]}, name="jp-whatif-state")
    out = div(f"<div class='big'>Predicted: {fmt.ms(wall)} (+0.0% vs {fmt.ms(wall)} measured)</div>",
              name="jp-whatif-out")
    labels = div(
        f"<div><b>Model error {100 * a.model_error:.1f}%</b> — the replay of the measured run took "
        f"{fmt.ms(a.simulated_baseline_ms)} against {fmt.ms(a.actual_ms)} of actual task time. "
        f"Every prediction is <i>driver gaps + actual × simulated scenario / simulated baseline</i>, "
        f"so this error cancels out.</div>"
        "<div class='est'>All what-if numbers are <b>estimates</b> from a schedule replay. "
        "Disk is an <b>upper bound</b>: it also removes the input/output wait that Spark does not "
        "measure (estimated from the unexplained run time of tasks that read or write).</div>"
        f"<div class='muted'>Driver gaps (no task running: {fmt.ms(a.driver_gap_ms)}) stay fixed. "
        "Slots: every stage group replayed on round(k × the slots it used).</div>"
        + host_cpu_note(a),
        name="jp-whatif-labels")
    sim = lane_figure("jp-sim", max(1, int(a.timeline.group_slots.max(initial=1))),
                      [f"slot {k}" for k in range(int(a.timeline.group_slots.max(initial=1)))],
                      max(a.wall_ms, 1.0) / 1000.0, height=300)
    sim.fig.x_range.bounds = None
    sim.fig.xaxis.axis_label = "seconds (simulated schedule; groups keep their measured driver gaps)"
    head = div("<b>Simulated schedule</b> <span class='muted'>(the replay for these settings, "
               "not rescaled; colours are the measured breakdown, scaled with each task)</span>"
               + timeline_legend(present_components(a)))
    controls = column(disk, network, slots, toggles, sizing_mode="stretch_width")
    layout = column(row(controls, column(out, labels, sizing_mode="stretch_width"),
                        sizing_mode="stretch_width"),
                    head, sim.status, sim.fig, sizing_mode="stretch_width")
    return TabPanel(child=layout, title="What-if"), WhatIfParts(disk, network, slots, toggles,
                                                                 out, state, sim)
