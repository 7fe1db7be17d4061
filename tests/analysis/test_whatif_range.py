"""More slots without host CPU samples on a shared host: a range, not a point (issue T item 6).

Low end: the plain replay (added slots bring idle cores); high end: the host-CPU floor of a host
with only the run's slots as cores (``analysis/hostcpu.py``). Runs with host samples and
cluster masters keep their point."""
import copy
import os
import re

import numpy as np
import pandas as pd
import pytest
from analysis_synth import T0, make_run, task

from jupyter_perf import fmt, load_eventlog
from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.hostcpu import RANGE_REASON, needs_range
from jupyter_perf.analysis.replay import replay
from jupyter_perf.analysis.whatif import predict
from jupyter_perf.model import executors_on_this_host

DATA = os.path.join(os.path.dirname(__file__), os.pardir, "collect", "data")
# small event logs Spark 3.5.9 wrote for a local[2] application (tests/collect/data)
LOGS = ("gen-snappy.snappy", "gen-lzf.lzf")


def plain(a, factor: float) -> float:
    """The paper's replay of ``factor`` × the slots, computed here without the analysis' floor."""
    sim = replay(a.timeline, a.timeline.duration, factor).total_ms
    return predict(a.actual_ms, a.driver_gap_ms, a.simulated_baseline_ms, sim)


@pytest.fixture(scope="module", params=LOGS)
def log_run(request):
    return load_eventlog(os.path.join(DATA, request.param))


def test_a_local_event_log_gets_a_range_holding_the_plain_replay(log_run):
    assert log_run.master.startswith("local") and log_run.host_cpu.empty
    a = analyze(log_run)
    for k in (1.5, 2.0, 4.0):
        r = a.whatif_range(slots_factor=k)
        assert r["predicted_low_ms"] == pytest.approx(plain(a, k))
        assert r["predicted_ms"] == r["predicted_low_ms"] == a.whatif(slots_factor=k)
        assert r["predicted_high_ms"] >= r["predicted_low_ms"]
        assert r["predicted_high_ms"] <= a.wall_ms + 1e-6     # more slots are never slower
        assert r["range_reason"] == RANGE_REASON           # one wording for every source
        assert "no host CPU samples" in r["range_reason"]
        assert "cores and other load are unknown" in r["range_reason"]
    w = a.whatif_summary()
    assert w["slots_x2_ms"] == w["slots_x2_low_ms"] == a.whatif(slots_factor=2.0)
    assert w["slots_x2_high_ms"] == a.whatif_range(slots_factor=2.0)["predicted_high_ms"]
    assert w["slots_x2_range_reason"].startswith("estimated; ")
    assert 0.0 < a.no_spare_share.min() and a.no_spare_share.max() <= 1.0


def test_no_more_slots_or_a_cluster_master_is_a_point(log_run):
    a = analyze(log_run)
    for r in (a.whatif_range(), a.whatif_range(slots_factor=1.0, disk=float("inf")),
              a.whatif_range(slots_factor=0.5)):
        assert r["predicted_low_ms"] is r["predicted_high_ms"] is r["range_reason"] is None
    for master in ("yarn", "k8s://https://h:6443", "spark://h:7077", ""):
        run = copy.copy(log_run)
        run.master = master
        assert not executors_on_this_host(master) and not needs_range(run)
        a = analyze(run)
        r = a.whatif_range(slots_factor=2.0)
        assert r["predicted_high_ms"] is None and r["predicted_ms"] == pytest.approx(plain(a, 2))
        assert a.whatif_summary()["slots_x2_high_ms"] is None


def four_tasks(master="local[1]", host=None, **fields):
    # local[1]: four 100 ms tasks back to back on one slot
    run = make_run([task(100 * i, 100, **fields) for i in range(4)], slots=1)
    run.master = master
    if host is not None:
        run.host_cpu = host
    return run


