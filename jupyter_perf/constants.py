"""The facts Python and the TypeScript extension share, each typed once: in ``constants.json``.

The file lives beside the TypeScript that imports it, ``labextension/src/constants.json``
(TypeScript can only import a JSON file from inside its source root); the wheel ships it as
``jupyter_perf/constants.json`` (``pyproject.toml``, ``force-include``). This module reads
whichever of the two exists, once, at import: stdlib only, so ``import jupyter_perf`` stays
light. Tests: tests/test_constants.py and labextension/src/__tests__/constants.spec.ts.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent

#: Where the file is: in an installed wheel, then in a source checkout.
CANDIDATES = (_HERE / "constants.json", _HERE.parent / "labextension" / "src" / "constants.json")


def _load() -> dict[str, Any]:
    for path in CANDIDATES:
        if path.is_file():
            return json.loads(path.read_text(encoding="utf-8"))
    raise ImportError("jupyter_perf: constants.json is missing (looked in "
                      f"{', '.join(str(p) for p in CANDIDATES)}); reinstall jupyter-perf")


_SHARED = _load()

#: The MIME type of a measured cell's report payload (render/inline.py, labextension mime.ts).
REPORT_MIME_TYPE: str = _SHARED["report_mime_type"]
#: The MIME type of a comparison of two runs (render/compare.py, labextension report/compare.ts).
COMPARE_MIME_TYPE: str = _SHARED["compare_mime_type"]
#: The comparison payload's format: ``{"format", "summary", "components"}`` (docs/compare.md).
COMPARE_FORMAT: int = _SHARED["compare_format"]
#: The payload format the kernel writes and the renderer reads (docs/report.md).
REPORT_FORMAT: int = _SHARED["report_format"]
#: The payload format of the report's data, drawn by the browser's renderer (render/views/).
REPORT_DATA_FORMAT: int = _SHARED["report_data_format"]
#: How format 2's ``data`` is encoded (render/views: a binary container, gzip, base 85).
REPORT_DATA_ENCODING: str = _SHARED["report_data_encoding"]
#: The BokehJS bundles the browser's renderer draws with: the core and its Plotting API.
RENDERER_BOKEH_BUNDLES: tuple[str, ...] = tuple(_SHARED["renderer_bokeh_bundles"])
#: How the payload's Bokeh ``item`` is encoded: base64 of the gzip of its compact JSON.
ITEM_ENCODING: str = _SHARED["item_encoding"]
#: The server's BokehJS route under its base URL (server/static.py).
BOKEH_NAMESPACE: str = _SHARED["bokeh_namespace"]
#: The BokehJS bundles a report needs, in load order: core, widgets, tables.
BOKEH_BUNDLES: tuple[str, ...] = tuple(_SHARED["bokeh_bundles"])
#: Every REST route of the server extension lives under ``{base_url}`` + this (docs/rest-api.md).
API_NAMESPACE: str = _SHARED["api_namespace"]
