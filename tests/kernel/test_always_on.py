"""Always-on measuring and finishing after the cell, in one real kernel (jupyter_client) on a
real local[2] Spark: what a notebook user sees on the wire, and the runs that get stored.
Behaviour only, never time: the "next cell starts while the previous one is finishing" cases
are made deterministic by the test-only gate file that holds the finisher."""
from __future__ import annotations

import re

import pytest
from conftest import collecting_id, is_report

pytestmark = pytest.mark.own_process

QUERY = ("spark.range(0, 4000, 1, 4).selectExpr('id % 7 AS k')"
         ".groupBy('k').count().orderBy('k').collect()")


def outputs(cell) -> list[str]:
    return [m["msg_type"] for m in cell.messages
            if m["msg_type"] in ("stream", "display_data", "update_display_data",
                                 "execute_result", "error")]


def stored_ids(lk) -> list[str]:
    return lk.value("[r['run_id'] for r in __import__('jupyter_perf').store.default_store()"
                    ".list(limit=1000)]")


def run_summary(lk, expr: str = "jp.last_run()") -> dict:
    return lk.value(f"(lambda r: dict(run_id=r.run_id, status=r.status, error=r.error, "
                    f"jobs=sorted(int(j) for j in r.jobs['job_id']), "
                    f"stages=sorted(int(s) for s in r.stages['stage_id']), "
                    f"start=r.start_ms, end=r.end_ms, always_on=bool(r.extra.get('always_on')), "
                    f"listener=sorted(int(s) for s in r.listener_stages['stageId']) "
                    f"if r.listener_stages is not None else [], "
                    f"cpu_last=float(r.host_cpu['time_ms'].max()) if len(r.host_cpu) else None, "
                    f"vs_rest=_jp_vs_rest(r)))({expr})")


def assert_equal_to_rest(summary: dict) -> None:
    assert summary["vs_rest"], summary
    for stage, tasks, rest_tasks, run_ms, rest_ms, shuffle, rest_shuffle in summary["vs_rest"]:
        assert (tasks, run_ms, shuffle) == (rest_tasks, rest_ms, rest_shuffle), stage


def test_on_a_cell_without_spark_jobs_shows_nothing_and_stores_nothing(lk):
    on = lk("%perfmeasure on")
    assert on.reply["content"]["status"] == "ok"
    before = stored_ids(lk)
    cell = lk("x = 41 + 1\nprint('plain')\nx")
    assert outputs(cell) == ["stream", "execute_result"], cell.messages
    assert cell.stream("stdout") == "plain\n"
    assert cell.of_type("execute_result")[0]["content"]["data"]["text/plain"] == "42"
    assert stored_ids(lk) == before


def test_on_a_spark_cell_shows_its_result_then_the_report_in_place(lk):
    lk.close_gate()                         # the finish waits until the cell is over
    cell = lk(f"print('before')\nj0 = _jp_jobs()\nrows = {QUERY}\nj1 = _jp_jobs()\nlen(rows)")
    assert cell.reply["content"]["status"] == "ok"
    assert cell.stream("stdout") == "before\n"
    assert cell.of_type("execute_result")[0]["content"]["data"]["text/plain"] == "7"
    display_id = collecting_id(cell)
    assert display_id, cell.messages        # one line says the run is being collected
    assert not any(is_report(m) for m in cell.messages)
    idle_at = len(lk.log)                   # the cell's idle status is the last one seen
    lk.open_gate()
    report = lk.report_for(display_id)
    # the report replaced "collecting…" while the kernel stayed idle, after the reply
    between = lk.log[idle_at:lk.log.index(report)]
    assert not [m for m in between if m["msg_type"] == "status"], between
    assert report["header"]["date"] > cell.reply["header"]["date"]
    run = run_summary(lk)
    assert run["always_on"] and run["status"] == "ok"
    j0, j1 = lk.value("(j0, j1)")
    assert run["jobs"] == list(range(j0, j1))
    assert set(run["listener"]) <= set(run["stages"])
    assert_equal_to_rest(run)
    assert run["run_id"] in stored_ids(lk)


