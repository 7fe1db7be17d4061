"""The breakdown components of task time: the one definition every view reads.

Key, label, short label, measured or estimated, colour, Spark metric users search for, and
whether the component lies inside ``executorRunTime``. The order is the stacking order in
every chart and the row order in every table. The report payload carries this list, so the
browser code, every tab, the sidebar, the CLI and the docs use the same words.
"""
from __future__ import annotations

from typing import NamedTuple


class Component(NamedTuple):
    key: str            # column of analysis.breakdown.task_breakdown
    label: str          # the words shown everywhere
    short: str          # the same, for tight spaces (legends, axis ticks)
    kind: str           # "measured" | "estimated"
    color: str
    spark_metric: str   # Spark's name (or the formula) behind it
    in_run: bool        # inside executorRunTime (True) or around it (False)

    @property
    def estimated(self) -> bool:
        return self.kind == "estimated"


_REST_FORMULA = "executorRunTime - CPU - GC - fetch wait - shuffle write"
# Spark's Python SQL metrics (4.0+: "time to run Python workers", 4.2+: "time to execute
# Python code"), summed per Python evaluation operator and laid over its tasks' unexplained
# time; Spark 3.5 reports no Python time, so there this component stays 0.
_PYTHON_METRIC = "pythonProcessingTime | pythonTotalTime (SQL metrics of the Python operators)"
# The unexplained time of tasks that ran while the host's cores were saturated.
_CORE_WAIT_FORMULA = ("(executorRunTime - CPU - GC - fetch wait - shuffle write - Python) "
                      "x host CPU saturation by this application's processes")
# The same rest, times the part of the saturation other processes' CPU time explains.
_CONTENTION_FORMULA = ("(executorRunTime - CPU - GC - fetch wait - shuffle write - Python) "
                       "x (host CPU saturation - saturation by this application's processes)")

COMPONENTS: tuple[Component, ...] = (
    Component("cpu", "CPU", "CPU", "measured", "#4e79a7", "executorCpuTime", True),
    Component("gc", "JVM GC", "GC", "measured", "#e15759", "jvmGcTime", True),
    Component("shuffle_fetch_wait", "shuffle fetch wait", "fetch wait", "measured", "#f28e2b",
              "shuffleFetchWaitTime", True),
    Component("shuffle_write", "shuffle write", "shuffle write", "measured", "#edc948",
              "shuffleWriteTime", True),
    Component("python_udf", "Python UDF", "Python UDF", "measured", "#8cd17d",
              _PYTHON_METRIC, True),
    Component("io_wait_est", "input/output wait (estimated)", "I/O wait (est.)", "estimated",
              "#76b7b2", _REST_FORMULA, True),
    Component("core_wait_est", "waiting for a core (estimated)", "core wait (est.)", "estimated",
              "#a0cbe8", _CORE_WAIT_FORMULA, True),
    Component("contention_est", "host busy with other processes (estimated)",
              "other processes (est.)", "estimated", "#79706e", _CONTENTION_FORMULA, True),
    Component("other_wait_est", "other wait (estimated)", "other (est.)", "estimated", "#bab0ac",
              _REST_FORMULA, True),
    Component("scheduler_delay", "scheduler delay", "sched. delay", "measured", "#b07aa1",
              "schedulerDelay", False),
    Component("deserialize", "task deserialization", "deserialize", "measured", "#9c755f",
              "executorDeserializeTime", False),
    Component("result_serialization", "result serialization", "result ser.", "measured",
              "#ff9da7", "resultSerializationTime", False),
    Component("getting_result", "getting result", "getting result", "measured", "#59a14f",
              "gettingResultTime", False),
    Component("unaccounted", "unaccounted (estimated)", "unaccounted (est.)", "estimated",
              "#d4d4d4",
              "duration - run - scheduler delay - deserialize - result ser. - getting result",
              False),
)

BY_KEY: dict[str, Component] = {c.key: c for c in COMPONENTS}
KEYS: tuple[str, ...] = tuple(c.key for c in COMPONENTS)


def as_json() -> list[dict]:
    """The list as the report payload and the REST API carry it."""
    return [c._asdict() for c in COMPONENTS]
