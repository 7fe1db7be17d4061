"""Stragglers (progress rate, 1.5 x stage median), causes, data skew."""
import pytest
from analysis_synth import T0, make_run, task

from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.stragglers import CAUSES, COLUMNS


def two_slot_stage(last, *, bytes_=1000, **common):
    """Four normal tasks (100 ms, ``bytes_`` shuffle read each) on 2 slots, then ``last``."""
    normal = [task(0, 100, shuffle_read_bytes=bytes_, **common),
              task(0, 100, shuffle_read_bytes=bytes_, **common),
              task(100, 100, shuffle_read_bytes=bytes_, **common),
              task(100, 100, shuffle_read_bytes=bytes_, **common)]
    return make_run(normal + [last], slots=2)


def only(df, kind):
    return df[df["kind"] == kind]


def test_gc_straggler():
    run = two_slot_stage(task(200, 300, shuffle_read_bytes=1000, gc_ms=200))
    s = analyze(run).stragglers
    assert list(s.columns) == COLUMNS
    assert len(s) == 1
    row = s.iloc[0]
    assert row["kind"] == "straggler" and not row["data_skew"]
    assert row["task_id"] == 4 and row["duration_ms"] == 300
    assert row["stage_median_ms"] == 100 and row["rate_ratio"] == pytest.approx(3.0)
    assert row["causes"] == ["gc"]


def test_shuffle_read_and_scheduler_delay_causes_are_not_exclusive():
    run = two_slot_stage(task(200, 300, shuffle_read_bytes=1000, fetch_wait_ms=200,
                              scheduler_delay_ms=200, run_ms=100))
    row = analyze(run).stragglers.iloc[0]
    assert set(row["causes"]) == {"shuffle_read", "scheduler_delay"}


def test_unexplained_straggler_has_no_cause():
    run = two_slot_stage(task(200, 300, shuffle_read_bytes=1000))
    row = analyze(run).stragglers.iloc[0]
    # evenly sized data, no measured cause: the host's noise, never skew
    assert row["kind"] == "straggler" and row["causes"] == ["host_noise"]


def test_data_skew_is_flagged_not_a_straggler():
    # 4x the data in 4x the time: same progress rate, 4x the median duration.
    run = two_slot_stage(task(200, 400, shuffle_read_bytes=4000))
    s = analyze(run).stragglers
    assert len(only(s, "straggler")) == 0
    skew = only(s, "data_skew")
    assert len(skew) == 1 and bool(skew.iloc[0]["data_skew"])
    assert skew.iloc[0]["duration_ratio"] == pytest.approx(4.0)
    assert skew.iloc[0]["rate_ratio"] == pytest.approx(1.0)


def test_two_uneven_tasks_are_no_data_skew():
    """Issue W3: a stage of two tasks (AQE coalesced its partitions; row groups fell into two
    splits) has no median task to be skewed against: no skew, and no hot key claimed."""
    run = make_run([task(0, 330, shuffle_read_bytes=4_088),
                    task(0, 530, shuffle_read_bytes=2_644_111)], slots=2)
    a = analyze(run)
    assert len(only(a.stragglers, "data_skew")) == 0 and a.skewed_stages == {}
    assert "data-skewed" not in a.summary()["verdict"]
    # three peers are enough: the same heavy task beside two light ones is skew
    run = make_run([task(0, 330, shuffle_read_bytes=4_088), task(0, 330, shuffle_read_bytes=4_088),
                    task(330, 530, shuffle_read_bytes=2_644_111)], slots=2)
    assert len(only(analyze(run).stragglers, "data_skew")) == 1


def test_output_skew():
    run = two_slot_stage(task(200, 300, shuffle_read_bytes=1000, shuffle_write_bytes=30_000),
                         shuffle_write_bytes=10_000)
    row = analyze(run).stragglers.iloc[0]
    assert "output_skew" in row["causes"]


