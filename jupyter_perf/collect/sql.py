"""SQL executions, plan operators and their metrics from Spark's REST API (live UI or
History Server) into ``run.sql``, ``run.operators``, ``run.sql_metrics`` (model.py's columns).

* Executions: ``/sql`` (paged, ``details=true``) for a whole application; for a measured
  window, the executions whose jobs are the window's, found in the light ``details=false``
  list and then read one by one with ``/sql/{id}?details=true``. With AQE the graph REST
  returns is the final plan, the one that ran. Every list read is paged (Spark answers 20
  executions when asked for no ``length``), and a window reads only the part of the list
  that grew after it started (:func:`mark_sql` notes where the list ended, the finish reads
  from there): the cost of finishing a cell does not grow with the session's age. What
  Spark's UI evicted (``spark.sql.ui.retainedExecutions``) is named in a warning.
* Metrics: Spark's display strings, parsed by :mod:`.sql_metrics` (``text`` keeps them).
  REST gives no accumulator ids (``accumulator_id`` = -1) and no call-site details
  (``details`` = '').
* Node descriptions: REST nodes have none. Spark's own UI page of the execution
  (``/SQL/execution/?id=N``; ``/history/APP[/ATTEMPT]/SQL/execution/?id=N`` on a History
  Server) carries each graph node's description (``SparkPlanGraphNode.desc``, the plan
  node's ``simpleString`` — the same text event logs keep as ``simpleString``); it is read
  from there so every source gives the same descriptions. The page keeps them in one of
  two layouts (:func:`page_layouts`): Spark 3.5 in ``<div id="plan-meta-data-N">``, one per
  node; Spark 4.x (seen on 4.3) no longer writes those divs: there the description is the
  node's ``tooltip`` in the plan graph's DOT text (``<div class="dot-file">``) and the
  ``desc`` of ``nodeN``/``clusterN`` in a JSON object (``<div class="node-details">``).
  HTML entities are undone by the stdlib ``html.parser``, the JSON by ``json``; the DOT
  strings are Java-escaped (``StringEscapeUtils.escapeJava``), whose escapes are a subset
  of JSON's, so ``json`` undoes them too. No DOT parser is used: the only one on PyPI that
  fits (pydot, via pyparsing) is far heavier than the few attribute lists read here, and the
  JSON layout, when present, is preferred anyway. If no layout can be read, descriptions
  are '' and the run says so in one line.
* Stage attempts per node: :mod:`.sql_stages`.
"""
from __future__ import annotations

import dataclasses
import html.parser
import json
import math
import re
import time
from collections.abc import Iterable
from typing import Any

import pandas as pd

from ..errors import one_line
from . import sql_metrics, sql_stages
from .fields import parse_spark_time
from .rest import SQL_PAGE, RestError, RestNotFound, SparkRest
from .rest_run import answered, id_ranges, text

SETTLE_S = 15.0


class _PlanPage(html.parser.HTMLParser):
    """Collects, from a SQL execution page, the text of every ``<div id="plan-meta-data-N">``
    (Spark 3.5) and of the ``<div class="node-details">`` and ``<div class="dot-file">``
    (Spark 4.x)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.meta: dict[int, str] = {}
        self.blocks: dict[str, str] = {}
        self._target: int | str | None = None
        self._depth = 0
        self._parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "div":
            return
        if self._target is not None:
            self._depth += 1
            return
        attr = dict(attrs)
        ident, classes = attr.get("id") or "", (attr.get("class") or "").split()
        if ident.startswith("plan-meta-data-") and ident[15:].isdigit():
            self._target = int(ident[15:])
        elif "node-details" in classes or "dot-file" in classes:
            self._target = "details" if "node-details" in classes else "dot"
        else:
            return
        self._depth, self._parts = 0, []

    def handle_endtag(self, tag: str) -> None:
        if self._target is None or tag != "div":
            return
        if self._depth:
            self._depth -= 1
            return
        text_ = "".join(self._parts)
        if isinstance(self._target, int):
            self.meta[self._target] = text_
        else:
            self.blocks.setdefault(self._target, text_)
        self._target = None

    def handle_data(self, data: str) -> None:
        if self._target is not None:
            self._parts.append(data)


_GRAPH_ID = re.compile(r"(?:node|cluster)(\d+)")


def _details_descs(block: str) -> dict[int, str]:
    """Spark 4.x's node-details JSON: {"node2": {"desc": ...}, "cluster1": {...}, ...}."""
    try:
        details = json.loads(block)
    except ValueError:
        return {}
    if not isinstance(details, dict):
        return {}
    out = {}
    for key, node in details.items():
        found = _GRAPH_ID.fullmatch(str(key))
        if found and isinstance(node, dict) and isinstance(node.get("desc"), str):
            out[int(found.group(1))] = node["desc"]
    return out


