"""REST handlers of the jupyter_perf server extension: one class per resource, one method per
verb. Each parses the request, calls one function of ``runs_service`` or ``compare_service``
in a worker thread (SQLite, parquet and rendering block) and writes its result. The routes
are in ``server/__init__.py`` (``routes``); nothing here imports that module.

Every verb method carries ``@tornado.web.authenticated``:
tests/test_packaging.py fails if jupyter_server finds one that does not.
The REST spec is docs/rest-api.md.
"""
from __future__ import annotations

import json
from typing import Any, Callable

import tornado.web
from jupyter_server.base.handlers import APIHandler
from tornado.ioloop import IOLoop

from .._version import __version__
from ..errors import one_line
from . import compare_service, runs_service
from .report_cache import DEFAULT_LIMIT_MB

#: The Content-Security-Policy of a report or comparison page: opened directly, its scripts
#: run in an opaque origin, away from the Jupyter server.
SANDBOXED_PAGE_CSP = ("frame-ancestors 'self'; sandbox allow-scripts; default-src 'none'; "
                      "script-src 'unsafe-inline' 'unsafe-eval' blob:; "
                      "style-src 'unsafe-inline'; img-src data: blob:; font-src data:; "
                      "connect-src 'none'")

HTML_TYPE = "text/html; charset=UTF-8"


