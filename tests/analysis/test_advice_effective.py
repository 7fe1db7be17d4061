"""Issue W: advice only when it changes something, words that read once, call sites as cell
lines, skew from data (synthetic runs, no Spark)."""
import pytest
from analysis_synth import make_run, task
from plan_synth import attach, node
from test_operators import join_run

from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.callsite import call_site_shown, map_call_site, run_call_site
from jupyter_perf.analysis.hints import (
    changes,
    default_value,
    effective,
    hint,
    one_per_setting,
    same_value,
    spark_conf,
    udf_name,
)
from jupyter_perf.analysis.verdict import HEADLINE_MAX, merge_notes
from jupyter_perf.render.advice import ready_cell

MiB = 1 << 20


def test_effective_value_is_the_sessions_else_the_versions_default():
    run = make_run([task(0, 100)])
    run.spark_version = "3.5.1"
    assert effective(run, "spark.sql.adaptive.enabled") == "true"
    assert effective(run, "spark.driver.memory") == "1g"
    run.spark_version = "3.1.2"
    assert effective(run, "spark.sql.adaptive.enabled") == "false"
    assert default_value("spark.sql.execution.pythonUDF.arrow.enabled", "3.3.0") is None
    # the session's conf: a list of [key, value] pairs (or a dict) wins over the default
    run.extra["spark_conf"] = [["spark.sql.adaptive.enabled", "false"],
                               ["spark.driver.memory", "4g"]]
    assert spark_conf(run)["spark.driver.memory"] == "4g"
    assert effective(run, "spark.sql.adaptive.enabled") == "false"
    assert not changes(run, "spark.driver.memory", "4096m")
    assert changes(run, "spark.sql.adaptive.enabled", "true")


def test_a_default_the_session_answered_fills_in_where_the_table_has_none():
    """``run.extra["spark_defaults"]`` (collect/sessionconf.py): the session's own answer for a
    watched setting nobody set; used where the version's table says nothing, never called
    "set in the session"."""
    from jupyter_perf.analysis.hints import effective_text

    run = make_run([task(0, 100)])
    run.spark_version = "3.3.0"
    key = "spark.sql.execution.pythonUDF.arrow.enabled"
    assert default_value(key, "3.3.0") is None and effective(run, key) is None
    run.extra["spark_defaults"] = {key: "false", "spark.sql.adaptive.enabled": "surprise"}
    assert effective(run, key) == "false" and not changes(run, key, "false")
    assert effective_text(run, key) == "false (Spark 3.3.0's default)"
    # the version's table still wins where it has the setting (advice reads as before)
    assert effective(run, "spark.sql.adaptive.enabled") == "true"


def test_values_compare_by_meaning():
    assert same_value("spark.sql.autoBroadcastJoinThreshold", "10MB", "10485760")
    assert same_value("spark.sql.autoBroadcastJoinThreshold", "10MB", "10m")
    assert same_value("spark.driver.memory", "1g", "1024")          # MiB for memory
    assert same_value("spark.sql.adaptive.enabled", "True", "true")
    assert same_value("spark.sql.adaptive.skewJoin.skewedPartitionFactor", "5", "5.0")
    assert not same_value("spark.sql.shuffle.partitions", "200", "8")


def spill_run(driver_memory=None, fraction=None):
    tasks = [task(0, 100, stage=0, cpu_ms=90, memory_spilled_bytes=200 * MiB,
                  peak_execution_memory_bytes=56 * MiB) for _ in range(2)]
    plan = [node(1, "Sort", stages=[0], codegen=1,
                 metrics={"sort time": 20, "spill size": 400 * MiB, "peak memory": 112 * MiB})]
    run = attach(make_run(tasks, slots=2, executors=[
        {"executor_id": "driver", "host": "h", "total_cores": 2, "max_memory_bytes": 400 * MiB}]),
        plan)
    run.spark_version = "3.5.1"
    conf = {}
    if driver_memory:
        conf["spark.driver.memory"] = driver_memory
    if fraction:
        conf["spark.memory.fraction"] = fraction
    run.extra["spark_conf"] = conf
    return run


def test_memory_advice_never_proposes_the_heap_it_has():
    # 256 MiB per task x 2 / 0.6 + 300 MiB = 1.15 GiB -> 2g, the default being 1g
    [h] = [h for h in analyze(spill_run()).hints if h["operator"] == "Sort (#1)"]
    assert h["setting"] == "spark.driver.memory" and h["value"] == "2g"
    assert "now" in h["text"] and "1g (Spark 3.5.1's default)" in h["text"]
    # the driver has 2g already: not "spark.driver.memory=2g" again. Each of its 2 tasks was
    # guaranteed (2g - 300 MiB) x 0.6 / 2 / 2 = 262 MiB, more than the 256 MiB it needed:
    # the pool was shared (storage, the other task), which no setting sizes
    [h] = [h for h in analyze(spill_run("2g")).hints if h["operator"] == "Sort (#1)"]
    assert h["setting"] is None and h["settings"] == []
    assert "spark.driver.memory=2g" not in h["text"] and "262.2 MiB" in h["text"]
    # the session lowered spark.memory.fraction: restoring its default is the change
    [h] = [h for h in analyze(spill_run("8g", "0.1")).hints if h["operator"] == "Sort (#1)"]
    assert (h["setting"], h["value"]) == ("spark.memory.fraction", "0.6")