# a DOT token: a quoted string, a bare word/number, or one of the punctuation marks
_DOT_TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"|(->|[\[\]{};=,])|([^\s"\[\]{};=,]+)', re.DOTALL)


def _dot_descs(dot: str) -> dict[int, str]:
    """Spark 4.x's plan graph DOT: a node's attribute list (``2 [id="node2" ...
    tooltip="..."]``) or a cluster's body (``subgraph cluster1 { id="cluster1";
    tooltip="..."; ...}``) carries its ``id`` and its description as ``tooltip``."""
    out: dict[int, str] = {}
    scopes: list[dict[str, str]] = [{}]      # attributes of each open { } body
    bracket: dict[str, str] | None = None     # attributes of the open [ ] list
    key = None
    last: str | None = None

    def record(attrs: dict[str, str]) -> None:
        found = _GRAPH_ID.fullmatch(attrs.get("id", ""))
        if found and "tooltip" in attrs:
            out[int(found.group(1))] = attrs["tooltip"]

    for token in _DOT_TOKEN.finditer(dot):
        quoted, punct, word = token.groups()
        if punct == "=":
            key = last
            continue
        if punct is None:
            value = word
            if quoted is not None:
                try:
                    value = json.loads(f'"{quoted}"')     # Java escapes ⊂ JSON escapes
                except ValueError:
                    value = None
            if key is not None and value is not None:
                (bracket if bracket is not None else scopes[-1])[key] = value
            key, last = None, value if quoted is None else None
            continue
        key = last = None
        if punct == "[":
            bracket = {}
        elif punct == "]" and bracket is not None:
            record(bracket)
            bracket = None
        elif punct == "{":
            scopes.append({})
        elif punct == "}" and len(scopes) > 1:
            record(scopes.pop())
    return out


def page_layouts(page: str) -> dict[str, dict[int, str]]:
    """{layout: {graph node id: description}} for each layout a SQL execution page has:
    ``"divs"`` (Spark 3.5), ``"details"`` and ``"dot"`` (Spark 4.x); a layout the page
    lacks, or cannot be read, maps to {}."""
    parser = _PlanPage()
    parser.feed(page)
    parser.close()
    return {"divs": parser.meta,
            "details": _details_descs(parser.blocks.get("details", "")),
            "dot": _dot_descs(parser.blocks.get("dot", ""))}


def node_descriptions(page: str) -> dict[int, str]:
    """{graph node id: description} from Spark's SQL execution page, whichever layout it
    has (the JSON before the DOT when a page has both)."""
    layouts = page_layouts(page)
    return layouts["divs"] or layouts["details"] or layouts["dot"]


def _ui_pages(rest: SparkRest, execution_id: int) -> list[str]:
    app = rest.app_id + (f"/{rest.attempt_id}" if rest.attempt_id else "")
    return [f"{rest.base_url}/SQL/execution/?id={execution_id}",
            f"{rest.base_url}/history/{app}/SQL/execution/?id={execution_id}"]


def read_descriptions(rest: SparkRest, execution_id: int) -> dict[int, str] | None:
    """Node descriptions from the UI page (live UI first, then History Server layout)."""
    for url in _ui_pages(rest, execution_id):
        try:
            descs = node_descriptions(rest.page(url))
        except RestError:
            continue
        if descs:
            return descs
    return None


def _cluster_of(nodes: list[dict[str, Any]]) -> dict[int, int]:
    """{node id: id of its WholeStageCodegen cluster node}. Graph ids are pre-order, so a
    node's cluster is the nearest preceding cluster node with its codegen id."""
    clusters = sorted((int(n["nodeId"]), _codegen_of_cluster(n["nodeName"])) for n in nodes
                      if str(n["nodeName"]).startswith("WholeStageCodegen"))
    out = {}
    for n in nodes:
        cg = n.get("wholeStageCodegenId")
        if cg is None:
            continue
        before = [cid for cid, c in clusters if c == int(cg) and cid < int(n["nodeId"])]
        if before:
            out[int(n["nodeId"])] = max(before)
    return out


def _codegen_of_cluster(name: str) -> int:
    inner = str(name)[len("WholeStageCodegen"):].strip().strip("()")
    return int(inner) if inner.isdigit() else -1


