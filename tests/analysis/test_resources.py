"""Monotask model (seed 004): ideal time per resource = work / capacity; bottleneck."""
import pytest
from analysis_synth import make_run, task

from jupyter_perf.analysis import ResourceParams, analyze

MB = 1_000_000


def test_cpu_bound_ideal_times():
    # 4 tasks x 100 ms CPU on 2 cores -> 200 ms ideal CPU; 50 MB disk at 500 MB/s -> 100 ms.
    run = make_run([task(0, 100, input_bytes=25 * MB // 2) for _ in range(2)]
                   + [task(100, 100, input_bytes=25 * MB // 2) for _ in range(2)], slots=2)
    r = analyze(run).resources
    assert r["ideal_ms"]["cpu"] == pytest.approx(200.0)
    assert r["ideal_ms"]["disk"] == pytest.approx(100.0)
    assert r["ideal_ms"]["network"] == 0.0
    assert r["bottleneck"] == "cpu"
    assert r["model_ms"] == pytest.approx(200.0)
    assert "infinite_disk_ms" not in r      # one disk answer: the what-if's (it bounds it)
    # summed over tasks: each reads 12.5 MB at its slot's share (500 / 2 MB/s): 50 ms
    assert r["io_bound_ms"] == pytest.approx(4 * 50.0)
    assert r["slots_x2_ms"] == pytest.approx(200.0 * 100 / 200)  # max(100 cpu, 100 disk)


def test_twice_the_slots_cannot_pass_the_sampled_host_cores():
    import pandas as pd
    run = make_run([task(100 * i, 100) for i in range(4)], slots=2)
    assert analyze(run).resources["slots_x2_ms"] == pytest.approx(200.0)   # unsampled: 2x CPU
    run.host_cpu = pd.DataFrame({"time_ms": [0.0, 1.0], "busy_core_ms": [0.0, 1.0],
                                 "cores": [2, 2]})
    r = analyze(run).resources
    assert r["slots_x2_ms"] == pytest.approx(400.0)        # local[2] on 2 cores: no more CPU
    assert r["assumptions"]["host_cores"] == 2
    run.host_cpu["cores"] = 3
    assert analyze(run).resources["slots_x2_ms"] == pytest.approx(400.0 / 1.5)


def test_disk_bound_and_parameters():
    run = make_run([task(0, 100, shuffle_write_bytes=200 * MB)], slots=1)
    r = analyze(run, resource_params=ResourceParams(disk_mb_per_s=1000.0)).resources
    assert r["ideal_ms"]["disk"] == pytest.approx(200.0)
    assert r["bottleneck"] == "disk"
    assert r["io_bound_ms"] == 0.0          # shuffle bytes: their time is measured
    assert r["assumptions"]["disk_mb_per_s"] == 1000.0


def test_network_uses_remote_shuffle_bytes_and_hosts():
    run = make_run([task(0, 10, shuffle_remote_bytes=125 * MB, shuffle_read_bytes=125 * MB,
                         host="a"),
                    task(0, 10, shuffle_remote_bytes=125 * MB, shuffle_read_bytes=125 * MB,
                         host="b")],
                   slots=2, executors=[{"executor_id": "1", "host": "a", "total_cores": 1},
                                       {"executor_id": "2", "host": "b", "total_cores": 1}])
    r = analyze(run, resource_params=ResourceParams(network_gbit_per_s=1.0,
                                                    disk_mb_per_s=1e9)).resources
    # 250 MB over 2 hosts x 125 MB/s = 1000 ms.
    assert r["ideal_ms"]["network"] == pytest.approx(1000.0)
    assert r["bottleneck"] == "network"
    assert r["assumptions"]["hosts"] == 2


def test_empty_run():
    from jupyter_perf.model import Run
    r = analyze(Run(start_ms=0, end_ms=10)).resources
    assert r["bottleneck"] == "none" and r["model_ms"] == 0.0
