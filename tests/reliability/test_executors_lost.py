"""``collect/executors_lost.py`` on task and executor tables shaped as a real lost worker left
them (``test_standalone_cluster.py`` kills a real one): no JVM here."""
from __future__ import annotations

from jupyter_perf.collect.executors_lost import lost_executor_warnings, resubmission_adjusted, resubmitted
from jupyter_perf.model import conform

LOST = ("ExecutorLostFailure (executor 0 exited unrelated to the running tasks) Reason: "
        "worker lost: 127.0.0.1:44521 got disassociated")


def task(task_id, index, attempt, executor, status, launch, finish, **more):
    return dict(stage_id=0, stage_attempt=0, task_id=task_id, index=index, attempt=attempt,
                executor_id=executor, status=status, launch_ms=launch, finish_ms=finish, **more)


# Executor 0 finished index 0 and index 1, then died running index 2 at t=290: index 0's
# output was lost with it and ran again on executor 1; index 1 had a speculative copy on
# executor 1 (launched before the original finished, killed when it did).
TASKS = conform("tasks", [
    task(1, 0, 0, "0", "SUCCESS", 100, 200),
    task(5, 0, 1, "1", "SUCCESS", 300, 400),
    task(2, 1, 0, "0", "SUCCESS", 100, 250),
    task(3, 1, 1, "1", "KILLED", 200, 250, speculative=True),
    task(4, 2, 0, "0", "FAILED", 100, 280, error=LOST),
    task(6, 2, 1, "1", "SUCCESS", 300, 380),
])
EXECUTORS = conform("executors", [
    dict(executor_id="0", host="127.0.0.1", remove_ms=290, is_active=False,
         remove_reason="worker lost: 127.0.0.1:44521 got disassociated"),
    dict(executor_id="1", host="127.0.0.1", is_active=True),
    dict(executor_id="driver", host="127.0.0.1", is_active=True)])


def test_a_finished_attempt_run_again_after_it_finished_is_resubmitted_a_speculative_one_not():
    assert resubmitted(TASKS).tolist() == [True, False, False, False, False, False]
    assert not resubmitted(TASKS.iloc[:0]).any()


def test_spark_counting_re_runs_as_failures_is_not_taken_for_evicted_tasks():
    # Spark's counters: 4 complete + 1 failed + 1 killed + 1 Resubmitted (counted as failed)
    assert resubmission_adjusted({(0, 0): (6, 7)}, TASKS) == {}
    # more missing than re-runs explain: still partial, by what is really missing
    assert resubmission_adjusted({(0, 0): (6, 8)}, TASKS) == {(0, 0): (6, 7)}
    assert resubmission_adjusted({}, TASKS) == {}


def test_the_lost_executor_is_named_with_sparks_reason_and_what_it_cost():
    [line] = lost_executor_warnings(EXECUTORS, TASKS, 0, 1000)
    assert line == ("executor 0 (127.0.0.1) was lost 0.3 s into the run (worker lost: "
                    "127.0.0.1:44521 got disassociated): 1 task attempt running on it failed "
                    "(ExecutorLostFailure); 1 finished shuffle-map attempt ran again elsewhere "
                    "(its output was lost with it); all 2 attempts it finished are kept in the "
                    "report")


def test_the_reason_comes_from_the_failure_when_spark_gave_none():
    executors = EXECUTORS.drop(columns=["remove_reason"])
    [line] = lost_executor_warnings(executors, TASKS, 0, 1000)
    assert "(worker lost: 127.0.0.1:44521 got disassociated)" in line


def test_executors_released_on_purpose_or_outside_the_window_are_not_lost():
    released = EXECUTORS.assign(remove_reason=["Executor killed by driver.", None, None])
    untouched = TASKS[TASKS["error"] == ""]
    assert lost_executor_warnings(released, untouched, 0, 1000) == []   # dynamic allocation
    assert lost_executor_warnings(EXECUTORS, untouched, 300, 1000) == []  # before the window
    assert lost_executor_warnings(EXECUTORS.iloc[:0], TASKS.iloc[:0], 0, 1000) == []
    # named by a failure alone (its removal not read): still lost
    [line] = lost_executor_warnings(EXECUTORS.iloc[1:], TASKS, 0, 1000)
    assert line.startswith("executor 0 was lost (worker lost: ")
