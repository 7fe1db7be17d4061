"""The comparison of two stored runs over REST (issue J), for the sidebar's "Compare".

    GET  {base_url}/jupyter-perf/api/compare/{a}/{b}            the standalone HTML comparison
    GET  {base_url}/jupyter-perf/api/compare/{a}/{b}?format=json its summary (JSON)
    POST {base_url}/jupyter-perf/api/compare/{a}/{b}/export      {"path": "rel/x.html"} optional

The work is ``comparing.compare`` (noise from the store, the prediction recorded); the HTML
is ``render/compare.py`` (no script, no network), shown in a sandboxed iframe like a report.
Every verb is ``@tornado.web.authenticated``; errors are ``{"error": one line}``.
"""
from __future__ import annotations

import json
from typing import Any

import tornado.web
from jupyter_server.utils import url_path_join

from ..errors import one_line
from .handlers import PerfError, PerfHandler, ReportHandler
from .report_cache import render_once
from .runs_api import ApiError, check_run_id, export_html, open_store

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
    except Exception as exc:  # noqa: BLE001 - a bug must not look like bad input
        raise ApiError(500, f"could not compare runs {a} and {b}: {one_line(exc, limit=200)}; "
                            "see the server log") from exc


def comparison_html(root: str | None, a: str, b: str) -> str:
    """``GET compare/{a}/{b}``: one render at a time in the server (report_cache's gate)."""
    from ..service.comparing import compare_html

    return render_once(lambda: compare_html(comparison(root, a, b)))


def comparison_json(root: str | None, a: str, b: str) -> dict[str, Any]:
    return comparison(root, a, b).summary()


def export_comparison(root: str | None, a: str, b: str, path: str | None,
                      contents_root: str) -> dict[str, Any]:
    """``POST compare/{a}/{b}/export``: the HTML comparison written into the contents root
    (never through a link, never over a file that is not an export of this pair: 409)."""
    from ..service.comparing import export_id

    out = export_html(path, export_id(a, b), contents_root,
                      lambda: comparison_html(root, a, b))
    return {"a": a, "b": b, "path": out["path"], "bytes": out["bytes"]}


PAIR = r"(?P<a>[^/]+)/(?P<b>[^/]+)"


class CompareHandler(PerfHandler):
    """``GET compare/{a}/{b}[?format=json]``: the comparison (HTML, else its JSON summary)."""

    content_security_policy = ReportHandler.content_security_policy

    @tornado.web.authenticated
    async def get(self, a: str, b: str) -> None:
        self.set_header("Cache-Control", "no-store")
        if self.get_query_argument("format", "html") == "json":
            self.write_json(await self.call(comparison_json, self.store_root, a, b))
            return
        html = await self.call(comparison_html, self.store_root, a, b)
        self.finish(html, set_content_type="text/html; charset=UTF-8")


class CompareExportHandler(PerfHandler):
    """``POST compare/{a}/{b}/export`` with ``{"path": "rel/path.html"}`` (optional)."""

    @tornado.web.authenticated
    async def post(self, a: str, b: str) -> None:
        body: Any = {}
        if self.request.body:
            try:
                body = json.loads(self.request.body)
            except ValueError:
                body = None
        if not isinstance(body, dict):
            raise PerfError(400, 'the body must be a JSON object, e.g. {"path": "cmp.html"}')
        root = self.contents_root
        if not root:
            raise PerfError(500, "this Jupyter server's contents manager has no root directory "
                                 "on disk; use `jupyter-perf compare A B --html OUT` instead")
        data = await self.call(export_comparison, self.store_root, a, b, body.get("path"), root)
        self.write_json(data, status=201)


def compare_handlers(api: str) -> list[tuple[str, type]]:
    """The routes under ``{base_url}/jupyter-perf/api`` (``api``)."""
    return [(url_path_join(api, "compare", PAIR), CompareHandler),
            (url_path_join(api, "compare", PAIR, "export"), CompareExportHandler)]
