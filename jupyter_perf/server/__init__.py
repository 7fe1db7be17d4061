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


def _load_jupyter_server_extension(server_app: Any) -> None:
    """Register the REST handlers with the running Jupyter server."""
    from .handlers import setup_handlers

    setup_handlers(server_app.web_app)
    server_app.log.info("Registered jupyter_perf server extension")