def jit_run(added_ms):
    """Two executors, each a slow first task then four normal ones; executors added at
    ``added_ms`` (relative to T0; the run's window starts at 0)."""
    tasks = []
    for ex, first in (("1", 300), ("2", 320)):
        tasks.append(task(0, first, executor_id=ex))
        for i in range(4):
            tasks.append(task(first + 100 * i, 100, executor_id=ex))
    executors = [{"executor_id": ex, "host": "h1", "total_cores": 1, "add_ms": T0 + added_ms}
                 for ex in ("1", "2")]
    return make_run(tasks, executors=executors, start=0)


def test_first_task_on_executor_jit():
    # executors added as the cell started: their first tasks warm up the JIT
    s = analyze(jit_run(0)).stragglers
    strag = only(s, "straggler")
    assert sorted(strag["executor_id"]) == ["1", "2"]
    assert all("first_task_jit" in c for c in strag["causes"])


def test_no_jit_warm_up_on_executors_older_than_the_run():
    # the same tasks on executors added ten minutes before the cell: a warm session
    s = analyze(jit_run(-600_000)).stragglers
    strag = only(s, "straggler")
    assert sorted(strag["executor_id"]) == ["1", "2"]
    assert not any("first_task_jit" in c for c in strag["causes"])


def test_jit_only_for_the_first_tasks_of_a_new_executor_not_of_each_stage():
    # executor 1, added at the start: stage 0 warms it up; stage 1's first (slow) task is
    # not a first task on that executor any more
    tasks = [task(0, 300, executor_id="1"), task(300, 100, executor_id="1"),
             task(400, 100, executor_id="1"),
             task(600, 300, stage=1, executor_id="1"), task(900, 100, stage=1, executor_id="1"),
             task(1000, 100, stage=1, executor_id="1")]
    executors = [{"executor_id": "1", "host": "h1", "total_cores": 1, "add_ms": T0}]
    s = analyze(make_run(tasks, executors=executors, start=0)).stragglers
    by_stage = {int(r["stage_id"]): r["causes"] for _, r in s.iterrows()}
    assert "first_task_jit" in by_stage[0] and "first_task_jit" not in by_stage[1]


def test_equal_tasks_get_equal_labels_and_the_label_follows_bytes_vs_rate():
    # four 100 ms / 1000 B tasks; two identical slow ones per case
    def labels(dur, nbytes):
        extra = [task(200, dur, shuffle_read_bytes=nbytes), task(200, dur, shuffle_read_bytes=nbytes)]
        normal = [task(0, 100, shuffle_read_bytes=1000) for _ in range(2)]
        normal += [task(100, 100, shuffle_read_bytes=1000) for _ in range(2)]
        s = analyze(make_run(normal + extra, slots=2)).stragglers
        return s["kind"].tolist()
    # 1.68 x the median duration, 1.2 x the bytes: rate ratio 1.4 > bytes ratio -> straggler
    # (slow mostly per byte), although the rate ratio alone is under 1.5
    assert labels(168, 1200) == ["straggler", "straggler"]
    # rate ratio 1.52 and 1.49 either side of 1.5, bytes ratio 1.1: both stragglers
    assert labels(167, 1100) == labels(164, 1100) == ["straggler", "straggler"]
    # 3 x the bytes in 3.6 x the time: more data explains more -> data skew
    assert labels(360, 3000) == ["data_skew", "data_skew"]


def test_stage_without_bytes_uses_duration_and_small_jitter_is_ignored():
    # 5 ms tasks and one 12 ms task: ratio 2.4 but only 7 ms longer than the median.
    run = make_run([task(0, 5), task(0, 5), task(5, 5), task(5, 12)], slots=2)
    assert analyze(run).stragglers.empty
    assert analyze(run, straggler_min_ms=0).stragglers["kind"].tolist() == ["straggler"]


def test_fast_task_with_little_data_is_not_a_straggler():
    # An almost-empty partition: terrible rate, but shorter than the median task.
    run = two_slot_stage(task(200, 50, shuffle_read_bytes=10))
    assert analyze(run).stragglers.empty