def test_memory_advice_is_the_sizing_answer_once_per_setting():
    a = analyze(spill_run())
    [h] = [h for h in a.hints if h["operator"] == "Sort (#1)"]
    # one source: the Memory tab's sizing answer is the hint (estimated, with its evidence)
    assert h in a.memory_sizing and h["kind"] == "estimated" and h["evidence"] in h["text"]
    assert h["stage_id"] == 0
    keys = [k for x in a.hints for k, _ in x["settings"]]
    assert len(keys) == len(set(keys))
    # a later hint for a setting an earlier one proposes is left out; text-only hints stay
    first, again, both = (hint(None, "a", "spark.sql.shuffle.partitions", "8"),
                          hint(None, "b", "spark.sql.shuffle.partitions", "400"),
                          hint(None, "c", settings=[["spark.memory.fraction", "0.6"],
                                                    ["spark.sql.shuffle.partitions", "9"]]))
    words = hint(None, "d")
    assert one_per_setting([first, words, again, both, words]) == [first, words, words]


def test_skew_join_advice_leaves_out_what_is_already_on():
    run = join_run()
    run.spark_version = "3.5.1"
    [h] = [h for h in analyze(run).hints if h["settings"] and any(
        "skewJoin" in k for k, _ in h["settings"])]
    keys = dict(h["settings"])
    assert "spark.sql.adaptive.enabled" not in keys          # Spark 3.5's default is on
    assert "spark.sql.adaptive.skewJoin.enabled" not in keys
    assert "spark.sql.adaptive.enabled=true" not in h["text"]
    run.extra["spark_conf"] = {"spark.sql.adaptive.enabled": "false"}
    [h] = [h for h in analyze(run).hints if h["settings"] and any(
        "skewJoin" in k for k, _ in h["settings"])]
    assert dict(h["settings"])["spark.sql.adaptive.enabled"] == "true"


def test_broadcast_advice_is_reworded_when_the_threshold_already_covers_it():
    run = join_run()
    run.spark_version = "3.5.1"
    run.extra["spark_conf"] = {"spark.sql.autoBroadcastJoinThreshold": "64m"}
    [h] = [h for h in analyze(run).hints if "smaller side" in h["text"]]
    assert h["setting"] is None and "broadcast()" in h["text"] and "=27m" not in h["text"]


def test_python_advice_only_where_arrow_is_off_and_exists():
    assert udf_name("BatchEvalPython [slow_bucket(id#0L)#5], [pythonUDF0#12]") == "slow_bucket"
    assert udf_name("ArrowEvalPython [plus_one(id#0L)#3], [pythonUDF0#8], 200") == "plus_one"


def test_merged_notes_read_once():
    assert merge_notes(["AQE coalesced 200 shuffle partitions into 1",
                        "AQE coalesced 200 shuffle partitions into 2"]) == [
        "AQE coalesced 200 shuffle partitions into 1 and 2 (2 shuffles)"]
    assert merge_notes(["AQE coalesced 200 shuffle partitions into 1 (3 shuffles)"]) == [
        "AQE coalesced 200 shuffle partitions into 1 (3 shuffles)"]
    assert merge_notes(["x"]) == ["x"]


def test_headline_and_bullets_in_the_summary():
    s = analyze(make_run([task(0, 100, cpu_ms=90, fetch_wait_ms=5)] * 2, slots=2)).summary()
    assert s["verdict_headline_text"].startswith("CPU-bound: 90% of task time on CPU")
    assert len(s["verdict_headline_text"]) <= HEADLINE_MAX
    assert 1 <= len(s["verdict_bullets"]) <= 5
    assert s["verdict"].startswith("CPU-bound")                # the full sentence stays


def test_call_sites_map_to_cell_lines():
    src = "df = spark.range(10)\nrows = df.collect()\n"
    got = map_call_site("collect at /tmp/ipykernel_123/456.py:3", src)
    assert got == {"line": 3, "text": "rows = df.collect()", "fn": "collect",
                   "label": "collect at cell line 3"}
    # another cell's file (a function defined earlier): its line means nothing here
    assert map_call_site("collect at /tmp/ipykernel_123/456.py:2", src) is None
    assert map_call_site("collect at /home/u/lib.py:3", src) is None
    # the kernel's own file name for the cell, when it recorded it, decides alone
    assert map_call_site("count at /tmp/ipykernel_1/9.py:2", src, "/tmp/ipykernel_1/9.py")["line"] == 2
    assert map_call_site("collect at /tmp/ipykernel_1/8.py:3", src, "/tmp/ipykernel_1/9.py") is None
    # an always-on cell has no header line
    assert map_call_site("collect at <ipython-input-4-abc123>:2", src, first_line=1)["line"] == 2


