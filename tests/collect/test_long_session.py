"""Long sessions (issue U, item 1), on real Spark, in ONE session for the whole module.

Spark's REST list endpoints page (``/sql`` answers 20 executions unless asked for more) and
its UI keeps only ``spark.ui.retainedJobs`` / ``retainedStages`` / ``retainedTasks`` (per
stage) / ``spark.sql.ui.retainedExecutions`` items. A measured cell must still find its own
jobs, stages, task attempts and SQL executions however much the session ran before it,
reading only what the window added (the requests a finish makes do not grow with the
session's age); what the UI evicted is named in the run's warnings with the setting that
keeps it, and filled in from sparkmeasure's listener where that has the data (Spark 3.5 here;
the Spark 4 leg runs REST-only, where the warnings say what is missing).

The session's retention limits are small enough for a cell to outgrow them in seconds, and
large enough (250 executions > 2 pages of 100) that reading the whole SQL list would take
more requests in an old session than in a young one. Runs in both legs (``make test-spark4``).
"""
from __future__ import annotations

import pandas as pd
import pyspark
import pytest
import requests
from sparkhelpers import make_spark

import jupyter_perf as jp
from jupyter_perf.collect import rest as rest_module
from jupyter_perf.model import PEAK_MEMORY_COLUMNS

pytestmark = pytest.mark.spark4
SPARK4 = int(pyspark.__version__.split(".")[0]) >= 4

LIMITS = {"spark.sql.ui.retainedExecutions": "250", "spark.ui.retainedJobs": "250",
          "spark.ui.retainedStages": "250", "spark.ui.retainedTasks": "100"}


@pytest.fixture(scope="module")
def spark():
    session = make_spark("local[2]", **LIMITS)
    yield session
    session.stop()


def live(spark, path: str, **params):
    """Spark's own REST answer (not through jupyter-perf)."""
    sc = spark.sparkContext
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}{path}"
    resp = requests.get(url, params=params, timeout=60)
    resp.raise_for_status()
    return resp.json()


def listed(spark) -> list[dict]:
    """Every SQL execution Spark's UI keeps (paged, light)."""
    out, offset = [], 0
    while True:
        page = live(spark, "/sql", details="false", planDescription="false", offset=offset,
                    length=100)
        out += page
        if len(page) < 100:
            return out
        offset += len(page)


def small_queries(spark, n: int, shuffle: bool = False) -> None:
    """``n`` SQL queries the session runs unmeasured (each one execution)."""
    for i in range(n):
        df = spark.range(0, 1000, 1, 2)
        if shuffle:
            df.groupBy((df.id % (i % 7 + 2)).alias("k")).count().collect()
        else:
            df.selectExpr(f"id + {i} AS x").limit(3).collect()


def the_join(spark):
    a = spark.range(0, 20_000, 1, 4).selectExpr("id AS k", "id % 7 AS v")
    b = spark.range(0, 20_000, 1, 4).selectExpr("id AS k", "id % 5 AS w")
    return a.join(b, "k").groupBy("v", "w").count().collect()


def check_operators_equal_spark(spark, run) -> None:
    """The run has its plan, and every operator metric is what Spark's /sql/{id} says."""
    a = jp.analyze(run)
    assert len(run.sql) >= 1 and not run.operators.empty, run.warnings
    assert len(a.operators) and a.summary()["operators"] and a.top_operator is not None
    assert "Join" in " ".join(run.operators["name"])
    for eid in run.sql["execution_id"]:
        theirs = live(spark, f"/sql/{eid}", details="true")
        assert theirs["status"] == "COMPLETED"
        want = {(n["nodeId"], m["name"]): m["value"] for n in theirs["nodes"]
                for m in n["metrics"]}
        mine = run.sql_metrics[run.sql_metrics["execution_id"] == eid]
        assert {(r.node_id, r.name): r.text for r in mine.itertuples()} == want
        ops = run.operators[run.operators["execution_id"] == eid]
        assert sorted(ops["node_id"]) == sorted(n["nodeId"] for n in theirs["nodes"])
        assert set(run.sql.set_index("execution_id").loc[eid, "job_ids"]) \
            <= set(run.jobs["job_id"])
    assert not [w for w in run.warnings if "no SQL plan" in w or "retained" in w], run.warnings


