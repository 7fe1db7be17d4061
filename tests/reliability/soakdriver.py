"""The soak: one real Jupyter kernel (ipykernel through jupyter_client), one Spark session
(``local[2]``), many cells — measured and plain, several query shapes, failing cells,
interrupts, Python UDFs — and what must hold after each and at the end:

* every stored run's stage aggregates equal Spark's own REST API
  (``/applications/{app}/stages/{id}/{attempt}``), read right after the cell and again at
  the end (late task ends of cancelled stages would show there);
* the kernel process's RSS, threads and open files stay bounded (sampled after each cycle
  of the cell pattern; growth counted from the end of the first cycle, when every kind of
  cell has run once);
* ``<store>/logs`` stays bounded: 30 logs of finished JVMs planted before the kernel starts
  are pruned to ``jvm.KEEP_LOGS`` when its JVM starts, and the running JVM's log is cut past
  its size limit (set small here, ``JUPYTER_PERF_LOG_MAX_BYTES``, so the soak cuts it).

Used by ``tests/reliability/test_soak.py`` (the CI profile, ``JP_SOAK_CELLS``, default
:data:`CI_CELLS`) and ``benchmarks/soak.py`` (the full profile, ≥ 300 cells). Both print
:func:`format_figures`.
"""
from __future__ import annotations

import json
import math
import os
import queue
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable

CI_CELLS = 60
FULL_CELLS = 320
#: The running JVM's log is cut past this size in the soak (the product's default is 8 MiB;
#: a soak writes far less, so a small limit makes it cut for real).
SOAK_LOG_MAX_BYTES = 16 * 1024
#: Fake logs of finished JVMs planted before the kernel starts, and their size.
PLANTED_LOGS = 30
PLANTED_LOG_BYTES = 256 * 1024
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
SLOW_TASKS = 6
#: What jp.spark_session prints when it starts (or finds no) session: once, in the setup.
STARTED = re.compile(r"^Spark \d+\.\d+\.\d+ started in", re.MULTILINE)

SETUP = """\
%load_ext jupyter_perf
import json, os
import jupyter_perf as jp
from pyspark.sql import functions as F
spark = jp.spark_session(master="local[2]", **{"spark.sql.shuffle.partitions": "4",
                                                "spark.ui.port": "0"})
sc = spark.sparkContext
plus_one = F.udf(lambda x: x + 1, "long")
def _broken(x):
    raise ValueError("soak: a failing UDF")
broken_udf = F.udf(_broken, "long")
print("SOAK " + json.dumps({"pid": os.getpid(), "ui": sc.uiWebUrl, "app": sc.applicationId,
                            "spark": spark.version}))
"""

QUERIES = {
    "groupby": ('spark.range(0, 200_000, 1, 4).selectExpr("id % 97 AS k", "id AS v")'
                '.groupBy("k").agg(F.sum("v"), F.count("*")).collect()'),
    "join": ('a = spark.range(0, 60_000, 1, 4).selectExpr("id % 1000 AS k", "id AS v")\n'
             'b = spark.range(0, 1000, 1, 2).selectExpr("id AS k", "id * 2 AS w")\n'
             'a.join(b.hint("merge"), "k").agg(F.sum("w")).collect()'),
    "sort": ('spark.range(0, 100_000, 1, 4).selectExpr("(id * 7919) % 100003 AS x")'
             '.orderBy("x").write.format("noop").mode("overwrite").save()'),
    "rdd": "sc.parallelize(range(20_000), 4).map(lambda x: x * x).reduce(lambda a, b: a + b)",
    "udf": ('spark.range(0, 20_000, 1, 2).select(plus_one("id").alias("y"))'
            '.agg(F.sum("y")).collect()'),
    "sql": ('spark.sql("SELECT k, count(*) AS n FROM (SELECT id % 13 AS k '
            'FROM range(0, 100000, 1, 4)) GROUP BY k ORDER BY k").collect()'),
    # 6 tasks sleeping 1.5 s on 2 slots: ~4.5 s, interrupted while it runs (its job is the
    # one with SLOW_TASKS tasks: no other query of the soak has as many)
    "slow": ('spark.range(0, 6, 1, 6).selectExpr("java_method(\'java.lang.Thread\', \'sleep\', '
             'cast(1500 as bigint)) AS s").collect()'),
    "bad_column": 'spark.range(10).select("no_such_column").collect()',
    "error_after_job": ('spark.range(0, 10_000, 1, 2).count()\n'
                        'raise ValueError("soak: a Python error after a Spark job")'),
    "failing_udf": 'spark.range(0, 100, 1, 2).select(broken_udf("id")).collect()',
}


