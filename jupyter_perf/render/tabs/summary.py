"""The Summary tab: verdict, time breakdown (measured solid, estimated hatched), key numbers,
what-if headlines, jobs, collection warnings, the cell's source."""
from __future__ import annotations

import pandas as pd
from bokeh.layouts import column
from bokeh.models import TabPanel
from bokeh.plotting import figure

from ... import fmt
from ...analysis import Analysis
from ...analysis.components import BY_KEY
from ..advice import ready_cell_html  # issue J: a hint as a ready cell
from ..widgets import div, stacked_hbars, swatch, table, table_height


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

    def tot(key: str):
        return sum((r.get(key) or 0) for r in st)

    failed = sum((r.get("failed_tasks") or 0) for r in st)
    skipped = sum(1 for r in st if r.get("status") == "SKIPPED")
    ran = len(st) - skipped
    ex = run.executors

    def num(col: str):
        return pd.to_numeric(ex[col], errors="coerce").max() if not ex.empty and col in ex else None

    w = s["whatif"]
    rows = [
        ("wall time", f"<b>{fmt.ms(s['wall_ms'])}</b> (measured)"),
        ("tasks running", f"{fmt.ms(a.actual_ms)} · driver / no task running {fmt.ms(a.driver_gap_ms)}"),
        ("work", f"{len(run.jobs)} jobs · {ran} stages ran"
                 f"{f' ({skipped} skipped: output reused)' if skipped else ''} · "
                 f"{s['task_attempts']:,} task attempts that ran"
                 f"{f' ({failed} failed)' if failed else ''} · {s['slots']} slots"),
        ("task time", f"{fmt.ms(s['task_time_ms'])} summed over the attempts that ran"),
        ("data", f"input {fmt.nbytes(tot('input_bytes'))} · output {fmt.nbytes(tot('output_bytes'))} · "
                 f"shuffle write {fmt.nbytes(tot('shuffle_write_bytes'))} · shuffle read "
                 f"{fmt.nbytes(tot('shuffle_read_bytes'))} (remote "
                 f"{fmt.nbytes(tot('shuffle_remote_bytes'))}) · spill "
                 f"{fmt.nbytes(tot('memory_spilled_bytes'))} memory / "
                 f"{fmt.nbytes(tot('disk_spilled_bytes'))} disk"),
        ("memory", f"peak executor JVM heap {fmt.nbytes(num('peak_jvm_heap_bytes'))} of "
                   f"{fmt.nbytes(num('jvm_heap_limit_bytes'))} · peak execution memory "
                   f"{fmt.nbytes(num('peak_on_heap_execution_bytes'))} of "
                   f"{fmt.nbytes(num('max_memory_bytes'))} unified (Spark executor metrics)"),
        ("what-if", f"∞ disk {fmt.ms(w['infinite_disk_ms'])} <span class='est'>(upper bound)</span> · "
                    f"∞ network {fmt.ms(w['infinite_network_ms'])} · no GC {fmt.ms(w['no_gc_ms'])} · "
                    f"no stragglers {fmt.ms(w['no_stragglers_ms'])} · 2× slots {fmt.ms(w['slots_x2_ms'])} "
                    f"<span class='est'>(estimated)</span>"),
        ("model error", f"{100 * (w['model_error'] or 0):.1f}% "
                        f"(replayed {fmt.ms(w['simulated_baseline_ms'])} vs {fmt.ms(w['actual_ms'])} "
                        f"actual; it cancels out of the what-if numbers)"),
        ("stragglers", f"{s['stragglers']['count']} stragglers · "
                       f"{s['stragglers']['data_skew_count']} data-skewed tasks"),
        ("Spark", f"{fmt.esc(run.spark_version)} on {fmt.esc(run.master)} · "
                  f"app {fmt.esc(run.app_id)} {fmt.esc(run.app_name)} · "
                  f"collected with {fmt.esc(run.collector or 'n/a')}"
                  + (f" · Spark's log {fmt.esc(run.extra['spark_log'])}"
                     if run.extra.get("spark_log") else "")),
    ]
    return "<table class='kv'>" + "".join(f"<tr><td class='muted'>{k}</td><td>{v}</td></tr>"
                                          for k, v in rows) + "</table>"


