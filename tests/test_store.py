"""The run store: durable, atomic, readable from another process."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap

import pandas as pd
import pytest
from test_model import REST_TASK

from jupyter_perf.atomic import utf8_safe
from jupyter_perf.collect.rest_fields import conform_rest
from jupyter_perf.model import Run
from jupyter_perf.store import RunStore, StoreError, valid_run_id


def sample_run(**kw) -> Run:
    tasks = conform_rest("tasks", [REST_TASK], stage_id=1, stage_attempt=0)
    return Run(label=kw.pop("label", "a <b>label</b>"),
               source=kw.pop("source", "%%perfmeasure\nx = 1\n"),
               start_ms=1000.0, end_ms=3500.0, tasks=tasks,
               stages=pd.DataFrame([{"stage_id": 1, "attempt": 0, "status": "COMPLETE",
                                     "parent_ids": [0]}]),
               executors=pd.DataFrame([{"executor_id": "driver", "total_cores": 2}]), **kw)


def test_round_trip(tmp_path):
    store = RunStore(str(tmp_path))
    run = sample_run(warnings=["w1"], host_cpu=pd.DataFrame(
        {"time_ms": [1000.0, 1100.0], "busy_core_ms": [5.0e7, 5.0e7 + 150.0], "cores": [2, 2]}))
    store.save(run, summary={"verdict": "CPU-bound"})
    back = store.load(run.run_id)
    assert back.label == run.label and back.wall_ms == 2500 and back.warnings == ["w1"]
    pd.testing.assert_frame_equal(back.tasks, run.tasks)
    pd.testing.assert_frame_equal(back.host_cpu, run.host_cpu)
    assert back.stages["parent_ids"].iloc[0] == [0]
    [row] = store.list()
    assert row["run_id"] == run.run_id and row["verdict"] == "CPU-bound" and row["num_tasks"] == 1
    assert store.summary(run.run_id) == {"verdict": "CPU-bound"}


def test_list_is_newest_first_and_filters(tmp_path):
    store = RunStore(str(tmp_path))
    ids = []
    for label in ["first", "second", "third"]:
        run = sample_run(label=label)
        store.save(run)
        ids.append(run.run_id)
    assert [r["run_id"] for r in store.list()] == ids[::-1]
    assert [r["label"] for r in store.list(text="sec")] == ["second"]
    assert len(store.list(limit=1, offset=1)) == 1 and store.count() == 3
    assert store.delete(ids[0]) and store.count() == 2
    with pytest.raises(KeyError):
        store.load(ids[0])


def test_half_written_runs_are_invisible(tmp_path):
    store = RunStore(str(tmp_path))
    store.save(sample_run())
    os.makedirs(os.path.join(store.runs_dir, ".20261122-000000-abcdef.tmp"))  # a killed writer
    assert store.count() == 1 and len(store.list()) == 1


def test_run_ids_cannot_escape_the_store(tmp_path):
    store = RunStore(str(tmp_path))
    for bad in ["../etc", "..", "a/b", "", "/abs", "x" * 200]:
        assert not valid_run_id(bad)
        with pytest.raises(StoreError):
            store.run_dir(bad)


def test_unwritable_store_gives_one_clear_line(tmp_path):
    target = tmp_path / "file"
    target.write_text("not a directory")
    with pytest.raises(StoreError, match="JUPYTER_PERF_HOME"):
        RunStore(str(target)).save(sample_run())


def test_a_run_written_here_is_listed_by_perfmeasure_list_in_a_new_process(jp_home):
    store = RunStore()
    run = sample_run(label="from-another-kernel")
    store.save(run)
    code = textwrap.dedent("""
        from IPython.testing.globalipapp import start_ipython
        ip = start_ipython()
        ip.run_cell("%load_ext jupyter_perf")
        ip.run_cell("%perfmeasure list")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, JUPYTER_PERF_HOME=str(jp_home)))
    assert run.run_id in out.stdout and "from-another-kernel" in out.stdout, out.stderr


