"""Live progress while a measured cell runs (real Spark; the display as the kernel sends it)."""
from __future__ import annotations

import threading
import time

import pytest
from sparkhelpers import run_cell

from jupyter_perf import fmt
from jupyter_perf.collect.progress import ProgressSnapshot, StageProgress
from jupyter_perf.collect.window import ClassicWindow
from jupyter_perf.kernel.live import LiveDisplay, html_of, text_of

THREADS = ("jupyter-perf-progress", "jupyter-perf-memory-sampler")


def our_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name in THREADS]


@pytest.fixture(scope="module")
def shell(ipshell, spark_local):
    ipshell.user_ns["spark"] = spark_local
    return ipshell


def test_display_reaches_every_stage_and_ends_at_100_percent(spark_local):
    live = LiveDisplay("html")
    seen: list = []

    def on_update(snap):
        seen.append(snap)
        live.update(snap)

    window = ClassicWindow(spark_local, on_progress=on_update).start()
    slow = "java_method('java.lang.Thread', 'sleep', cast(50 as bigint))"
    # count("s"), not count(): the optimizer would prune the sleeping column
    (spark_local.range(0, 400, 1, 8).selectExpr("id % 4 AS k", f"{slow} AS s")
     .groupBy("k").agg({"s": "count"}).collect())
    run = window.finish()
    ran = set(run.stages.query("status == 'COMPLETE'")["stage_id"])
    assert len(ran) >= 2
    assert ran <= set(live.state())                       # every stage got a bar
    assert all(value == maximum for value, maximum in live.state().values()), live.state()
    assert any(0 < s.completed < s.num_tasks for snap in seen for s in snap.stages), \
        "never saw a stage part-way: the display was not live"
    assert seen[-1].finished and seen[-1].jobs_done == seen[-1].jobs_started == len(run.jobs)
    assert "jobs" in text_of(seen[-1])
    assert not our_threads()


def test_ten_thousand_tasks_give_a_bounded_number_of_updates(spark_local):
    live = LiveDisplay("html")
    t0 = time.monotonic()
    window = ClassicWindow(spark_local, on_progress=live.update).start()
    assert spark_local.range(0, 10_000, 1, 10_000).count() == 10_000
    run = window.finish()
    # the poller runs from start() until finish() stops it, after Spark's listener bus has
    # drained the job's 10,000 task events (a backlog a busy host can stretch, while the
    # display still updates): the time it may update in is all of that, not the job alone
    elapsed = time.monotonic() - t0
    assert run.tasks.groupby("stage_id").size().max() == 10_000
    # at most 2 updates a second, whatever the number of task events
    assert live.updates <= 2 * elapsed + 3, (live.updates, elapsed)
    assert not our_threads()


def test_failing_and_interrupted_cells_leave_no_poller(shell, monkeypatch):
    monkeypatch.setenv("JUPYTER_PERF_PROGRESS", "text")
    result, _ = run_cell(shell, "%%perfmeasure\nspark.range(100).count()\nraise KeyError('x')\n")
    assert isinstance(result.error_in_exec, KeyError)
    assert not our_threads()
    result, cap = run_cell(shell, "%%perfmeasure\nspark.range(0, 1000, 1, 4).count()\n")
    assert result.error_in_exec is None and not our_threads()
    # the progress text was replaced by the report in the same display
    assert "jupyter-perf-report" in cap.outputs[-1].data["text/html"]



def test_the_html_display_escapes_spark_strings_and_shows_every_stage():
    hostile = "<img src=x onerror=alert(1)> collect at <cell>:1"
    snap = ProgressSnapshot(elapsed_s=3.2, jobs_started=2, jobs_done=1, executors=1, cores=2,
                            peak_memory_bytes=3 * 2**20, stages=[
                                StageProgress(4, hostile, 8, 3, 2, 0),
                                StageProgress(5, "count at x", 4, 1, 1, 1)])
    page = html_of(snap)
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert 'aria-valuenow="3"' in page and 'aria-valuemax="8"' in page
    assert 'data-stage="5" data-state="failed"' in page and "1 failed" in page
    assert "1/2 jobs" in page and fmt.nbytes(3 * 2**20) in text_of(snap)


def test_the_live_heap_peak_is_this_cells_not_the_jvms_past():
    """Spark's executor peaks never go down: a peak an earlier cell set is not shown as this
    cell's (issue V5); one that rose in the window is."""
    from types import SimpleNamespace


    def sample(t, peaks):
        return [{"id": e, "time_ms": t, "peakMemoryMetrics": {"JVMHeapMemory": p}}
                for e, p in peaks.items()]

    window = ClassicWindow.__new__(ClassicWindow)
    window.sampler = SimpleNamespace(rows=sample(0, {"1": 700 << 20, "2": 650 << 20}))
    assert window._peak_memory() is None                 # only the JVMs' past so far
    window.sampler.rows += sample(500, {"1": 700 << 20, "2": 650 << 20})
    assert window._peak_memory() is None
    window.sampler.rows += sample(1000, {"1": 700 << 20, "2": 690 << 20})
    assert window._peak_memory() == 690 << 20           # executor 2 rose; 1's 700 is older
    snap = ProgressSnapshot(elapsed_s=1, jobs_started=1, jobs_done=0, executors=2, cores=2,
                            peak_memory_bytes=window._peak_memory(), stages=[])
    assert f"executor heap peak this cell {fmt.nbytes(690 << 20)}" in text_of(snap)
    snap.peak_memory_bytes = None
    assert "no new executor heap peak this cell" in text_of(snap)
