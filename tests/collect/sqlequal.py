"""The SQL tables of one application from REST (live UI or History Server) and from its event
log are equal, up to the differences docs/operators.md ("Event log and REST, side by side")
lists: this module is that list, as assertions.

    assert_sql_tables_equal(rest_run, log_run, live=False)
"""
from __future__ import annotations

import math

import pandas as pd

SQL_KEYS = ["execution_id"]
OP_KEYS = ["execution_id", "node_id"]
METRIC_KEYS = ["execution_id", "node_id", "name"]
SQL_SAME = ["description", "plan_text", "submission_ms", "completion_ms", "job_ids", "status",
            "error"]
OP_SAME = ["name", "description", "parent_ids", "codegen_id", "cluster_id", "stage_attempts"]
METRIC_SAME = ["metric_type", "unit", "text", "max_stage_id", "max_stage_attempt",
               "max_task_id"]


def indexed(run, table: str, keys: list[str]) -> pd.DataFrame:
    return getattr(run, table).set_index(keys).sort_index()


def tolerance(text: str, unit: str) -> float:
    """Half of the last digit Spark's display shows for a total like '9.4 KiB' or '1.1 s'
    (REST's numbers are parsed from that display)."""
    total = text.split("\n")[-1].split(" (")[0]
    number, _, shown = total.partition(" ")
    decimals = len(number.split(".")[1]) if "." in number else 0
    scale = {"B": 1, "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30, "TiB": 2 ** 40,
             "ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}.get(shown, 1)
    half = 0.5 * 10 ** -decimals * scale * (1 + 1e-9)     # 31.25 KiB shows as 31.3: a tie
    return half + (1.0 if unit == "ms" else 0.0)          # ns timers: whole ms in REST


def assert_sql_tables_equal(rest, log, *, live: bool) -> int:
    """Assert the documented equality; returns how many metric numbers were compared."""
    # run.sql: equal but for what only the event log has (Spark 3.5's REST has no call-site
    # details and no root execution id)
    s_rest, s_log = indexed(rest, "sql", SQL_KEYS), indexed(log, "sql", SQL_KEYS)
    assert list(s_rest.index) == list(s_log.index)
    pd.testing.assert_frame_equal(s_rest[SQL_SAME], s_log[SQL_SAME])
    assert (s_rest["details"] == "").all() and (s_rest["root_execution_id"] == -1).all()
    assert (s_log["details"].str.len() > 0).all() and (s_log["root_execution_id"] >= 0).all()
    # run.operators: equal, stage_attempts included (one rule on equal tables: sql_stages)
    o_rest, o_log = indexed(rest, "operators", OP_KEYS), indexed(log, "operators", OP_KEYS)
    assert list(o_rest.index) == list(o_log.index)
    pd.testing.assert_frame_equal(o_rest[OP_SAME], o_log[OP_SAME])
    # run.sql_metrics: the History Server replays the same log, so the same rows; the live
    # UI also lists metrics no task moved from zero (a log has no zero updates)
    m_rest = indexed(rest, "sql_metrics", METRIC_KEYS)
    m_log = indexed(log, "sql_metrics", METRIC_KEYS)
    if live:
        assert set(m_log.index) <= set(m_rest.index)
        extra = m_rest.drop(index=m_log.index)
        assert (extra["value"].fillna(0) == 0).all(), extra[["text"]]
        m_rest = m_rest.loc[m_log.index]
    assert list(m_rest.index) == list(m_log.index)
    pd.testing.assert_frame_equal(m_rest[METRIC_SAME], m_log[METRIC_SAME])
    assert (m_rest["accumulator_id"] == -1).all() and (m_log["accumulator_id"] >= 0).all()
    compared = 0
    for key, mine, theirs in zip(m_log.index, m_log.itertuples(), m_rest.itertuples()):
        for column in ("value", "min", "med", "max"):
            a, b = getattr(mine, column), getattr(theirs, column)
            if math.isnan(a):
                assert math.isnan(b), (key, column)
                continue
            if mine.metric_type == "sum":
                assert a == b, (key, column)              # counts: exact in both
            else:                                         # REST: within the display's digits
                assert abs(a - b) <= tolerance(mine.text, mine.unit), (key, column, a, b)
            compared += 1
    return compared


# numbers of a summary's operator rows read from size or time SQL metrics: REST parses them
# from Spark's display ("33.0 MiB", "1.2 s"), one decimal of the largest unit shown, so they
# agree with the event log's exact values within half of that digit (a size shown in a unit
# is at least 2 of it: <= 2.5%; a time in s, m or h is at least 1 of it: <= 5%, + 1 ms for ns
# timers)
DISPLAYED = {"input_bytes": 0.025, "spill_bytes": 0.025, "peak_memory_bytes": 0.025,
             "python_udf_ms": 0.05, "driver_ms": 0.05}


def _close(a, b, rel: float, abs_: float) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], rel, abs_) for k in a)
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_)
    return a == b


def assert_operator_summaries_equal(rest: list[dict], log: list[dict]) -> None:
    """``summary()["operators"]`` of the REST Run and of the event-log Run: the same rows in
    the same order, equal but for float sums (added in another order) and the numbers read
    from displayed metrics (:data:`DISPLAYED`)."""
    assert [(r["execution_id"], r["node_id"]) for r in rest] == \
        [(r["execution_id"], r["node_id"]) for r in log]
    for r, g in zip(rest, log):
        assert r.keys() == g.keys()
        for key in r:
            rel, abs_ = (DISPLAYED[key], 1.0) if key in DISPLAYED else (1e-9, 1e-9)
            assert _close(r[key], g[key], rel, abs_), (r["name"], key, r[key], g[key])
