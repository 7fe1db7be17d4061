"""Client for Spark's monitoring REST API (live UI or History Server).

Uses ``requests`` (connection reuse, per-read timeouts) rather than hand-written HTTP.
Returns raw JSON with Spark's own field names; the model normalises units.

Three bounds keep a slow or stuck server from holding the caller (docs/eventlogs.md §REST):

* ``timeout`` — per read of the socket (``requests``' own timeout), default 30 s.
* ``deadline`` — per request, from sending it to the last byte of the answer, default 60 s
  (env ``JUPYTER_PERF_REST_DEADLINE``). ``requests`` has no such bound: a server that
  answers 200 then sends one byte a second never trips a per-read timeout.
* ``collection_deadline`` — for every request made inside one ``with rest.collection():``
  block (one application or one measured window), default 300 s (env
  ``JUPYTER_PERF_REST_COLLECTION_DEADLINE``).

Each request runs in a short-lived daemon thread while the caller waits at most until the
nearer deadline; when it passes, the response's socket is shut down (urllib3's
``HTTPResponse.shutdown``, made for cancelling a read from another thread) and the caller
gets a :class:`RestError` at once. A server that drips its *headers* cannot be cancelled
that way: the caller still returns on time and the abandoned thread ends when the server
closes the connection or a read times out.

Everything the server sends is checked before use: a status other than 200, an answer that
is not JSON (an HTML login page, a proxy's error page), JSON of the wrong shape (an object
where Spark sends a list, a list item without the id field) all become one-line
:class:`RestError` messages naming the URL and what came back.
"""
from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from typing import Any, Iterator

import orjson
import requests
import urllib3

from ..errors import JupyterPerfError

TASK_PAGE = 1000  # the API's default page is 20 tasks: 2k tasks/s; 1000 gives ~28k tasks/s
SQL_PAGE = 100    # SQL executions per /sql page (Spark's default length is 20)

TIMEOUT_S = 30.0
DEADLINE_S = 60.0
COLLECTION_DEADLINE_S = 300.0
DEADLINE_ENV = "JUPYTER_PERF_REST_DEADLINE"
COLLECTION_DEADLINE_ENV = "JUPYTER_PERF_REST_COLLECTION_DEADLINE"

_CHUNK = 1 << 16
_SNIPPET = 60


class RestError(JupyterPerfError):
    """Spark's REST API could not be read; the message says what to do next."""


class RestUnreachable(RestError):
    """Nothing answered at the URL (refused, reset, name unknown, timed out connecting)."""


class RestNotFound(RestError, KeyError):
    """Spark answered 404: the application, job or stage is not (or no longer) in its store.

    Also a ``KeyError`` so callers can treat "not there" as a missing key.
    """

    def __str__(self) -> str:   # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class RestDeadline(RestError):
    """A request or a whole collection took longer than its configured deadline."""


def seconds_setting(value: float | None, env: str, default: float) -> float:
    """``value`` if given, else the environment variable ``env``, else ``default`` (seconds).

    ``0``, a negative number or ``inf`` in the variable means no bound.
    """
    if value is not None:
        seconds = float(value)
    else:
        text = os.environ.get(env, "").strip()
        if not text:
            return default
        try:
            seconds = float(text)
        except ValueError:
            raise RestError(f"{env}={text[:40]!r} is not a number of seconds; "
                            f"unset it or give e.g. {env}={default:g}") from None
    if math.isnan(seconds):
        raise RestError(f"{env}: NaN is not a number of seconds")
    return seconds if seconds > 0 else math.inf


