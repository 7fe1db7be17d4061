"""One long-lived real kernel (ipykernel through jupyter_client) with a real local[2] Spark
session, for the always-on and finish-after-the-cell tests. Every iopub message is kept in
arrival order, whichever cell it belongs to: the report of a cell that finishes after it
returned arrives while the kernel is idle, after the cell's own messages."""
from __future__ import annotations

import os
import sys
import time

import pytest
from jupyter_client.manager import start_new_kernel
from test_magic_kernel import Cell

REPORT_MIME_PREFIX = "application/vnd.jupyter-perf"


class LiveKernel:
    def __init__(self, km, kc, home: str, gate: str):
        self.km, self.kc, self.home, self.gate = km, kc, home, gate
        self.log: list[dict] = []            # every iopub message, in arrival order

    def _pump(self, until, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no such message from the kernel")
            try:
                msg = self.kc.get_iopub_msg(timeout=min(left, 5))
            except Exception:     # queue.Empty
                continue
            self.log.append(msg)
            if until(msg):
                return msg

    def send(self, code: str) -> str:
        return self.kc.execute(code, allow_stdin=False)

    def finish(self, msg_id: str, timeout: float = 600) -> Cell:
        """The messages and reply of the request ``msg_id`` (sent with :meth:`send`)."""
        def idle(m):
            return (m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "status"
                    and m["content"]["execution_state"] == "idle")
        if not any(idle(m) for m in self.log):
            self._pump(idle, timeout)
        while True:
            reply = self.kc.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        mine = [m for m in self.log if m["parent_header"].get("msg_id") == msg_id]
        return Cell(reply, mine, {})

    def __call__(self, code: str, timeout: float = 600) -> Cell:
        return self.finish(self.send(code), timeout)

    def wait_for(self, pred, timeout: float = 300) -> dict:
        """The first message (already seen or arriving) for which ``pred`` holds."""
        for m in self.log:
            if pred(m):
                return m
        return self._pump(pred, timeout)

    def report_for(self, display_id: str, timeout: float = 300) -> dict:
        return self.wait_for(lambda m: m["msg_type"] == "update_display_data"
                             and m["content"].get("transient", {}).get("display_id") == display_id
                             and is_report(m), timeout)

    def value(self, expr: str):
        """``expr`` evaluated in the kernel, through its repr."""
        import ast

        cell = self(f"print(repr({expr}))")
        assert cell.reply["content"]["status"] == "ok", cell.messages
        return ast.literal_eval(cell.stream("stdout").strip())

    def close_gate(self) -> None:
        open(self.gate, "w").close()

    def open_gate(self) -> None:
        if os.path.exists(self.gate):
            os.remove(self.gate)


def is_report(msg: dict) -> bool:
    return any(k.startswith(REPORT_MIME_PREFIX) for k in msg["content"].get("data", {}))


def collecting_id(cell: Cell) -> str | None:
    """The display id of the cell's "collecting…" output (None: the cell shows none)."""
    for m in cell.of_type("display_data") + cell.of_type("update_display_data"):
        if "collecting" in m["content"]["data"].get("text/plain", ""):
            return m["content"]["transient"]["display_id"]
    return None


#: In the kernel: a run's stage aggregates next to Spark's own REST /stages for the same
#: stage attempts, as [stage, num_tasks, rest numTasks, run ms, rest ms, shuffle write, rest].
HELPERS = '''
import json, requests, jupyter_perf as jp
def _jp_vs_rest(run):
    sc = spark.sparkContext
    base = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}"
    out = []
    for s in jp.analyze(run).summary()["stages"]:
        rest = requests.get(f"{base}/stages/{s['stage_id']}", params={"details": "false"},
                            timeout=30).json()
        [r] = [x for x in rest if x["attemptId"] == s["attempt"]]
        out.append([s["stage_id"], s["num_tasks"], r["numTasks"], s["executor_run_time_ms"],
                    r["executorRunTime"], s["shuffle_write_bytes"], r["shuffleWriteBytes"]])
    return out
def _jp_jobs():
    return int(spark.sparkContext._jsc.sc().dagScheduler().numTotalJobs())
'''


@pytest.fixture(scope="module")
def lk(tmp_path_factory):
    home = tmp_path_factory.mktemp("jphome-always-on")
    gate = str(tmp_path_factory.mktemp("gate") / "hold")
    env = dict(os.environ, JUPYTER_PERF_HOME=str(home), PYSPARK_PYTHON=sys.executable,
               PYSPARK_SUBMIT_ARGS="--conf spark.ui.port=0 pyspark-shell",
               JUPYTER_PERF_TEST_FINISH_GATE=gate, JUPYTER_PERF_SHUTDOWN_WAIT_S="120")
    env.pop("JUPYTER_PERF_ALWAYS_ON", None)
    km, kc = start_new_kernel(kernel_name="python3", env=env,
                              cwd=str(tmp_path_factory.mktemp("cwd")))
    kernel = LiveKernel(km, kc, str(home), gate)
    setup = kernel("%load_ext jupyter_perf\nimport jupyter_perf as jp\n"
                   "spark = jp.spark_session(master='local[2]', warm_up=False, "
                   "**{'spark.ui.port': '0', 'spark.sql.shuffle.partitions': '4'})\n" + HELPERS)
    assert setup.reply["content"]["status"] == "ok", setup.messages
    yield kernel
    kernel.open_gate()
    if kc.is_alive():
        kc.stop_channels()
    if km.is_alive():
        km.shutdown_kernel(now=False)
