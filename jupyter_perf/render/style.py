"""Colours and sizes shared by every tab (one place, so the legend always matches the bars)."""
from __future__ import annotations

# analysis.breakdown.COMPONENTS -> colour
COMPONENT_COLORS = {
    "cpu": "#4e79a7",
    "gc": "#e15759",
    "shuffle_fetch_wait": "#f28e2b",
    "shuffle_write": "#edc948",
    "io_wait_est": "#76b7b2",
    "other_wait_est": "#bab0ac",
    "scheduler_delay": "#b07aa1",
    "deserialize": "#9c755f",
    "result_serialization": "#ff9da7",
    "getting_result": "#59a14f",
    "unaccounted": "#d4d4d4",
}

# The six colours of timeline bars (report.js COMP_LABELS, same order).
TIMELINE_COMPONENTS = [
    ("CPU", "#4e79a7", "measured"),
    ("GC", "#e15759", "measured"),
    ("shuffle fetch wait", "#f28e2b", "measured"),
    ("shuffle write", "#edc948", "measured"),
    ("I/O wait (est.)", "#76b7b2", "estimated"),
    ("other (est.)", "#bab0ac", "estimated"),
]
TIMELINE_COLORS = [c for _, c, _ in TIMELINE_COMPONENTS]

ESTIMATED_HATCH = "/"
FONT = "font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;font-size:13px;line-height:1.45"
CSS = f"""
<style>
 .jp {{ {FONT}; color:#222 }}
 .jp table.kv td {{ padding:1px 10px 1px 0; vertical-align:top }}
 .jp .muted {{ color:#666; font-size:11px }}
 .jp .est {{ color:#8a6d00 }}
 .jp .warn {{ color:#8a4b00; background:#fff6e5; padding:4px 8px; border-radius:3px; margin:2px 0 }}
 .jp .err {{ color:#a00 }}
 .jp .big {{ font-size:18px; font-weight:600 }}
 .jp pre {{ background:#f6f6f6; padding:6px; max-height:160px; overflow:auto; white-space:pre-wrap }}
</style>"""
