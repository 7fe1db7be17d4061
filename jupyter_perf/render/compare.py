"""The comparison of two runs (issue J) for pages and notebooks, drawn by the one renderer
(issue Q): ``labextension/src/report/compare.ts`` draws it from its payload.

    compare_payload(summary)       # the compare MIME payload: {"format", "summary", "components"}
    comparison_html(summary)       # one standalone offline document: the renderer + the payload
    comparison_fallback(summary)   # a short static HTML for viewers without the extension
    comparison_text(summary)       # the comparison for a terminal (the CLI)

The page is built as the report's standalone page is (``render/standalone.py``): the renderer
bundle inlined once, the payload in a ``<script type="application/vnd.jupyter-perf.compare+json">``
right after the element it is drawn into; no BokehJS (the comparison draws none), no network.
The fallback holds the head, the sentence, the advice and the split only, every user string
through ``fmt.esc``.
"""
from __future__ import annotations

import re
from typing import Any

from .. import fmt
from ..analysis.components import BY_KEY, KEYS
from ..constants import COMPARE_FORMAT, COMPARE_MIME_TYPE

TITLE = "jupyter-perf comparison"
DESCRIPTION_CHARS = 120


def _signed_ms(value: float | None) -> str:
    if value is None:
        return fmt.UNKNOWN
    text = fmt.ms(value)
    return ("+" + text) if value > 0 and not text.startswith(("-", "0 ")) else text


#: A number and its unit (or sign) that must stay on one line: "−12.84 s", "+4 %".
_UNIT_GAP = re.compile(r"(?<=\d) (?=(?:ms|s|min|h|B|KiB|MiB|GiB|TiB|%)\b)")


def _keep(html: str) -> str:
    """Escaped text whose values never wrap mid-value (a no-break space before each unit)."""
    return _UNIT_GAP.sub("\u00a0", html)


def compare_payload(s: dict[str, Any]) -> dict[str, Any]:
    """The compare MIME payload: the summary, the split of its change into parts (words,
    colour, kind: :func:`split_parts`) and the data-volume rows' words, so the renderer types
    no label of its own."""
    return {"format": COMPARE_FORMAT, "summary": s, "split": split_parts(s),
            "volume_labels": [list(v) for v in VOLUME_LABELS]}


def comparison_element(s: dict[str, Any]) -> str:
    """The element the comparison is drawn into, then its payload (the renderer, on the page
    already or loaded after it, draws every such pair)."""
    from .standalone import script_json

    return ("<div class='jupyter-perf-compare'><div class='jp-perf-muted'>Drawing the "
            "comparison…</div></div>"
            f'<script type="{COMPARE_MIME_TYPE}">{script_json(compare_payload(s))}</script>')


def comparison_html(s: dict[str, Any]) -> str:
    """One standalone HTML document drawn by the renderer: no external resource, offline."""
    from .standalone import plain_text, renderer_script

    title = fmt.esc(plain_text(f"{TITLE}: {s['a']} → {s['b']}"))
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width'><title>{title}</title>"
            f"</head><body style='margin:12px'>{comparison_element(s)}{renderer_script()}"
            "</body></html>\n")


def split_parts(s: dict) -> list[dict[str, Any]]:
    """The split of the change into parts that add up to it: the driver gaps, each component
    that moved (``analysis/components.py``'s words and colours), parallelism and the residual.
    Each part: ``label``, ``ms``, ``color``, ``estimated`` (hatched), ``kind`` (measured |
    estimated | shown, not hidden)."""
    def part(label: str, ms: float, color: str, estimated: bool, kind: str) -> dict[str, Any]:
        return {"label": label, "ms": ms, "color": color, "estimated": estimated, "kind": kind}

    parts = [part("driver gaps (no task running)", s["driver_ms"], "#7f7f7f", False, "measured")]
    for k in KEYS:
        v = s["components"].get(k, 0.0)
        if abs(v) >= 0.5:
            c = BY_KEY[k]
            parts.append(part(c.label, v, c.color, c.estimated, c.kind))
    parts.append(part("parallelism (slots, partitioning, skew)", s["parallelism_ms"], "#4b4b8f",
                      False, "measured"))
    parts.append(part("residual (not explained by the parts above)", s["residual_ms"], "#d4d4d4",
                      True, "shown, not hidden"))
    return parts


def comparison_fallback(s: dict[str, Any]) -> str:
    """A short static ``<div>`` for a notebook viewer without the extension (GitHub, an
    untrusted output, nbviewer): the head, the sentence, the advice and the split."""
    def td(text: str, num: bool = False) -> str:
        return f"<td style='text-align:right;white-space:nowrap'>{text}</td>" if num \
            else f"<td>{text}</td>"

    rows = "".join(f"<tr>{td(fmt.esc(p['label']))}{td(fmt.esc(p['kind']))}"
                   f"{td(_signed_ms(p['ms']), True)}</tr>" for p in split_parts(s))
    total = s["driver_ms"] + sum(s["components"].values()) + s["parallelism_ms"] + s["residual_ms"]
    rows += (f"<tr><td><b>sum of the parts = measured change</b></td><td></td>"
             f"{td('<b>' + _signed_ms(total) + '</b>', True)}</tr>")
    advice = s.get("advice")
    return ("<div class='jp-perf-cmp-fallback'>"
            f"<div><b>jupyter-perf</b> · comparison</div>"
            f"<div>A: <b>{fmt.esc(s.get('a_title'))}</b> run {fmt.esc(s['a'])} · "
            f"{fmt.ms(s['wall_a_ms'])} wall</div>"
            f"<div>B: <b>{fmt.esc(s.get('b_title'))}</b> run {fmt.esc(s['b'])} · "
            f"{fmt.ms(s['wall_b_ms'])} wall</div>"
            f"<p><b>{_keep(fmt.esc(s['sentence']))}</b></p>"
            + (f"<p><b>Advice:</b> {_keep(fmt.esc(advice['words']))}</p>" if advice else "")
            + "<div><b>Where the change comes from</b></div>"
            f"<table>{rows}</table>"
            "<p><i>The full comparison needs the jupyter-perf extension (JupyterLab), or "
            "<code>jp.compare_html(c)</code> for a standalone page.</i></p></div>")