# -- queries the server and issue J use ---------------------------------------------------------
def test_count_filters_like_list_and_takes_percent_and_underscore_literally(tmp_path):
    store = RunStore(str(tmp_path))
    for label, nb in [("100% done", "a.ipynb"), ("1000 done", "a.ipynb"), ("x_y", "b.ipynb"),
                      ("xzy", "b.ipynb"), ("back\\slash", "b.ipynb")]:
        store.save(sample_run(label=label, notebook=nb))
    assert store.count() == 5
    assert [r["label"] for r in store.list(text="0%")] == ["100% done"]
    assert store.count(text="0%") == 1
    assert [r["label"] for r in store.list(text="x_y")] == ["x_y"] and store.count(text="x_y") == 1
    assert [r["label"] for r in store.list(text="k\\s")] == ["back\\slash"]
    assert store.count(text="done") == 2 and store.count(notebook="b.ipynb") == 3
    assert store.count(text="done", notebook="b.ipynb") == 0
    assert store.count(text="%") == 1 and store.count(text="_") == 1


def test_one_row_by_id_is_exact(tmp_path):
    store = RunStore(str(tmp_path))
    a, b = sample_run(label="a"), sample_run(label="b")
    b.run_id = a.run_id + "0"                    # a's id is a prefix of b's: LIKE would mix them
    store.save(a)
    store.save(b)
    assert store.get(a.run_id)["label"] == "a" and store.get(b.run_id)["label"] == "b"
    assert store.get("20990101-000000-abcdef") is None
    with pytest.raises(StoreError):
        store.get("../x")


def test_meta_reads_no_task_data_and_the_summary_is_stored_once(tmp_path):
    store = RunStore(str(tmp_path))
    run = sample_run(source="%%perfmeasure -o r\nspark.range(10).count()\n")
    run.extra["cell_id"] = "cell-1"
    summary = {"verdict": "CPU-bound: most of the time went to CPU.",
               "verdict_category": "cpu", "verdict_headline": "CPU-bound"}
    store.save(run, summary=summary)
    os.remove(os.path.join(store.run_dir(run.run_id), "tasks.parquet"))   # not needed below
    meta = store.meta(run.run_id)
    assert meta["num_tasks"] == 1 and meta["num_stages"] == 1 and meta["num_jobs"] == 0
    assert meta["source"] == run.source and meta["first_line"] == "spark.range(10).count()"
    assert meta["wall_ms"] == 2500 and meta["warnings"] == [] and meta["cell_id"] == "cell-1"
    assert meta["verdict_category"] == "cpu" and meta["verdict_headline"] == "CPU-bound"
    assert meta["summary"] == summary and meta["created_ms"] == store.get(run.run_id)["created_ms"]
    assert "extra" not in meta and "tasks" not in meta
    with sqlite3.connect(store.index_path) as db:      # run.json holds the summary, not the index
        assert db.execute("SELECT summary FROM runs").fetchall() == [(None,)]
    with pytest.raises(KeyError):
        store.meta("20990101-000000-abcdef")


def test_verdict_category_and_headline_are_indexed_and_may_be_absent(tmp_path):
    store = RunStore(str(tmp_path))
    new, old, failed = sample_run(), sample_run(), sample_run()
    store.save(new, summary={"verdict": "Shuffle-bound: …", "verdict_category": "shuffle",
                             "verdict_headline": "Shuffle-bound"})
    store.save(old, summary={"verdict": "CPU-bound: …"})            # before the keys existed
    store.save(failed, summary=None)                                # the analysis failed
    rows = {r["run_id"]: r for r in store.list()}
    assert (rows[new.run_id]["verdict_category"], rows[new.run_id]["verdict_headline"]) == \
        ("shuffle", "Shuffle-bound")
    for run_id in (old.run_id, failed.run_id):
        assert rows[run_id]["verdict_category"] is None and rows[run_id]["verdict_headline"] is None
    assert rows[failed.run_id]["verdict"] == "" and store.summary(failed.run_id) is None
    assert store.count(text="Shuffle-bound") == 1


