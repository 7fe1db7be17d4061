"""``collect/executors_lost.py`` on task and executor tables shaped as a real lost worker left
them (``test_standalone_cluster.py`` kills a real one): no JVM here."""
from __future__ import annotations

from jupyter_perf.collect.executors_lost import (
    lost_executor_warnings,
    memory_losses,
    resubmission_adjusted,
    resubmitted,
)
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


def test_an_executor_lost_to_memory_says_so_with_its_last_peaks():
    """Issue V6: Spark's exit code 52 (OutOfMemoryError) or a SIGKILL/container memory kill
    names memory as the cause, with the peaks Spark last heard from that executor."""
    oom = EXECUTORS.assign(
        remove_reason=["Command exited with code 52", None, None],
        peak_jvm_heap_bytes=[1000 << 20, 300 << 20, 200 << 20],
        jvm_heap_limit_bytes=[1024 << 20, 1024 << 20, 1024 << 20],
        peak_process_rss_bytes=[1300 << 20, None, None])
    [line] = lost_executor_warnings(oom, TASKS, 0, 1000)
    assert line.startswith("executor 0 (127.0.0.1) was lost 0.3 s into the run (Command exited "
                           "with code 52): out of memory: its JVM heap was exhausted")
    assert ("its last reported peaks (measured, before the loss): JVM heap 1000.0 MiB of its "
            "1.0 GiB limit, process RSS 1.3 GiB;") in line
    # the reason only in the failed attempt's text (a container kill on YARN)
    yarn = ("ExecutorLostFailure (executor 0 exited caused by one of the running tasks) Reason: "
            "Container killed by YARN for exceeding physical memory limits. 4.5 GB of 4.4 GB "
            "physical memory used.")
    tasks = TASKS.assign(error=[yarn if e else "" for e in TASKS["error"]])
    [line] = lost_executor_warnings(EXECUTORS.iloc[1:], tasks, 0, 1000)
    assert "killed for memory" in line and "last reported peaks" not in line
    # a lost worker is not a memory problem
    [line] = lost_executor_warnings(EXECUTORS, TASKS, 0, 1000)
    assert "memory" not in line


def test_the_executors_lost_to_memory_are_recorded_for_the_analysis():
    """``run.extra["lost_to_memory"]``: the same executors the warnings name as lost to memory,
    with the kind and exit code the verdict's lead line says; a lost worker is not one."""
    oom = EXECUTORS.assign(remove_reason=["Command exited with code 52", None, None])
    assert memory_losses(oom, TASKS, 0, 1000) == [
        {"executor_id": "0", "host": "127.0.0.1", "remove_ms": 290.0, "memory": "heap",
         "exit_code": 52, "reason": "Command exited with code 52"}]
    killed = EXECUTORS.assign(remove_reason=["Command exited with code 137", None, None])
    [rec] = memory_losses(killed, TASKS, 0, 1000)
    assert (rec["memory"], rec["exit_code"]) == ("killed", 137)
    assert memory_losses(EXECUTORS, TASKS, 0, 1000) == []


def test_an_executor_its_own_task_killed_is_named_though_removed_after_the_window():
    """Spark 4: the task fails with java.lang.OutOfMemoryError (not ExecutorLostFailure) and
    the executor, exiting with code 52, is removed just after the job failed and the cell
    ended; an executor removed after the window with none of its attempts failing is not."""
    oom = "java.lang.OutOfMemoryError: Java heap space"
    tasks = conform("tasks", [task(1, 0, 0, "0", "SUCCESS", 100, 200),
                              task(2, 1, 0, "0", "FAILED", 100, 280, error=oom)])
    executors = EXECUTORS.assign(remove_reason=["Command exited with code 52", None, None],
                                 remove_ms=[1300, None, None])
    [line] = lost_executor_warnings(executors, tasks, 0, 1000)
    assert line.startswith("executor 0 (127.0.0.1) was lost 1.3 s into the run (Command exited "
                           "with code 52): out of memory: its JVM heap was exhausted")
    fine = tasks.assign(status="SUCCESS", error="")
    assert lost_executor_warnings(executors, fine, 0, 1000) == []