class Requests:
    """Counts the REST requests jupyter-perf makes after the measured code ran (the finish),
    by wrapping ``SparkRest.get`` and ``SparkRest.page``; the memory sampler's
    ``/allexecutors`` polls (one per interval, by time) are left out."""

    def __init__(self, monkeypatch):
        self.finishing = False
        self.made: list[tuple[str, tuple]] = []
        get, page = rest_module.SparkRest.get, rest_module.SparkRest.page

        def counted_get(rest, path, **params):
            if self.finishing and path != "/allexecutors":
                self.made.append((path, tuple(sorted(params.items()))))
            return get(rest, path, **params)

        def counted_page(rest, url):
            if self.finishing:
                self.made.append((url.split("?")[0], (url.split("?")[-1],)))
            return page(rest, url)

        monkeypatch.setattr(rest_module.SparkRest, "get", counted_get)
        monkeypatch.setattr(rest_module.SparkRest, "page", counted_page)

    def measure(self, fn):
        def body():
            fn()
            self.finishing = True
        self.made, self.finishing = [], False
        try:
            return jp.measure(body)
        finally:
            self.finishing = False

    def sql_lists(self) -> int:
        return sum(1 for path, _ in self.made if path == "/sql")

    def distinct_others(self) -> int:
        """Requests other than the SQL list, each URL once (a settle loop re-reads a job or
        an execution until Spark has aggregated it: how often depends on timing)."""
        return len({m for m in self.made if m[0] != "/sql"})


def test_a_join_after_dozens_of_queries_has_its_operators(spark):
    """The issue: after 40 other queries, Spark 3.5's /sql asked for no length answers the
    first 20 executions only, and the join is not among them (Spark 4.x answers every one)."""
    small_queries(spark, 40, shuffle=True)
    assert len(listed(spark)) >= 40
    run = jp.measure(lambda: the_join(spark))
    check_operators_equal_spark(spark, run)
    [execution] = run.sql["execution_id"]
    unpaged = [e["id"] for e in live(spark, "/sql", details="false")]
    if SPARK4:
        assert execution in unpaged and len(unpaged) > 40
    else:
        assert len(unpaged) == 20 and execution not in unpaged


def test_finishing_a_cell_costs_the_same_however_old_the_session(spark, monkeypatch):
    counter = Requests(monkeypatch)
    young = counter.measure(lambda: the_join(spark))
    check_operators_equal_spark(spark, young)
    young_lists, young_others = counter.sql_lists(), counter.distinct_others()

    small_queries(spark, 230)                  # past retainedExecutions: evicting since
    kept = listed(spark)
    assert len(kept) > 200                     # a whole read: 3 pages or more
    assert max(e["id"] for e in kept) - min(e["id"] for e in kept) > 200
    old = counter.measure(lambda: the_join(spark))
    check_operators_equal_spark(spark, old)
    assert counter.distinct_others() == young_others
    # one page read from where the list ended at the start; one more only when Spark's UI
    # evicted executions while the window ran (the list moved up under that point)
    assert young_lists == 1 and counter.sql_lists() <= 2, counter.made

    small_queries(spark, 60)
    older = counter.measure(lambda: the_join(spark))
    check_operators_equal_spark(spark, older)
    assert counter.distinct_others() == young_others and counter.sql_lists() <= 2


