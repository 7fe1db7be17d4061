"""The Summary tab: verdict, time breakdown (measured solid, estimated hatched), key numbers,
what-if headlines, jobs, collection warnings, the cell's source."""
from __future__ import annotations

import pandas as pd
from bokeh.layouts import column
from bokeh.models import ColumnDataSource, TabPanel
from bokeh.plotting import figure

from ...analysis import Analysis
from .. import fmt
from ...analysis.components import BY_KEY
from ..widgets import div, stacked_hbars, swatch, table


def breakdown_bar(breakdown: dict[str, dict]):
    """One stacked bar of task time (estimated components hatched and lighter), and its
    legend as HTML (each entry says measured or estimated)."""
    from bokeh.models import HoverTool, Range1d
    names = [k for k in breakdown if breakdown[k]["ms"] > 0] or list(breakdown)[:1]
    total = sum(breakdown[k]["ms"] for k in names) / 1000.0
    p = figure(y_range=["task time"], height=110, sizing_mode="stretch_width",
               x_range=Range1d(0, max(total, 1e-3) * 1.005), toolbar_location=None,
               x_axis_label="seconds of task time (all attempts)", name="jp-breakdown")
    legend, left = [], 0.0
    rows: dict[str, list] = {k: [] for k in ("y", "left", "right", "color", "estimated", "label",
                                              "kind", "ms", "share", "metric")}
    for k in names:
        c = breakdown[k]
        w = c["ms"] / 1000.0
        est = c["kind"] == "estimated"
        color = BY_KEY[k].color
        for key, value in (("y", "task time"), ("left", left), ("right", left + w), ("color", color),
                           ("estimated", est), ("label", c["label"]), ("kind", c["kind"]),
                           ("ms", fmt.ms(c["ms"])), ("share", f"{100 * c['share']:.1f}%"),
                           ("metric", c["spark_metric"])):
            rows[key].append(value)
        label = c["label"] if est else f"{c['label']} (measured)"
        legend.append(f"<span style='white-space:nowrap;margin-right:12px'>{swatch(color, est)}"
                      f"{fmt.esc(label)} <b>{fmt.ms(c['ms'])}</b> ({100 * c['share']:.0f}%)</span>")
        left += w
    stacked_hbars(p, rows)
    p.add_tools(HoverTool(tooltips=[("component", "@label"), ("", "@kind"), ("time", "@ms"),
                                    ("share", "@share"), ("Spark metric", "@metric")]))
    p.ygrid.visible = False
    p.yaxis.visible = False
    return p, "<div>" + " ".join(legend) + "</div>"


def _key_numbers(a: Analysis, s: dict) -> str:
    run = a.run
    st = s["stages"]
    tot = lambda key: sum((r.get(key) or 0) for r in st)  # noqa: E731
    failed = sum((r.get("failed_tasks") or 0) for r in st)
    ex = run.executors
    num = lambda col: pd.to_numeric(ex[col], errors="coerce").max() if not ex.empty and col in ex else None  # noqa: E731
    w = s["whatif"]
    rows = [
        ("wall time", f"<b>{fmt.ms(s['wall_ms'])}</b> (measured)"),
        ("tasks running", f"{fmt.ms(a.actual_ms)} · driver / no task running {fmt.ms(a.driver_gap_ms)}"),
        ("work", f"{len(run.jobs)} jobs · {len(st)} stages · {s['task_attempts']:,} task attempts"
                 f"{f' ({failed} failed)' if failed else ''} · {s['slots']} slots"),
        ("task time", f"{fmt.ms(s['task_time_ms'])} summed over attempts"),
        ("data", f"read {fmt.nbytes(tot('input_bytes'))} · wrote {fmt.nbytes(tot('output_bytes'))} · "
                 f"shuffled {fmt.nbytes(tot('shuffle_write_bytes'))} (remote "
                 f"{fmt.nbytes(tot('shuffle_remote_bytes'))}) · spilled "
                 f"{fmt.nbytes(tot('memory_spilled_bytes'))} memory / {fmt.nbytes(tot('disk_spilled_bytes'))} disk"),
        ("memory", f"peak executor JVM heap {fmt.nbytes(num('peak_jvm_heap_bytes'))} of "
                   f"{fmt.nbytes(num('jvm_heap_limit_bytes'))} · peak execution memory "
                   f"{fmt.nbytes(num('peak_on_heap_execution_bytes'))} of "
                   f"{fmt.nbytes(num('max_memory_bytes'))} unified (Spark executor metrics)"),
        ("what-if", f"∞ disk {fmt.ms(w['infinite_disk_ms'])} <span class='est'>(upper bound)</span> · "
                    f"∞ network {fmt.ms(w['infinite_network_ms'])} · no GC {fmt.ms(w['no_gc_ms'])} · "
                    f"no stragglers {fmt.ms(w['no_stragglers_ms'])} · 2× slots {fmt.ms(w['slots_x2_ms'])} "
                    f"<span class='est'>(estimated)</span>"),
        ("model error", f"{100 * (w['model_error'] or 0):.1f}% (replayed {fmt.ms(w['simulated_baseline_ms'])} "
                        f"vs {fmt.ms(w['actual_ms'])} actual; it cancels out of the what-if numbers)"),
        ("stragglers", f"{s['stragglers']['count']} stragglers · "
                       f"{s['stragglers']['data_skew_count']} data-skewed tasks"),
        ("Spark", f"{fmt.esc(run.spark_version)} on {fmt.esc(run.master)} · app {fmt.esc(run.app_id)} "
                  f"{fmt.esc(run.app_name)} · collected with {fmt.esc(run.collector or 'n/a')}"),
    ]
    return "<table class='kv'>" + "".join(f"<tr><td class='muted'>{k}</td><td>{v}</td></tr>"
                                          for k, v in rows) + "</table>"


