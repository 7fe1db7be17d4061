"""load_eventlog on real Spark 3.5 event logs: codecs, rolled and in-progress logs, retried
tasks, skipped stages, executors on local-cluster, and damaged logs."""
from __future__ import annotations

import json
import os

import pytest

import jupyter_perf as jp
from jupyter_perf.collect.eventlog import EventLogError, load_eventlog
from jupyter_perf.collect.eventlog.codecs import Stream, open_lines
from jupyter_perf.model import PART_SLACK, PART_SLACK_MS

DATA = os.path.join(os.path.dirname(__file__), "data")


def plain_lines(path: str) -> list[bytes]:
    """The decompressed lines of a (possibly compressed) single log file."""
    lines, _, handle = open_lines(path)
    try:
        return list(lines)
    finally:
        handle.close()


def summary(run):
    s = jp.analyze(run).summary()
    for key in ("run_id",):
        s.pop(key)
    return s


# -- real applications ---------------------------------------------------------------------
def test_local_app_jobs_stages_and_a_skipped_stage(apps):
    run = jp.load_eventlog(apps["local"])
    assert run.kind == "eventlog" and run.collector == "eventlog" and run.warnings == []
    assert run.spark_version.startswith("3.5") and run.app_id.startswith("local-")
    assert run.master == "local[2]" and run.slots == 2 and run.end_ms > run.start_ms
    assert list(run.jobs["job_id"]) == [0, 1, 2]
    assert (run.jobs["status"] == "SUCCEEDED").all()
    sql_ids = run.jobs["sql_execution_id"]          # ids count per JVM: compare, don't fix
    assert sql_ids.iloc[0] >= 0 and sql_ids.iloc[0] == sql_ids.min()   # the DataFrame query
    st = run.stages.set_index("stage_id")
    skipped = st[st["status"] == "SKIPPED"]
    assert len(skipped) == 1                                      # reused shuffle
    sid = int(skipped.index[0])
    assert sid in run.jobs["stage_ids"].iloc[2]
    assert not (run.tasks["stage_id"] == sid).any()
    # the real DAG: every result stage names its map stage as parent
    for job_stages in run.jobs["stage_ids"]:
        child, parent = max(job_stages), min(job_stages)
        assert st.loc[child, "parent_ids"] == [parent]
    assert (run.tasks["status"] == "SUCCESS").all()
    t = run.tasks
    assert (t["duration_ms"] == t["finish_ms"] - t["launch_ms"]).all()
    assert (t["cpu_ms"] > 0).all() and (t["cpu_ms"] <= t["run_ms"] + 1).all()   # ns -> ms
    assert t["shuffle_write_bytes"].sum() > 0 and t["shuffle_read_bytes"].sum() > 0
    a = jp.analyze(run)
    assert a.wall_ms <= run.wall_ms and a.summary()["stages"]


def test_retried_task_from_an_lz4_log(apps):
    assert apps["retry"].endswith(".lz4")
    run = jp.load_eventlog(apps["retry"])
    assert run.warnings == []
    t = run.tasks
    failed = t[t["status"] == "FAILED"]
    assert len(failed) == 1
    f = failed.iloc[0]
    assert "planned failure on the first attempt" in f["error"] and f["attempt"] == 0
    retry = t[(t["stage_id"] == f["stage_id"]) & (t["index"] == f["index"]) & (t["attempt"] == 1)]
    assert len(retry) == 1 and retry.iloc[0]["status"] == "SUCCESS"
    assert f["run_ms"] > 0                                   # failed attempts keep their metrics
    job = run.jobs.iloc[0]
    assert job["num_failed_tasks"] == 1 and job["job_group"] == "retry-group"
    table = jp.analyze(run).stage_table().set_index("stage_id")
    assert table.loc[f["stage_id"], "failed_tasks"] == 1
    assert table.loc[f["stage_id"], "task_attempts"] == table.loc[f["stage_id"], "num_tasks"] + 1


