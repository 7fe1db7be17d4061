"""The measuring window for a session: classic (py4j, job group + sparkmeasure) or Spark
Connect (client tag + the server's REST API). The one place that tells them apart."""
from __future__ import annotations

from .connect import is_connect_session
from .connect_window import ConnectWindow
from .window import ClassicWindow


def window_for(spark, *, ui_url: str | None = None, **kwargs):
    """The measurement window for ``spark``: classic (py4j) or Spark Connect (client tag + REST).

    ``ui_url`` (Connect only) names the server's Spark UI for this window."""
    if is_connect_session(spark):
        return ConnectWindow(spark, ui_url=ui_url, **kwargs)
    window = ClassicWindow(spark, **kwargs)
    if ui_url:       # said, not silently dropped: a classic session's own UI is always used
        window.run.warnings.append(f"--ui/ui_url {ui_url} is for Spark Connect sessions only; "
                                   "`spark` is a classic session, read through its own UI")
    return window