def test_the_high_end_by_hand():
    # all run time CPU: a host with one core (the one slot) cannot run a second task at once
    a = analyze(four_tasks())
    r = a.whatif_range(slots_factor=2.0)
    assert (r["predicted_low_ms"], r["predicted_high_ms"]) == pytest.approx((200.0, 400.0))
    # a quarter of each task in shuffle fetch wait: 300 ms of CPU work on one core
    a = analyze(four_tasks(fetch_wait_ms=25))
    assert a.no_spare_share == pytest.approx([0.75])
    r = a.whatif_range(slots_factor=2.0)
    assert (r["predicted_low_ms"], r["predicted_high_ms"]) == pytest.approx((200.0, 300.0))
    # without GC the CPU work shrinks with the durations (as the host floor's does)
    a = analyze(four_tasks(gc_ms=50))
    r = a.whatif_range(slots_factor=2.0, gc=False)
    assert (r["predicted_low_ms"], r["predicted_high_ms"]) == pytest.approx((100.0, 200.0))


def test_a_live_run_with_host_samples_keeps_its_point():
    t = np.arange(-50.0, 1050.0, 50.0)
    host = pd.DataFrame({"time_ms": T0 + t, "busy_core_ms": 1.5 * (t - t[0]), "cores": 2})
    a = analyze(four_tasks(host=host))
    r = a.whatif_range(slots_factor=2.0)
    assert r["predicted_high_ms"] is None and r["range_reason"] is None
    assert r["predicted_ms"] == pytest.approx(300.0)        # the measured floor: 1.5 of 2 cores
    assert a.whatif_summary()["slots_x2_high_ms"] is None


def test_the_slots_hint_states_the_range():
    a = analyze(four_tasks())
    w = a.whatif_summary()
    [h] = [h for h in a.hints if h["cause"] == "slots"]
    assert (f"Twice the slots: between {fmt.ms(w['slots_x2_low_ms'])} and "
            f"{fmt.ms(w['slots_x2_high_ms'])} ({RANGE_REASON}).") in h["text"]
    assert h["predicted_ms"] == w["slots_x2_ms"]
    # the verdict says the saving as the same range: least (high end) – most (plain replay)
    most = round((a.wall_ms - w["slots_x2_low_ms"]) / a.wall_ms * 100)
    least = round(max(a.wall_ms - w["slots_x2_high_ms"], 0.0) / a.wall_ms * 100)
    assert least < most
    assert f"twice the slots would save {least}–{most}%" in a.summary()["verdict"]
    # a cluster run's slots hint stays a point, without the range's words
    b = analyze(four_tasks(master="yarn"))
    [h] = [h for h in b.hints if h["cause"] == "slots"]
    assert "between" not in h["text"]
    assert re.search(r"twice the slots would save \d+%", b.summary()["verdict"])


def test_every_text_view_states_the_range_not_a_point(log_run):
    """The Summary's what-if row, the CLI's and the static inline page's "2× slots" say the
    range and why (one wording: ``fmt.slots_x2``); a cluster master's run keeps its point."""
    from jupyter_perf.render.views.summary import slots_x2_items

    w = analyze(log_run).whatif_summary()
    words = fmt.slots_x2(w)
    assert words == (f"{fmt.ms(w['slots_x2_low_ms'])}–{fmt.ms(w['slots_x2_high_ms'])} "
                     f"({w['slots_x2_range_reason']})")
    items = slots_x2_items(w)
    assert [i["key"] for i in items if isinstance(i, dict) and "key" in i] == [
        "slots_x2_ms", "slots_x2_high_ms"]
    assert items[-1] == {"t": f"({w['slots_x2_range_reason']})", "c": "est"}
    cluster = copy.copy(log_run)
    cluster.master = "yarn"
    wc = analyze(cluster).whatif_summary()
    assert wc["slots_x2_high_ms"] is None and fmt.slots_x2(wc) == fmt.ms(wc["slots_x2_ms"])
    assert [i["key"] for i in slots_x2_items(wc) if isinstance(i, dict) and "key" in i] == [
        "slots_x2_ms"]
