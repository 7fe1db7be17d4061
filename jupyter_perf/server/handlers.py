"""REST handlers of the jupyter_perf server extension (one handler per verb).

Every verb method carries ``@tornado.web.authenticated``:
tests/test_packaging.py fails if jupyter_server finds one that does not.
"""
from __future__ import annotations

import json

import tornado.web
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join

from .. import __version__
from . import API_NAMESPACE


class VersionHandler(APIHandler):
    """``GET /jupyter-perf/api/version`` -> ``{"version": "..."}``.

    The frontend compares this with its own version and warns on a mismatch.
    """

    @tornado.web.authenticated
    def get(self) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"version": __version__}))


def setup_handlers(web_app: tornado.web.Application) -> None:
    base_url = web_app.settings["base_url"]
    handlers = [
        (url_path_join(base_url, API_NAMESPACE, "version"), VersionHandler),
    ]
    web_app.add_handlers(".*$", handlers)