def snippet(body: bytes | str, limit: int = _SNIPPET) -> str:
    """The start of an answer, on one line, quoted, for error messages."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
    text = " ".join(text.split())
    return repr(text[:limit] + ("…" if len(text) > limit else ""))


def describe_json(value: Any) -> str:
    """A few words about a JSON value, for 'expected X, got Y' messages."""
    if isinstance(value, dict):
        keys = ", ".join(list(map(str, value))[:4])
        return f"an object with keys {snippet(keys, 40)}" if value else "an empty object"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if value is None:
        return "null"
    return f"{type(value).__name__} {snippet(str(value), 30)}"


def _could_not_connect(exc: BaseException) -> bool:
    """True when no connection was made (refused, unknown name, connect timeout)."""
    if isinstance(exc, requests.ConnectTimeout):
        return True
    seen: BaseException | None = exc
    for _ in range(6):
        if seen is None:
            return False
        if isinstance(seen, (urllib3.exceptions.NewConnectionError,
                             urllib3.exceptions.ConnectTimeoutError)):
            return True
        seen = getattr(seen, "reason", None) or (seen.args[0] if seen.args
                                                  and isinstance(seen.args[0], BaseException)
                                                  else None)
    return False


class SparkRest:
    """One application's REST API. ``get()`` and the endpoint helpers raise
    :class:`RestError` (:class:`RestNotFound` for a 404) and nothing else."""

    def __init__(self, base_url: str, app_id: str, attempt_id: str | None = None,
                 timeout: float = TIMEOUT_S, *, deadline: float | None = None,
                 collection_deadline: float | None = None):
        self.base_url = base_url.rstrip("/")
        self.app_id = app_id
        self.attempt_id = attempt_id
        self.timeout = float(timeout) if timeout and timeout > 0 else TIMEOUT_S
        self.deadline = seconds_setting(deadline, DEADLINE_ENV, DEADLINE_S)
        self.collection_deadline = seconds_setting(collection_deadline, COLLECTION_DEADLINE_ENV,
                                                   COLLECTION_DEADLINE_S)
        self._collection_ends = math.inf
        self.http = requests.Session()

    @property
    def app_url(self) -> str:
        url = f"{self.base_url}/api/v1/applications/{self.app_id}"
        return f"{url}/{self.attempt_id}" if self.attempt_id else url

    # -- deadlines -----------------------------------------------------------
    @contextlib.contextmanager
    def collection(self) -> Iterator["SparkRest"]:
        """Every request inside the block shares the collection deadline (not re-entrant:
        an inner block keeps the outer clock)."""
        if self._collection_ends != math.inf:
            yield self
            return
        self._collection_ends = time.monotonic() + self.collection_deadline
        try:
            yield self
        finally:
            self._collection_ends = math.inf

    def _request_ends(self) -> tuple[float, bool]:
        """(monotonic time this request must end by, whether the collection sets it)."""
        mine = time.monotonic() + self.deadline
        return (self._collection_ends, True) if self._collection_ends < mine else (mine, False)

    def _late(self, url: str, by_collection: bool, received: int) -> RestDeadline:
        if by_collection:
            return RestDeadline(
                f"reading application {self.app_id} from {self.base_url} took over the "
                f"{self.collection_deadline:g} s collection deadline (stopped at {url}); raise "
                f"{COLLECTION_DEADLINE_ENV} for very large applications, or retry")
        return RestDeadline(
            f"{url} did not finish answering within the {self.deadline:g} s deadline per request "
            f"({received} bytes received): the server is stuck or too slow; retry, or raise "
            f"{DEADLINE_ENV}")

    # -- HTTP ----------------------------------------------------------------
    def _answer(self, url: str, params: dict[str, Any] | None) -> tuple[bytes, str]:
        """GET ``url`` -> (body, content type) of a 200 answer, within the deadlines."""
        ends, by_collection = self._request_ends()
        remaining = ends - time.monotonic()
        if remaining <= 0:
            raise self._late(url, by_collection, 0)
        box: dict[str, Any] = {"received": 0}
        done = threading.Event()
        worker = threading.Thread(target=self._exchange, name="jupyter-perf-rest",
                                  args=(url, params, ends, box, done), daemon=True)
        worker.start()
        if not done.wait(None if remaining == math.inf else remaining):
            box["cancelled"] = True
            resp = box.get("resp")
            if resp is not None:
                with contextlib.suppress(Exception):
                    resp.raw.shutdown()
            raise self._late(url, by_collection, box["received"])
        if box.get("late"):
            raise self._late(url, by_collection, box["received"])
        if "error" in box:
            exc = box["error"]
            if _could_not_connect(exc):
                raise RestUnreachable(
                    f"Spark REST API unreachable at {self.base_url} ({type(exc).__name__}); "
                    "is the Spark UI enabled and the application running?") from None
            raise RestError(f"reading {url} failed after {box['received']} bytes "
                            f"({type(exc).__name__}); the server closed or broke the "
                            "connection: retry") from None
        status, body = box["status"], box["body"]
        content_type = box.get("content_type", "")
        if status == 404:
            raise RestNotFound(f"{url} answered 404 (not in Spark's store): {snippet(body)}")
        if status != 200:
            raise RestError(f"{url} answered HTTP {status}: {snippet(body)}")
        return body, content_type

    def page(self, url: str) -> str:
        """A page of Spark's web UI (HTML) as text, within the deadlines."""
        return self._answer(url, None)[0].decode("utf-8", "replace")

    def fetch(self, url: str, params: dict[str, Any] | None = None) -> Any:
        """GET ``url`` -> parsed JSON, within the deadlines; RestError otherwise."""
        body, content_type = self._answer(url, params)
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            kind = "an HTML page" if (b"<html" in body[:512].lower() or "html" in content_type) \
                else ("an empty answer" if not body.strip() else f"invalid JSON ({exc})")
            raise RestError(f"{url} answered {kind}, not Spark's JSON: {snippet(body)}; is this "
                            "a Spark UI or History Server (not a proxy or login page)?") from None

    def _exchange(self, url: str, params: dict[str, Any] | None, ends: float,
                  box: dict[str, Any], done: threading.Event) -> None:
        """The request itself (in a worker thread): headers, then the body in chunks as they
        arrive, checking the deadline between chunks."""
        resp = None
        remaining = max(0.001, ends - time.monotonic())
        read = min(self.timeout, remaining)
        try:
            resp = self.http.get(url, params=params or None, timeout=(read, read), stream=True)
            box["resp"] = resp
            box["status"] = resp.status_code
            box["content_type"] = (resp.headers.get("Content-Type") or "").lower()
            chunks = []
            while True:
                if box.get("cancelled"):
                    return
                if time.monotonic() > ends:
                    box["late"] = True
                    return
                chunk = resp.raw.read1(_CHUNK, decode_content=True)
                if not chunk:
                    break
                chunks.append(chunk)
                box["received"] += len(chunk)
            box["body"] = b"".join(chunks)
        except (requests.Timeout, urllib3.exceptions.TimeoutError, TimeoutError) as exc:
            # the socket timeout is the deadline's remaining time when that is the tighter
            # limit: then it is the deadline, whichever thread notices first (on a busy host
            # this one can, before the caller's wait ends)
            if read < self.timeout:
                box["late"] = True
            else:
                box["error"] = exc
        except BaseException as exc:   # handed to the caller, who raises RestError
            box["error"] = exc
        finally:
            if resp is not None:
                with contextlib.suppress(Exception):
                    resp.close()
            done.set()

    def get(self, path: str, **params: Any) -> Any:
        return self.fetch(f"{self.app_url}{path}", params or None)

    # -- shape checks ----------------------------------------------------------
    def _records(self, path: str, data: Any, key: str) -> list[dict[str, Any]]:
        """``data`` must be a JSON list of objects that each carry ``key``."""
        url = f"{self.app_url}{path}"
        if not isinstance(data, list):
            raise RestError(f"{url} answered {describe_json(data)} where Spark sends a list; "
                            "is this a Spark UI or History Server?")
        for item in data:
            if not isinstance(item, dict) or key not in item:
                raise RestError(f"{url} answered a list item that is not Spark's "
                                f"({describe_json(item)}, no {key!r}); is this a Spark UI or "
                                "History Server of a supported version?")
        return data

    def _object(self, url: str, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise RestError(f"{url} answered {describe_json(data)} where Spark sends an object; "
                            "is this a Spark UI or History Server?")
        return data

    # -- endpoints ---------------------------------------------------------
    def application(self) -> dict[str, Any]:
        url = f"{self.base_url}/api/v1/applications/{self.app_id}"
        app = self._object(url, self.fetch(url))
        attempts = app.get("attempts", [])
        if not isinstance(attempts, list) or not all(isinstance(a, dict) for a in attempts):
            raise RestError(f"{url} answered 'attempts' as {describe_json(attempts)}, not "
                            "Spark's list of attempt objects")
        return app

    def job(self, job_id: int) -> dict[str, Any]:
        path = f"/jobs/{int(job_id)}"
        return self._records(path, [self._object(self.app_url + path, self.get(path))],
                             "jobId")[0]

    def jobs(self) -> list[dict[str, Any]]:
        return self._records("/jobs", self.get("/jobs"), "jobId")

    def stage_attempts(self, stage_id: int, executors: bool = False) -> list[dict[str, Any]]:
        """Every attempt of a stage, without the per-task detail map; with ``executors``, with
        the per-executor map (``executorSummary``, its ``peakMemoryMetrics`` on Spark >= 3.1):
        ``details=true`` with a task filter no task passes (``taskStatus=UNKNOWN``)."""
        path = f"/stages/{int(stage_id)}"
        params = {"details": "true", "taskStatus": "UNKNOWN"} if executors else \
            {"details": "false", "withSummaries": "false"}
        return self._records(path, self.get(path, **params), "stageId")

    def stages(self) -> list[dict[str, Any]]:
        return self._records("/stages", self.get("/stages", details="false"), "stageId")

    def pages(self, path: str, key: str, page: int, offset: int = 0,
              **params: Any) -> Iterator[list[dict[str, Any]]]:
        """The items of a paged list endpoint (``offset``/``length``: asked for no length,
        Spark 3.5 answers the first 20 only, 4.x every item, however long the list), ``page``
        per request, from position ``offset`` on, until a short page."""
        while True:
            batch = self._records(path, self.get(path, **params, offset=offset, length=page),
                                  key)
            if batch:
                yield batch
            if len(batch) < page:
                return
            offset += len(batch)

    def task_pages(self, stage_id: int, attempt: int, page: int = TASK_PAGE) -> Iterator[list[dict]]:
        """All task attempts of a stage attempt (failed, killed and speculative included)."""
        return self.pages(f"/stages/{int(stage_id)}/{int(attempt)}/taskList", "taskId", page,
                          sortBy="ID")

    def sql_pages(self, page: int = SQL_PAGE) -> Iterator[list[dict]]:
        """Every SQL execution with its plan graph and metric values (``details=true``)."""
        return self.pages("/sql", "id", page, details="true", planDescription="true")

    def sql_list(self, offset: int, length: int) -> list[dict[str, Any]]:
        """One page of the SQL execution list without plans (id, status, description, job
        ids): the ``length`` executions from position ``offset`` of the list Spark's UI still
        keeps, in execution id order (``[]`` past its end)."""
        return self._records("/sql", self.get("/sql", details="false", planDescription="false",
                                              offset=int(offset), length=int(length)), "id")

    def sql_list_pages(self, offset: int = 0, page: int = SQL_PAGE) -> Iterator[list[dict]]:
        """The SQL execution list without plans from position ``offset`` on, paged."""
        return self.pages("/sql", "id", page, offset=offset, details="false",
                          planDescription="false")

    def get_sql_list(self) -> list[dict[str, Any]]:
        """Every SQL execution without plans (id, status, description, job ids), all pages."""
        return [e for batch in self.sql_list_pages() for e in batch]

    def sql_execution(self, execution_id: int) -> dict[str, Any]:
        path = f"/sql/{int(execution_id)}"
        data = self.get(path, details="true", planDescription="true")
        return self._records(path, [self._object(self.app_url + path, data)], "id")[0]

    def all_executors(self) -> list[dict[str, Any]]:
        return self._records("/allexecutors", self.get("/allexecutors"), "id")

    def environment(self) -> dict[str, Any]:
        return self._object(self.app_url + "/environment", self.get("/environment"))

    def close(self) -> None:
        self.http.close()