def execution_tables(data: dict[str, Any], jobs_in_window: set[int] | None,
                     descs: dict[int, str] | None) -> tuple[dict, list[dict], list[dict]]:
    """One REST ExecutionData -> (sql row, operator rows, metric rows) in model columns."""
    eid = int(data["id"])
    job_ids = {int(j) for key in ("successJobIds", "failedJobIds", "runningJobIds")
               for j in data.get(key) or []}
    if jobs_in_window is not None:
        job_ids &= jobs_in_window
    submitted = parse_spark_time(data.get("submissionTime"))
    status = text(data.get("status"))
    duration = data.get("duration")
    completed = (submitted + float(duration) if status != "RUNNING" and duration is not None
                 and not math.isnan(submitted) else float("nan"))
    error = text(data.get("errorMessage")).strip().splitlines()
    root = data.get("rootExecutionId")
    sql_row = {"execution_id": eid, "root_execution_id": int(root) if root is not None else -1,
               "description": text(data.get("description")), "details": "",
               "plan_text": text(data.get("planDescription")),
               "submission_ms": submitted, "completion_ms": completed,
               "job_ids": sorted(job_ids), "status": status,
               "error": error[0] if error else ""}
    nodes = list(data.get("nodes") or [])
    parents: dict[int, list[int]] = {}
    for edge in data.get("edges") or []:
        parents.setdefault(int(edge["fromId"]), []).append(int(edge["toId"]))
    clusters = _cluster_of(nodes)
    operators, metrics = [], []
    for n in sorted(nodes, key=lambda n: int(n["nodeId"])):
        nid, name = int(n["nodeId"]), text(n.get("nodeName"))
        cg = n.get("wholeStageCodegenId")
        if name.startswith("WholeStageCodegen"):
            cg = _codegen_of_cluster(name)
        operators.append({"execution_id": eid, "node_id": nid,
                          "parent_ids": sorted(parents.get(nid, [])), "name": name,
                          "description": (descs or {}).get(nid, ""),
                          "codegen_id": int(cg) if cg is not None else -1,
                          "cluster_id": clusters.get(nid, -1), "stage_attempts": []})
        for m in n.get("metrics") or []:
            parsed = sql_metrics.parse(text(m.get("name")), text(m.get("value")))
            metrics.append({"execution_id": eid, "node_id": nid, "accumulator_id": -1,
                            "name": text(m.get("name")), "text": text(m.get("value")),
                            **parsed})
    return sql_row, operators, metrics


def _settled(rest: SparkRest, data: dict[str, Any], settle_s: float) -> dict[str, Any]:
    """Spark aggregates an execution's metrics asynchronously after it ends: wait (bounded)
    until the execution is not running and its nodes carry metric values."""
    ends = time.monotonic() + settle_s
    while time.monotonic() < ends:
        done = data.get("status") != "RUNNING"
        if done and any(n.get("metrics") for n in data.get("nodes") or []):
            return data
        if done and not data.get("nodes"):
            return data
        time.sleep(0.1)
        data = rest.sql_execution(int(data["id"]))
    return data


JOB_KEYS = ("successJobIds", "failedJobIds", "runningJobIds")
RETAINED = "spark.sql.ui.retainedExecutions"


@dataclasses.dataclass(frozen=True)
class SqlMark:
    """Where Spark's SQL execution list ended when a window started: ``count`` executions
    were listed, the last (highest) id being ``last_id`` (-1: none)."""

    count: int
    last_id: int


# {application REST URL: the list's length when last seen}: where the next mark starts
# looking, so that marking a window costs one request, not a search of the whole list.
_ENDS: dict[str, int] = {}


def _entry_id(entry: dict[str, Any]) -> int:
    return int(entry["id"])


def _job_ids(entry: dict[str, Any]) -> set[int]:
    return {int(j) for key in JOB_KEYS for j in entry.get(key) or []}


def mark_sql(rest: SparkRest) -> SqlMark:
    """Where the SQL execution list ends now (before a window's code runs).

    Spark lists executions in id order, paged by position (``offset``/``length``). One page
    read from where the list ended last time usually ends inside it and gives its length and
    last id; otherwise a galloping search with one-entry reads finds the end (a handful of
    requests, once per session: afterwards the remembered end is near)."""
    url = f"{rest.app_url}/sql"
    hint = _ENDS.get(rest.app_url, 0)
    start = max(hint - 1, 0)
    with answered(url, "an SQL execution list"):
        batch = rest.sql_list(start, SQL_PAGE)
        if 0 < len(batch) < SQL_PAGE or (not batch and start == 0):
            count, last = start + len(batch), batch[-1] if batch else None
        else:
            count, last = _search_end(rest, start, batch)
        mark = SqlMark(count, _entry_id(last) if last is not None else -1)
    _ENDS[rest.app_url] = mark.count
    return mark


