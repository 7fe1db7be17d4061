"""What the REST API does with two runs compared (issue J), as plain functions (no tornado,
no jupyter_server), for the sidebar's "Compare":

    GET  compare/{a}/{b}              comparison_html: the standalone comparison page
    GET  compare/{a}/{b}?format=json  comparison_json: its summary
    POST compare/{a}/{b}/export       export_comparison: {"path": "rel/x.html"} optional

The work is ``service.comparing.compare`` (noise from the store, the prediction recorded);
the page is ``render/compare.py``'s (the renderer bundle and the payload, no network),
shown in a sandboxed iframe (scripts allowed, no origin) like a report. The handlers are
``CompareHandler`` and ``CompareExportHandler`` in ``handlers.py``.
Failures are ``runs_service.ApiError`` (one line each), as for runs.
"""
from __future__ import annotations

from typing import Any

from ..errors import one_line
from .report_cache import render_once
from .runs_service import ApiError, check_run_id, export_html, open_store

#: HTTP status of each kind of ``CompareError``.
STATUS = {"unknown": 404, "invalid": 400, "same": 400, "no-jobs": 400, "usage": 400,
          "damaged": 500, "analysis": 500}


def comparison(root: str | None, a: str, b: str):
    """``comparing.compare`` of two stored runs, its errors as ``ApiError``."""
    from ..service.comparing import CompareError, compare

    check_run_id(a)
    check_run_id(b)
    try:
        return compare(a, b, store=open_store(root))
    except CompareError as exc:
        raise ApiError(STATUS.get(exc.kind, 400), str(exc)) from None
    except Exception as exc:  # broad on purpose: a bug must not look like bad input
        raise ApiError(500, f"could not compare runs {a} and {b}: {one_line(exc, limit=200)}; "
                            "see the server log") from exc


def comparison_html(root: str | None, a: str, b: str) -> str:
    """``GET compare/{a}/{b}``: one render at a time in the server (report_cache's gate)."""
    from ..service.comparing import compare_html

    return render_once(lambda: compare_html(comparison(root, a, b)))


def comparison_json(root: str | None, a: str, b: str) -> dict[str, Any]:
    """``GET compare/{a}/{b}?format=json``: ``jp.compare(a, b).summary()``."""
    return comparison(root, a, b).summary()


def export_comparison(root: str | None, a: str, b: str, path: str | None,
                      contents_root: str) -> dict[str, Any]:
    """``POST compare/{a}/{b}/export``: the HTML comparison written into the contents root
    (never through a link, never over a file that is not an export of this pair: 409)."""
    from ..service.comparing import export_id

    out = export_html(path, export_id(a, b), contents_root,
                      lambda: comparison_html(root, a, b))
    return {"a": a, "b": b, "path": out["path"], "bytes": out["bytes"]}