@dataclass(frozen=True)
class Kind:
    name: str
    query: str                  # key of QUERIES, or Python code for a plain cell
    measured: bool = True
    report: bool = False        # show the report (else --no-report)
    ename: str = ""             # the error the cell must end with ('' = ok)
    interrupt: bool = False
    stored: str = ""            # the stored run's status ('' = none expected for plain cells)


#: One cycle of the soak; cell i runs PATTERN[i % len(PATTERN)].
PATTERN: tuple[Kind, ...] = (
    Kind("groupby+report", "groupby", report=True, stored="ok"),
    Kind("plain-python", "x = sum(range(1000)); x", measured=False),
    Kind("join", "join", stored="ok"),
    Kind("plain-spark", QUERIES["groupby"], measured=False),
    Kind("sort", "sort", stored="ok"),
    Kind("rdd", "rdd", stored="ok"),
    Kind("plain-python", "y = [i * i for i in range(5000)]; len(y)", measured=False),
    Kind("udf", "udf", stored="ok"),
    Kind("sql", "sql", stored="ok"),
    Kind("error-after-job", "error_after_job", ename="ValueError", stored="failed"),
    Kind("plain-sql", QUERIES["sql"], measured=False),
    Kind("groupby", "groupby", stored="ok"),
    Kind("bad-column", "bad_column", ename="AnalysisException", stored="failed"),
    Kind("interrupt", "slow", ename="KeyboardInterrupt", interrupt=True, stored="interrupted"),
    Kind("plain-rdd", QUERIES["rdd"], measured=False),
    Kind("failing-udf", "failing_udf", ename="PythonException", stored="failed"),
    Kind("join+report", "join", report=True, stored="ok"),
    Kind("plain-bad-column", QUERIES["bad_column"], measured=False, ename="AnalysisException"),
    Kind("plain-interrupt", QUERIES["slow"], measured=False, ename="KeyboardInterrupt",
         interrupt=True),
    Kind("sql+report", "sql", report=True, stored="ok"),
)


def cell_source(i: int, kind: Kind) -> str:
    if not kind.measured:
        return kind.query
    flags = "" if kind.report else " --no-report"
    return f"%%perfmeasure{flags} --label {label_of(i, kind)}\n{QUERIES[kind.query]}\n"


def label_of(i: int, kind: Kind) -> str:
    return f"soak-{i:04d}-{kind.name.replace('+', '-')}"


# -- Spark's REST API, read from the test process -------------------------------------------

#: (our stage-table column, Spark's REST field, factor from Spark's unit to ours)
STAGE_FIELDS = (
    ("num_tasks", "numTasks", 1), ("failed_tasks", "numFailedTasks", 1),
    ("killed_tasks", "numKilledTasks", 1),
    ("executor_run_time_ms", "executorRunTime", 1),
    ("executor_cpu_time_ms", "executorCpuTime", 1e-6),          # ns -> ms
    ("jvm_gc_time_ms", "jvmGcTime", 1),
    ("shuffle_fetch_wait_ms", "shuffleFetchWaitTime", 1),
    ("shuffle_write_time_ms", "shuffleWriteTime", 1e-6),        # ns -> ms
    ("input_bytes", "inputBytes", 1), ("output_bytes", "outputBytes", 1),
    ("shuffle_read_bytes", "shuffleReadBytes", 1),
    ("shuffle_write_bytes", "shuffleWriteBytes", 1),
    ("memory_spilled_bytes", "memoryBytesSpilled", 1),
    ("disk_spilled_bytes", "diskBytesSpilled", 1),
)