def header_html(run, extra: str = "") -> str:
    title = fmt.esc(run.label or run.first_line or run.run_id)
    status = "" if run.status == "ok" else f" — <b class='err'>{fmt.esc(run.status)}</b>"
    error = f"<div class='err'>{fmt.esc(run.error)}</div>" if run.error else ""
    return (f"<div style='font-size:15px'><b>jupyter-perf</b> · {title}{status}</div>{error}"
            f"<div class='muted'>run {fmt.esc(run.run_id)} · {fmt.esc(run.kind)}{extra}</div>")


def warnings_html(messages: list[str]) -> str:
    return "".join(f"<div class='warn'>⚠ {fmt.esc(m)}</div>" for m in messages)


def summary_tab(a: Analysis, s: dict) -> TabPanel:
    run = a.run
    hints = "".join(f"<li>{fmt.esc(h.get('text') or h.get('hint') if isinstance(h, dict) else h)}"
                    "</li>" for h in (s.get("hints") or []))
    verdict = (f"<div class='big'>{fmt.esc(s['verdict'])}</div>"
               + (f"<ul>{hints}</ul>" if hints else ""))
    legend = ("<div class='muted'>" + swatch(BY_KEY["cpu"].color, False) + "solid: measured by Spark · "
              + swatch(BY_KEY["io_wait_est"].color, True) + "hatched, lighter: estimated (what Spark leaves "
              "unexplained, attributed by rule)</div>")
    top = div(verdict + warnings_html(s.get("warnings") or []), name="jp-summary")
    bar, bar_legend = breakdown_bar(s["breakdown"])
    parts = [top, div("<b>Where the task time went</b>" + legend), bar, div(bar_legend),
             div(_key_numbers(a, s))]
    jobs = run.jobs
    if len(jobs):
        data = {
            "job_id": pd.to_numeric(jobs["job_id"], errors="coerce").fillna(-1).astype(int).tolist(),
            "description": jobs["description"].fillna("").astype(str).tolist(),
            "name": jobs["name"].fillna("").astype(str).tolist(),
            "status": jobs["status"].fillna("").astype(str).tolist(),
            "duration_ms": [(j.get("duration_ms") or 0.0) for j in s["jobs"]],
            "num_tasks": pd.to_numeric(jobs["num_tasks"], errors="coerce").fillna(0).astype(int).tolist(),
        }
        t, _ = table([("job_id", "job", "int"), ("description", "description", "text"),
                      ("name", "name", "text"), ("status", "status", "text"),
                      ("duration_ms", "duration ms", "ms"), ("num_tasks", "tasks", "int")],
                     data, height=min(220, 30 + 26 * len(jobs)), name="jp-jobs")
        parts += [div("<b>Jobs</b>"), t]
    if run.source:
        parts.append(div(f"<b>Cell</b><pre>{fmt.esc(run.source)}</pre>"))
    return TabPanel(child=column(*parts, sizing_mode="stretch_width"), title="Summary")
