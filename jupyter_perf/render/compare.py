"""The comparison of two runs as HTML (issue J): plain HTML and CSS, no script, no network.

    comparison_fragment(summary)   # a <div> for a notebook output (styles scoped inside it)
    comparison_html(summary)       # one standalone document (the same), works offline

Top first: the change in one sentence; its split into parts that add up to the measured
change (the residual shown); what A's report predicted for B beside what B measured; the
setup and the settings that differ; operators and stages matched by shape; data volume;
stragglers and skew; how the noise was estimated. Every user string (labels, settings,
operator descriptions, stage names) goes through ``fmt.esc``.
"""
from __future__ import annotations

import re
from typing import Any

from .. import fmt
from ..analysis.components import BY_KEY, KEYS

TITLE = "jupyter-perf comparison"
OPERATOR_ROWS = 40
STAGE_ROWS = 60
DESCRIPTION_CHARS = 120

CSS = """
.jp-perf-cmp { font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif; font-size:13px;
  line-height:1.45; color:inherit; max-width:1100px }
.jp-perf-cmp h2 { font-size:15px; margin:14px 0 4px }
.jp-perf-cmp .jp-cmp-head { font-size:15px }
.jp-perf-cmp .jp-cmp-sentence { font-size:17px; font-weight:600; margin:6px 0 }
.jp-perf-cmp .muted { opacity:.7; font-size:11px }
.jp-perf-cmp table { border-collapse:collapse; margin:2px 0 6px }
.jp-perf-cmp td, .jp-perf-cmp th { padding:2px 10px 2px 0; text-align:left; vertical-align:top }
.jp-perf-cmp th { font-weight:600; border-bottom:1px solid rgba(128,128,128,.5) }
.jp-perf-cmp td.num, .jp-perf-cmp th.num { text-align:right; font-variant-numeric:tabular-nums;
  white-space:nowrap }
.jp-perf-cmp .nw { white-space:nowrap }
.jp-perf-cmp tr.total td { border-top:1px solid rgba(128,128,128,.5); font-weight:600 }
.jp-perf-cmp .bar { display:inline-block; height:10px; vertical-align:middle }
.jp-perf-cmp .bar.est { opacity:.55; background-image:repeating-linear-gradient(45deg,
  transparent 0 3px, rgba(255,255,255,.6) 3px 5px) }
.jp-perf-cmp .track { display:inline-block; width:220px; position:relative; height:10px }
.jp-perf-cmp .track .mid { position:absolute; left:110px; top:-2px; height:14px;
  border-left:1px solid rgba(128,128,128,.7) }
.jp-perf-cmp .slower { color:#b03a2e } .jp-perf-cmp .faster { color:#1e7b34 }
.jp-perf-cmp .warn { color:#8a4b00 }
.jp-perf-cmp code { font-size:12px }
"""


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


def _cls(delta: float | None) -> str:
    if not delta:
        return ""
    return "slower" if delta > 0 else "faster"


def _bar(value: float, scale: float, color: str, estimated: bool = False) -> str:
    """A bar from the middle of a track: right for more time, left for less."""
    width = 0.0 if scale <= 0 else min(110.0, 110.0 * abs(value) / scale)
    left = 110.0 if value >= 0 else 110.0 - width
    cls = "bar est" if estimated else "bar"
    return (f"<span class='track'><span class='mid'></span><span class='{cls}' style='position:"
            f"absolute;left:{left:.1f}px;width:{width:.1f}px;background-color:{color}'></span>"
            "</span>")