def test_a_failing_cell_keeps_its_traceback_exactly_and_its_run(lk):
    source = ("f0 = _jp_jobs()\nspark.range(0, 100, 1, 2).count()\ndef inner():\n"
              "    raise ValueError('boom')\ninner()")
    lk("%perfmeasure off")
    plain = lk(source)
    lk("%perfmeasure on")
    measured = lk(source)

    def shown(cell):
        return re.sub(r"Cell In\[\d+\]", "Cell In[N]", cell.traceback())
    assert measured.reply["content"]["status"] == "error"
    assert measured.reply["content"]["ename"] == "ValueError"
    assert shown(measured) == shown(plain)
    assert "jupyter_perf" not in shown(measured)
    display_id = collecting_id(measured)
    assert display_id
    lk.report_for(display_id)
    run = run_summary(lk)
    assert run["status"] == "failed" and "ValueError: boom" in run["error"]
    assert run["jobs"] == list(range(lk.value("f0"), lk.value("_jp_jobs()")))


def test_a_perfmeasure_cell_under_always_on_is_measured_once(lk):
    before = stored_ids(lk)
    cell = lk(f"%%perfmeasure -o measured_once\nrows = {QUERY}")
    assert cell.reply["content"]["status"] == "ok"
    display_id = collecting_id(cell)
    assert display_id
    lk.report_for(display_id)
    after = stored_ids(lk)
    assert len(after) == len(before) + 1
    run = run_summary(lk, "measured_once")    # -o NAME: bound before the next cell runs
    assert not run["always_on"] and run["run_id"] in after


def test_a_bare_name_bound_by_o_is_the_run_not_the_run_automagic(lk):
    """`%%perfmeasure -o run` then a cell that is just `run` (the quickstart notebook does this):
    IPython transforms a cell before its pre-run event, and would make `run` the %run automagic
    while the name is not bound yet; the cell waits for the binding first. The finish is held by
    the gate until the second cell has been sent, so the name cannot be bound in time by luck."""
    lk.close_gate()
    first = lk(f"%%perfmeasure -o run\nrows = {QUERY}")
    assert first.reply["content"]["status"] == "ok"
    msg_id = lk.send("run")                  # sent while the run is still held back
    lk.open_gate()
    second = lk.finish(msg_id)
    assert second.reply["content"]["status"] == "ok", second.reply["content"]
    shown = [m["content"]["data"]["text/plain"] for m in second.messages
             if m["msg_type"] == "execute_result"]
    run_id = lk.value("run.run_id")
    assert len(shown) == 1 and run_id in shown[0], shown


def test_the_next_cell_starts_while_the_previous_one_finishes_without_mixing(lk):
    lk.close_gate()
    a = lk(f"a0 = _jp_jobs()\nrows = {QUERY}\na1 = _jp_jobs()")
    b = lk(f"%%perfmeasure\nb0 = _jp_jobs()\nrows = {QUERY}\nrows = {QUERY}\n"
           "b1 = _jp_jobs()")
    # both cells ran while the first one's run was still held back by the gate
    lk("from jupyter_perf.kernel.finishing import finisher\n_jp_pending = finisher().pending()")
    pending = lk.value("[p.run_id for p in _jp_pending]")
    assert len(pending) == 2
    ids = [collecting_id(a), collecting_id(b)]
    assert all(ids)
    lk.open_gate()
    for display_id in ids:
        lk.report_for(display_id)
    run_a = run_summary(lk, "_jp_pending[0].result")
    run_b = run_summary(lk, "_jp_pending[1].result")
    assert [run_a["run_id"], run_b["run_id"]] == pending
    assert set(pending) <= set(stored_ids(lk))
    (a0, a1), (b0, b1) = lk.value("(a0, a1)"), lk.value("(b0, b1)")
    assert run_a["jobs"] == list(range(a0, a1)) and run_b["jobs"] == list(range(b0, b1))
    assert not set(run_a["stages"]) & set(run_b["stages"])
    assert set(run_a["listener"]) <= set(run_a["stages"]) and run_a["listener"]
    assert set(run_b["listener"]) <= set(run_b["stages"]) and run_b["listener"]
    # A's window ended before B's began, and none of A's samples is from B's time
    assert run_a["end"] <= run_b["start"]
    assert run_a["cpu_last"] is None or run_a["cpu_last"] <= run_b["start"]
    assert_equal_to_rest(run_a)
    assert_equal_to_rest(run_b)


