"""jupyter_server extension of jupyter-perf: its settings and its one route table.

Enabled on install by ``jupyter-config/server-config/jupyter_perf.json``
(``ServerApp.jpserver_extensions.jupyter_perf = true``). jupyter_server then
imports ``jupyter_perf``, calls its ``_jupyter_server_extension_points()``
(re-exported from here) and loads the module named there, this one, through
``_load_jupyter_server_extension``, which registers ``routes()``.

The rooms of the package, in the direction of their imports:

- ``__init__.py`` (here): extension points, ``c.JupyterPerf.*`` settings, the route table;
- ``handlers.py``: the tornado handlers, one class per resource, one method per verb; they
  parse the request and call one function of
- ``runs_service.py`` (runs, reports, exports) or ``compare_service.py`` (two runs
  compared): plain functions, no tornado, over the run store and ``jupyter_perf.service``;
- ``report_cache.py``: rendered reports kept on disk, one render at a time;
- ``static.py``: BokehJS from the installed ``bokeh`` package.

Nothing below imports this module. Nothing here imports jupyter_server or tornado at import
time, so ``import jupyter_perf`` stays light; the handlers are imported on load.
The REST spec is docs/rest-api.md.
"""
from __future__ import annotations

from typing import Any

#: A run id segment as it appears in the URL. Anything that is not a single path
#: segment never matches; whatever does match is checked by ``runs_service.check_run_id``.
RUN_ID = r"(?P<run_id>[^/]+)"
#: Two run ids, A then B, for a comparison.
PAIR = r"(?P<a>[^/]+)/(?P<b>[^/]+)"
#: A BokehJS version and bundle file name (``static.BokehJSHandler`` checks both).
BOKEH_FILE = r"(?P<version>[^/]+)/(?P<bundle>[^/]+)"


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "jupyter_perf.server"}]


def _settings_class():
    """``c.JupyterPerf.*`` settings (traitlets), built lazily: traitlets is not imported
    by ``import jupyter_perf``."""
    from traitlets import Float, Unicode
    from traitlets.config import Configurable

    from .report_cache import DEFAULT_LIMIT_MB

    class JupyterPerf(Configurable):
        """Settings of the jupyter_perf server extension."""

        store_dir = Unicode(
            "", config=True,
            help="Run store the REST API reads. Empty (default): $JUPYTER_PERF_HOME if set, "
                 "else <jupyter data dir>/jupyter_perf, resolved on every request, the same "
                 "place kernels write to.")
        report_cache_mb = Float(
            float(DEFAULT_LIMIT_MB), config=True,
            help="Most megabytes of rendered reports the server keeps (report.html in each run's "
                 "directory); the least recently served are removed first and rendered again "
                 "when asked. 0: keep none.")

    return JupyterPerf


def routes(base_url: str) -> list[tuple]:
    """Every route of the extension: ``(pattern, handler class[, init kwargs])``."""
    from jupyter_server.utils import url_path_join as join

    from ..constants import API_NAMESPACE, BOKEH_NAMESPACE
    from .handlers import (
        CompareExportHandler,
        CompareHandler,
        ExportHandler,
        ReportHandler,
        RunHandler,
        RunsHandler,
        VersionHandler,
    )
    from .static import BokehJSHandler, bokehjs_dir

    api = join(base_url, API_NAMESPACE)
    return [
        (join(api, "version"), VersionHandler),
        (join(api, "runs"), RunsHandler),
        (join(api, "runs", RUN_ID), RunHandler),
        (join(api, "runs", RUN_ID, "report"), ReportHandler),
        (join(api, "runs", RUN_ID, "export"), ExportHandler),
        (join(api, "compare", PAIR), CompareHandler),
        (join(api, "compare", PAIR, "export"), CompareExportHandler),
        # BokehJS for the report renderer in notebook outputs
        (join(base_url, BOKEH_NAMESPACE, BOKEH_FILE), BokehJSHandler, {"path": bokehjs_dir()}),
    ]


def _load_jupyter_server_extension(server_app: Any) -> None:
    """Register the routes with the running Jupyter server; the handlers read the settings
    from ``web_app.settings["jupyter_perf"]``."""
    settings = _settings_class()(config=server_app.config, parent=server_app)
    web_app = server_app.web_app
    web_app.settings["jupyter_perf"] = {"store_dir": settings.store_dir,
                                        "report_cache_mb": settings.report_cache_mb}
    web_app.add_handlers(".*$", routes(web_app.settings["base_url"]))
    where = settings.store_dir or "$JUPYTER_PERF_HOME or <jupyter data dir>/jupyter_perf"
    server_app.log.info("Registered jupyter_perf server extension (run store: %s)", where)