def _table(headers: list[tuple[str, bool]], rows: list[list[str]], cls: list[str] | None = None) -> str:
    head = "".join(f"<th class='num'>{h}</th>" if num else f"<th>{h}</th>" for h, num in headers)
    body = []
    for i, row in enumerate(rows):
        cells = "".join(f"<td class='num'>{c}</td>" if headers[k][1] else f"<td>{c}</td>"
                        for k, c in enumerate(row))
        body.append(f"<tr class='{cls[i]}'>{cells}</tr>" if cls and cls[i] else f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _split(s: dict) -> str:
    parts: list[tuple[str, float, str, bool, str]] = [
        ("driver gaps (no task running)", s["driver_ms"], "#7f7f7f", False, "measured")]
    for k in KEYS:
        v = s["components"].get(k, 0.0)
        if abs(v) >= 0.5:
            c = BY_KEY[k]
            parts.append((c.label, v, c.color, c.estimated, c.kind))
    parts.append(("parallelism (slots, partitioning, skew)", s["parallelism_ms"], "#4b4b8f", False,
                  "measured"))
    parts.append(("residual (not explained by the parts above)", s["residual_ms"], "#d4d4d4", True,
                  "shown, not hidden"))
    scale = max([abs(p[1]) for p in parts] + [abs(s["wall_delta_ms"])] + [1e-9])
    rows, cls = [], []
    for label, value, color, est, kind in parts:
        rows.append([fmt.esc(label), f"<span class='muted'>{fmt.esc(kind)}</span>",
                     f"<span class='{_cls(value)}'>{_signed_ms(value)}</span>",
                     _bar(value, scale, color, est)])
        cls.append("")
    total = s["driver_ms"] + sum(s["components"].values()) + s["parallelism_ms"] + s["residual_ms"]
    rows.append(["sum of the parts = measured change", "",
                 f"<span class='{_cls(total)}'>{_signed_ms(total)}</span>",
                 _bar(s["wall_delta_ms"], scale, "#222")])
    cls.append("total")
    par = s["parallelism"]
    note = (f"<div class='muted'>Task time {fmt.ms(s['task_time_ms']['a'])} → "
            f"{fmt.ms(s['task_time_ms']['b'])}; tasks ran {par['a']:.2f} → {par['b']:.2f} at once "
            "on average. A component's part is its change of task time at A's parallelism; "
            "hatched parts are estimated (what Spark leaves unexplained, attributed by rule).</div>")
    return ("<h2>Where the change comes from</h2>"
            + _table([("part", False), ("", False), ("change", True), ("", False)], rows, cls) + note)


def _predictions(s: dict) -> str:
    preds = s.get("predicted_vs_measured") or []
    out = ""
    if preds:
        rows = []
        for p in preds:
            predicted = p.get("predicted_ms")
            if predicted is not None:
                said = fmt.ms(predicted)
            elif p.get("exact") is False:
                advised = p.get("advised_predicted_ms")
                said = ("nothing for this value" + (
                    f" ({fmt.ms(advised)} for {fmt.esc(p.get('advised_value'))})"
                    if advised is not None else ""))
            else:
                said = "not simulated"
            rows.append([
                fmt.esc(p.get("what")),
                said,
                fmt.ms(p.get("measured_ms")),
                f"{p['signed_error']:+.1%}" if p.get("signed_error") is not None else fmt.UNKNOWN])
        out += ("<h2>Predicted vs measured</h2><div class='muted'>What A's report predicted for "
                "B's change, beside what B measured (error = (predicted − measured) / measured; "
                "every comparison with a prediction is kept: <code>jupyter-perf accuracy</code>)"
                "</div>" + _table([("B changed", False), ("A predicted", True),
                                   ("B measured", True), ("error", True)], rows))
    return out


def _config(s: dict) -> str:
    setup = s.get("setup") or {}
    rows = [[fmt.esc(k), fmt.esc(v[0]), fmt.esc(v[1]), "changed" if v[0] != v[1] else ""]
            for k, v in setup.items()]
    diff = {k: v for k, v in (s.get("config_diff") or {}).items() if k not in setup}
    out = "<h2>Setup and settings</h2>" + _table(
        [("", False), ("A", False), ("B", False), ("", False)], rows)
    if diff:
        out += _table([("setting that differs", False), ("A", False), ("B", False)],
                      [[f"<code>{fmt.esc(k)}</code>", fmt.esc("(not set)" if a is None else a),
                        fmt.esc("(not set)" if b is None else b)] for k, (a, b) in diff.items()])
    else:
        out += "<div class='muted'>No Spark setting differs (secrets redacted).</div>"
    return out


def _ms_triplet(d: dict) -> list[str]:
    return [fmt.ms(d.get("a")) if d.get("a") is not None else "–",
            fmt.ms(d.get("b")) if d.get("b") is not None else "–",
            f"<span class='{_cls(d.get('delta'))}'>{_signed_ms(d.get('delta'))}</span>"]


def _operators(s: dict) -> str:
    ops = s.get("operators") or []
    if not ops:
        return ("<h2>Operators</h2><div class='muted'>No SQL plan in either run (RDD work, or "
                "a collector that could not read the plan).</div>")
    rows = []
    for r in ops[:OPERATOR_ROWS]:
        how = {"shape": "same shape", "name": "same name"}.get(r.get("matched_by") or "",
                                                                "only in A" if r["b_node"] is None
                                                                else "only in B")
        rows.append([fmt.esc(r["name"]), _descriptions(r),
                     fmt.esc(how), *_ms_triplet(r["task_time_ms"]),
                     f"{fmt.count(r['rows_out']['a'])} → {fmt.count(r['rows_out']['b'])}"])
    more = (f"<div class='muted'>{len(ops) - OPERATOR_ROWS} more operators changed less.</div>"
            if len(ops) > OPERATOR_ROWS else "")
    return ("<h2>Operators</h2><div class='muted'>Matched by plan shape and operator names, "
            "never by ids; largest change of task time first.</div>"
            + _table([("operator", False), ("", False), ("matched", False), ("A task time", True),
                      ("B task time", True), ("change", True), ("rows out A → B", True)], rows)
            + more)


def _short(text: Any) -> str:
    desc = str(text or "")
    return desc if len(desc) <= DESCRIPTION_CHARS else desc[:DESCRIPTION_CHARS - 1] + "…"


def _descriptions(r: dict) -> str:
    """The operator's description; both sides' when a matched pair differs (A's
    ``hashpartitioning(k, 200)`` beside B's ``(k, 8)``)."""
    a, b = r.get("a_description"), r.get("b_description")
    if a is not None and b is not None and str(a) != str(b):
        return (f"<span class='muted'>A: {fmt.esc(_short(a))}</span><br>"
                f"<span class='muted'>B: {fmt.esc(_short(b))}</span>")
    return f"<span class='muted'>{fmt.esc(_short(r.get('description')))}</span>"


def _stages(s: dict) -> str:
    stages = s.get("stages") or []
    if not stages:
        return ""
    rows = []
    for r in stages[:STAGE_ROWS]:
        if not r["matched"]:
            how = "only in A" if r["b_stage"] is None else "only in B"
        else:
            how = "same shape" if r["same_shape"] else "changed shape"
        skew = r.get("skew") or {}
        sk = "–" if skew.get("a") is None and skew.get("b") is None else \
            f"{_ratio(skew.get('a'))} → {_ratio(skew.get('b'))}"
        rows.append([fmt.esc(r["name"]), fmt.esc(r["a_stage"] or "–"), fmt.esc(r["b_stage"] or "–"),
                     fmt.esc(how),
                     f"{fmt.count(r['num_tasks']['a'])} → {fmt.count(r['num_tasks']['b'])}",
                     *_ms_triplet(r["executor_run_time_ms"]),
                     f"{fmt.nbytes(r['shuffle_read_bytes']['a'])} → "
                     f"{fmt.nbytes(r['shuffle_read_bytes']['b'])}", sk])
    return ("<h2>Stages</h2><div class='muted'>Stages that ran (skipped ones left out), matched "
            "in submission order by their plan operators, else their call site.</div>"
            + _table([("stage", False), ("A", False), ("B", False), ("matched", False),
                      ("tasks", True), ("A run time", True), ("B run time", True),
                      ("change", True), ("shuffle read", True), ("longest / median task", True)],
                     rows))


def _ratio(v: float | None) -> str:
    return "–" if v is None else f"{v:.1f}×"


VOLUME_LABELS = (("input_bytes", "input read", "bytes"), ("input_records", "input rows", "rows"),
                 ("output_bytes", "output written", "bytes"),
                 ("output_records", "output rows", "rows"),
                 ("shuffle_write_bytes", "shuffle written", "bytes"),
                 ("shuffle_write_records", "shuffle rows written", "rows"),
                 ("shuffle_read_bytes", "shuffle read", "bytes"),
                 ("spilled_bytes", "spilled (memory + disk)", "bytes"),
                 ("partitions", "partitions (tasks of the stages that ran)", "rows"),
                 ("task_attempts", "task attempts", "rows"), ("stages", "stages that ran", "rows"))


def _volume(s: dict) -> str:
    vol = s.get("volume") or {}
    rows = []
    for key, label, unit in VOLUME_LABELS:
        d = vol.get(key)
        if not d:
            continue
        f = fmt.nbytes if unit == "bytes" else fmt.count
        delta = d.get("delta") or 0.0
        sign = "+" if delta > 0 else ""
        rows.append([fmt.esc(label), f(d.get("a")), f(d.get("b")),
                     f"{sign}{f(delta)}" + (f" ({fmt.change(d['b'], d['a'])})" if d.get("a") else "")])
    strag = s.get("stragglers") or {}
    for key, label in (("stragglers", "stragglers (slow for their data)"),
                       ("data_skew", "data-skewed tasks (slow because of more data)")):
        d = strag.get(key)
        if d:
            rows.append([fmt.esc(label), fmt.count(d["a"]), fmt.count(d["b"]),
                         f"{'+' if (d['delta'] or 0) > 0 else ''}{fmt.count(d['delta'])}"])
    return ("<h2>Data volume, stragglers and skew</h2>"
            + _table([("", False), ("A", True), ("B", True), ("change", True)], rows))


def _footer(s: dict) -> str:
    lines = list(s.get("notes") or [])
    me = s.get("model_error") or {}
    lines.append(f"Replay model error: A {100 * (me.get('a') or 0):.1f}%, "
                 f"B {100 * (me.get('b') or 0):.1f}%.")
    if not s.get("same_app"):
        versions = s.get("spark_versions") or ["", ""]
        lines.append(f"A and B ran in different Spark applications (Spark {versions[0] or '?'} "
                     f"and {versions[1] or '?'}).")
    warn = [(side.upper(), w) for side in ("a", "b") for w in (s.get("warnings") or {}).get(side, [])]
    return ("<h2>How this was compared</h2>"
            + "".join(f"<div class='muted'>{fmt.esc(x)}</div>" for x in lines)
            + "".join(f"<div class='warn'>⚠ run {side}: {fmt.esc(w)}</div>" for side, w in warn))


def comparison_body(s: dict[str, Any]) -> str:
    """The comparison's sections (no styles)."""
    head = (f"<div class='jp-cmp-head'><b>jupyter-perf</b> · comparison</div>"
            f"<div>A: <b>{fmt.esc(s.get('a_title'))}</b> <span class='muted'>run "
            f"{fmt.esc(s['a'])} · {fmt.ms(s['wall_a_ms'])} wall</span></div>"
            f"<div>B: <b>{fmt.esc(s.get('b_title'))}</b> <span class='muted'>run "
            f"{fmt.esc(s['b'])} · {fmt.ms(s['wall_b_ms'])} wall</span></div>")
    sentence = f"<div class='jp-cmp-sentence'>{_keep(fmt.esc(s['sentence']))}</div>"
    advice = s.get("advice")
    if advice:
        sentence += (f"<div class='jp-cmp-advice jp-cmp-advice-{fmt.esc(advice['verdict'])}'>"
                     f"<b>Advice:</b> {_keep(fmt.esc(advice['words']))}</div>")
    return (head + sentence + _split(s) + _predictions(s) + _config(s) + _operators(s)
            + _stages(s) + _volume(s) + _footer(s))


def comparison_fragment(s: dict[str, Any]) -> str:
    """A self-contained ``<div>`` (its styles scoped inside) for a notebook output."""
    return f"<div class='jp-perf-cmp'><style>{CSS}</style>{comparison_body(s)}</div>"


def comparison_html(s: dict[str, Any]) -> str:
    """One standalone HTML document: no script, no external resource, works offline."""
    title = fmt.esc(f"{TITLE}: {s['a']} → {s['b']}")
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width'><title>{title}</title>"
            f"<style>{CSS}</style></head><body><div class='jp-perf-cmp'>{comparison_body(s)}"
            "</div></body></html>\n")


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
