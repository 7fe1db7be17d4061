"""BokehJS for the notebook's report renderer, served from the installed ``bokeh`` package.

The report in a notebook output is a compact payload (``bokeh.embed.json_item``) under the
MIME type ``application/vnd.jupyter-perf.report+json`` (docs/report.md); the labextension's
renderer embeds it with BokehJS, loaded once per page from this route (its prefix is
``constants.BOKEH_NAMESPACE``; the route table is in ``server/__init__.py``):

    GET {base_url}jupyter-perf/static/bokeh/{bokeh_version}/{bundle}.js

The files are the Python ``bokeh`` package's own (``bokeh/server/static/js``), the same
BokehJS that ``bokeh.resources.INLINE`` embeds, so the JavaScript always matches the Bokeh
this server has. The payload says which Bokeh made it; a request for another version is a
404 whose JSON ``error`` names both versions (the renderer shows it in place of the report).

- **Authenticated** like every handler of the extension (``@tornado.web.authenticated``):
  without credentials, ``403`` (never a redirect to the login page).
- **Path-traversal safe**: a bundle is one file name, ``bokeh[-name][.min].js``; anything
  else (slashes, ``..``, encoded separators, other files of the package) is a ``404``
  before the file system is asked, and tornado's ``StaticFileHandler`` checks again that
  the file lies inside the directory.
- **Cache headers**: the version is in the URL, so a response never changes:
  ``Cache-Control: private, max-age=31536000, immutable`` (``private``: it needed the user's
  credentials), plus tornado's ``ETag``/``Last-Modified`` for revalidation.

Tests: tests/server/test_static.py.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import tornado.web
from jupyter_server.base.handlers import JupyterHandler

#: The only file names served: BokehJS's bundles (bokeh, bokeh-widgets, bokeh-tables, ...).
BUNDLE = re.compile(r"bokeh(?:-[a-z0-9]+)?(?:\.min)?\.js")

CACHE_CONTROL = "private, max-age=31536000, immutable"


def bokeh_version() -> str:
    import bokeh

    return bokeh.__version__


def bokehjs_dir() -> str:
    """``bokeh/server/static/js`` of the installed package: where its bundles live."""
    from bokeh.util.paths import bokehjs_path

    return str(Path(bokehjs_path()) / "js")


class BokehJSHandler(JupyterHandler, tornado.web.StaticFileHandler):
    """One BokehJS bundle of the installed Bokeh, by version and file name."""

    def get_login_url(self) -> str:
        # a script, not a page: no redirect to the login form, a plain 403 (as APIHandler)
        raise tornado.web.HTTPError(403)

    @tornado.web.authenticated
    async def get(self, version: str, bundle: str, include_body: bool = True) -> None:
        self._check(version, bundle)
        await tornado.web.StaticFileHandler.get(self, bundle, include_body=include_body)

    @tornado.web.authenticated
    async def head(self, version: str, bundle: str) -> None:
        self._check(version, bundle)
        await tornado.web.StaticFileHandler.get(self, bundle, include_body=False)

    def _check(self, version: str, bundle: str) -> None:
        if not BUNDLE.fullmatch(bundle):
            raise _NotServed(f"not a BokehJS bundle: {bundle!r}; ask for bokeh.min.js, "
                             "bokeh-widgets.min.js, bokeh-tables.min.js, ...")
        have = bokeh_version()
        if version != have:
            raise _NotServed(
                f"this Jupyter server has Bokeh {have}, the report was made with Bokeh "
                f"{version}: install bokeh=={have} in the kernel's environment (or "
                f"bokeh=={version} in the server's) and run the cell again")

    def set_extra_headers(self, path: str) -> None:
        self.set_header("Cache-Control", CACHE_CONTROL)

    def compute_etag(self) -> str | None:
        # the file's hash (tornado's StaticFileHandler), not JupyterHandler's None
        return tornado.web.StaticFileHandler.compute_etag(self)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """``{"error": "<one line>", "bokeh_version": "<this server's>"}``."""
        exc = (kwargs.get("exc_info") or (None, None, None))[1]
        if isinstance(exc, _NotServed):
            message = exc.message
        elif status_code == 403:
            message = ("forbidden: not authenticated; send the Jupyter server token "
                       "(Authorization: token …) or log in")
        elif status_code == 404:
            message = "no such BokehJS bundle in the installed bokeh package"
        else:
            message = f"{status_code}: see the Jupyter server log"
        self.clear_header("Cache-Control")
        self.set_header("Cache-Control", "no-store")
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": message, "bokeh_version": bokeh_version()}))


class _NotServed(tornado.web.HTTPError):
    def __init__(self, message: str):
        super().__init__(404)
        self.message = message

