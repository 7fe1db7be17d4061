"""One honest sentence and fix hints per cause."""
from analysis_synth import make_run, task

from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.verdict import HINTS, Evidence, verdict
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
    assert "1 straggler (1 JVM GC) costs up to" in s["verdict"]
    assert "1 data-skewed task (up to 4.0× its stage's median task's data)" in s["verdict"]
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


WI = {"infinite_network_ms": 100, "infinite_disk_ms": 100, "no_gc_ms": 100,
      "no_stragglers_ms": 93, "flagged_stragglers_ms": 100, "slots_x2_ms": 100}
ZERO = {"cpu": 0.0, "gc": 0.0, "shuffle": 0.0, "io": 0.0, "python": 0.0, "core_wait": 0.0,
        "overhead": 0.0, "other_wait": 0.0}


def test_a_bottleneck_only_when_it_dominates():
    v = verdict(100, 10, 0, ZERO | {"cpu": 0.45, "io": 0.30, "other_wait": 0.25}, WI, {})
    assert v.category == "none" and v.headline == "No single bottleneck"
    assert v.sentence.startswith("No single bottleneck: 45% of task time on CPU, 30% of task "
                                 "time on input/output wait (estimated)")
    assert not v.sentence.startswith("CPU-bound")
    v = verdict(100, 10, 0, ZERO | {"cpu": 0.55, "io": 0.45}, WI, {})
    assert v.category == "cpu" and v.headline == "CPU-bound"


def test_saturated_host_says_so_and_waiting_for_cores_is_the_diagnosis():
    ev = Evidence(host_busy_share=0.98)
    v = verdict(100, 10, 0, ZERO | {"cpu": 0.3, "core_wait": 0.65, "other_wait": 0.05}, WI, {}, ev)
    assert v.category == "core_wait" and v.headline == "Waiting for cores"
    assert "the host's CPU was 98% busy (measured)" in v.sentence
    assert "core_wait" in [h["cause"] for h in v.hints]
    v = verdict(100, 10, 0, ZERO | {"cpu": 0.7, "core_wait": 0.3}, WI, {}, ev)
    assert v.category == "cpu"
    assert v.sentence.startswith("CPU-bound: 70% of task time on CPU and 30% on waiting for a "
                                 "core (estimated);")
    assert "taken as waiting for a core" not in v.sentence        # said once, in the head


def test_own_core_wait_ranks_with_cpu_time():
    """Issue U3: on a quiet host whose cores this application's own threads saturate, CPU time
    and waiting for a core are one demand for CPU — neither alone holds half the task time, yet
    the query is CPU-bound, as the same query on a busy host (its wait given to the other
    processes and left out) reads."""
    quiet = verdict(100, 10, 0, ZERO | {"cpu": 0.48, "core_wait": 0.31, "other_wait": 0.21},
                    WI, {})
    busy = verdict(100, 10, 0, ZERO | {"cpu": 0.62, "core_wait": 0.05, "contention": 0.25,
                                       "other_wait": 0.08}, WI, {})
    assert quiet.category == busy.category == "cpu"
    assert quiet.sentence.startswith("CPU-bound: 48% of task time on CPU and 31% on waiting")
    # more runnable task threads than cores (local[8] on 2): the wait is the larger part
    over = verdict(100, 10, 0, ZERO | {"cpu": 0.25, "core_wait": 0.7, "other_wait": 0.05}, WI, {})
    assert over.category == "core_wait" and over.headline == "Waiting for cores"
    # neither together dominates: still no single bottleneck
    none = verdict(100, 10, 0, ZERO | {"cpu": 0.2, "core_wait": 0.2, "shuffle": 0.3,
                                       "other_wait": 0.3}, WI, {})
    assert none.category == "none"


def test_python_advice_only_with_python_evidence():
    shares = ZERO | {"other_wait": 0.66, "cpu": 0.34}
    v = verdict(100, 10, 0, shares, WI, {})
    text = " ".join(h["hint"] for h in v.hints)
    assert v.category == "other_wait" and "UDF" not in text and "pandas" not in text
    v = verdict(100, 10, 0, shares, WI, {}, Evidence(python=True))
    assert "python" in [h["cause"] for h in v.hints]


def test_no_straggler_saving_without_flagged_stragglers():
    # evening out every task would save 7%, but nothing was flagged: no claim about stragglers
    v = verdict(100, 10, 0, ZERO | {"cpu": 1.0}, WI, {"count": 0, "data_skew_count": 0})
    assert "straggler" not in v.sentence and "7%" not in v.sentence
    v = verdict(100, 10, 0, ZERO | {"cpu": 1.0}, WI,
                {"count": 0, "data_skew_count": 1, "max_skew_ratio": 1.54},
                Evidence(skew_tasks=1, skew_ratio=1.54, skew_share=0.06))
    assert "1 data-skewed task (up to 1.5× its stage's median task's data)" in v.sentence
    assert "cost" not in v.sentence
    # skew rows in the stragglers table whose stages it costs nothing: not named (W3)
    v = verdict(100, 10, 0, ZERO | {"cpu": 1.0}, WI,
                {"count": 0, "data_skew_count": 1, "max_skew_ratio": 1.54})
    assert "skew" not in v.sentence and "data_skew" not in [h["cause"] for h in v.hints]
    v = verdict(100, 10, 0, ZERO | {"cpu": 1.0}, WI | {"flagged_stragglers_ms": 96},
                {"count": 2, "by_cause": {"gc": 1}})
    assert "2 stragglers (1 JVM GC) cost up to 4%" in v.sentence


