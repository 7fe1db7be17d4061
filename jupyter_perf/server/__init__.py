"""jupyter_server extension of jupyter-perf.

Enabled on install by ``jupyter-config/server-config/jupyter_perf.json``
(``ServerApp.jpserver_extensions.jupyter_perf = true``). jupyter_server then
imports ``jupyter_perf``, calls its ``_jupyter_server_extension_points()``
(re-exported from here) and loads the module named there, this one, through
``_load_jupyter_server_extension``.

Nothing here imports jupyter_server or tornado at import time, so
``import jupyter_perf`` stays light; the handlers are imported on load.
"""
from __future__ import annotations

from typing import Any

#: Every REST route of the extension lives under ``{base_url}/jupyter-perf/api/``.
API_NAMESPACE = "jupyter-perf/api"


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "jupyter_perf.server"}]


def _settings_class():
    """``c.JupyterPerf.*`` settings (traitlets), built lazily: traitlets is not imported
    by ``import jupyter_perf``."""
    from traitlets import Float, Unicode
    from traitlets.config import Configurable

    class JupyterPerf(Configurable):
        """Settings of the jupyter_perf server extension."""

        store_dir = Unicode(
            "", config=True,
            help="Run store the REST API reads. Empty (default): $JUPYTER_PERF_HOME if set, "
                 "else <jupyter data dir>/jupyter_perf, resolved on every request, the same "
                 "place kernels write to.")
        report_cache_mb = Float(
            512.0, config=True,
            help="Most megabytes of rendered reports the server keeps (report.html in each run's "
                 "directory); the least recently served are removed first and rendered again "
                 "when asked. 0: keep none.")

    return JupyterPerf


def _load_jupyter_server_extension(server_app: Any) -> None:
    """Register the REST handlers with the running Jupyter server."""
    from .handlers import setup_handlers

    settings = _settings_class()(config=server_app.config, parent=server_app)
    setup_handlers(server_app.web_app, store_dir=settings.store_dir,
                   report_cache_mb=settings.report_cache_mb)
    where = settings.store_dir or "$JUPYTER_PERF_HOME or <jupyter data dir>/jupyter_perf"
    server_app.log.info("Registered jupyter_perf server extension (run store: %s)", where)

