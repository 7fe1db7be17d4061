"""The run store: durable, atomic, readable from another process."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from jupyter_perf.model import Run, conform
from jupyter_perf.store import RunStore, StoreError, valid_run_id
from test_model import REST_TASK


def sample_run(**kw) -> Run:
    tasks = conform("tasks", [REST_TASK], "rest", stage_id=1, stage_attempt=0)
    return Run(label=kw.pop("label", "a <b>label</b>"), source="%%perfmeasure\nx = 1\n",
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
