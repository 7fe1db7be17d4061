"""The report as a notebook output: a compact payload for JupyterLab's renderer, and fallbacks.

A measured cell's output is a MIME bundle (docs/report.md, "In the notebook"):

* ``application/vnd.jupyter-perf.report+json`` — ``{"format": 1, "run_id", "title",
  "bokeh_version", "item_encoding": "json+gzip+base64", "item"}``: ``item`` is
  ``bokeh.embed.json_item`` of the whole report, as gzip + base64 of its compact JSON text.
  The labextension's renderer draws it with BokehJS loaded once per page; nbconvert's HTML
  export embeds it with BokehJS once per page (:mod:`.nbconvert`). The item is compressed
  because a notebook file stores outputs as indented JSON: a nested Bokeh document takes
  ~5× its compact size in the ``.ipynb`` and ~15× its gzip size.
* ``text/html`` — a small static summary (verdict, key numbers) for front ends without
  jupyter-perf, untrusted notebooks, and viewers such as GitHub;
* ``text/plain`` — the one-line ``Run.describe()``.

The standalone export (``report.report_html``) stays one offline file with BokehJS inlined.
"""
from __future__ import annotations

import base64
import gzip
import json
from typing import Any

import bokeh
from bokeh.document import Document
from bokeh.embed import json_item

from .. import fmt
from ..analysis import Analysis, analyze
from ..analysis.components import BY_KEY
from ..constants import ITEM_ENCODING
from ..constants import REPORT_FORMAT as FORMAT
from ..constants import REPORT_MIME_TYPE as MIME
from ..model import Run
from .report import fallback_document, report_document


def encode_item(item: dict) -> str:
    text = json.dumps(item, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)).decode("ascii")


def decode_item(payload: dict) -> dict:
    """The ``json_item`` of a payload (either encoding); ``ValueError`` when it has none."""
    item = payload.get("item")
    enc = payload.get("item_encoding")
    if enc is None and isinstance(item, dict):
        return item
    if enc == ITEM_ENCODING and isinstance(item, str):
        return json.loads(gzip.decompress(base64.b64decode(item)).decode("utf-8"))
    raise ValueError(f"no Bokeh item in the report payload (item_encoding {enc!r})")


def title_of(run: Run) -> str:
    return fmt.run_title(run)


def payload(doc: Document, run: Run) -> dict[str, Any]:
    """The MIME type's data for the report document ``doc`` (one root) of ``run``."""
    (root,) = doc.roots
    return {"format": FORMAT, "run_id": str(run.run_id), "title": title_of(run),
            "bokeh_version": bokeh.__version__, "item_encoding": ITEM_ENCODING,
            "item": encode_item(json_item(root))}


def bundle(run: Run, analysis: Analysis | None = None) -> dict[str, Any]:
    """MIME bundle for ``display(..., raw=True)``. ``analysis`` None: analyse here; if the
    analysis or the report fails, the basic report with the reason (a measured cell always
    shows something)."""
    try:
        a = analysis if analysis is not None else analyze(run)
        doc = report_document(a)
        static = static_html(run, a)
    except Exception as exc:  # broad on purpose: a measured cell always shows something
        reason = f"report failed: {type(exc).__name__}: {exc}"
        doc = fallback_document(run, reason)
        static = static_html(run, None, reason)
    return {MIME: payload(doc, run), "text/html": static, "text/plain": run.describe()}


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
                                    f"2× slots {fmt.ms(w['slots_x2_ms'])} · "
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