def test_previous_runs_of_a_cell_by_cell_id_else_by_source(tmp_path):
    store = RunStore(str(tmp_path))

    def saved(source, cell_id=None, notebook="nb.ipynb"):
        run = sample_run(source=source, notebook=notebook)
        if cell_id:
            run.extra["cell_id"] = cell_id
        store.save(run)
        return run.run_id

    # the same cell run three times, its options and trailing spaces changing
    c1 = saved("%%perfmeasure\ndf.count()\n", "cell-A")
    c2 = saved("%%perfmeasure -o x\ndf.count()  \n", "cell-A")
    other = saved("%%perfmeasure\ndf.count()\n", "cell-B")        # a copy of it, another cell
    c3 = saved("%%perfmeasure\ndf.count()\ndf.show()\n", "cell-A")  # edited: still cell A
    assert [r["run_id"] for r in store.previous_runs(c3)] == [c2, c1]
    assert [r["run_id"] for r in store.previous_runs(c2)] == [c1]
    assert store.previous_runs(c1) == []
    assert [r["run_id"] for r in store.cell_runs(cell_id="cell-A")] == [c3, c2, c1]
    # no cell id (another front end): the same source in the same notebook
    s1 = saved("%%perfmeasure\nspark.range(5).collect()\n")
    saved("%%perfmeasure\nspark.range(5).collect()\n", notebook="elsewhere.ipynb")
    s2 = saved("%%perfmeasure --label again\nspark.range(5).collect()\n\n")
    assert [r["run_id"] for r in store.previous_runs(s2)] == [s1]
    assert [r["run_id"] for r in store.cell_runs(source="spark.range(5).collect()",
                                                 notebook="nb.ipynb")] == [s2, s1]
    # a cell id nobody stored yet falls back to the source
    assert [r["run_id"] for r in store.cell_runs(cell_id="cell-new", source="df.count()",
                                                 notebook="nb.ipynb")] == [other, c2, c1]
    rows = {r["run_id"]: r for r in store.list(limit=100)}
    assert rows[c1]["source_hash"] == rows[c2]["source_hash"] == rows[other]["source_hash"]
    assert rows[c3]["source_hash"] != rows[c1]["source_hash"] and rows[c1]["cell_id"] == "cell-A"
    with pytest.raises(KeyError):
        store.previous_runs("20990101-000000-abcdef")


def test_run_json_keeps_the_keys_older_versions_read(tmp_path):
    """Versions up to 0.1.0 build ``Run(**meta)`` from run.json's keys (after popping format,
    summary, listener_stages and the frames): a key they do not know would fail them."""
    store = RunStore(str(tmp_path))
    run = sample_run()
    run.listener_stages = pd.DataFrame([{"stage_id": 1}])
    store.save(run, summary={"verdict": "x"})
    with open(os.path.join(store.run_dir(run.run_id), "run.json")) as fh:
        keys = set(json.load(fh))
    old_reader = {"run_id", "kind", "label", "source", "notebook", "status", "start_ms",
                  "end_ms", "app_id", "app_name", "spark_version", "master", "collector",
                  "error", "warnings", "extra", "format", "summary", "listener_stages",
                  "jobs", "stages", "executors", "host_cpu"}
    assert keys <= old_reader, keys - old_reader


def test_sql_tables_round_trip_with_their_list_columns(tmp_path):
    store = RunStore(str(tmp_path))
    run = sample_run()
    run.sql = pd.DataFrame([{
        "execution_id": 3, "root_execution_id": -1, "description": "count at <cell>:1",
        "details": "org.apache.spark.sql.Dataset.count", "plan_text": "== Physical Plan ==\n*(2) …",
        "submission_ms": 1763776864100.0, "completion_ms": 1763776865321.5, "job_ids": [4, 5],
        "status": "COMPLETED", "error": ""}])
    run.operators = pd.DataFrame([
        {"execution_id": 3, "node_id": 0, "parent_ids": [], "name": "HashAggregate",
         "description": "keys=[]", "codegen_id": 2, "cluster_id": 1,
         "stage_attempts": [[7, 0], [7, 1]]},
        {"execution_id": 3, "node_id": 4, "parent_ids": [0, 2], "name": "Exchange",
         "description": "", "codegen_id": -1, "cluster_id": -1, "stage_attempts": []}])
    run.sql_metrics = pd.DataFrame([
        {"execution_id": 3, "node_id": 0, "accumulator_id": 812, "name": "number of output rows",
         "metric_type": "sum", "unit": "rows", "value": 1.0, "min": float("nan"),
         "med": float("nan"), "max": float("nan"), "max_stage_id": -1, "max_stage_attempt": -1,
         "max_task_id": -1, "text": "1"},
        {"execution_id": 3, "node_id": 4, "accumulator_id": 815, "name": "shuffle write time",
         "metric_type": "nsTiming", "unit": "ms", "value": 12.345678, "min": 0.5, "med": 1.25,
         "max": 9.0, "max_stage_id": 7, "max_stage_attempt": 1, "max_task_id": 90,
         "text": "total (min, med, max (stageId: taskId))\n12 ms (0 ms, 1 ms, 9 ms (stage 7.1: task 90))"}])
    store.save(run)
    back = store.load(run.run_id)
    for name in ("sql", "operators", "sql_metrics"):
        pd.testing.assert_frame_equal(getattr(back, name), getattr(run, name), check_dtype=False)
    assert back.operators["stage_attempts"].tolist() == [[[7, 0], [7, 1]], []]
    assert back.operators["parent_ids"].tolist() == [[], [0, 2]]
    assert back.sql["job_ids"].iloc[0] == [4, 5]
    assert isinstance(back.sql["job_ids"].iloc[0], list)
    # a run without SQL (and runs stored before the tables existed) loads empty tables
    plain = sample_run()
    store.save(plain)
    assert not os.path.exists(os.path.join(store.run_dir(plain.run_id), "sql.json"))
    assert store.load(plain.run_id).operators.empty
    assert list(store.load(plain.run_id).sql_metrics.columns)[:3] == \
        ["execution_id", "node_id", "accumulator_id"]


