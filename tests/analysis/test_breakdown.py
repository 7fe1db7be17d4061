"""Time breakdown per task attempt and totals, measured vs estimated."""
import pytest
from analysis_synth import make_run, task

from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.breakdown import category_shares, task_breakdown
from jupyter_perf.analysis.components import KEYS


def test_components_of_one_task():
    run = make_run([task(0, 100, run_ms=80, scheduler_delay_ms=10, deserialize_ms=5,
                         result_serialization_ms=3, getting_result_ms=2,
                         cpu_ms=40, gc_ms=10, fetch_wait_ms=8, shuffle_write_time_ms=2,
                         input_bytes=10)], slots=1)
    row = task_breakdown(run).iloc[0]
    assert row["cpu"] == 40 and row["gc"] == 10
    assert row["shuffle_fetch_wait"] == 8 and row["shuffle_write"] == 2
    assert row["io_wait_est"] == 20 and row["other_wait_est"] == 0     # read input
    assert row["scheduler_delay"] == 10 and row["deserialize"] == 5
    assert row["result_serialization"] == 3 and row["getting_result"] == 2
    assert row["unaccounted"] == 0
    assert row.sum() == 100


def test_rest_is_other_wait_without_input_or_output_and_never_negative():
    run = make_run([task(0, 50, cpu_ms=30),                         # rest 20 -> other wait
                    task(0, 50, cpu_ms=45, gc_ms=10)], slots=2)     # over-reported -> 0
    bd = task_breakdown(run)
    assert bd["other_wait_est"].tolist() == [20, 0]
    assert bd["io_wait_est"].tolist() == [0, 0]
    assert (bd >= 0).all().all()


def test_output_writers_get_io_wait():
    run = make_run([task(0, 50, cpu_ms=30, output_bytes=5)], slots=1)
    assert task_breakdown(run)["io_wait_est"].tolist() == [20]


def test_totals_are_marked_measured_or_estimated_and_include_failed_attempts():
    run = make_run([task(0, 40, cpu_ms=40, status="FAILED"), task(40, 60, cpu_ms=30)], slots=1)
    bd = analyze(run).summary()["breakdown"]
    assert set(bd) == set(KEYS)
    assert bd["cpu"]["ms"] == 70 and bd["cpu"]["kind"] == "measured"
    assert bd["other_wait_est"]["ms"] == 30 and bd["other_wait_est"]["kind"] == "estimated"
    assert bd["io_wait_est"]["kind"] == "estimated"
    assert sum(c["share"] for c in bd.values()) == pytest.approx(1.0)
    assert bd["cpu"]["spark_metric"] == "executorCpuTime"


def test_category_shares():
    run = make_run([task(0, 100, cpu_ms=50, gc_ms=25, fetch_wait_ms=25)], slots=1)
    shares = category_shares(analyze(run).breakdown)
    assert shares["cpu"] == pytest.approx(0.5)
    assert shares["gc"] == pytest.approx(0.25)
    assert shares["shuffle"] == pytest.approx(0.25)


def test_python_time_then_core_wait_are_carved_out_of_the_rest():
    # run 100 = CPU 40 + rest 60: Python measured 20, then half of the remaining 40 waits for
    # a core, the last 20 is I/O wait (the task read input).
    run = make_run([task(0, 100, cpu_ms=40, input_bytes=10),
                    task(0, 100, cpu_ms=90)], slots=2)
    bd = task_breakdown(run, python_ms=[20.0, 50.0], core_wait_share=[0.5, 1.0])
    first, second = bd.iloc[0], bd.iloc[1]
    assert first["python_udf"] == 20 and first["core_wait_est"] == 20
    assert first["io_wait_est"] == 20 and first["other_wait_est"] == 0
    # Python time never exceeds what the task metrics leave unexplained (10 here)
    assert second["python_udf"] == 10 and second["core_wait_est"] == 0
    assert (bd.sum(axis=1) == 100).all()


def test_new_components_are_zero_without_evidence():
    bd = task_breakdown(make_run([task(0, 100, cpu_ms=40)], slots=1))
    assert bd["python_udf"].tolist() == [0] and bd["core_wait_est"].tolist() == [0]
    assert bd["other_wait_est"].tolist() == [60]
