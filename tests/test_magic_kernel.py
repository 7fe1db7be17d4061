"""%%perfmeasure in a real Jupyter kernel (ipykernel through jupyter_client), on the embedded
Spark session the magic starts itself: what a notebook user sees on the wire."""
from __future__ import annotations

import os
import re
import sys

import pytest
from jupyter_client.manager import start_new_kernel
from sparkhelpers import JVM_NOISE

pytestmark = pytest.mark.own_process

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class Cell:
    """Every iopub message of one execute request, and its reply."""

    def __init__(self, reply: dict, messages: list[dict], open_comms: dict):
        self.reply = reply
        self.messages = messages
        self.open_comms = open_comms

    @property
    def count(self) -> int:
        return self.reply["content"]["execution_count"]

    def of_type(self, kind: str) -> list[dict]:
        return [m for m in self.messages if m["msg_type"] == kind]

    def stream(self, name: str) -> str:
        return "".join(m["content"]["text"] for m in self.of_type("stream")
                       if m["content"]["name"] == name)

    def traceback(self) -> str:
        [error] = self.of_type("error")
        return ANSI.sub("", "\n".join(error["content"]["traceback"]))


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    home = tmp_path_factory.mktemp("jphome-kernel")
    env = dict(os.environ, JUPYTER_PERF_HOME=str(home), PYSPARK_PYTHON=sys.executable,
               PYSPARK_SUBMIT_ARGS="--conf spark.ui.port=0 pyspark-shell")
    km, kc = start_new_kernel(kernel_name="python3", env=env,
                              cwd=str(tmp_path_factory.mktemp("cwd")))

    def run(code: str, timeout: float = 600) -> Cell:
        messages: list[dict] = []
        reply = kc.execute_interactive(code, timeout=timeout, output_hook=messages.append,
                                       allow_stdin=False)
        comms = kc.comm_info()              # what a reloaded page would find and restore
        info = kc.get_shell_msg(timeout=60)
        assert info["parent_header"]["msg_id"] == comms
        return Cell(reply, messages, info["content"]["comms"])

    run("%load_ext jupyter_perf")
    yield run
    run("import pyspark.sql; s = pyspark.sql.SparkSession.getActiveSession(); s and s.stop()")
    kc.stop_channels()
    km.shutdown_kernel(now=False)


def test_first_measured_cell_of_a_fresh_kernel_is_quiet(kernel):
    cell = kernel("%%perfmeasure\nspark.range(1000).count()\n")
    assert cell.reply["content"]["status"] == "ok"
    [result] = cell.of_type("execute_result")
    assert result["content"]["data"]["text/plain"] == "1000"
    streams = cell.stream("stdout") + cell.stream("stderr")
    assert not JVM_NOISE.search(streams), streams
    # one line says Spark started and where its own output went
    [line] = [s for s in streams.splitlines() if s.strip()]
    started = re.fullmatch(r"Spark (\d+\.\d+\.\d+) started in \d+ s, log: (.+)", line)
    assert started, line
    log = started.group(2)
    text = open(log, encoding="utf-8", errors="replace").read()
    assert "spark-measure" in text and ":: resolving dependencies" in text    # Ivy, there
    # ... and the report's collection notes name the same file
    notes = kernel("import jupyter_perf as jp; print(jp.last_run().extra['spark_log'])")
    assert notes.stream("stdout").strip() == log


def test_a_failing_cell_shows_the_users_frames_under_its_own_number(kernel):
    kernel("x = 1")                          # the counters move on, as in any notebook
    cell = kernel("%%perfmeasure\ndef inner():\n    raise ValueError('boom in the cell')\n"
                  "spark.range(10).count()\ninner()\n")
    assert cell.reply["content"]["status"] == "error"
    assert cell.reply["content"]["ename"] == "ValueError"
    text = cell.traceback()
    assert f"Cell In[{cell.count}], line 5" in text, text
    assert f"Cell In[{cell.count}], line 3, in inner()" in text
    assert "----> 5 inner()" in text and "      1 %%perfmeasure" in text
    assert "run_cell_magic" not in text and "jupyter_perf" not in text, text
    assert "skipping hidden" not in text
    assert text.rstrip().endswith("ValueError: boom in the cell")


#: 8 tasks sleeping 600 ms each on the embedded session's cores: several progress updates.
SLOW = ("%%perfmeasure\nspark.range(0, 8, 1, 8).selectExpr(\"id % 2 AS k\", "
        "\"java_method('java.lang.Thread', 'sleep', cast(600 as bigint)) AS s\")"
        ".groupBy('k').agg({'s': 'count'}).collect()\n")


def test_the_live_display_opens_no_comm_and_the_kernel_stays_busy(kernel):
    cell = kernel(SLOW)
    assert cell.reply["content"]["status"] == "ok"
    shown = [m for m in cell.of_type("display_data") + cell.of_type("update_display_data")
             if "jupyter-perf-progress" in m["content"]["data"].get("text/html", "")]
    assert shown, "the live display never appeared"
    assert any(m["msg_type"] == "update_display_data" for m in shown)     # updated in place
    # the report replaced it in the same output
    display_id = shown[0]["content"]["transient"]["display_id"]
    last = [m for m in cell.of_type("update_display_data")
            if m["content"]["transient"]["display_id"] == display_id][-1]
    assert "jupyter-perf-progress" not in last["content"]["data"].get("text/html", "")
    # no comm: nothing for a front end to route through a subshell (whose control-channel
    # status turns the notebook "idle" mid-cell), nothing left for a reload to restore
    assert not [m for m in cell.messages if m["msg_type"].startswith("comm_")]
    assert cell.open_comms == {}
    assert [m["content"]["execution_state"] for m in cell.of_type("status")] == ["busy", "idle"]