class SparkRest:
    def __init__(self, ui: str, app: str):
        import requests

        self.session = requests.Session()
        self.base = f"{ui.rstrip('/')}/api/v1/applications/{app}"

    def get(self, path: str, **params) -> Any:
        answer = self.session.get(self.base + path, params=params, timeout=60)
        if answer.status_code == 404:
            return None
        answer.raise_for_status()
        return answer.json()

    def stage(self, stage_id: int, attempt: int) -> dict | None:
        return self.get(f"/stages/{stage_id}/{attempt}", details="false")

    def all_stages(self) -> dict[tuple[int, int], dict]:
        return {(s["stageId"], s["attemptId"]): s
                for s in self.get("/stages", details="false") or []}

    def running_jobs(self, num_tasks: int | None = None) -> list[int]:
        return [j["jobId"] for j in self.get("/jobs", status="running") or []
                if num_tasks is None or j.get("numTasks") == num_tasks]

    def max_job_id(self) -> int:
        return max([j["jobId"] for j in self.get("/jobs") or []], default=-1)


def stage_mismatches(run, rest_stage: Callable[[int, int], dict | None],
                     where: str) -> tuple[int, int, list[str]]:
    """Compare every stage attempt of ``run`` with Spark's REST answer for it: (compared,
    no longer retained by Spark, one line per differing field)."""
    table = run.stage_table()
    compared, missing, diffs = 0, 0, []
    for _, row in table.iterrows():
        sid, att = int(row["stage_id"]), int(row["attempt"])
        theirs = rest_stage(sid, att)
        if theirs is None:
            missing += 1
            continue
        compared += 1

        def differs(ours_value, their_value, factor) -> bool:
            ours_value = 0.0 if ours_value is None or (isinstance(ours_value, float)
                                                       and math.isnan(ours_value)) else ours_value
            tol = 1e-3 if factor != 1 else 1e-9
            return abs(float(ours_value) - float(their_value) * factor) > tol

        for ours, theirs_key, factor in STAGE_FIELDS:
            if differs(row.get(ours), theirs.get(theirs_key, 0), factor):
                diffs.append(f"{where} stage {sid}.{att} {ours}={row.get(ours)} "
                             f"REST {theirs_key}={theirs.get(theirs_key)}")
        attempts = (theirs["numCompleteTasks"] + theirs["numFailedTasks"]
                    + theirs["numKilledTasks"])
        if differs(row.get("task_attempts"), attempts, 1):
            diffs.append(f"{where} stage {sid}.{att} task_attempts={row.get('task_attempts')} "
                         f"REST complete+failed+killed={attempts}")
        if str(row.get("status")) != theirs["status"]:
            diffs.append(f"{where} stage {sid}.{att} status={row.get('status')} "
                         f"REST status={theirs['status']}")
        if diffs and diffs[-1].startswith(f"{where} stage {sid}.{att} "):
            t = run.tasks
            mine = t[(t["stage_id"] == sid) & (t["stage_attempt"] == att)]["status"]
            diffs.append(f"{where} stage {sid}.{att}: the run's task statuses "
                         f"{ {str(k): int(v) for k, v in mine.value_counts().items()} }, REST numActiveTasks="
                         f"{theirs.get('numActiveTasks')} status={theirs.get('status')}; "
                         f"run warnings {run.warnings}")
    return compared, missing, diffs


# -- the kernel process ---------------------------------------------------------------------

def process_figures(pid: int) -> dict[str, Any]:
    """The kernel's RSS, threads and open files; its child processes (the JVM, and the JVM's
    Python workers) and the JVM's RSS."""
    import psutil

    proc = psutil.Process(pid)
    children = proc.children(recursive=True)
    java = [c for c in children if _name(c) == "java"]
    return {"rss": proc.memory_info().rss, "threads": proc.num_threads(),
            "fds": proc.num_fds(), "children": len(children),
            "jvm_rss": sum(_rss(c) for c in java)}


def _name(proc) -> str:
    try:
        return proc.name()
    except Exception:
        return ""


def _rss(proc) -> int:
    try:
        return proc.memory_info().rss
    except Exception:
        return 0


# -- the driver -----------------------------------------------------------------------------

@dataclass
class CellOutcome:
    index: int
    kind: str
    status: str
    ename: str
    seconds: float
    text: str = ""


