"""The monotask resource model (HotOS'17 §5): a second, independent estimate.

Per stage group, the ideal time on each resource is its work divided by its capacity:

* **cpu**: (executorCpuTime + executorDeserializeCpuTime + jvmGcTime) / cores;
* **disk**: bytes that touch a disk — input + output + shuffle write + shuffle read + twice the
  disk spill — / (hosts × ``disks_per_host`` × ``disk_mb_per_s``);
* **network**: remote shuffle bytes / (hosts × ``network_gbit_per_s``).

The group's ideal time is the largest of the three (its bottleneck); the run's model time is
the sum over groups. A what-if changes one capacity and is reported like the replay's, as
``driver gaps + actual × modelled_scenario / modelled_baseline``.

Stock Spark does not say whether input came from a disk, the page cache or Spark's cache, so
the disk figure is an upper bound; the throughputs are assumptions, given as parameters.

**One disk answer.** The model does not give its own "infinitely fast disk" figure next to
the replay's: it bounds the replay's. What stock Spark leaves unexplained in a task that read
input or wrote output is counted as input/output wait (estimated) only up to the time its
bytes (input + output + twice the disk spill) would take at the disk's throughput shared by
the slots (:func:`io_time_bound`); the rest of it is other wait. The disk what-if removes
that bounded wait plus the measured shuffle times, and on a sampled host it cannot beat the
measured CPU work (``analysis/hostcpu.py``).

Twice the slots doubles the CPU capacity, except when the run's host CPU was sampled (local
masters: every executor shares the driver's host): then the capacity cannot grow past the
host's cores.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from ..model import Run
from .hostcpu import host_cores
from .timeline import Timeline
from .whatif import predict

RESOURCES = ("cpu", "disk", "network")


@dataclasses.dataclass(frozen=True)
class ResourceParams:
    disk_mb_per_s: float = 500.0        # one SATA SSD, sequential (MB = 1e6 bytes)
    disks_per_host: int = 1
    network_gbit_per_s: float = 10.0    # per host
    cores: int | None = None            # default: the run's executor slots
    hosts: int | None = None            # default: distinct executor hosts


def _hosts(run: Run) -> int:
    ex = run.executors
    if not ex.empty:
        workers = ex[ex["executor_id"] != "driver"]
        hosts = (workers if not workers.empty else ex)["host"].dropna().astype(str)
        hosts = hosts[hosts != ""]
        if len(hosts):
            return int(hosts.nunique())
    h = run.tasks["host"]
    return max(int(h[h != ""].nunique()), 1)


def model_cores(run: Run, tl: Timeline, p: ResourceParams) -> int:
    """The cores the model divides CPU work by: given, else the run's slots, else the most
    the replay saw running at once."""
    return int(p.cores or run.slots or int(tl.group_slots.max(initial=1)))


def io_time_bound(run: Run, tl: Timeline, params: ResourceParams | None = None) -> np.ndarray:
    """Per task row: the most input/output wait its bytes can explain (ms), at the disk
    throughput of the hosts shared evenly by the slots."""
    p = params or ResourceParams()
    t = run.tasks
    cores = model_cores(run, tl, p)
    hosts = p.hosts or _hosts(run)
    per_slot = hosts * p.disks_per_host * p.disk_mb_per_s * 1e6 / 1000.0 / max(cores, 1)
    nbytes = (t["input_bytes"] + t["output_bytes"] + 2 * t["disk_spilled_bytes"]).to_numpy(
        dtype="float64")
    return nbytes / per_slot


def slots_x2_cpu_speedup(run: Run, cores: int) -> float:
    """CPU capacity factor of twice the slots: 2, or up to the sampled host's cores."""
    host = host_cores(run)
    if host <= 0:
        return 2.0
    return max(1.0, min(2.0, host / max(cores, 1)))


def resource_model(run: Run, tl: Timeline, params: ResourceParams | None = None) -> dict:
    p = params or ResourceParams()
    t = run.tasks
    cores = model_cores(run, tl, p)
    hosts = p.hosts or _hosts(run)
    disk_bps = hosts * p.disks_per_host * p.disk_mb_per_s * 1e6 / 1000.0     # bytes per ms
    net_bps = hosts * p.network_gbit_per_s * 1e9 / 8 / 1000.0
    work = pd.DataFrame({
        "cpu": (t["cpu_ms"] + t["deserialize_cpu_ms"] + t["gc_ms"]).to_numpy(dtype="float64"),
        "disk": (t["input_bytes"] + t["output_bytes"] + t["shuffle_write_bytes"]
                 + t["shuffle_read_bytes"] + 2 * t["disk_spilled_bytes"]).to_numpy(dtype="float64"),
        "network": t["shuffle_remote_bytes"].to_numpy(dtype="float64"),
    })
    per_group = work.groupby(tl.group).sum() if len(t) else work
    capacity = {"cpu": float(max(cores, 1)), "disk": disk_bps, "network": net_bps}
    ideal = per_group / pd.Series(capacity)

    def model_ms(speedup: dict[str, float]) -> float:
        if ideal.empty:
            return 0.0
        scaled = ideal.copy()
        for r, f in speedup.items():
            scaled[r] = 0.0 if math.isinf(f) else scaled[r] / f
        return float(scaled.max(axis=1).sum())

    base = model_ms({})
    totals = {r: float(ideal[r].sum()) if not ideal.empty else 0.0 for r in RESOURCES}
    bottleneck = max(totals, key=totals.get) if base > 0 else "none"

    def scenario(speedup):
        return predict(tl.actual_ms, tl.driver_gap_ms, base, model_ms(speedup))

    return {
        "ideal_ms": totals,
        "model_ms": base,
        "bottleneck": bottleneck,
        # task time (summed over tasks) that bounds the estimated input/output wait; the one
        # disk answer is the what-if's (summary()["whatif"]["infinite_disk_ms"])
        "io_bound_ms": float(io_time_bound(run, tl, p).sum()),
        "infinite_network_ms": scenario({"network": math.inf}),
        "slots_x2_ms": scenario({"cpu": slots_x2_cpu_speedup(run, cores)}),
        "assumptions": {"cores": int(cores), "hosts": int(hosts),
                        "host_cores": host_cores(run) or None,
                        "disk_mb_per_s": p.disk_mb_per_s, "disks_per_host": p.disks_per_host,
                        "network_gbit_per_s": p.network_gbit_per_s,
                        "disk_is_upper_bound": True},
    }
