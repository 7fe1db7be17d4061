"""tabs: the numbers each tab shows."""
import numpy as np
import pandas as pd
from render_runs import synthetic, with_skipped, with_speculative

from jupyter_perf.analysis import analyze
from jupyter_perf.render.tabs import memory, stages, timeline


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


def test_stages_are_named_without_attempt_zero():
    from jupyter_perf.render.widgets import stage_label
    assert stage_label(5, 0) == "stage 5"
    assert stage_label(5, 1) == "stage 5 (attempt 1)"
    a = analyze(synthetic(1500, 8, per_stage=200))
    panel, _ = stages.stages_tab(a)
    bars = next(iter(panel.select({"name": "jp-stage-bars"})))
    assert all(f == "stage " + f.split()[1] for f in bars.y_range.factors)


def test_skipped_stages_are_folded_with_their_count():
    from bokeh.models import CheckboxGroup, DataTable
    run = with_skipped(synthetic(1500, 8, per_stage=200), n=3)
    a = analyze(run)
    panel, _ = stages.stages_tab(a)
    t = next(iter(panel.select({"type": DataTable, "name": "jp-stages"})))
    status = t.source.data["status"]
    assert status.count("SKIPPED") == 3
    assert t.view.filter.booleans == [s != "SKIPPED" for s in status]      # folded
    toggle = next(iter(panel.select({"type": CheckboxGroup, "name": "jp-stages-skipped"})))
    assert toggle.labels[0].startswith("show the 3 skipped stages") and toggle.active == []
    bars = next(iter(panel.select({"name": "jp-stage-bars"})))
    assert len(bars.y_range.factors) == len(status) - 3


def test_counts_mean_the_same_in_every_place():
    """Task attempts that ran: the Summary's count, the Jobs table's sum and the Stages table's
    sum are one number; skipped stages count no attempt."""
    from jupyter_perf.render.tabs import summary
    run = with_skipped(synthetic(1500, 8, per_stage=200), n=2)
    a = analyze(run)
    s = a.summary()
    jobs = summary.job_rows(a, s)
    assert sum(jobs["attempts"]) == s["task_attempts"] == len(run.tasks)
    assert sum(jobs["skipped"]) == 2
    st = stages.stage_rows(a)
    assert st["task_attempts"].sum() == s["task_attempts"]
    assert f"{s['task_attempts']:,} task attempts that ran" in summary._key_numbers(a, s)


def test_every_header_fits_and_wide_tables_keep_their_first_column():
    from bokeh.models import DataTable

    from jupyter_perf.render import report
    from jupyter_perf.render.widgets import CHAR_PX
    doc = report.report_document(analyze(with_skipped(with_speculative(synthetic(1500, 8, per_stage=200)))))
    tables = list(doc.select({"type": DataTable}))
    assert {t.name for t in tables} >= {"jp-stages", "jp-stragglers", "jp-jobs"}
    for t in tables:
        for c in t.columns:
            assert c.width >= CHAR_PX * len(c.title) + 20, (t.name, c.title)
        if t.autosize_mode == "none":
            assert t.frozen_columns == 1, t.name