def job_rows(a: Analysis, s: dict) -> dict[str, list]:
    """Per job: stages that ran, stages skipped, and the task attempts that ran in them — the
    same attempts the Summary counts (Spark's own per-job task count includes skipped stages).
    A stage listed by several jobs belongs to the first (by submission) that lists it."""
    run = a.run
    status = {int(r["stage_id"]): str(r.get("status") or "") for r in s["stages"]}
    attempts = run.tasks.groupby("stage_id").size().to_dict() if len(run.tasks) else {}
    jobs = sorted(s["jobs"], key=lambda j: (pd.isna(j.get("submission_ms")),
                                             j.get("submission_ms") or 0, j.get("job_id") or 0))
    owner: dict[int, object] = {}
    for j in jobs:
        for sid in j.get("stage_ids") or []:
            if status.get(int(sid)) != "SKIPPED":
                owner.setdefault(int(sid), j.get("job_id"))
    by_id = {j.get("job_id"): j for j in s["jobs"]}
    frame = run.jobs
    out: dict[str, list] = {k: [] for k in ("job_id", "description", "name", "status",
                                            "duration_ms", "stages", "skipped", "attempts")}
    for rec in frame.to_dict("records"):
        j = by_id.get(rec.get("job_id"), {})
        listed = list(dict.fromkeys(int(x) for x in (j.get("stage_ids") or [])))
        mine = [x for x in listed if owner.get(x) == rec.get("job_id")]
        jid = pd.to_numeric(rec.get("job_id"), errors="coerce")
        out["job_id"].append(-1 if pd.isna(jid) else int(jid))
        out["description"].append("" if pd.isna(rec.get("description")) else str(rec.get("description")))
        out["name"].append("" if pd.isna(rec.get("name")) else str(rec.get("name")))
        out["status"].append("" if pd.isna(rec.get("status")) else str(rec.get("status")))
        out["duration_ms"].append(j.get("duration_ms") or 0.0)
        out["stages"].append(len(mine))
        out["skipped"].append(sum(1 for x in listed if status.get(x) == "SKIPPED"))
        out["attempts"].append(int(sum(attempts.get(x, 0) for x in mine)))
    return out


def header_html(run, extra: str = "") -> str:
    title = fmt.esc(fmt.run_title(run))
    status = "" if run.status == "ok" else f" — <b class='err'>{fmt.esc(run.status)}</b>"
    error = f"<div class='err'>{fmt.esc(run.error)}</div>" if run.error else ""
    return (f"<div style='font-size:15px'><b>jupyter-perf</b> · {title}{status}</div>{error}"
            f"<div class='muted'>run {fmt.esc(run.run_id)} · {fmt.esc(run.kind)}{extra}</div>")


def warnings_html(messages: list[str]) -> str:
    return "".join(f"<div class='warn'>⚠ {fmt.esc(m)}</div>" for m in messages)


def summary_tab(a: Analysis, s: dict) -> TabPanel:
    run = a.run
    hints = "".join(f"<li>{fmt.esc(h.get('text') or h.get('hint') if isinstance(h, dict) else h)}"
                    f"{ready_cell_html(run, h)}</li>" for h in (s.get("hints") or []))
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
        data = job_rows(a, s)
        t, _ = table([("job_id", "job", "int"), ("description", "description", "text"),
                      ("name", "call site", "text"), ("status", "status", "text"),
                      ("duration_ms", "duration ms", "ms"), ("stages", "stages ran", "int"),
                      ("skipped", "stages skipped", "int"),
                      ("attempts", "task attempts that ran", "int")],
                     data, height=table_height(len(jobs), cap=240), name="jp-jobs", fit=True)
        parts += [div("<b>Jobs</b> <span class='muted'>a stage that several jobs share is "
                      "counted in the first job that ran it; the others skipped it.</span>"), t]
    if run.source:
        parts.append(div(f"<b>Cell</b><pre>{fmt.esc(run.source)}</pre>"))
    return TabPanel(child=column(*parts, sizing_mode="stretch_width"), title="Summary")