def test_a_cell_that_outgrows_the_ui_says_what_is_missing_and_which_setting_keeps_it(spark):
    """300 queries in one cell, 250 kept: the cell's first executions, jobs and stages are
    evicted while it runs."""
    run = jp.measure(lambda: small_queries(spark, 300))
    warnings = " | ".join(run.warnings)
    sql_notes = [w for w in run.warnings if "spark.sql.ui.retainedExecutions" in w]
    assert len(sql_notes) == 1, warnings
    [sql_note] = sql_notes
    assert "no longer keeps them" in sql_note and "plans and operators of job(s)" in sql_note
    assert not [w for w in run.warnings if w.startswith("no SQL plan")]
    # the executions Spark still keeps are all found, with their plans
    kept = {e["id"] for e in listed(spark)}
    assert len(run.sql) >= 200 and set(run.sql["execution_id"]) <= kept
    assert not run.operators.empty
    [jobs_note] = [w for w in run.warnings if "spark.ui.retainedJobs" in w]
    assert "started while the window ran" in jobs_note
    summary = jp.analyze(run).summary()           # shown with the report
    assert sql_note in summary["warnings"] and jobs_note in summary["warnings"]
    listener = "sparkmeasure" in run.collector
    if listener:      # job rows and the stages that ran, from sparkmeasure's listener
        assert "come from sparkmeasure's listener" in jobs_note
        assert len(run.jobs) == 300 and run.jobs["job_id"].is_unique
        assert len(run.stages) >= 300
        assert len(run.tasks) == int(run.listener_stages["numTasks"].sum()) >= 300
        assert run.tasks["task_id"].is_unique
        [stages_note] = [w for w in run.warnings if "spark.ui.retainedStages" in w]
        assert "sparkmeasure's listener" in stages_note
    else:             # REST only (the Spark 4 leg here): said to be missing
        assert "missing from the report" in jobs_note
        assert 200 <= len(run.jobs) < 300


def test_tasks_evicted_from_a_stage_come_from_sparkmeasure(spark):
    """A 400-task stage, 100 task attempts kept per stage by Spark's UI."""
    run = jp.measure(lambda: spark.range(0, 4000, 1, 400).selectExpr("id % 9 AS k")
                     .groupBy("k").count().collect())
    [note] = [w for w in run.warnings if "spark.ui.retainedTasks" in w]
    assert "of 400 task attempts" in note and "raise it to keep them" in note
    assert note in jp.analyze(run).summary()["warnings"]
    check = run.stage_table().set_index(["stage_id", "attempt"])
    # the result job lists the map stage again, SKIPPED under a new id with the same count
    [(stage, attempt)] = [k for k, row in check.iterrows()
                          if row["num_tasks"] == 400 and row["status"] != "SKIPPED"]
    [theirs] = [s for s in live(spark, f"/stages/{stage}", details="false")
                if s["attemptId"] == attempt]
    assert theirs["numCompleteTasks"] == 400
    if "sparkmeasure" in run.collector:
        assert "come from sparkmeasure's listener" in note and "partial" not in note
        assert check.loc[(stage, attempt), "task_attempts"] == 400
        # the stage's sums over every task attempt equal Spark's own stage aggregates
        assert check.loc[(stage, attempt), "executor_run_time_ms"] == theirs["executorRunTime"]
        assert check.loc[(stage, attempt), "shuffle_write_bytes"] \
            == theirs["shuffleWriteBytes"]
    else:
        assert "task-level numbers are partial" in note
        assert check.loc[(stage, attempt), "task_attempts"] <= 100


def test_the_whole_application_is_read_past_every_first_page(spark):
    """``load_rest`` (History Server path, here on the live UI) reads every SQL execution
    Spark still keeps, not the first 20."""
    sc = spark.sparkContext
    sc._jsc.sc().listenerBus().waitUntilEmpty(15_000)
    whole = jp.load_rest(sc.uiWebUrl, sc.applicationId)
    with_jobs = {e["id"] for e in listed(spark)
                 if e["successJobIds"] or e["failedJobIds"] or e["runningJobIds"]}
    assert len(with_jobs) > 200
    assert with_jobs <= set(whole.sql["execution_id"])


def regex_filter(spark):
    from pyspark.sql import functions as F
    (spark.range(0, 1_500_000, 1, 4)
     .select(F.concat(F.lit("abc"), F.col("id").cast("string"), F.lit("xyz")).alias("s"))
     .where(F.col("s").rlike("^a.*(1|2)3+x")).count())