def test_local_cluster_rolled_zstd_log_executors(apps):
    path = apps["cluster"]
    assert os.path.basename(path).startswith("eventlog_v2_")
    assert any(n.endswith(".zstd") for n in os.listdir(path))
    run = jp.load_eventlog(path)
    assert run.warnings == [] and run.master.startswith("local-cluster")
    ex = run.executors.set_index("executor_id")
    assert set(ex.index) == {"driver", "0", "1"}
    assert ex.loc["driver", "total_cores"] == 0 and ex.loc["0", "total_cores"] == 1
    assert run.slots == 2
    assert (ex["max_memory_bytes"] > 0).all() and (ex["add_ms"] > 0).all()
    assert ex.loc["0", "peak_jvm_heap_bytes"] > 0                 # executor metrics (peaks)
    assert set(run.tasks["executor_id"]) == {"0", "1"}
    assert run.tasks["shuffle_remote_bytes"].sum() > 0           # a real remote shuffle


@pytest.mark.parametrize("name", ["gen-snappy.snappy", "gen-lzf.lzf"])
def test_snappy_and_lzf_logs_written_by_spark(name):
    # small logs Spark 3.5.9 wrote with spark.eventLog.compression.codec=snappy / lzf
    run = load_eventlog(os.path.join(DATA, name))
    assert run.warnings == [] and run.app_name == "gen-" + name.split(".")[-1]
    assert len(run.jobs) == 2 and len(run.tasks) == 5 and len(run.stages) == 3
    assert (run.tasks["status"] == "SUCCESS").all() and run.tasks["cpu_ms"].gt(0).all()


def test_pure_python_lzf_decoder_matches(monkeypatch):
    import sys
    lines = plain_lines(os.path.join(DATA, "gen-lzf.lzf"))
    monkeypatch.setitem(sys.modules, "lzf", None)                # as if python-lzf were absent
    assert plain_lines(os.path.join(DATA, "gen-lzf.lzf")) == lines


def test_rolled_log_split_in_three_files_equals_the_single_file(apps, tmp_path):
    lines = plain_lines(apps["local"])
    app_id = os.path.basename(apps["local"])
    rolled = tmp_path / f"eventlog_v2_{app_id}"
    rolled.mkdir()
    third = len(lines) // 3
    for i, chunk in enumerate([lines[:third], lines[third:2 * third], lines[2 * third:]], 1):
        # index 10 > 9: files must be ordered by number, not by name
        (rolled / f"events_{i if i < 3 else 10}_{app_id}").write_bytes(b"".join(chunk))
    (rolled / f"appstatus_{app_id}").write_bytes(b"")
    a, b = load_eventlog(apps["local"]), load_eventlog(rolled)
    assert b.extra["files"] == [f"events_1_{app_id}", f"events_2_{app_id}", f"events_10_{app_id}"]
    assert summary(a) == summary(b)


