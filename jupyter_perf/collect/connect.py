"""Spark Connect sessions: what the client says about its server, and where its REST API is.

A Connect client has no SparkContext: no py4j, no listeners, no status tracker. What it has
is a session id, a client tag (``spark.addTag``) that the server copies onto every job it
runs for that session as ``SparkConnect_SessionTag_User_<user>_Session_<session id>_Tag_<tag>``,
and the server's runtime settings (``spark.conf``). The jobs, stage attempts, task attempts,
executors and memory of a window are then read from the server's REST API with the same code
as classic runs (``rest_run.py``), found by that tag.

Where the REST API is: an explicit URL (``%%perfmeasure --ui``, ``jp.measure(ui_url=)``), the
URL given to ``jp.spark_session(remote=..., ui_url=...)``, the ``JUPYTER_PERF_SPARK_UI``
environment variable, or, for ``remote("local[N]")``, the in-process server's own UI. A URL
may carry a path prefix (a reverse proxy, ``spark.ui.proxyBase``): the API is read under it.
"""
from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .rest import RestError, RestNotFound, RestUnreachable, SparkRest

UI_ENV = "JUPYTER_PERF_SPARK_UI"
PROBE_DEADLINE_S = 30.0      # a busy server's first answer is slow; nothing there fails at once
NEXT_STEP = (f"pass the server's Spark UI: jp.spark_session(remote=..., ui_url='http://host:4040'), "
             f"the {UI_ENV} environment variable, or %%perfmeasure --ui URL")

# UI pages and API paths a pasted address may end in; the UI root is what comes before them.
_UI_TAIL = re.compile(r"/(api/v1|jobs|stages|SQL|sql|executors|environment|storage|connect)(/.*)?$")

_ui_by_key: dict[str, str] = {}     # session id or "host:port" -> UI URL (jp.spark_session)
_ui_lock = threading.Lock()


def is_connect_session(obj: Any) -> bool:
    """A Spark Connect client session (pyspark.sql.connect): no driver-side SparkContext."""
    return type(obj).__module__.startswith("pyspark.sql.connect")


def session_id(spark) -> str:
    for name in ("session_id", "_session_id"):
        value = getattr(spark, name, None)
        if isinstance(value, str) and value:
            return value
    client = getattr(spark, "client", None) or getattr(spark, "_client", None)
    return str(getattr(client, "_session_id", "") or "")


def endpoint(spark) -> str:
    """``host:port`` of the Connect server (never the token or other URL parameters)."""
    client = getattr(spark, "client", None) or getattr(spark, "_client", None)
    builder = getattr(client, "_builder", None)
    value = getattr(builder, "endpoint", None)
    return str(value) if value else ""


def server_tag_matches(job_tags: list[str] | None, tag: str, sid: str = "") -> bool:
    """True if one of a job's tags is the server's form of client tag ``tag``
    (of session ``sid`` when known): ``…_Session_<sid>_Tag_<tag>``."""
    suffix = f"_Session_{sid}_Tag_{tag}" if sid else f"_Tag_{tag}"
    return any(str(t).endswith(suffix) for t in job_tags or [])


def remember_ui(spark, ui_url: str) -> None:
    """Use ``ui_url`` for this session and every session of the same server."""
    url = normalize_ui_url(ui_url)
    with _ui_lock:
        for key in (session_id(spark), endpoint(spark)):
            if key:
                _ui_by_key[key] = url


def remembered_ui(spark) -> str | None:
    with _ui_lock:
        for key in (session_id(spark), endpoint(spark)):
            if key and key in _ui_by_key:
                return _ui_by_key[key]
    return None


def normalize_ui_url(url: str) -> str:
    """The UI root of ``url``: scheme added, a pasted page or API path cut off, prefix kept.

    ``host:4040`` -> ``http://host:4040``; ``https://gw/proxy/4040/jobs/`` ->
    ``https://gw/proxy/4040``; ``http://h:4040/api/v1/applications`` -> ``http://h:4040``.
    """
    text = str(url).strip()
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    path = _UI_TAIL.sub("", parts.path.rstrip("/")).rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def server_conf(spark) -> dict[str, str]:
    """The server's runtime settings (one round trip on pyspark 4; key by key on 3.5)."""
    conf = spark.conf
    try:
        everything = conf.getAll
        if callable(everything):
            everything = everything()
        return {str(k): str(v) for k, v in dict(everything).items()}
    except Exception:   # pyspark 3.5's Connect client has no getAll
        out = {}
        for key in ("spark.app.id", "spark.app.name", "spark.master"):
            try:
                value = conf.get(key, None)
            except Exception:
                value = None
            if value is not None:
                out[key] = str(value)
        return out


@dataclass
class UiChoice:
    url: str | None       # the UI root whose REST API serves this session's application
    source: str           # explicit | session | environment | in-process | none
    problem: str = ""     # why there is none (one line with the next step)


def in_process_ui(app_id: str) -> str | None:
    """The UI of a Connect server running inside this Python process (``remote("local[N]")``)."""
    try:
        from pyspark import SparkContext
    except ImportError:
        return None
    sc = getattr(SparkContext, "_active_spark_context", None)
    if sc is None or getattr(sc, "_jsc", None) is None:
        return None
    try:
        if sc.applicationId != app_id:
            return None
        return sc.uiWebUrl or None
    except Exception:
        return None


def probe(url: str, app_id: str) -> str:
    """'' if ``url`` serves application ``app_id``'s REST API, else the problem in one line."""
    from .history import list_applications

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return (f"{url!r} is not a Spark UI address: give its root, e.g. http://host:4040, "
                "or the proxy's prefix for it")
    rest = SparkRest(url, app_id, deadline=PROBE_DEADLINE_S)
    try:
        rest.application()
        return ""
    except RestUnreachable:
        return f"the Spark UI at {url} is unreachable"
    except RestNotFound:
        try:
            others = [str(a["id"]) for a in list_applications(url, deadline=PROBE_DEADLINE_S)]
        except RestError:
            others = []
        serves = f"it serves {', '.join(others[:3])}" if others else "no such application"
        return (f"the Spark UI at {url} does not know this session's application {app_id} "
                f"({serves}): give the UI of the Connect server itself")
    except RestError as exc:
        return (f"{url} did not answer as Spark's REST API ({exc}); give the UI root, "
                "e.g. http://host:4040, or the proxy's prefix for it")
    finally:
        rest.close()


def find_ui(spark, app_id: str, explicit: str | None = None) -> UiChoice:
    """Where this Connect session's REST API is, checked to serve its application."""
    candidates = []
    if explicit:
        candidates.append((normalize_ui_url(explicit), "explicit"))
    remembered = remembered_ui(spark)
    if remembered:
        candidates.append((remembered, "session"))
    if os.environ.get(UI_ENV, "").strip():
        candidates.append((normalize_ui_url(os.environ[UI_ENV]), "environment"))
    local = in_process_ui(app_id)
    if local:
        candidates.append((normalize_ui_url(local), "in-process"))
    problems = []
    for url, source in candidates:
        problem = probe(url, app_id)
        if not problem:
            return UiChoice(url, source)
        problems.append(f"{problem} ({source} setting)" if source != "in-process" else problem)
        if source == "explicit":
            break   # the user named this UI for this cell: do not silently read another one
    if not candidates:
        where = endpoint(spark) or "the Connect server"
        return UiChoice(None, "none", f"no Spark UI known for {where}: {NEXT_STEP}")
    return UiChoice(None, "none", f"{problems[0]}; {NEXT_STEP}")