def test_a_python_node_in_the_plan_is_python_evidence():
    run = make_run([task(0, 100, cpu_ms=30)], slots=1)
    assert not any(h["cause"] == "python" for h in analyze(run).summary()["hints"])
    run.operators = [{"execution_id": 0, "node_id": 3, "name": "BatchEvalPython",
                      "stage_attempts": [[0, 0]]}]
    s = analyze(run).summary()
    # the JVM thread waited on the Python workers (Spark 3.5 times none of it): the Python
    # node holds the task time, so the verdict is Python-bound, not "Unexplained wait"
    assert s["verdict_category"] == "python" and s["verdict_headline"] == "Python UDF-bound"
    assert s["verdict_headline_text"].startswith("Python UDF-bound: BatchEvalPython")
    assert any(h["cause"] == "python" for h in s["hints"])


def test_other_processes_load_is_context_and_never_the_bottleneck():
    # half the task time lost to other processes: the rest is ranked without it
    shares = ZERO | {"cpu": 0.35, "other_wait": 0.1, "contention": 0.5, "shuffle": 0.05}
    ev = Evidence(host_busy_share=1.0, host_own_share=0.45)
    v = verdict(100, 10, 0, shares, WI, {}, ev)
    assert v.category == "cpu" and v.headline == "CPU-bound"
    assert v.sentence.startswith("CPU-bound: 70% of task time on CPU")
    assert ("the host's CPU was 100% busy (measured): other processes took 55% of its cores, "
            "costing tasks an estimated 50% of their time, the shares above estimated as if the host "
            "had been quiet"
            in v.sentence)
    assert "contention" in [h["cause"] for h in v.hints]
    # the same shares on a quiet host (nothing lost): the same category, no clause
    quiet = verdict(100, 10, 0, ZERO | {"cpu": 0.7, "other_wait": 0.2, "shuffle": 0.1}, WI, {},
                    Evidence(host_busy_share=0.5, host_own_share=0.48))
    assert quiet.category == v.category and "other processes" not in quiet.sentence
    assert "contention" not in [h["cause"] for h in quiet.hints]
    # other processes held a good part of the cores without costing the tasks: still said
    light = verdict(100, 10, 0, ZERO | {"cpu": 0.9, "other_wait": 0.1}, WI, {},
                    Evidence(host_busy_share=0.7, host_own_share=0.4))
    assert "the host's CPU was 70% busy (measured): other processes took 30% of its cores" \
        in light.sentence and "costing" not in light.sentence
    # a contention share never makes its own category
    only = verdict(100, 10, 0, ZERO | {"contention": 0.9, "cpu": 0.1}, WI, {},
                   Evidence(host_busy_share=1.0, host_own_share=0.1))
    assert only.category == "cpu"


# -- an executor lost to memory leads (a failure outranks a bottleneck) ---------------------
MiB = 1 << 20


def lost_run(lost, *, heap=480 * MiB, limit=512 * MiB, gc_ms=0, conf=None, **peaks):
    """A CPU-bound local-cluster cell whose executor "1" reported ``heap`` of ``limit``
    (its last peaks), and the collector's records of executors lost to memory."""
    executors = [{"executor_id": "driver", "host": "h", "total_cores": 0},
                 {"executor_id": "1", "host": "h", "total_cores": 1, "remove_ms": 5e12,
                  "jvm_heap_limit_bytes": limit, "peak_jvm_heap_bytes": heap, **peaks}]
    run = make_run([task(0, 100, cpu_ms=90 - gc_ms, gc_ms=gc_ms)] * 2, slots=2,
                   executors=executors)
    run.master = "local-cluster[1,1,1024]"
    run.extra["spark_conf"] = dict(conf or {})
    if lost is not None:
        run.extra["lost_to_memory"] = lost
    return run


OOM = {"executor_id": "1", "host": "h", "remove_ms": 5e12, "memory": "heap", "exit_code": 52,
       "reason": "Command exited with code 52"}