# -- N5: run.json from a newer version; any Unicode -------------------------------------------
def test_run_json_of_a_newer_version_loads_with_unknown_keys_kept_aside(tmp_path):
    store = RunStore(str(tmp_path))
    run = sample_run(label="from the future")
    store.save(run, summary={"verdict": "v"})
    folder = store.run_dir(run.run_id)
    with open(os.path.join(folder, "run.json")) as fh:
        meta = json.load(fh)
    newer = {"format": 7, "gpu_metrics": [{"device": 0, "util": 0.9}],
             "kernel_version": {"major": 9}, "stage_notes": "x"}
    meta.update(newer)
    meta["jobs"] = [{"job_id": 1, "name": "j", "a_new_job_column": "y"}]
    with open(os.path.join(folder, "run.json"), "w") as fh:
        json.dump(meta, fh)
    with open(os.path.join(folder, "sql.json"), "w") as fh:
        json.dump({"sql": [{"execution_id": 1, "job_ids": [1]}], "plan_graphs": [{"x": 1}]}, fh)

    back = store.load(run.run_id)
    assert back.label == "from the future" and len(back.tasks) == 1
    assert back.extra["unknown_fields"] == {k: v for k, v in newer.items() if k != "format"}
    assert back.jobs["a_new_job_column"].tolist() == ["y"] and back.sql["job_ids"][0] == [1]
    assert store.meta(run.run_id)["label"] == "from the future"
    back.run_id = back.run_id[:-1] + ("0" if back.run_id[-1] != "0" else "1")
    store.save(back)                                # saved again by this version: nothing lost
    again = store.load(back.run_id)
    assert again.extra["unknown_fields"]["gpu_metrics"] == [{"device": 0, "util": 0.9}]


@pytest.mark.parametrize("text", ["lone \ud800 surrogate", "trail \udcff", "\U0001F600 emoji",
                                  "nul \x00 and bidi \u202e", "é" * 300])
def test_any_unicode_in_labels_and_sources_is_stored(tmp_path, text):
    store = RunStore(str(tmp_path))
    run = sample_run(label=text, source=f"%%perfmeasure --label x\nprint({text!r})  # {text}\n")
    run.error = text
    run.tasks = run.tasks.assign(error=[text])
    store.save(run, summary={"verdict": text, "verdict_headline": text})
    back = store.load(run.run_id)
    assert back.label == text and back.source == run.source and back.error == text
    assert store.meta(run.run_id)["label"] == text
    [row] = store.list()
    assert row["label"] == utf8_safe(text)               # the index holds UTF-8 text
    assert row["source_hash"] and store.count(text=row["label"][:5]) == 1
    # parquet holds UTF-8 only: a lone surrogate in a task's error becomes U+FFFD there
    assert back.tasks["error"].iloc[0] == utf8_safe(text)