def test_failed_attempts_are_never_stragglers_nor_in_medians():
    run = two_slot_stage(task(200, 900, shuffle_read_bytes=1000, status="FAILED"))
    a = analyze(run)
    assert a.stragglers.empty
    assert a.whatif(stragglers=False) == pytest.approx(a.wall_ms)


def test_summary_counts_causes_and_potential_saving():
    run = two_slot_stage(task(200, 300, shuffle_read_bytes=1000, gc_ms=200))
    s = analyze(run).summary()["stragglers"]
    assert s["count"] == 1 and s["data_skew_count"] == 0 and s["explained"] == 1
    assert s["by_cause"]["gc"] == 1 and set(s["by_cause"]) == set(CAUSES)
    assert s["threshold"] == 1.5
    # 500 ms wall -> 5 tasks of 100 ms on 2 slots = 300 ms.
    assert s["potential_saving_ms"] == pytest.approx(200.0)
    assert s["tasks"][0]["causes"] == ["gc"] and not s["truncated"]


def test_stragglers_are_per_stage_attempt():
    # Stage 1's tasks are all 300 ms: slow compared with stage 0, but not within stage 1.
    run = make_run([task(0, 100, stage=0), task(0, 100, stage=0), task(100, 100, stage=0),
                    task(300, 300, stage=1), task(300, 300, stage=1)], slots=2)
    assert analyze(run).stragglers.empty


def test_skew_that_costs_nothing_is_listed_but_not_flagged():
    """Issue W3: a task with 1.6x the bytes of its peers in a stage whose extra time is a sliver
    of the run (a tiny final aggregate beside a long scan) stays in the table, but its stage is
    not flagged, named in the verdict or advised on; the same task costing time is."""
    scan = [task(0, 4000, stage=0, input_bytes=1 << 20, index=i) for i in range(4)]
    tiny = [task(4000, 100, stage=1, shuffle_read_bytes=40_000),
            task(4000, 100, stage=1, shuffle_read_bytes=40_000),
            task(4100, 100, stage=1, shuffle_read_bytes=40_000),
            task(4100, 130, stage=1, shuffle_read_bytes=64_000)]
    a = analyze(make_run(scan + tiny, slots=2))
    assert len(only(a.stragglers, "data_skew")) == 1
    assert a.skewed_stages == {}
    s = a.summary()
    assert "data-skewed" not in s["verdict"] and "data_skew" not in {h["cause"] for h in s["hints"]}
    heavy = tiny[:3] + [task(4100, 2500, stage=1, shuffle_read_bytes=1_600_000)]
    a = analyze(make_run(scan + heavy, slots=2))
    assert set(a.skewed_stages) == {1} and a.skewed_stages[1]["excess_ms"] == 2400
    assert "1 data-skewed task" in a.summary()["verdict"]


def test_a_few_hundred_bytes_more_is_no_skew_however_long_the_task_ran():
    """TPC-H Q1's small shuffles read 414, 429 and 646 bytes a task: 1.5x the median, but a
    handful of rows (under MIN_SKEW_EXTRA_BYTES more), so however long a busy host makes that
    task it is a straggler with its causes, never data skew or a hot key."""
    scan = [task(0, 1000, stage=0, input_bytes=1 << 20, index=i) for i in range(4)]
    tiny = [task(1000, 40, stage=1, shuffle_read_bytes=0),
            task(1000, 40, stage=1, shuffle_read_bytes=414),
            task(1040, 40, stage=1, shuffle_read_bytes=429),
            task(1040, 400, stage=1, shuffle_read_bytes=646)]
    a = analyze(make_run(scan + tiny, slots=2))
    assert a.skewed_stages == {} and len(only(a.stragglers, "data_skew")) == 0
    assert only(a.stragglers, "straggler")["bytes_read"].tolist() == [646]
    s = a.summary()
    assert s["stragglers"]["data_skew_count"] == 0 and "skew" not in s["verdict"]
    # the same task reading 2 KiB more than the median is skew again
    hot = tiny[:3] + [task(1040, 400, stage=1, shuffle_read_bytes=429 + 2048)]
    assert len(only(analyze(make_run(scan + hot, slots=2)).stragglers, "data_skew")) == 1
