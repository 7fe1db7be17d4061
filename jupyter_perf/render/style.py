"""The report's styles. Component labels and colours are not here: they come from
``analysis/components.py``, the one definition every view reads."""
from __future__ import annotations

ESTIMATED_HATCH = "/"
FONT = "font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;font-size:13px;line-height:1.45"
# One stylesheet per document, shared by every Div (``widgets.share_styles``).
CSS = f"""
 .jp {{ {FONT}; color:#222 }}
 .jp table.kv td {{ padding:1px 10px 1px 0; vertical-align:top }}
 .jp .muted {{ color:#666; font-size:11px }}
 .jp .est {{ color:#8a6d00 }}
 .jp .warn {{ color:#8a4b00; background:#fff6e5; padding:4px 8px; border-radius:3px; margin:2px 0 }}
 .jp .err {{ color:#a00 }}
 .jp .big {{ font-size:18px; font-weight:600 }}
 .jp pre {{ background:#f6f6f6; padding:6px; white-space:pre-wrap }}
"""