def test_an_interrupt_while_a_run_finishes_loses_nothing(lk):
    lk.close_gate()
    cell = lk(f"c0 = _jp_jobs()\nrows = {QUERY}\nc1 = _jp_jobs()")
    display_id = collecting_id(cell)
    assert display_id
    waiting = lk.send("print('waiting', flush=True)\nr = jp.last_run()")   # waits for the finish
    lk.wait_for(lambda m: m["parent_header"].get("msg_id") == waiting
                and m["msg_type"] == "stream")
    lk.km.interrupt_kernel()
    interrupted = lk.finish(waiting)
    assert interrupted.reply["content"]["status"] == "error"
    assert interrupted.reply["content"]["ename"] == "KeyboardInterrupt"
    lk.open_gate()
    lk.report_for(display_id)
    run = run_summary(lk)
    assert run["jobs"] == list(range(*lk.value("(c0, c1)")))
    assert run["status"] == "ok" and run["run_id"] in stored_ids(lk)


def test_off_stops_measuring(lk):
    off = lk("%perfmeasure off")
    assert off.reply["content"]["status"] == "ok"
    before = stored_ids(lk)
    cell = lk(f"len({QUERY})")
    assert outputs(cell) == ["execute_result"], cell.messages
    assert stored_ids(lk) == before

def test_a_cell_failing_before_any_job_says_so_in_one_quiet_line(lk):
    """Issue W: a measured cell that raises before its first Spark job (a missing table) shows
    the user's exception and, under the cell, one line that does not read as the tool's
    failure."""
    lk("%perfmeasure off")
    cell = lk("%%perfmeasure\nspark.table('no_such_table_w').count()\n")
    assert cell.reply["content"]["status"] == "error"
    assert cell.reply["content"]["ename"] == "AnalysisException"
    display_id = collecting_id(cell)
    assert display_id
    line = lk.wait_for(lambda m: m["msg_type"] == "update_display_data"
                       and m["content"].get("transient", {}).get("display_id") == display_id)
    text = line["content"]["data"]["text/plain"]
    assert text == ("perfmeasure: the cell raised AnalysisException before any Spark job ran — "
                    "nothing to measure")
    lk("import jupyter_perf.kernel.handoff as _h; _h.wait_pending()")
    run = run_summary(lk)
    assert run["status"] == "failed" and run["jobs"] == []



REGEX = ("spark.range(0, 4_000_000, 1, 4).selectExpr(\"concat('abc', cast(id AS string), 'xyz')"
         " AS s\").where(\"s rlike '^a.*(1|2)3+x'\").count()")


def profile_of_last_run(lk) -> dict:
    lk("import jupyter_perf.kernel.handoff as _h; _h.wait_pending()")
    return lk.value("(lambda r, p: dict(run_id=r.run_id, always_on=bool(r.extra.get('always_on')), "
                    "method=p['method'] if p else None, samples=p['samples'] if p else None, "
                    "warnings=[w for w in r.warnings if 'CPU profile' in w]))"
                    "(jp.last_run(), jp.analyze(jp.last_run()).summary()['profile'])")


def test_on_with_profile_samples_every_measured_cell_until_on_alone(lk):
    """`%perfmeasure on --profile`: each measured cell's CPU stacks are sampled as
    `%%perfmeasure --profile` samples them (here local[2]: async-profiler in the driver's
    JVM); `%perfmeasure on` again measures without them."""
    on = lk("%perfmeasure on --profile")
    assert on.stream("stdout").startswith("perfmeasure: always on") and "--profile" in \
        on.stream("stdout")
    for _ in range(2):                      # every cell, not just the first
        cell = lk(f"n = {REGEX}")
        lk.report_for(collecting_id(cell))
        prof = profile_of_last_run(lk)
        assert prof["always_on"] and prof["warnings"] == [], prof
        assert prof["method"] == "async-profiler" and prof["samples"] > 0, prof
    lk("%perfmeasure on")
    cell = lk(f"n = {REGEX}")
    lk.report_for(collecting_id(cell))
    plain = profile_of_last_run(lk)
    assert plain["always_on"] and plain["method"] is None and plain["run_id"] != prof["run_id"]


def test_a_kernel_shutdown_waits_for_the_pending_finish(lk):
    """Last: shuts the kernel down with a run still held back by the gate."""
    from jupyter_perf.store import RunStore

    lk("%perfmeasure on")
    lk.close_gate()
    cell = lk(f"rows = {QUERY}")
    assert collecting_id(cell)
    [pending] = lk.value("[p.run_id for p in finisher().pending()]")
    lk.km.shutdown_wait_time = 180
    lk.kc.shutdown()                             # the request; the kernel exits after atexit
    lk.open_gate()
    lk.km.finish_shutdown(waittime=180)
    store = RunStore(lk.home)
    assert pending in [r["run_id"] for r in store.list(limit=1000)]