def _search_end(rest: SparkRest, start: int, batch: list[dict[str, Any]]
                ) -> tuple[int, dict[str, Any] | None]:
    """(list length, last entry) by galloping from ``start`` (whose page was ``batch``: full,
    or empty) and bisecting, one entry a request."""
    def at(k: int) -> dict[str, Any] | None:
        got = rest.sql_list(k, 1)
        return got[0] if got else None

    lo, lo_item, hi = -1, None, None          # lo: a position listed; hi: one past the end
    if batch:
        lo, lo_item, step = start + len(batch) - 1, batch[-1], SQL_PAGE
        while hi is None:
            item = at(lo + step)
            if item is None:
                hi = lo + step
            else:
                lo, lo_item, step = lo + step, item, step * 2
    else:
        hi, step = start, 1
        while lo < 0 and hi > 0:
            k = max(hi - step, 0)
            item = at(k)
            if item is None:
                hi, step = k, step * 2
            else:
                lo, lo_item = k, item
    while hi - lo > 1:
        mid = (lo + hi) // 2
        item = at(mid)
        if item is None:
            hi = mid
        else:
            lo, lo_item = mid, item
    return lo + 1, lo_item


def listed_since(rest: SparkRest, mark: SqlMark) -> tuple[list[dict[str, Any]], int]:
    """(the light list entries of the executions that started after ``mark``, the list's
    length now), reading only the part of the list after the mark.

    When Spark evicted older executions since (``spark.sql.ui.retainedExecutions``), the list
    moved up under the mark: step back a page at a time until the first entry read is one
    from before the mark (or the list's start), so none of the window's is skipped."""
    offset, length = max(mark.count - 1, 0), SQL_PAGE
    while True:
        batch = rest.sql_list(offset, length)
        if offset == 0 or (batch and _entry_id(batch[0]) <= mark.last_id):
            break
        step = min(SQL_PAGE, offset)       # and read what the last try covered again
        offset, length = offset - step, length + step
    entries, end = list(batch), offset + len(batch)
    if len(batch) == length:
        for more in rest.sql_list_pages(end):
            entries += more
            end += len(more)
    return [e for e in entries if _entry_id(e) > mark.last_id], end


def _setting(rest: SparkRest, key: str) -> str | None:
    """A Spark property's value from ``/environment`` (None: not set, or unreadable)."""
    try:
        props = rest.environment().get("sparkProperties") or []
        return next((str(v) for k, v in props if k == key), None)
    except (RestError, TypeError, ValueError):
        return None


def evicted_note(rest: SparkRest, mark: SqlMark | None, listed: list[dict[str, Any]],
                 unplanned_jobs: list[int]) -> str | None:
    """The warning for a window whose SQL executions Spark's UI evicted: executions that
    started after the mark are missing from the list (ids are given out one by one, and
    every execution is listed until evicted) while some of the window's jobs have no plan."""
    ids = sorted(_entry_id(e) for e in listed)
    if mark is None or not unplanned_jobs or not ids:
        return None
    low = mark.last_id + 1 if mark.last_id >= 0 else ids[0]
    have = set(ids)
    gone = [i for i in range(low, ids[-1]) if i not in have]
    if not gone:
        return None
    value = _setting(rest, RETAINED)
    now = f"{RETAINED}={value}" if value else f"{RETAINED}, 1000 by default"
    return (f"SQL execution(s) {id_ranges(gone)} ran during this window but Spark's UI no longer "
            f"keeps them (evicted: {now}): the plans and operators of job(s) "
            f"{id_ranges(sorted(unplanned_jobs))} are missing; raise {RETAINED} (a static "
            "setting: set it when the session starts) to keep them")