@dataclass
class Soak:
    """What the soak saw; :func:`problems` says what broke a rule."""
    cells: int
    home: str
    setup: dict[str, Any] = field(default_factory=dict)
    outcomes: list[CellOutcome] = field(default_factory=list)
    runs: dict[str, str] = field(default_factory=dict)          # label -> run id
    run_status: dict[str, str] = field(default_factory=dict)    # label -> stored status
    stage_attempts: int = 0              # compared right after their cell
    stage_attempts_end: int = 0          # compared again at the end
    evicted_end: int = 0                 # no longer kept by Spark at the end
    mismatches: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)           # a cell that did not behave
    samples: list[dict[str, Any]] = field(default_factory=list)
    warm_index: int = 0
    logs_before: dict[str, Any] = field(default_factory=dict)
    logs_after_start: dict[str, Any] = field(default_factory=dict)
    logs_end: dict[str, Any] = field(default_factory=dict)
    log_sizes_seen: list[int] = field(default_factory=list)     # the live log, per cell
    seconds: float = 0.0

    @property
    def warm(self) -> dict[str, Any]:
        return next(s for s in self.samples if s["cell"] == self.warm_index)

    @property
    def end(self) -> dict[str, Any]:
        return self.samples[-1]

    def peak(self, key: str) -> int:
        return max(s[key] for s in self.samples if s["cell"] >= self.warm_index)


