"""tabs: the numbers each tab shows."""
import numpy as np
import pandas as pd

from jupyter_perf.analysis import analyze
from jupyter_perf.render.tabs import memory, stages, timeline
from render_runs import synthetic, with_speculative


def test_stage_quantiles_and_breakdown():
    a = analyze(synthetic(2000, 8, per_stage=300))
    st = stages.stage_rows(a)
    t = a.run.tasks
    for _, row in st.iterrows():
        mask = ((t["stage_id"] == row["stage_id"]) & (t["stage_attempt"] == row["attempt"])).to_numpy()
        d = a.timeline.duration[mask]
        assert row["p50"] == np.quantile(d, 0.5) and row["max"] == d.max()
        assert np.isclose(row["task_time_ms"], a.task_breakdown[mask].to_numpy().sum())
    assert np.isclose(st["task_time_ms"].sum(), a.task_breakdown.to_numpy().sum())


def test_stage_track_rows_never_overlap():
    starts = np.array([0.0, 1.0, 2.0, 2.5, 10.0])
    ends = np.array([3.0, 2.0, 4.0, 3.0, 11.0])
    rows = timeline._pack_rows(starts, ends, 6)
    for r in set(rows.tolist()):
        idx = np.flatnonzero(rows == r)
        assert (starts[idx][1:] >= ends[idx][:-1]).all()
    assert timeline._pack_rows(starts, ends, 1).tolist() == [0] * 5     # capped, shared


def test_stage_intervals_cover_tasks():
    a = analyze(synthetic(1500, 8, per_stage=200))
    iv = timeline.stage_intervals(a)
    assert len(iv) == len(a.timeline.stage_keys)
    assert iv["tasks"].sum() == len(a.run.tasks)
    assert (iv["end"] >= iv["start"]).all()


def test_memory_tab_without_samples_and_with_spills():
    run = with_speculative(synthetic(500, 4, per_stage=100))
    panel = memory.memory_tab(analyze(run))
    assert panel.title == "Memory"
    run.memory = pd.DataFrame()
    run.executors = run.executors.iloc[:0]
    assert memory.memory_tab(analyze(run)).title == "Memory"
