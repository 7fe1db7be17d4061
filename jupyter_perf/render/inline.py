"""The report as a notebook output: the report's data for JupyterLab's renderer, and fallbacks.

A measured cell's output is a MIME bundle (docs/report.md, "In the notebook"):

* ``application/vnd.jupyter-perf.report+json`` — format 2: ``{"format": 2, "run_id", "title",
  "bokeh_version", "encoding": "json+gzip+base64", "data"}``, the report's data
  (``views.report_data``) compressed; the labextension's one renderer draws it with BokehJS
  loaded once per page, nbconvert's HTML export with the renderer bundle inlined once per page
  (:mod:`.nbconvert`). Compressed because a notebook file stores outputs as indented JSON.
* ``text/html`` — a small static summary (verdict, key numbers) for front ends without
  jupyter-perf, untrusted notebooks, and viewers such as GitHub;
* ``text/plain`` — the one-line ``Run.describe()``.

Notebooks saved with format 1 (a Bokeh document built by the kernel) are still read:
``decode_item`` (nbconvert) and the labextension's renderer embed their Bokeh item as it is.
The standalone export (``report.report_html``) is one offline page drawn by the same renderer.
"""
from __future__ import annotations

import base64
import gzip
import json
from typing import Any

from .. import fmt
from ..analysis import Analysis, analyze
from ..analysis.components import BY_KEY
from ..constants import ITEM_ENCODING
from ..constants import REPORT_MIME_TYPE as MIME
from ..model import Run
from .views import fallback_data, mime_payload, report_data


def decode_item(payload: dict) -> dict:
    """The Bokeh ``json_item`` of a format 1 payload (either encoding); ``ValueError`` when it
    has none."""
    item = payload.get("item")
    enc = payload.get("item_encoding")
    if enc is None and isinstance(item, dict):
        return item
    if enc == ITEM_ENCODING and isinstance(item, str):
        return json.loads(gzip.decompress(base64.b64decode(item)).decode("utf-8"))
    raise ValueError(f"no Bokeh item in the report payload (item_encoding {enc!r})")


def title_of(run: Run) -> str:
    return fmt.run_title(run)


def bundle(run: Run, analysis: Analysis | None = None,
           series: dict | None = None) -> dict[str, Any]:
    """MIME bundle for ``display(..., raw=True)``. ``analysis`` None: analyse here; if the
    analysis or the report's data fails, the fallback data with the reason (a measured cell
    always shows something). ``series``: the cell's stored runs (History tab), if any."""
    try:
        a = analysis if analysis is not None else analyze(run)
        data = report_data(a, series) if series is not None else report_data(a)
        static = static_html(run, a)
    except Exception as exc:  # broad on purpose: a measured cell always shows something
        reason = f"report failed: {type(exc).__name__}: {exc}"
        data = fallback_data(run, reason)
        static = static_html(run, None, reason)
    return {MIME: mime_payload(data), "text/html": static, "text/plain": run.describe()}


OPEN_HINT = ("Open this notebook in JupyterLab with jupyter-perf for the interactive report "
             "(timeline, stages, stragglers, what-if sliders, memory).")


def static_html(run: Run, a: Analysis | None, reason: str = "") -> str:
    """A few lines of plain HTML: title, verdict, key numbers; every user string escaped."""
    rows: list[tuple[str, str]] = [("wall time", f"{fmt.ms(run.wall_ms)} (measured)")]
    verdict = ""
    if a is not None:
        s = a.summary()
        verdict = f"<div><b>{fmt.esc(s['verdict'])}</b></div>"
        top = sorted((v for v in s["breakdown"].items() if v[1]["ms"] > 0),
                     key=lambda kv: -kv[1]["ms"])[:3]
        split = ", ".join(f"{fmt.esc(BY_KEY[k].label)} {100 * v['share']:.0f}%"
                          + ("" if BY_KEY[k].estimated else " (measured)") for k, v in top)
        w = s["whatif"]
        rows += [
            ("work", f"{len(run.jobs)} jobs · {s['task_attempts']:,} task attempts that ran · "
                     f"{s['slots']} slots"),
            ("task time", f"{fmt.ms(s['task_time_ms'])}: {split}"),
            ("what-if (estimated)", f"∞ disk {fmt.ms(w['infinite_disk_ms'])} (upper bound) · "
                                    f"∞ network {fmt.ms(w['infinite_network_ms'])} · "
                                    f"no GC {fmt.ms(w['no_gc_ms'])} · "
                                    f"2× slots {fmt.esc(fmt.slots_x2(w))} · "
                                    f"model error {100 * (w['model_error'] or 0):.1f}%"),
        ]
    if reason:
        verdict += f"<div>⚠ {fmt.esc(reason)}</div>"
    table = "".join(f"<tr><td style='padding-right:10px;color:#666'>{k}</td><td>{v}</td></tr>"
                    for k, v in rows)
    return (f"<div class='jupyter-perf-report jupyter-perf-static' data-run-id='{fmt.esc(run.run_id)}' "
            f"style='font-family:sans-serif;font-size:13px;line-height:1.45'>"
            f"<div><b>jupyter-perf</b> · {fmt.esc(title_of(run))}</div>{verdict}"
            f"<table>{table}</table>"
            f"<div style='color:#666;font-size:11px'>run {fmt.esc(run.run_id)} · {OPEN_HINT}</div>"
            f"</div>")