def fetch_sql(rest: SparkRest, *, window_jobs: Iterable[int] | None, stages: pd.DataFrame,
              tasks: pd.DataFrame, jobs: pd.DataFrame, settle_s: float = SETTLE_S,
              since: SqlMark | None = None,
              ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[str]]:
    """(sql, operators, sql_metrics, warnings) for the window's jobs (``window_jobs``) or,
    with ``window_jobs=None``, for every execution of the application that ran a job (as
    the event log's tables: a command such as ``createOrReplaceTempView`` runs none).

    ``since``: where the list ended when the window started (:func:`mark_sql`); only the
    executions listed after it are looked at. Without it the whole list is read."""
    warnings: list[str] = []
    wanted = None if window_jobs is None else {int(j) for j in window_jobs}
    url = f"{rest.app_url}/sql"
    if wanted is None:
        executions = [e for page in rest.sql_pages() for e in page
                      if any(e.get(key) for key in JOB_KEYS)]
    else:
        with answered(url, "an SQL execution list"):
            if since is None:
                listing = rest.get_sql_list()
            else:
                listing, _ENDS[rest.app_url] = listed_since(rest, since)
            mine = [e for e in listing if wanted & _job_ids(e)]
            ids = [_entry_id(e) for e in mine]
            planned = set().union(*(_job_ids(e) for e in mine))
        note = evicted_note(rest, since, listing, sorted(wanted - planned))
        if note:
            warnings.append(note)
        executions = []
        for eid in ids:
            try:
                executions.append(_settled(rest, rest.sql_execution(eid), settle_s))
            except RestNotFound:
                warnings.append(f"SQL execution {eid} is no longer in Spark's UI store (raise "
                                f"{RETAINED} to keep it)")
    sql_rows, op_rows, metric_rows = [], [], []
    job_stages = {}
    if not jobs.empty:
        job_stages = {int(j): [int(s) for s in (ss if isinstance(ss, (list, tuple)) else [])]
                      for j, ss in zip(jobs["job_id"], jobs["stage_ids"])}
    missing_descs = []
    for data in executions:
        eid = data.get("id")
        descs = read_descriptions(rest, int(eid)) if data.get("nodes") else {}
        if descs is None:
            missing_descs.append(int(eid))
        with answered(f"{url}/{eid}", "an SQL execution"):
            row, ops, mets = execution_tables(data, wanted, descs)
        if row["status"] == "RUNNING":
            warnings.append(f"SQL execution {row['execution_id']} was still running; its "
                            "plan metrics are partial")
        stage_ids = [s for j in row["job_ids"] for s in job_stages.get(j, [])]
        sql_stages.assign(ops, mets, stage_ids, stages, tasks, warnings)
        sql_rows.append(row)
        op_rows.extend(ops)
        metric_rows.extend(mets)
    if missing_descs:
        warnings.append(f"Spark's SQL execution page could not be read for execution(s) "
                        f"{', '.join(map(str, missing_descs[:5]))}: plan node descriptions "
                        "are empty")
    return (pd.DataFrame(sql_rows), pd.DataFrame(op_rows), pd.DataFrame(metric_rows), warnings)


def no_plan_note(run_sql: pd.DataFrame, jobs: pd.DataFrame) -> str | None:
    """The run note for a window whose jobs ran no SQL (RDD work only), else None."""
    if run_sql.empty and not jobs.empty:
        return ("no SQL plan: this window ran RDD work only (no DataFrame/SQL execution), so "
                "there are no operators to show")
    return None


def read_sql(rest: SparkRest, window_jobs: Iterable[int] | None, stages: pd.DataFrame,
             tasks: pd.DataFrame, jobs: pd.DataFrame, since: SqlMark | None = None,
             ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[str]]:
    """:func:`fetch_sql` that never raises: a REST problem leaves the SQL tables empty and
    says so in the warnings."""
    try:
        sql, operators, metrics, warnings = fetch_sql(
            rest, window_jobs=window_jobs, stages=stages, tasks=tasks, jobs=jobs, since=since)
    except RestError as exc:
        empty = pd.DataFrame()
        return empty, empty, empty, [f"SQL plans not read: {one_line(exc)}"]
    return sql, operators, metrics, warnings


def collect_sql(run, rest: SparkRest, window_jobs: Iterable[int],
                since: SqlMark | None = None) -> None:
    """Fill a measured window's ``run.sql``, ``run.operators``, ``run.sql_metrics`` (``since``:
    the list's end when the window started, :func:`mark_sql`); a window of RDD work only gets
    the "no SQL plan" note."""
    run.sql, run.operators, run.sql_metrics, warnings = read_sql(
        rest, list(window_jobs), run.stages, run.tasks, run.jobs, since)
    run.warnings.extend(warnings)
    note = no_plan_note(run.sql, run.jobs)
    if note and not any(RETAINED in w for w in warnings):   # evicted plans are not RDD work
        run.warnings.append(note)
