"""What-if: semantics, driver gaps fixed, units, and monotonicity properties."""
import math

import numpy as np
import pytest
from analysis_synth import make_run, task

from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.whatif import predict

INF = float("inf")


MB = 1_000_000


def io_run():
    # One slot, two tasks; all times in ms. 50 MB of input would take 100 ms at the model's
    # 500 MB/s, so the 40 ms the second task leaves unexplained are all input/output wait.
    return make_run([
        task(0, 100, fetch_wait_ms=20, shuffle_write_time_ms=10, gc_ms=30, cpu_ms=40,
             input_bytes=50 * MB),                    # rest = 100-40-30-20-10 = 0
        task(100, 100, fetch_wait_ms=0, shuffle_write_time_ms=0, gc_ms=0, cpu_ms=60,
             input_bytes=50 * MB),                    # rest 40 ms -> input/output wait (est.)
    ], slots=1)


def test_no_change_predicts_wall_exactly():
    a = analyze(io_run())
    assert a.whatif() == a.wall_ms == 200.0


def test_network_removes_fetch_wait_only():
    a = analyze(io_run())
    assert a.whatif(network=INF) == pytest.approx(180.0)
    assert a.whatif(network=2.0) == pytest.approx(190.0)      # r (1 - 1/f) = 20 * 1/2


def test_disk_removes_shuffle_write_fetch_wait_and_estimated_io():
    a = analyze(io_run())
    assert a.whatif(disk=INF) == pytest.approx(200 - (20 + 10) - 40)
    assert a.whatif(disk=2.0) == pytest.approx(200 - (20 + 10 + 40) / 2)


def test_disk_and_network_together_count_fetch_wait_once():
    a = analyze(io_run())
    assert a.whatif(disk=INF, network=INF) == pytest.approx(a.whatif(disk=INF))
    assert a.whatif(disk=2.0, network=INF) == pytest.approx(200 - 20 - (10 + 40) / 2)


def test_estimated_io_wait_is_bounded_by_what_the_bytes_need():
    # 5 MB at 500 MB/s on one slot: at most 10 ms of the 40 unexplained are input wait
    run = make_run([task(0, 100, cpu_ms=60, input_bytes=5 * MB)], slots=1)
    a = analyze(run)
    bd = a.summary()["breakdown"]
    assert bd["io_wait_est"]["ms"] == pytest.approx(10.0)
    assert bd["other_wait_est"]["ms"] == pytest.approx(30.0)
    assert a.whatif(disk=INF) == pytest.approx(90.0)
    assert a.summary()["resources"]["io_bound_ms"] == pytest.approx(10.0)


def test_gc_false_removes_gc():
    a = analyze(io_run())
    assert a.whatif(gc=False) == pytest.approx(170.0)
    assert a.whatif(gc=True) == pytest.approx(200.0)


def test_savings_never_exceed_run_time():
    # GC + fetch wait reported larger than run time (overlapping metrics): task never < 0,
    # never below its time outside executorRunTime.
    run = make_run([task(0, 100, run_ms=50, scheduler_delay_ms=50, gc_ms=40, fetch_wait_ms=40,
                         cpu_ms=0)], slots=1)
    a = analyze(run)
    assert a.whatif(gc=False, network=INF) == pytest.approx(50.0)


def test_driver_gaps_stay_fixed():
    # Cell window 0..100; tasks only 10..30 and 60..70 (two groups): 70 ms of driver time.
    run = make_run([task(10, 20, stage=0, gc_ms=10), task(60, 10, stage=1, gc_ms=10)],
                   slots=1, start=0, end=100)
    a = analyze(run)
    assert a.actual_ms == 30.0 and a.driver_gap_ms == 70.0
    assert a.whatif() == pytest.approx(100.0)
    assert a.whatif(gc=False) == pytest.approx(70.0 + 10.0)    # tasks 10 + 0 ms


def test_prediction_cancels_model_error():
    assert predict(actual_ms=100, driver_gap_ms=50, simulated_baseline_ms=80,
                   simulated_scenario_ms=40) == pytest.approx(50 + 100 * 40 / 80)
    assert predict(100, 0, 0, 0) == 100


def test_bad_factors_raise():
    a = analyze(io_run())
    for bad in (0, -1, math.nan):
        with pytest.raises(ValueError):
            a.whatif(disk=bad)
        with pytest.raises(ValueError):
            a.whatif(slots_factor=bad)


def test_units_are_ms_and_slower_hardware_is_allowed():
    a = analyze(io_run())
    assert isinstance(a.whatif(network=INF), float)
    assert a.whatif(network=0.5) == pytest.approx(220.0)     # twice as slow: +20 ms


def test_no_stragglers_brings_slow_tasks_to_the_median_rate():
    # 2 slots; 3 tasks read 1000 bytes each in 100 ms; one reads 1000 bytes in 400 ms.
    run = make_run([task(0, 100, shuffle_read_bytes=1000), task(0, 400, shuffle_read_bytes=1000),
                    task(100, 100, shuffle_read_bytes=1000),
                    task(200, 100, shuffle_read_bytes=1000)], slots=2)
    a = analyze(run)
    assert a.wall_ms == 400.0
    assert a.whatif(stragglers=False) == pytest.approx(200.0)   # 4 x 100 ms on 2 slots
    assert a.whatif(stragglers=True) == pytest.approx(400.0)


def test_cache_returns_the_same_answer():
    a = analyze(io_run())
    assert a.whatif(disk=INF) == a.whatif(disk=INF)


# -- properties ------------------------------------------------------------------------
def random_run(seed, n=40):
    rng = np.random.default_rng(seed)
    tasks = []
    slots = int(rng.integers(1, 5))
    free = [0.0] * slots
    for i in range(n):
        dur = float(rng.integers(5, 200))
        parts = rng.dirichlet([1, 1, 1, 1, 1]) * dur
        j = int(np.argmin(free))
        start = free[j]
        free[j] = start + dur
        tasks.append(task(start, dur, stage=i // 15, cpu_ms=parts[0], gc_ms=parts[1],
                          fetch_wait_ms=parts[2], shuffle_write_time_ms=parts[3],
                          input_bytes=int(rng.integers(0, 2)) * int(rng.integers(1, 10**6)),
                          shuffle_read_bytes=int(rng.integers(1, 10**6))))
    return make_run(tasks, slots=slots, start=-5.0, end=max(free) + 7.0)


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("resource", ["disk", "network"])
def test_infinite_le_twice_le_baseline(seed, resource):
    a = analyze(random_run(seed))
    base = a.whatif()
    two = a.whatif(**{resource: 2.0})
    inf = a.whatif(**{resource: INF})
    assert inf <= two + 1e-6 <= base + 2e-6
    assert inf >= a.driver_gap_ms - 1e-9


@pytest.mark.parametrize("seed", range(25))
def test_more_slots_never_slower_and_other_removals_never_slower(seed):
    a = analyze(random_run(seed))
    spans = [a.whatif(slots_factor=k) for k in (1.0, 1.5, 2.0, 3.0, INF)]
    assert all(b <= x + 1e-6 for x, b in zip(spans, spans[1:]))
    assert a.whatif(gc=False) <= a.whatif() + 1e-6
    assert a.whatif(stragglers=False) <= a.whatif() + 1e-6
    assert a.whatif(disk=INF, network=INF, gc=False, stragglers=False, slots_factor=2) <= \
        a.whatif(disk=INF) + 1e-6