def test_stage_and_job_rows_carry_their_cell_line():
    run = make_run([task(0, 100, cpu_ms=90)], slots=1,
                   jobs=[{"job_id": 0, "name": "collect at /tmp/ipykernel_7/11.py:3",
                          "stage_ids": [0]}],
                   stages=[{"stage_id": 0, "attempt": 0, "status": "COMPLETE", "num_tasks": 1,
                            "name": "collect at /tmp/ipykernel_7/11.py:3"}])
    run.source = "df = spark.table('t')\nrows = df.collect()\n"
    s = analyze(run).summary()
    assert s["stages"][0]["cell_line"]["label"] == "collect at cell line 3"
    assert s["jobs"][0]["cell_line"]["text"] == "rows = df.collect()"
    # what the Stages and Jobs tables show: the cell line with its text on hover, else Spark's
    # name (a missing name: nothing)
    assert call_site_shown(run, "collect at /tmp/ipykernel_7/11.py:3") == (
        "collect at cell line 3", "rows = df.collect()")
    assert call_site_shown(run, "collect at /home/u/lib.py:3") == ("collect at /home/u/lib.py:3", "")
    assert call_site_shown(run, float("nan")) == ("", "")
    run.kind = "function"
    assert run_call_site(run, "collect at /tmp/ipykernel_7/11.py:3") is None
    assert call_site_shown(run, "collect at /tmp/ipykernel_7/11.py:3")[1] == ""


def test_uniform_data_is_never_skew_and_skewed_data_always_is():
    # same bytes, one task slow for nothing measured: a straggler put down to host noise
    same = [task(0, 100, shuffle_read_bytes=1000), task(0, 100, shuffle_read_bytes=1000),
            task(100, 100, shuffle_read_bytes=1000), task(100, 300, shuffle_read_bytes=1000)]
    a = analyze(make_run(same, slots=2))
    assert (a.stragglers["kind"] == "straggler").all() and not a.skewed_stages
    assert a.stragglers.iloc[0]["causes"] == ["host_noise"]
    # 4x the bytes is data skew whether it ran at the median rate or slower per byte
    for dur in (400, 700):
        hot = same[:3] + [task(100, dur, shuffle_read_bytes=4000)]
        a = analyze(make_run(hot, slots=2))
        assert list(a.stragglers["kind"]) == ["data_skew"], dur
        assert a.skewed_stages[0]["ratio"] == pytest.approx(4.0)


def test_ready_cell_uses_the_users_names():
    run = make_run([task(0, 100)])
    run.source = "df.count()"
    hint = {"setting": "spark.driver.memory", "value": "2g"}
    cell = ready_cell(run, hint)
    assert "#   import jupyter_perf" in cell
    assert "spark.stop(); spark = jupyter_perf.spark_session(**{'spark.driver.memory': '2g'})" in cell
    cell = ready_cell(run, hint, {"module": "jp", "spark": "ss"})
    assert "import jupyter_perf" not in cell
    assert "ss.stop(); ss = jp.spark_session(**{'spark.driver.memory': '2g'})" in cell
    both = {"settings": [["spark.sql.adaptive.skewJoin.skewedPartitionFactor", "3"],
                         ["spark.sql.adaptive.advisoryPartitionSizeInBytes", "2m"]]}
    cell = ready_cell(run, both, {"spark": "ss"})
    assert "ss.conf.set('spark.sql.adaptive.skewJoin.skewedPartitionFactor', '3')" in cell
    assert "ss.conf.set('spark.sql.adaptive.advisoryPartitionSizeInBytes', '2m')" in cell
    assert ready_cell(run, hint, {"module": "not a name;", "spark": "x"}).count("jupyter_perf") == 2
    assert len([x for x in cell.splitlines() if x.startswith("%%perfmeasure")]) == 1


def test_arrow_advice_follows_the_version_and_the_session():
    from test_operators import python_run

    def arrow(version, conf=None):
        run = python_run({"data sent to Python workers": 300, "number of output rows": 200})
        run.spark_version = version
        run.extra["spark_conf"] = conf or {}
        [h] = [h for h in analyze(run).hints if (h["operator"] or "").startswith("BatchEvalPython")]
        return h

    assert arrow("3.5.1")["value"] == "true"
    assert "now false (Spark 3.5.1's default)" in arrow("3.5.1")["text"]
    assert arrow("3.3.0")["setting"] is None and "pandas_udf" in arrow("3.3.0")["text"]
    # on by default (4.2+) or in the session, yet BatchEvalPython: the UDF opted out
    for h in (arrow("4.2.0"), arrow("3.5.1", {"spark.sql.execution.pythonUDF.arrow.enabled": "true"})):
        assert h["setting"] is None and "useArrow=False" in h["text"]
