"""The report data a standalone page carries (render/standalone.py): for tests that check what
a page holds without a browser (the renderer draws it; tests/render's browser tests)."""
from __future__ import annotations

import json
import re

from jupyter_perf.constants import REPORT_MIME_TYPE
from jupyter_perf.render.views import decode_data

_PAYLOAD = re.compile(rf'<script type="{re.escape(REPORT_MIME_TYPE)}">(.*?)</script>', re.S)


def page_data(html: str) -> dict:
    """The decoded report data of the one report on a standalone page."""
    (payload,) = _PAYLOAD.findall(html)
    return decode_data(json.loads(payload)["data"])


def page_text(html: str) -> str:
    """Everything the page's report data holds as text (its JSON, non-ASCII kept)."""
    data = page_data(html)
    data.pop("tasks", None)
    return json.dumps(data, ensure_ascii=False, default=str)