def test_profile_memory_and_history_after_hundreds_of_queries(spark):
    """The views added since the long-session fixes (issues P, V, T), measured as they are
    used: a cell run twice, profiled, in a session that ran ~670 queries and evicted most of
    them from its UI. The profile is attributed to this window's stages and plan operators,
    the per-stage memory peaks are this window's stages' and equal Spark's REST stage data,
    and the cell's history holds both runs."""
    from test_memory_real import rest_stage_peaks

    assert len(listed(spark)) >= 240                  # the UI is full: evicting
    label = "long-session regex"
    runs = [jp.measure(lambda: regex_filter(spark), spark=spark, label=label, profile=True)
            for _ in range(2)]
    run = runs[-1]
    a = jp.analyze(run)
    stages = {int(s) for s in run.stages["stage_id"]}
    assert min(stages) > 250, sorted(stages)          # a long session's stage ids
    # P: the samples are this window's, mapped to its plan's operators
    assert not [w for w in run.warnings if w.startswith("no CPU profile")], run.warnings
    assert not run.operators.empty and a.summary()["profile"]["samples"] > 0
    hot = a.hot_functions
    regex = hot[hot["function"].str.contains(r"^java\.util\.regex\.", regex=True)]
    assert len(regex), hot.head(15).to_string()
    assert regex.iloc[0]["operator"].startswith("Filter")
    assert set(regex.iloc[0]["stage_ids"]) <= stages
    # V: per-stage peaks of this window's stage attempts only, each equal to Spark's own
    st = run.stage_memory
    assert set(zip(st["stage_id"], st["attempt"])) == \
        set(zip(run.tasks["stage_id"], run.tasks["stage_attempt"]))
    for sid in sorted(set(st["stage_id"])):
        ours = st[st["stage_id"] == sid][["stage_id", "attempt", "executor_id",
                                          *PEAK_MEMORY_COLUMNS]].reset_index(drop=True)
        theirs = rest_stage_peaks(spark, sid)[["stage_id", "attempt", "executor_id",
                                               *PEAK_MEMORY_COLUMNS]]
        pd.testing.assert_frame_equal(
            ours, theirs.sort_values(["stage_id", "attempt", "executor_id"])
            .reset_index(drop=True), check_dtype=False)
    # T: the cell's series, the first run of its code in the application cold
    h = jp.history(label)
    assert h["run_id"].tolist() == [r.run_id for r in runs]
    assert h["warm"].tolist() == [False, True]


def test_a_window_marks_the_sql_list_where_the_rest_api_ends_it(spark):
    """Q: a window takes its SQL mark (where Spark's execution list ends when the cell starts)
    from the session's SQL status store in the JVM, not with an HTTP request before the cell's
    code: the same length and last id as the REST list, here in a session past its
    ``spark.sql.ui.retainedExecutions`` (older executions evicted, so length != last id + 1)."""
    from jupyter_perf.collect.rest import SparkRest
    from jupyter_perf.collect.sql import mark_sql
    from jupyter_perf.collect.window import ClassicWindow

    small_queries(spark, max(5, 260 - len(listed(spark))))    # past the 250 kept
    kept = listed(spark)
    window = ClassicWindow(spark)
    mark = window._sql_mark_from_store()
    assert mark.count == len(kept) and mark.last_id == max(e["id"] for e in kept)
    assert mark.last_id + 1 > mark.count            # evicted: the ids run past the length
    sc = spark.sparkContext
    assert mark == mark_sql(SparkRest(sc.uiWebUrl, sc.applicationId))


def test_the_session_settings_read_at_each_cell_end_follow_every_change(spark):
    """Q: the settings a window records at the cell's end (sessionconf.py) are re-read only
    when the session's explicit settings changed (their map's size and hash): after every
    change (set, set again, unset) the read equals a read without that shortcut."""
    from jupyter_perf.collect import sessionconf

    def fresh() -> dict:
        sessionconf._SEEN.clear()
        return sessionconf.session_settings(spark)[0]

    key = "spark.sql.shuffle.partitions"
    before = fresh()
    for value in ("7", "9", "9", "11", None, "13"):
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)
        seen = sessionconf.session_settings(spark)[0]
        assert seen.get(key) == value and seen == fresh()
        assert sessionconf.session_settings(spark)[0] == seen          # unchanged: the shortcut
        # unset, the watched setting's default is recorded apart, as Spark answers it
        defaults = sessionconf.session_settings(spark)[1]
        assert defaults.get(key) == (None if value is not None else "200"), defaults
    spark.conf.set(key, before[key])         # as the session started (its start-up value)
    assert sessionconf.session_settings(spark)[0] == before