def test_an_executor_lost_to_memory_leads_the_verdict_before_its_bottleneck():
    plain = analyze(lost_run(None)).summary()
    s = analyze(lost_run([OOM])).summary()
    lead = ("Out of memory: executor 1 was lost (exit 52, java.lang.OutOfMemoryError) at heap "
            "480.0 MiB of 512.0 MiB (measured)")
    assert s["verdict"] == f"{lead}. {plain['verdict']}"        # then the bottleneck's, as is
    assert plain["verdict"].startswith("CPU-bound") and plain["verdict_category"] == "cpu"
    assert (s["verdict_category"], s["verdict_headline"]) == ("oom",
                                                             "Executor 1 lost to memory (exit 52)")
    assert s["verdict_headline_text"] == lead
    assert s["verdict_bullets"][0] == plain["verdict_headline_text"]
    assert s["verdict_bullets"][1:] == plain["verdict_bullets"]
    assert [h["cause"] for h in s["hints"]][0] == "oom"
    assert s["memory"]["lost_to_memory"][0]["heap_bytes"] == 480 * MiB
    # the bottleneck's categories, order and texts are those of a run that lost nothing
    same = [k for k in plain if not k.startswith("verdict") and k not in ("hints", "memory",
                                                                           "run_id")]
    assert {k: plain[k] for k in same} == {k: s[k] for k in same}


def test_the_lead_names_the_sizing_answer_that_gives_the_memory_it_ran_out_of():
    # near its limit under GC pressure: the heap sizing raises spark.executor.memory
    run = lost_run([OOM], heap=500 * MiB, gc_ms=40, conf={"spark.executor.memory": "512m"})
    s = analyze(run).summary()
    assert "; the sizing answer: spark.executor.memory=896m (measured). " in s["verdict"]
    assert s["verdict_bullets"][0] == "The sizing answer: spark.executor.memory=896m (measured)"
    [lost] = s["memory"]["lost_to_memory"]
    assert (lost["setting"], lost["value"], lost["kind"]) == ("spark.executor.memory", "896m",
                                                              "measured")


def test_a_process_killed_for_memory_says_so_with_its_rss():
    killed = dict(OOM, memory="killed", exit_code=137, reason="Container killed: OOMKilled")
    s = analyze(lost_run([killed], peak_process_rss_bytes=900 * MiB)).summary()
    assert s["verdict"].startswith(
        "Killed for memory: executor 1 was lost (exit 137, SIGKILL: the OS's OOM killer or its "
        "container's memory limit) at heap 480.0 MiB of 512.0 MiB, process RSS 900.0 MiB "
        "(measured). CPU-bound")
    assert s["verdict_headline"] == "Executor 1 lost to memory (exit 137)"


def test_the_lead_holds_without_tasks_and_names_every_lost_executor():
    from jupyter_perf.analysis.verdict import bottleneck_verdict

    lost = ({"executor_id": "1", "memory": "heap", "exit_code": None, "heap_bytes": float("nan"),
             "heap_limit_bytes": float("nan")},
            {"executor_id": "2", "memory": "heap", "exit_code": 52})
    v = verdict(1000, 0, 1000, ZERO, WI, {}, Evidence(lost_to_memory=lost))
    assert v.category == "oom" and v.headline == "Executors 1 and 2 lost to memory"
    assert v.sentence == ("Out of memory: executors 1 and 2 were lost "
                          "(java.lang.OutOfMemoryError). No Spark tasks ran: all 1.00 s were "
                          "driver time.")
    # no executor lost: the bottleneck's verdict, unchanged
    assert verdict(100, 10, 0, ZERO | {"cpu": 1.0}, WI, {}) == \
        bottleneck_verdict(100, 10, 0, ZERO | {"cpu": 1.0}, WI, {})


def test_records_that_are_not_memory_losses_are_ignored():
    from jupyter_perf.analysis.memory import lost_to_memory

    for junk in ("x", [{"executor_id": "1", "memory": ""}], ["1"], {"executor_id": "1"}):
        run = lost_run(junk)
        assert lost_to_memory(run) == [] and analyze(run).summary()["verdict_category"] == "cpu"


def test_a_heap_near_its_limit_under_gc_pressure_is_an_oom_risk_whatever_the_bottleneck():
    """Issue V4: the verdict names an OOM risk (heap >= 90 % of its limit and >= 10 % of task
    time in GC, measured) as a fact beside the bottleneck; a full heap without GC pressure
    (garbage counts until the next collection) or a roomy heap under GC is not one."""
    risky = analyze(lost_run(None, heap=500 * MiB, gc_ms=40)).summary()
    fact = ("OOM risk: executor 1's JVM heap peaked at 98% of its limit with 40% of its task "
            "time in GC (measured)")
    assert fact in risky["verdict"] and fact in risky["verdict_bullets"], risky["verdict"]
    assert risky["verdict_category"] != "oom"                 # nothing was lost
    for calm in (lost_run(None, heap=500 * MiB, gc_ms=0), lost_run(None, heap=100 * MiB,
                                                                   gc_ms=40)):
        s = analyze(calm).summary()
        assert "OOM risk" not in s["verdict"] and not any("OOM risk" in b
                                                          for b in s["verdict_bullets"])
