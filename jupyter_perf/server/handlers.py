"""REST handlers of the jupyter_perf server extension (one handler class per resource,
one method per verb). They parse the request, call one function of ``runs_api`` in a
worker thread (SQLite, parquet and rendering block) and write its result.

Every verb method carries ``@tornado.web.authenticated``:
tests/test_packaging.py fails if jupyter_server finds one that does not.
The REST spec is docs/rest-api.md.
"""
from __future__ import annotations

import json
from typing import Any, Callable

import tornado.web
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado.ioloop import IOLoop

from .._version import __version__
from ..errors import one_line
from . import API_NAMESPACE
from . import report_cache, runs_api
from .static import static_handlers

#: A run id segment as it appears in the URL. Anything that is not a single path
#: segment never matches; whatever does match is checked by ``valid_run_id``.
RUN_ID = r"(?P<run_id>[^/]+)"


class PerfHandler(APIHandler):
    """Shared plumbing: the store root, the contents root, JSON errors."""

    @property
    def store_root(self) -> str | None:
        return self.settings.get("jupyter_perf", {}).get("store_dir") or None

    @property
    def report_cache_mb(self) -> float:
        return self.settings.get("jupyter_perf", {}).get(
            "report_cache_mb", report_cache.DEFAULT_LIMIT_MB)

    @property
    def contents_root(self) -> str | None:
        root = getattr(self.contents_manager, "root_dir", None)
        return root or self.settings.get("server_root_dir") or None

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run ``fn`` off the event loop; ``ApiError`` becomes an HTTP error."""
        try:
            return await IOLoop.current().run_in_executor(None, lambda: fn(*args, **kwargs))
        except runs_api.ApiError as exc:
            raise PerfError(exc.status, exc.message) from None

    def write_json(self, data: Any, status: int = 200) -> None:
        self.set_status(status)
        self.finish(json.dumps(data, default=str))

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


class VersionHandler(PerfHandler):
    """``GET /jupyter-perf/api/version`` -> ``{"version": "..."}``.

    The frontend compares this with its own version and warns on a mismatch.
    """

    @tornado.web.authenticated
    def get(self) -> None:
        self.write_json({"version": __version__})


class RunsHandler(PerfHandler):
    """``GET runs?limit=&offset=&q=&notebook=`` -> one page of runs, newest first."""

    @tornado.web.authenticated
    async def get(self) -> None:
        data = await self.call(
            runs_api.list_runs, self.store_root,
            limit=self.get_query_argument("limit", None),
            offset=self.get_query_argument("offset", None),
            q=self.get_query_argument("q", None),
            notebook=self.get_query_argument("notebook", None),
            contents_root=self.contents_root)
        self.write_json(data)


class RunHandler(PerfHandler):
    """``GET runs/{id}`` -> metadata and summary; ``DELETE runs/{id}``."""

    @tornado.web.authenticated
    async def get(self, run_id: str) -> None:
        data = await self.call(runs_api.get_run, self.store_root, run_id,
                               contents_root=self.contents_root)
        self.write_json(data)

    @tornado.web.authenticated
    async def delete(self, run_id: str) -> None:
        data = await self.call(runs_api.delete_run, self.store_root, run_id)
        self.write_json(data)


class ReportHandler(PerfHandler):
    """``GET runs/{id}/report[?refresh=1]`` -> the standalone report HTML (text/html).

    The sidebar fetches it with the token and shows it in a sandboxed iframe's
    ``srcdoc``. Opened directly, the CSP ``sandbox allow-scripts`` header keeps
    the report's scripts in an opaque origin, away from the Jupyter server.
    """

    @property
    def content_security_policy(self) -> str:
        return ("frame-ancestors 'self'; sandbox allow-scripts; default-src 'none'; "
                "script-src 'unsafe-inline' 'unsafe-eval' blob:; style-src 'unsafe-inline'; "
                "img-src data: blob:; font-src data:; connect-src 'none'")

    @tornado.web.authenticated
    async def get(self, run_id: str) -> None:
        refresh = self.get_query_argument("refresh", "") not in ("", "0", "false")
        html, cached = await self.call(runs_api.report, self.store_root, run_id,
                                       refresh=refresh, cache_mb=self.report_cache_mb)
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Jupyter-Perf-Report-Cache", "miss" if cached is None else "hit")
        html_type = "text/html; charset=UTF-8"
        self.set_header("Content-Type", html_type)
        if cached is None:
            self.finish(html, set_content_type=html_type)
            return
        try:            # streamed from disk: no copy of a large report held in memory
            while chunk := await IOLoop.current().run_in_executor(None, cached.read, 1 << 20):
                self.write(chunk)
                await self.flush()
        finally:
            cached.close()
        self.finish(set_content_type=html_type)


class ExportHandler(PerfHandler):
    """``POST runs/{id}/export`` with ``{"path": "rel/path.html"}`` (optional)."""

    @tornado.web.authenticated
    async def post(self, run_id: str) -> None:
        body: dict[str, Any] = {}
        if self.request.body:
            try:
                body = json.loads(self.request.body)
            except ValueError:
                raise PerfError(400, 'the body must be JSON, e.g. {"path": "reports/run.html"}')
            if not isinstance(body, dict):
                raise PerfError(400, 'the body must be a JSON object, '
                                     'e.g. {"path": "reports/run.html"}')
        root = self.contents_root
        if not root:
            raise PerfError(500, "this Jupyter server's contents manager has no root directory "
                                 "on disk; use `jupyter-perf report RUN_ID -o OUT.html` instead")
        data = await self.call(runs_api.export_report, self.store_root, run_id,
                               body.get("path"), root, cache_mb=self.report_cache_mb)
        self.write_json(data, status=201)


def setup_handlers(web_app: tornado.web.Application, store_dir: str = "",
                   report_cache_mb: float = report_cache.DEFAULT_LIMIT_MB) -> None:
    base_url = web_app.settings["base_url"]
    web_app.settings["jupyter_perf"] = {"store_dir": store_dir,
                                        "report_cache_mb": report_cache_mb}
    api = url_path_join(base_url, API_NAMESPACE)
    handlers = [
        (url_path_join(api, "version"), VersionHandler),
        (url_path_join(api, "runs"), RunsHandler),
        (url_path_join(api, "runs", RUN_ID), RunHandler),
        (url_path_join(api, "runs", RUN_ID, "report"), ReportHandler),
        (url_path_join(api, "runs", RUN_ID, "export"), ExportHandler),
    ]
    handlers += static_handlers(base_url)  # BokehJS for the report renderer (server/static.py)
    from .compare_api import compare_handlers
    handlers += compare_handlers(api)      # compare two runs (issue J, server/compare_api.py)
    web_app.add_handlers(".*$", handlers)
