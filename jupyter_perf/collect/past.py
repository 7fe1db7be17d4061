"""``load_source(path_or_url, app=None)``: a past application from an event log or a REST server.

Used by ``%perfmeasure analyze PATH_OR_URL [--app ID]`` and ``jupyter-perf analyze``.
``http(s)://`` sources are a History Server or a live Spark UI (``app`` is the application id;
it may be left out when the server has exactly one application); anything else is an event-log
path (file or rolled ``eventlog_v2_*`` directory).
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..errors import JupyterPerfError
from ..model import Run
from .eventlog import EventLogError, load_eventlog

if TYPE_CHECKING:
    from .rest import RestError

# The REST readers (requests, urllib3: ~0.1 s to import) load only for a URL: an event log's
# analysis by the CLI does not wait for them.


class SourceError(JupyterPerfError):
    """The source could not be resolved; the one-line message says what to do next."""


def is_url(source: str) -> bool:
    return str(source).lower().startswith(("http://", "https://"))


def only_application(url: str, timeout: float = 30.0) -> str:
    """The id of the one application a server knows, or a SourceError listing a few."""
    from .history import list_applications
    from .rest import RestUnreachable

    base = url.rstrip("/")
    try:
        apps = list_applications(base, timeout=timeout)
    except RestUnreachable:
        raise SourceError(f"no Spark UI or History Server answers at {base}: check the URL and "
                          "that the server is running") from None
    if len(apps) == 1:
        return str(apps[0]["id"])
    if not apps:
        raise SourceError(f"{base} lists no applications yet; wait for it to load the logs")
    shown = ", ".join(str(a.get("id")) for a in apps[:5])
    more = f" (and {len(apps) - 5} more)" if len(apps) > 5 else ""
    raise SourceError(f"{base} has {len(apps)} applications; choose one with --app ID: "
                      f"{shown}{more}")


def load_source(path_or_url: str | os.PathLike, app: str | None = None,
                attempt: str | None = None) -> Run:
    """A whole past application as a ``Run``, from an event log or a REST server.

    Raises :class:`SourceError`, :class:`~.eventlog.EventLogError` or
    :class:`~.rest.RestError`, all with a one-line message naming the next step.
    """
    source = os.fspath(path_or_url)
    if is_url(source):
        from .history import load_rest

        return load_rest(source, app or only_application(source), attempt)
    if app is not None:
        raise SourceError(f"--app is for History Server / Spark UI URLs; {source} is read as an "
                          "event log (drop --app)")
    return load_eventlog(source)


def __getattr__(name: str) -> Any:
    if name == "RestError":               # exported, imported when asked for
        from .rest import RestError

        return RestError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["EventLogError", "RestError", "SourceError", "is_url", "load_source",
           "only_application"]