def _short(text: Any) -> str:
    desc = str(text or "")
    return desc if len(desc) <= DESCRIPTION_CHARS else desc[:DESCRIPTION_CHARS - 1] + "…"


VOLUME_LABELS = (("input_bytes", "input read", "bytes"), ("input_records", "input rows", "rows"),
                 ("output_bytes", "output written", "bytes"),
                 ("output_records", "output rows", "rows"),
                 ("shuffle_write_bytes", "shuffle written", "bytes"),
                 ("shuffle_write_records", "shuffle rows written", "rows"),
                 ("shuffle_read_bytes", "shuffle read", "bytes"),
                 ("spilled_bytes", "spilled (memory + disk)", "bytes"),
                 ("partitions", "partitions (tasks of the stages that ran)", "rows"),
                 ("task_attempts", "task attempts", "rows"), ("stages", "stages that ran", "rows"))


def comparison_text(s: dict[str, Any], operators: int = 8) -> str:
    """The comparison for a terminal: the same sections, top first, as plain lines."""
    lines = [f"A: {s.get('a_title')}  (run {s['a']}, {fmt.ms(s['wall_a_ms'])})",
             f"B: {s.get('b_title')}  (run {s['b']}, {fmt.ms(s['wall_b_ms'])})", "",
             s["sentence"], "", "where the change comes from (the parts add up to it):"]
    parts = [("driver gaps", s["driver_ms"])]
    parts += [(BY_KEY[k].label, v) for k, v in s["components"].items() if abs(v) >= 0.5]
    parts += [("parallelism", s["parallelism_ms"]), ("residual", s["residual_ms"])]
    lines += [f"  {label:<34} {_signed_ms(v):>12}" for label, v in parts]
    lines.append(f"  {'= measured change':<34} {_signed_ms(s['wall_delta_ms']):>12}")
    for p in s.get("predicted_vs_measured") or []:
        pred = fmt.ms(p["predicted_ms"]) if p.get("predicted_ms") is not None else "not simulated"
        err = f", error {p['signed_error']:+.1%}" if p.get("signed_error") is not None else ""
        lines.append(f"predicted vs measured: {p['what']}: A predicted {pred}, B measured "
                     f"{fmt.ms(p['measured_ms'])}{err}")
    if s.get("advice"):
        lines.append(f"advice: {s['advice']['words']}")
    lines.append("setup: " + "; ".join(f"{k} {v[0]}" + (f" → {v[1]}" if v[0] != v[1] else "")
                                       for k, v in (s.get("setup") or {}).items()))
    diff = {k: v for k, v in (s.get("config_diff") or {}).items() if k not in (s.get("setup") or {})}
    lines += [f"setting {k}: {a} → {b}" for k, (a, b) in diff.items()] or ["no Spark setting differs"]
    for r in (s.get("operators") or [])[:operators]:
        how = r.get("matched_by") or ("only in A" if r["b_node"] is None else "only in B")
        lines.append(f"operator {r['name']} ({how}): {_ms_text(r['task_time_ms'])}")
        a_desc, b_desc = r.get("a_description"), r.get("b_description")
        if a_desc is not None and b_desc is not None and str(a_desc) != str(b_desc):
            lines.append(f"  A: {_short(a_desc)}")
            lines.append(f"  B: {_short(b_desc)}")
    stages = s.get("stages") or []
    if stages:
        same = sum(1 for r in stages if r["matched"] and r["same_shape"])
        lines.append(f"stages: {same} of {len(stages)} matched by shape; "
                     + "; ".join(f"{r['name']} (stage {r['a_stage'] or '–'} → "
                                 f"{r['b_stage'] or '–'}): tasks "
                                 f"{fmt.count(r['num_tasks']['a'])} → "
                                 f"{fmt.count(r['num_tasks']['b'])}" for r in stages[:4]))
    vol = s.get("volume") or {}
    lines.append("data: " + ("; ".join(
        f"{label} {(fmt.nbytes if unit == 'bytes' else fmt.count)(vol[k]['a'])} → "
        f"{(fmt.nbytes if unit == 'bytes' else fmt.count)(vol[k]['b'])}"
        for k, label, unit in VOLUME_LABELS if k in vol and vol[k]["a"] != vol[k]["b"]) or "unchanged"))
    st = s.get("stragglers") or {}
    lines.append(f"stragglers {fmt.count(st['stragglers']['a'])} → "
                 f"{fmt.count(st['stragglers']['b'])}, "
                 f"data-skewed tasks {fmt.count(st['data_skew']['a'])} → "
                 f"{fmt.count(st['data_skew']['b'])}")
    lines += list(s.get("notes") or [])
    return "\n".join(lines)


def _ms_text(d: dict) -> str:
    return (f"{fmt.ms(d['a']) if d.get('a') is not None else '–'} → "
            f"{fmt.ms(d['b']) if d.get('b') is not None else '–'} ({_signed_ms(d.get('delta'))})")