class PerfHandler(APIHandler):
    """Shared plumbing: the store root, the contents root, JSON errors."""

    @property
    def store_root(self) -> str | None:
        return self.settings.get("jupyter_perf", {}).get("store_dir") or None

    @property
    def report_cache_mb(self) -> float:
        return self.settings.get("jupyter_perf", {}).get("report_cache_mb", DEFAULT_LIMIT_MB)

    @property
    def contents_root(self) -> str | None:
        root = getattr(self.contents_manager, "root_dir", None)
        return root or self.settings.get("server_root_dir") or None

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run ``fn`` off the event loop; ``ApiError`` becomes an HTTP error."""
        try:
            return await IOLoop.current().run_in_executor(None, lambda: fn(*args, **kwargs))
        except runs_service.ApiError as exc:
            raise PerfError(exc.status, exc.message) from None

    def write_json(self, data: Any, status: int = 200) -> None:
        self.set_status(status)
        self.finish(json.dumps(data, default=str))

    def json_body(self, example: str) -> dict[str, Any]:
        """The request's JSON object body (``{}`` when empty); else 400 naming ``example``."""
        if not self.request.body:
            return {}
        try:
            body = json.loads(self.request.body)
        except ValueError:
            raise PerfError(400, f"the body must be JSON, e.g. {example}") from None
        if not isinstance(body, dict):
            raise PerfError(400, f"the body must be a JSON object, e.g. {example}")
        return body

    def require_contents_root(self, instead: str) -> str:
        """The contents root on disk; else 500 naming the command to use ``instead``."""
        root = self.contents_root
        if not root:
            raise PerfError(500, "this Jupyter server's contents manager has no root directory "
                                 f"on disk; use `{instead}` instead")
        return root

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Errors are ``{"error": "<one line with the next step>"}``."""
        message = _reason(status_code)
        exc_info = kwargs.get("exc_info")
        if exc_info:
            exc = exc_info[1]
            if isinstance(exc, PerfError):
                message = exc.error_message
            elif isinstance(exc, tornado.web.HTTPError):
                if exc.status_code == 403:
                    message = ("forbidden: not authenticated; send the Jupyter server token "
                               "(Authorization: token …) or log in")
                elif exc.log_message and exc.args:
                    message = exc.log_message % exc.args if "%" in exc.log_message \
                        else exc.log_message
            else:
                message = (f"internal error: {one_line(exc)}; "
                           "see the Jupyter server log")
        self.set_header("Content-Type", "application/json")
        self.log.warning("jupyter_perf: %s %s -> %s %s", self.request.method,
                         self.request.path, status_code, message)
        self.finish(json.dumps({"error": message}))


class PerfError(tornado.web.HTTPError):
    """An HTTP error whose body is ``{"error": error_message}``."""

    def __init__(self, status: int, message: str):
        super().__init__(status, reason=_reason(status))
        self.error_message = message


def _reason(status: int) -> str:
    from http.client import responses
    return responses.get(status, "Error")


class SandboxedPageHandler(PerfHandler):
    """A standalone HTML page (a report, a comparison) the sidebar fetches with the token and
    shows in a sandboxed iframe's ``srcdoc``; opened directly, ``SANDBOXED_PAGE_CSP`` keeps
    its scripts in an opaque origin."""

    @property
    def content_security_policy(self) -> str:
        return SANDBOXED_PAGE_CSP


# -- runs ---------------------------------------------------------------------------------
class VersionHandler(PerfHandler):
    """``GET version`` -> ``{"version": "..."}``.

    The frontend compares this with its own version and warns on a mismatch.
    """

    @tornado.web.authenticated
    def get(self) -> None:
        self.write_json({"version": __version__})


class RunsHandler(PerfHandler):
    """``GET runs?limit=&offset=&q=&notebook=&regressed=`` -> one page of runs, newest first
    (``regressed=1``: the regressed cells' latest runs, most slowed first)."""

    @tornado.web.authenticated
    async def get(self) -> None:
        data = await self.call(
            runs_service.list_runs, self.store_root,
            limit=self.get_query_argument("limit", None),
            offset=self.get_query_argument("offset", None),
            q=self.get_query_argument("q", None),
            notebook=self.get_query_argument("notebook", None),
            contents_root=self.contents_root,
            regressed=self.get_query_argument("regressed", None))
        self.write_json(data)


class RunHandler(PerfHandler):
    """``GET runs/{id}`` -> metadata and summary; ``DELETE runs/{id}``."""

    @tornado.web.authenticated
    async def get(self, run_id: str) -> None:
        data = await self.call(runs_service.get_run, self.store_root, run_id,
                               contents_root=self.contents_root)
        self.write_json(data)

    @tornado.web.authenticated
    async def delete(self, run_id: str) -> None:
        data = await self.call(runs_service.delete_run, self.store_root, run_id)
        self.write_json(data)


class ReportHandler(SandboxedPageHandler):
    """``GET runs/{id}/report[?refresh=1]`` -> the standalone report HTML (text/html),
    streamed from the report cache when it holds it."""

    @tornado.web.authenticated
    async def get(self, run_id: str) -> None:
        refresh = self.get_query_argument("refresh", "") not in ("", "0", "false")
        html, cached = await self.call(runs_service.report, self.store_root, run_id,
                                       refresh=refresh, cache_mb=self.report_cache_mb)
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Jupyter-Perf-Report-Cache", "miss" if cached is None else "hit")
        self.set_header("Content-Type", HTML_TYPE)
        if cached is None:
            self.finish(html, set_content_type=HTML_TYPE)
            return
        try:            # streamed from disk: no copy of a large report held in memory
            while chunk := await IOLoop.current().run_in_executor(None, cached.read, 1 << 20):
                self.write(chunk)
                await self.flush()
        finally:
            cached.close()
        self.finish(set_content_type=HTML_TYPE)


class ExportHandler(PerfHandler):
    """``POST runs/{id}/export`` with ``{"path": "rel/path.html"}`` (optional)."""

    @tornado.web.authenticated
    async def post(self, run_id: str) -> None:
        body = self.json_body('{"path": "reports/run.html"}')
        root = self.require_contents_root("jupyter-perf report RUN_ID -o OUT.html")
        data = await self.call(runs_service.export_report, self.store_root, run_id,
                               body.get("path"), root, cache_mb=self.report_cache_mb)
        self.write_json(data, status=201)


# -- two runs compared (docs/compare.md) --------------------------------------------------
class CompareHandler(SandboxedPageHandler):
    """``GET compare/{a}/{b}[?format=json]``: the comparison (HTML, else its JSON summary)."""

    @tornado.web.authenticated
    async def get(self, a: str, b: str) -> None:
        self.set_header("Cache-Control", "no-store")
        if self.get_query_argument("format", "html") == "json":
            self.write_json(await self.call(compare_service.comparison_json,
                                            self.store_root, a, b))
            return
        html = await self.call(compare_service.comparison_html, self.store_root, a, b)
        self.finish(html, set_content_type=HTML_TYPE)


class CompareExportHandler(PerfHandler):
    """``POST compare/{a}/{b}/export`` with ``{"path": "rel/path.html"}`` (optional)."""

    @tornado.web.authenticated
    async def post(self, a: str, b: str) -> None:
        body = self.json_body('{"path": "cmp.html"}')
        root = self.require_contents_root("jupyter-perf compare A B --html OUT")
        data = await self.call(compare_service.export_comparison, self.store_root, a, b,
                               body.get("path"), root)
        self.write_json(data, status=201)