def test_in_progress_log_includes_running_tasks(apps, tmp_path):
    lines = plain_lines(apps["local"])
    # cut right after the last TaskStart of the first job's result stage
    starts = [i for i, line in enumerate(lines) if b'"SparkListenerTaskStart"' in line]
    cut = starts[len(starts) // 3] + 1
    path = tmp_path / (os.path.basename(apps["local"]) + ".inprogress")
    path.write_bytes(b"".join(lines[:cut]))
    run = load_eventlog(path)
    assert run.extra["in_progress"]
    assert any("in progress" in w and "RUNNING" in w for w in run.warnings), run.warnings
    assert (run.tasks["status"] == "RUNNING").sum() >= 1
    assert (run.jobs["status"] == "RUNNING").any()
    assert run.end_ms > run.start_ms
    jp.analyze(run).summary()                                    # the analysis copes


# -- damaged logs ------------------------------------------------------------------------------
def test_truncated_mid_line_is_read_up_to_the_break(apps, tmp_path):
    data = b"".join(plain_lines(apps["local"]))
    cut = data.rfind(b'{"Event":"SparkListenerTaskEnd"') + 200     # inside the last TaskEnd
    path = tmp_path / "truncated"
    path.write_bytes(data[:cut])
    full, run = load_eventlog(apps["local"]), load_eventlog(path)
    n_lines = data[:cut].count(b"\n") + 1
    assert run.warnings[0] == (f"skipped line {n_lines} (cut off where the log ends: truncated); "
                               "the rest of the log was read")
    assert run.extra["skipped_lines"] == [[n_lines, "cut off where the log ends: truncated"]]
    # the cut task had started: it is kept as RUNNING, with no metrics
    assert len(run.tasks) == len(full.tasks) and (run.tasks["status"] == "RUNNING").sum() == 1
    assert any("SparkListenerApplicationEnd" in w for w in run.warnings)


def test_garbage_line_and_unknown_events(apps, tmp_path):
    lines = plain_lines(apps["local"])
    lines.insert(5, b"\x00\x17 this is not json\n")
    lines.insert(8, b'{"Event":"com.example.MyListenerEvent","payload":[1,2,3]}\n')
    lines.insert(9, b'{"Event":"SparkListenerTaskEnd","Stage ID":"oops"}\n')   # wrong shape
    path = tmp_path / "garbage"
    path.write_bytes(b"".join(lines))
    run, full = load_eventlog(path), load_eventlog(apps["local"])
    assert run.warnings == ["skipped 2 lines: line 6 (not valid JSON: unexpected character, "
                            "expected a JSON value), line 10 (TaskEnd "
                            "'Stage ID' is str, expected a number); the rest of the log was read"]
    assert len(run.tasks) == len(full.tasks)


def test_truncated_compressed_log(apps, tmp_path):
    src = apps["retry"]
    data = open(src, "rb").read()
    path = tmp_path / os.path.basename(src)
    last_block = data.rfind(b"LZ4Block", 0, len(data) - 21)      # before the end marker
    path.write_bytes(data[: last_block + 100])                      # cut inside the last block
    run = load_eventlog(path)
    assert any("lz4 stream is truncated" in w for w in run.warnings), run.warnings
    assert any("SparkListenerApplicationEnd" in w for w in run.warnings), run.warnings
    assert len(run.tasks) > 0


def test_corrupt_zstd_stream(apps, tmp_path):
    events = [n for n in os.listdir(apps["cluster"]) if n.startswith("events_")][0]
    src = os.path.join(apps["cluster"], events)
    full = plain_lines(src)
    data = bytearray(open(src, "rb").read())
    data[len(data) * 3 // 4: len(data) * 3 // 4 + 64] = b"\xff" * 64
    path = tmp_path / "app.zstd"
    path.write_bytes(bytes(data))
    run = load_eventlog(path)
    # zstd-jni writes no content checksum: a damaged block is either rejected by the decoder
    # (the stream stops there) or decodes to garbage lines (each skipped, by line number)
    assert run.warnings, "damage went unnoticed"
    assert all("zstd stream is corrupt" in w or w.startswith("skipped ")
               or "SparkListenerApplicationEnd" in w for w in run.warnings), run.warnings
    # what came before the damaged block is read as it was written (where the block falls
    # depends on how Spark laid out this log, so compare with the undamaged file)
    got = plain_lines(str(path))
    same = next((i for i, (a, b) in enumerate(zip(got, full)) if a != b), min(len(got), len(full)))
    assert 0 < same < len(full)
    assert run.extra["events"] >= sum(line.startswith(b'{"Event"') for line in got[:same])


@pytest.mark.parametrize("case", ["missing", "empty", "not-a-log", "plain-dir", "gzip"])
def test_clear_one_line_errors(case, tmp_path):
    path = tmp_path / "x"
    if case == "empty":
        path.write_bytes(b"")
    elif case == "not-a-log":
        path.write_text("hello\nworld\n")
    elif case == "plain-dir":
        path.mkdir()
        (path / "local-1").write_text("")
    elif case == "gzip":
        path = tmp_path / "app.gz"
        path.write_bytes(b"\x1f\x8b")
    with pytest.raises(EventLogError) as info:
        load_eventlog(path)
    message = str(info.value)
    assert "\n" not in message and len(message) < 300
    expected = {"missing": "no event log at", "empty": "is empty", "not-a-log": "no Spark events",
                "plain-dir": "pass one of: local-1", "gzip": "supported codecs: zstd, lz4"}[case]
    assert expected in message


def test_missing_codec_package_says_what_to_install(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "cramjam", None)
    with pytest.raises(EventLogError, match="pip install cramjam"):
        load_eventlog(os.path.join(DATA, "gen-snappy.snappy"))


def test_stream_reports_bad_lz4_header(tmp_path):
    path = tmp_path / "bad.lz4"
    path.write_bytes(b"NOTLZ4" * 10)
    stream = Stream(str(path), "lz4")
    assert list(stream.chunks()) == [] and "bad block header" in stream.error


def test_building_the_tables_leaves_the_parser_as_it_was(apps, tmp_path):
    from jupyter_perf.collect.eventlog.parser import Parser
    from jupyter_perf.errors import JupyterPerfError

    lines = plain_lines(apps["local"])
    starts = [i for i, line in enumerate(lines) if b'"SparkListenerTaskStart"' in line]
    parser = Parser()
    parser.feed(iter(lines[:starts[-1] + 1]))          # cut after the last TaskStart
    first, second = parser.tasks(), parser.tasks()
    running = len(parser.running)
    assert running >= 1 and (first["status"] == "RUNNING").sum() == running
    assert first.equals(second)
    parser.feed(iter(lines[starts[-1] + 1:]), starts[-1] + 2)   # the rest of the log
    assert parser.running == {} and len(parser.tasks()) == len(first)
    assert (parser.tasks()["status"] == "SUCCESS").all()
    assert issubclass(EventLogError, JupyterPerfError)


# -- malformed events: each is taken whole or not at all ----------------------------------------
def _task_end_lines(lines: list[bytes]) -> list[int]:
    return [i for i, line in enumerate(lines) if line.startswith(b'{"Event":"SparkListenerTaskEnd"')]


@pytest.mark.parametrize("path, value", [
    (("Task Metrics", "Executor Run Time"), "100"),
    (("Task Metrics", "Executor Run Time"), [100]),
    (("Task Info", "Launch Time"), "yesterday"),
    (("Task Metrics", "Shuffle Read Metrics"), [1, 2]),
    (("Task Info", "Executor ID"), 7),
    (("Task Info", "Task ID"), None),
])
def test_a_malformed_task_end_is_skipped_whole_and_named(apps, tmp_path, path, value):
    import orjson

    lines = plain_lines(apps["local"])
    k = _task_end_lines(lines)[3]
    event = orjson.loads(lines[k])
    event[path[0]][path[1]] = value
    lines[k] = orjson.dumps(event) + b"\n"
    (tmp_path / "log").write_bytes(b"".join(lines))
    run, full = load_eventlog(tmp_path / "log"), load_eventlog(apps["local"])
    assert len(run.warnings) == 1
    assert run.warnings[0].startswith(f"skipped line {k + 1} (TaskEnd '{'.'.join(path)}' is ")
    assert run.extra["skipped_lines"][0][0] == k + 1
    # the task attempt is missing whole (its TaskStart makes it RUNNING, without metrics);
    # every other column of every other attempt is as in the intact log
    task_id = orjson.loads(plain_lines(apps["local"])[k])["Task Info"]["Task ID"]
    mine, theirs = run.tasks.set_index("task_id"), full.tasks.set_index("task_id")
    assert mine.loc[task_id, "status"] == "RUNNING" and mine.loc[task_id, "run_ms"] == 0
    pd_testing = pytest.importorskip("pandas.testing")
    pd_testing.assert_frame_equal(mine.drop(task_id), theirs.drop(task_id))
    assert run.jobs.drop(columns="completion_ms").equals(full.jobs.drop(columns="completion_ms"))


def test_many_malformed_events_give_one_bounded_warning(apps, tmp_path):
    lines = plain_lines(apps["local"])
    ends = _task_end_lines(lines)
    for k in ends[:7]:
        lines[k] = lines[k].replace(b'"Executor Run Time":', b'"Executor Run Time":"x",'
                                    b'"ignored":', 1)
    (tmp_path / "log").write_bytes(b"".join(lines))
    run = load_eventlog(tmp_path / "log")
    first = ", ".join(f"line {k + 1} (TaskEnd 'Task Metrics.Executor Run Time' is str, expected "
                      "a number)" for k in ends[:3])
    assert run.warnings == [f"skipped 7 lines: {first} and 4 more (all listed in "
                            "run.extra['skipped_lines']); the rest of the log was read"]
    assert [n for n, _ in run.extra["skipped_lines"]] == [k + 1 for k in ends[:7]]


def test_a_third_of_task_ends_without_metrics_warns(apps, tmp_path):
    import orjson

    lines = plain_lines(apps["local"])
    ends = _task_end_lines(lines)
    for k in ends[::3]:
        event = orjson.loads(lines[k])
        del event["Task Metrics"]
        lines[k] = orjson.dumps(event) + b"\n"
    (tmp_path / "log").write_bytes(b"".join(lines))
    run = load_eventlog(tmp_path / "log")
    share = len(ends[::3]) / len(ends)
    assert run.warnings == [f"{len(ends[::3])} of {len(ends)} successful task attempts "
                            f"({share:.0%}) carry no task metrics: their time cannot be broken "
                            "down (it shows as scheduler delay) and the verdict may not hold"]
    assert run.warnings[0] in jp.analyze(run).summary()["warnings"]


def test_absurd_cpu_time_never_reaches_the_what_if(apps, tmp_path):
    lines = plain_lines(apps["local"])
    k = _task_end_lines(lines)[0]
    lines[k] = lines[k].replace(b'"Executor CPU Time":', b'"Executor CPU Time":1e30,"x":', 1)
    (tmp_path / "log").write_bytes(b"".join(lines))
    run, full = load_eventlog(tmp_path / "log"), load_eventlog(apps["local"])
    assert len(run.warnings) == 1 and "executorCpuTime > executorRunTime: 1" in run.warnings[0]
    t, f = run.tasks, full.tasks
    # only the doctored attempt is cut, to its own run time; the others keep Spark's values, which
    # may exceed run time by less than the model's slack (CPU is measured in ns, run time in ms)
    changed = (t["cpu_ms"] != f["cpu_ms"]).to_numpy()
    assert changed.sum() == 1
    assert t["cpu_ms"][changed].iloc[0] == t["run_ms"][changed].iloc[0]
    assert (t["cpu_ms"] <= t["run_ms"] * PART_SLACK + PART_SLACK_MS).all()
    a, b = jp.analyze(run), jp.analyze(full)
    for key in ("infinite_disk_ms", "infinite_network_ms", "no_gc_ms", "slots_x2_ms"):
        assert 0 <= a.whatif_summary()[key] <= a.wall_ms
    assert a.breakdown["cpu"]["ms"] <= b.breakdown["cpu"]["ms"] + t["run_ms"].max()


# -- wall time: one definition (the model's), the same in the report, the store and the CLI ----
def test_wall_time_is_the_same_in_the_report_the_store_and_a_rebuilt_index(apps, tmp_path):
    from jupyter_perf.store import RunStore

    run = load_eventlog(apps["local"])
    a = jp.analyze(run)
    summary = a.summary()
    # the jobs' union, not start to end: the driver's start-up before the first job is out
    assert run.wall_ms == a.wall_ms == summary["wall_ms"] < run.end_ms - run.start_ms
    jobs = run.jobs
    assert run.wall_ms == pytest.approx((jobs["completion_ms"] - jobs["submission_ms"]).sum())
    store = RunStore(str(tmp_path / "store"))
    store.save(run, summary)
    run_id = run.run_id
    assert store.get(run_id)["wall_ms"] == summary["wall_ms"]
    store.rebuild_index()
    assert store.get(run_id)["wall_ms"] == summary["wall_ms"]


def test_a_log_with_only_task_events_has_the_tasks_wall_time(apps, tmp_path):
    lines = [line for line in plain_lines(apps["local"])
             if line.startswith((b'{"Event":"SparkListenerTaskStart"',
                                 b'{"Event":"SparkListenerTaskEnd"'))]
    (tmp_path / "tasks-only").write_bytes(b"".join(lines))
    run = load_eventlog(tmp_path / "tasks-only")
    t = run.tasks
    span = t["finish_ms"].max() - t["launch_ms"].min()
    assert run.start_ms == t["launch_ms"].min() and run.end_ms == t["finish_ms"].max()
    assert run.wall_ms == span == jp.analyze(run).summary()["wall_ms"]     # not 56 years
    assert any("no SparkListenerApplicationStart" in w for w in run.warnings)
    assert any("no job times" in w for w in jp.analyze(run).summary()["warnings"])


# -- hostile strings (issue U4) -----------------------------------------------------------
HOSTILE = "a\\ud800b\\u0000c\\u202e<img src=x onerror=alert(1)>" + "x" * 100_000


def _with_hostile_names(lines: list[bytes]) -> list[bytes]:
    """The log as the JVM writes such names: JSON escapes for a lone surrogate and a NUL."""
    out = []
    for line in lines:
        if line.startswith(b'{"Event":"SparkListenerApplicationStart"'):
            event = json.loads(line)
            event["App Name"] = "@APP@"
            line = json.dumps(event).replace('"@APP@"', f'"{HOSTILE}"').encode() + b"\n"
        elif line.startswith(b'{"Event":"SparkListenerJobStart"'):
            event = json.loads(line)
            event.setdefault("Properties", {})["spark.job.description"] = "@JOB@"
            line = json.dumps(event).replace('"@JOB@"', f'"{HOSTILE}"').encode() + b"\n"
        out.append(line)
    return out


def test_lone_surrogates_nuls_and_huge_names_keep_the_app_and_its_jobs(apps, tmp_path):
    from jupyter_perf.store import RunStore

    plain = load_eventlog(apps["local"])
    path = tmp_path / "hostile"
    path.write_bytes(b"".join(_with_hostile_names(plain_lines(apps["local"]))))
    run = load_eventlog(path)
    expected = json.loads(f'"{HOSTILE}"')
    assert "\ud800" in expected and "\x00" in expected
    assert run.app_id == plain.app_id != ""                  # never lost
    assert run.app_name == expected and run.warnings == []
    assert (run.jobs["description"] == expected).all() and len(run.jobs) == len(plain.jobs)
    assert len(run.tasks) == len(plain.tasks)
    summary = jp.analyze(run).summary()
    store = RunStore(str(tmp_path / "store"))
    store.save(run, summary)
    back = store.load(run.run_id)
    assert back.app_id == run.app_id and back.app_name == expected
    assert (back.jobs["description"] == expected).all()
    from reportpage import page_text
    html = jp.report_html(run)
    # never markup in the page; kept whole (as text) in the report's data
    assert "<img src=x" not in html and "<img src=x onerror=alert(1)>" in page_text(html)
