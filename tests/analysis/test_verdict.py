"""One honest sentence and fix hints per cause."""
from analysis_synth import make_run, task
from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.verdict import HINTS, verdict
from jupyter_perf.model import Run


def test_cpu_bound_sentence():
    run = make_run([task(0, 100, cpu_ms=90, fetch_wait_ms=5)] * 2, slots=2)
    s = analyze(run).summary()
    assert s["verdict"].startswith("CPU-bound: 90% of task time on CPU")
    assert "network would save at most 5%" in s["verdict"]


def test_gc_straggler_and_data_skew_in_sentence_with_hints():
    tasks = [task(0, 100, shuffle_read_bytes=1000), task(0, 100, shuffle_read_bytes=1000),
             task(100, 100, shuffle_read_bytes=1000), task(100, 100, shuffle_read_bytes=1000),
             task(200, 300, shuffle_read_bytes=1000, gc_ms=200),
             task(200, 400, shuffle_read_bytes=4000)]
    s = analyze(make_run(tasks, slots=2)).summary()
    assert "1 straggler (1 GC, 1 data skew)" in s["verdict"]
    causes = [h["cause"] for h in s["hints"]]
    assert "gc" in causes and "data_skew" in causes
    assert "salt" in HINTS["data_skew"].lower() and "memory" in HINTS["gc"]


def test_driver_bound():
    run = make_run([task(0, 10)], slots=1, start=0, end=1000)
    s = analyze(run).summary()
    assert s["verdict"].startswith("Driver-bound: no Spark task ran for 99%")
    assert s["hints"][0]["cause"] == "driver"


def test_no_tasks():
    s = analyze(Run(start_ms=0, end_ms=1500)).summary()
    assert s["verdict"] == "No Spark tasks ran: all 1.50 s were driver time."


def test_slots_hint_when_more_slots_help():
    wi = {"infinite_network_ms": 100, "infinite_disk_ms": 100, "no_gc_ms": 100,
          "no_stragglers_ms": 100, "slots_x2_ms": 50}
    v = verdict(100, 10, 0, {"cpu": 1.0, "gc": 0, "shuffle": 0, "io": 0,
                             "overhead": 0, "other_wait": 0}, wi, {})
    sentence, hints = v.sentence, v.hints
    assert "twice the slots would save 50%" in sentence
    assert {"cause": "slots", "hint": HINTS["slots"]} in hints


def test_every_straggler_cause_has_a_hint():
    from jupyter_perf.analysis.stragglers import CAUSES
    assert set(CAUSES) <= set(HINTS)


def test_category_and_headline_in_the_summary():
    from jupyter_perf.analysis.verdict import VERDICT_CATEGORIES

    cases = [
        (make_run([task(0, 100, cpu_ms=90)] * 2, slots=2), "cpu", "CPU-bound"),
        (make_run([task(0, 10)], slots=1, start=0, end=1000), "driver", "Driver-bound"),
        (make_run([task(0, 100, cpu_ms=10, gc_ms=80)], slots=1), "gc", "GC-bound"),
        (Run(start_ms=0, end_ms=1500), "none", "No Spark tasks"),
    ]
    for run, category, headline in cases:
        s = analyze(run).summary()
        assert s["verdict_category"] == category and s["verdict_headline"] == headline, s["verdict"]
        assert s["verdict_category"] in VERDICT_CATEGORIES
        assert s["verdict"].startswith(headline)