def plant_logs(folder: str) -> list[str]:
    """Logs of finished JVMs (a pid no process has) as an earlier week of kernels left them."""
    os.makedirs(folder, exist_ok=True)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    base = time.time() - 7 * 86400
    paths = []
    for i in range(PLANTED_LOGS):
        stamp = base + 3600 * i
        name = time.strftime("spark-%Y%m%d-%H%M%S", time.localtime(stamp)) + f"-{child.pid}.log"
        path = os.path.join(folder, name)
        with open(path, "wb") as fh:
            fh.write(b"old log line\n" * (PLANTED_LOG_BYTES // 13))
        os.utime(path, (stamp, stamp))
        paths.append(path)
    return paths


def logs_figures(folder: str) -> dict[str, Any]:
    names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    sizes = {n: os.path.getsize(os.path.join(folder, n)) for n in names}
    return {"files": len(names), "bytes": sum(sizes.values()), "sizes": sizes}


class Kernel:
    """One ipykernel and its client; ``execute`` runs a cell and may interrupt it."""

    def __init__(self, env: dict[str, str], cwd: str):
        from jupyter_client.manager import start_new_kernel

        self.km, self.kc = start_new_kernel(kernel_name="python3", env=env, cwd=cwd,
                                            startup_timeout=120)

    def execute(self, code: str, timeout: float = 600,
                interrupt_when: Callable[[], bool] | None = None) -> tuple[dict, list[dict]]:
        msg_id = self.kc.execute(code, allow_stdin=False)
        messages: list[dict] = []
        deadline = time.monotonic() + timeout
        interrupted = False
        while True:
            if interrupt_when is not None and not interrupted and interrupt_when():
                self.km.interrupt_kernel()
                interrupted = True
            if time.monotonic() > deadline:
                raise TimeoutError(f"cell did not finish in {timeout} s: {code[:80]!r}")
            try:
                msg = self.kc.get_iopub_msg(timeout=0.2)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            messages.append(msg)
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        while True:
            reply = self.kc.get_shell_msg(timeout=max(1.0, deadline - time.monotonic()))
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply, messages

    def stop(self) -> None:
        try:
            self.execute("spark.stop()", timeout=120)
        except Exception:
            pass
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=False)


def last_line(text: str) -> str:
    """The last non-blank line of a cell's output (for one-line failure messages)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def text_of(messages: list[dict]) -> str:
    out = []
    for m in messages:
        c = m["content"]
        if m["msg_type"] == "stream":
            out.append(c["text"])
        elif m["msg_type"] == "error":
            out.append(ANSI.sub("", "\n".join(c["traceback"][-3:])))
    return "".join(out)


def run_soak(cells: int = CI_CELLS, home: str | None = None,
             say: Callable[[str], None] = print) -> Soak:
    """Drive one kernel through ``cells`` cells of :data:`PATTERN`; never raises for a cell
    that misbehaves (see ``Soak.failures``), only when the kernel cannot be driven at all."""
    from jupyter_perf.collect import jvm
    from jupyter_perf.store import RunStore

    home = home or tempfile.mkdtemp(prefix="jp-soak-")
    soak = Soak(cells=cells, home=home)
    logs = os.path.join(home, jvm.LOG_DIR)
    plant_logs(logs)
    soak.logs_before = logs_figures(logs)
    cwd = tempfile.mkdtemp(prefix="jp-soak-cwd-")
    env = dict(os.environ, JUPYTER_PERF_HOME=home, PYSPARK_PYTHON=sys.executable,
               PYSPARK_SUBMIT_ARGS="--conf spark.ui.port=0 pyspark-shell")
    env[jvm.LOG_MAX_ENV] = str(SOAK_LOG_MAX_BYTES)
    started = time.monotonic()
    kernel = Kernel(env, cwd)
    try:
        reply, messages = kernel.execute(SETUP, timeout=900)
        text = text_of(messages)
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"the soak's setup cell failed: {text[-2000:]}")
        soak.setup = json.loads(text.split("SOAK ", 1)[1].splitlines()[0])
        soak.logs_after_start = logs_figures(logs)
        rest = SparkRest(soak.setup["ui"], soak.setup["app"])
        store = RunStore(home)
        pid = soak.setup["pid"]
        soak.warm_index = min(len(PATTERN), cells) - 1
        soak.samples.append({"cell": -1, **process_figures(pid)})
        for i in range(cells):
            kind = PATTERN[i % len(PATTERN)]
            _one_cell(i, kind, kernel, rest, store, soak)
            soak.log_sizes_seen.append(sum(logs_figures(logs)["sizes"].get(n, 0)
                                           for n in _live_log_names(logs, pid)))
            if i == soak.warm_index or (i + 1) % len(PATTERN) == 0 or i == cells - 1:
                soak.samples.append({"cell": i, **process_figures(pid)})
                s = soak.samples[-1]
                say(f"soak: cell {i + 1}/{cells} {time.monotonic() - started:.0f} s: kernel RSS "
                    f"{s['rss'] / 2**20:.1f} MiB, {s['threads']} threads, {s['fds']} fds, "
                    f"{s['children']} child processes, JVM RSS {s['jvm_rss'] / 2**20:.0f} MiB; "
                    f"{len(soak.runs)} runs, {soak.stage_attempts} stage attempts compared "
                    f"with REST, {len(soak.mismatches)} differences, "
                    f"{len(soak.failures)} failures")
        _recheck_at_the_end(soak, rest, store)
        soak.logs_end = logs_figures(logs)
    finally:
        soak.seconds = time.monotonic() - started
        kernel.stop()
    return soak


def _live_log_names(folder: str, pid: int) -> list[str]:
    return [n for n in (os.listdir(folder) if os.path.isdir(folder) else [])
            if re.fullmatch(rf"spark-\d{{8}}-\d{{6}}-{pid}\.log(\.1)?", n)]


def _one_cell(i: int, kind: Kind, kernel: Kernel, rest: SparkRest, store, soak: Soak) -> None:
    code = cell_source(i, kind)
    when = None
    if kind.interrupt:
        # the job must be this cell's: wait until the previous interrupted job is gone
        deadline = time.monotonic() + 120
        while rest.running_jobs() and time.monotonic() < deadline:
            time.sleep(0.2)
        floor = rest.max_job_id()
        slow_enough = time.monotonic() + 300

        def when() -> bool:
            if time.monotonic() > slow_enough:
                return True
            return any(j > floor for j in rest.running_jobs(SLOW_TASKS))
    t0 = time.monotonic()
    reply, messages = kernel.execute(code, timeout=600, interrupt_when=when)
    content = reply["content"]
    outcome = CellOutcome(i, kind.name, content["status"], content.get("ename", ""),
                          time.monotonic() - t0, text_of(messages)[-600:])
    soak.outcomes.append(outcome)
    if STARTED.search(text_of(messages)):
        started = STARTED.search(text_of(messages))
        line = text_of(messages)[started.start():].splitlines()[0]
        soak.failures.append(f"cell {i} ({kind.name}) started a Spark session again (the "
                             f"kernel's own was not found): {line!r}")
    expected = ("error", kind.ename) if kind.ename else ("ok", "")
    if (outcome.status, outcome.ename) != expected:
        soak.failures.append(f"cell {i} ({kind.name}): {outcome.status} {outcome.ename}, "
                             f"expected {expected}: {last_line(outcome.text)}")
    if not kind.measured:
        return
    # the run is collected, analysed and stored after the cell returned (docs/report.md,
    # "Always on and finishing after the cell"): wait for it as a user's next cell would
    kernel.execute("from jupyter_perf.kernel.handoff import wait_pending as _jp_wait\n_jp_wait()",
                   timeout=600)
    label = label_of(i, kind)
    rows = [r for r in store.list(limit=5) if r["label"] == label]
    if kind.stored and len(rows) != 1:
        soak.failures.append(f"cell {i} ({kind.name}): {len(rows)} stored runs labelled "
                             f"{label}, expected 1: {last_line(outcome.text)}")
        return
    if not rows:
        return
    row = rows[0]
    soak.runs[label] = row["run_id"]
    soak.run_status[label] = row["status"]
    if kind.stored and row["status"] != kind.stored:
        soak.failures.append(f"cell {i} ({kind.name}): stored status {row['status']}, "
                             f"expected {kind.stored}")
    run = store.load(row["run_id"])
    compared, missing, diffs = stage_mismatches(run, rest.stage, label)
    soak.stage_attempts += compared
    soak.mismatches += diffs
    if missing:
        soak.mismatches.append(f"{label}: {missing} stage attempts unknown to Spark's REST "
                               "right after the cell")
    if kind.stored == "ok" and compared == 0:
        soak.failures.append(f"cell {i} ({kind.name}): the run has no stage attempts")


def _recheck_at_the_end(soak: Soak, rest: SparkRest, store) -> None:
    """Every run's stages once more, now that every cancelled task has ended."""
    deadline = time.monotonic() + 120
    while rest.running_jobs() and time.monotonic() < deadline:
        time.sleep(0.5)
    stages = rest.all_stages()
    for label, run_id in soak.runs.items():
        compared, missing, diffs = stage_mismatches(
            store.load(run_id), lambda s, a: stages.get((s, a)), f"{label} (at the end)")
        soak.stage_attempts_end += compared
        soak.evicted_end += missing
        soak.mismatches += diffs


# -- figures --------------------------------------------------------------------------------

def figures(soak: Soak) -> dict[str, Any]:
    warm, end = soak.warm, soak.end
    kinds: dict[str, int] = {}
    for o in soak.outcomes:
        kinds[o.kind] = kinds.get(o.kind, 0) + 1
    measured = [o for o in soak.outcomes if PATTERN[o.index % len(PATTERN)].measured]
    cut = any(n.endswith(".log.1") for n in soak.logs_end.get("sizes", {}))
    return {
        "cells": soak.cells, "seconds": round(soak.seconds, 1),
        "cell_seconds_median": round(sorted(o.seconds for o in soak.outcomes)[
            len(soak.outcomes) // 2], 2) if soak.outcomes else None,
        "kinds": kinds, "measured_cells": len(measured),
        "errors": sum(o.status == "error" for o in soak.outcomes),
        "interrupts": sum(o.ename == "KeyboardInterrupt" for o in soak.outcomes),
        "runs": len(soak.runs),
        "run_statuses": {s: list(soak.run_status.values()).count(s)
                         for s in sorted(set(soak.run_status.values()))},
        "stage_attempts_compared": soak.stage_attempts,
        "stage_attempts_compared_at_end": soak.stage_attempts_end,
        "stage_attempts_evicted_at_end": soak.evicted_end,
        "mismatches": len([m for m in soak.mismatches if " stage " in m and ": the run's" not in m]),
        "runs_differing": len({m.split(" ", 1)[0].rstrip(":") for m in soak.mismatches}),
        "failures": len(soak.failures),
        "warm_cell": soak.warm_index + 1,
        "rss_mib": [round(warm["rss"] / 2**20, 1), round(end["rss"] / 2**20, 1),
                    round(soak.peak("rss") / 2**20, 1)],
        "rss_growth_mib": round((end["rss"] - warm["rss"]) / 2**20, 1),
        "threads": [warm["threads"], end["threads"], soak.peak("threads")],
        "fds": [warm["fds"], end["fds"], soak.peak("fds")],
        "children": [warm["children"], end["children"], soak.peak("children")],
        "jvm_rss_mib": [round(warm["jvm_rss"] / 2**20), round(end["jvm_rss"] / 2**20),
                        round(soak.peak("jvm_rss") / 2**20)],
        "logs_before": [soak.logs_before.get("files"), soak.logs_before.get("bytes")],
        "logs_after_start": [soak.logs_after_start.get("files"),
                             soak.logs_after_start.get("bytes")],
        "logs_end": [soak.logs_end.get("files"), soak.logs_end.get("bytes")],
        "live_log_max_bytes": max(soak.log_sizes_seen, default=0),
        "live_log_cut": cut,
    }


def format_figures(f: dict[str, Any]) -> str:
    lines = [
        f"cells={f['cells']} seconds={f['seconds']} median_cell_s={f['cell_seconds_median']} "
        f"measured={f['measured_cells']} errors={f['errors']} interrupts={f['interrupts']}",
        f"runs={f['runs']} statuses={f['run_statuses']}",
        f"stage attempts compared with REST: after each cell {f['stage_attempts_compared']}, "
        f"again at the end {f['stage_attempts_compared_at_end']} "
        f"(evicted by then {f['stage_attempts_evicted_at_end']}); differing fields "
        f"{f['mismatches']} in {f['runs_differing']} runs; cells that misbehaved "
        f"{f['failures']}",
        f"kernel (after cell {f['warm_cell']} -> end, peak): RSS {f['rss_mib'][0]} -> "
        f"{f['rss_mib'][1]} MiB (growth {f['rss_growth_mib']} MiB, peak {f['rss_mib'][2]}), "
        f"threads {f['threads'][0]} -> {f['threads'][1]} (peak {f['threads'][2]}), "
        f"open fds {f['fds'][0]} -> {f['fds'][1]} (peak {f['fds'][2]}), "
        f"child processes {f['children'][0]} -> {f['children'][1]} (peak {f['children'][2]})",
        f"JVM RSS {f['jvm_rss_mib'][0]} -> {f['jvm_rss_mib'][1]} MiB (peak {f['jvm_rss_mib'][2]})",
        f"<store>/logs: before the kernel {f['logs_before'][0]} files {f['logs_before'][1]} B; "
        f"after its JVM started {f['logs_after_start'][0]} files {f['logs_after_start'][1]} B; "
        f"at the end {f['logs_end'][0]} files {f['logs_end'][1]} B; the running JVM's log "
        f"(+ its .1) at most {f['live_log_max_bytes']} B, cut: {f['live_log_cut']}",
        "kinds: " + ", ".join(f"{k} {n}" for k, n in f["kinds"].items()),
    ]
    return "\n".join(lines)


#: The bounds the soak asserts (docs/reliability.md, "Soak"): counts and memory, never time.
RSS_GROWTH_MIB = 64          # kernel RSS, end of the first cycle -> the last cell
THREADS_SLACK = 4            # kernel threads at the end <= after the first cycle + this
FDS_SLACK = 8                # kernel open files at the end <= after the first cycle + this
CHILDREN_MAX = 10            # the kernel's processes (JVM, its Python workers), at any sample


def problems(soak: Soak) -> list[str]:
    """What broke a rule, one line each (empty: the soak passed)."""
    from jupyter_perf.collect import jvm

    f = figures(soak)
    out = list(soak.failures) + list(soak.mismatches)
    if f["runs"] == 0 or f["stage_attempts_compared"] == 0:
        out.append("no run was compared with Spark's REST API")
    if f["rss_growth_mib"] > RSS_GROWTH_MIB:
        out.append(f"kernel RSS grew {f['rss_growth_mib']} MiB > {RSS_GROWTH_MIB} MiB")
    if f["threads"][1] > f["threads"][0] + THREADS_SLACK:
        out.append(f"kernel threads {f['threads'][0]} -> {f['threads'][1]}")
    if f["fds"][1] > f["fds"][0] + FDS_SLACK:
        out.append(f"kernel open files {f['fds'][0]} -> {f['fds'][1]}")
    if f["children"][2] > CHILDREN_MAX:
        out.append(f"kernel child processes peaked at {f['children'][2]}")
    # logs: the newest KEEP_LOGS finished logs, plus the running JVM's log and its .1
    limit = SOAK_LOG_MAX_BYTES
    if f["logs_after_start"][0] > jvm.KEEP_LOGS + 2:
        out.append(f"{f['logs_after_start'][0]} files in <store>/logs after the JVM started")
    if f["logs_end"][0] > jvm.KEEP_LOGS + 2:
        out.append(f"{f['logs_end'][0]} files in <store>/logs at the end")
    kept = jvm.KEEP_LOGS * PLANTED_LOG_BYTES
    if f["logs_end"][1] > kept + 4 * limit:
        out.append(f"<store>/logs holds {f['logs_end'][1]} B > {kept + 4 * limit}")
    if f["live_log_max_bytes"] > 4 * limit:
        out.append(f"the running JVM's log reached {f['live_log_max_bytes']} B (cut past {limit})")
    return out
