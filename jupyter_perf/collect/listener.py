"""sparkmeasure listeners: one StageMetrics and one TaskMetrics per SparkContext.

The listeners are created once per SparkContext and reused for every cell
(``begin()`` clears their buffers), so measuring many cells never adds more
listeners to Spark's bus. They are kept in the context's ``SessionState``.
"""
from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from ..errors import JupyterPerfError
from .fields import conform_from

# sparkmeasure ``TaskMetrics`` rows (TaskVals): already ms, truncated per task.
SPARKMEASURE_TASK_FIELDS: dict[str, tuple[str, float]] = {
    "jobId": ("job_id", 1), "stageId": ("stage_id", 1), "index": ("index", 1),
    "attemptNumber": ("stage_attempt", 1),
    "launchTime": ("launch_ms", 1), "finishTime": ("finish_ms", 1),
    "duration": ("duration_ms", 1), "schedulerDelay": ("scheduler_delay_ms", 1),
    "executorId": ("executor_id", 1), "host": ("host", 1),
    "taskLocality": ("locality", 1), "speculative": ("speculative", 1),
    "gettingResultTime": ("getting_result_ms", 1), "successful": ("successful", 1),
    "executorRunTime": ("run_ms", 1), "executorCpuTime": ("cpu_ms", 1),
    "executorDeserializeTime": ("deserialize_ms", 1),
    "executorDeserializeCpuTime": ("deserialize_cpu_ms", 1),
    "resultSerializationTime": ("result_serialization_ms", 1),
    "jvmGCTime": ("gc_ms", 1), "resultSize": ("result_size_bytes", 1),
    "diskBytesSpilled": ("disk_spilled_bytes", 1),
    "memoryBytesSpilled": ("memory_spilled_bytes", 1),
    "peakExecutionMemory": ("peak_execution_memory_bytes", 1),
    "recordsRead": ("input_records", 1), "bytesRead": ("input_bytes", 1),
    "recordsWritten": ("output_records", 1), "bytesWritten": ("output_bytes", 1),
    "shuffleFetchWaitTime": ("fetch_wait_ms", 1),
    "shuffleTotalBytesRead": ("shuffle_read_bytes", 1),
    "shuffleRemoteBytesRead": ("shuffle_remote_bytes", 1),
    "shuffleLocalBytesRead": ("shuffle_local_bytes", 1),
    "shuffleRecordsRead": ("shuffle_read_records", 1),
    "shuffleBytesWritten": ("shuffle_write_bytes", 1),
    "shuffleRecordsWritten": ("shuffle_write_records", 1),
    "shuffleWriteTime": ("shuffle_write_time_ms", 1),
}


def _derive_tasks(raw: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """sparkmeasure says whether a task succeeded; the model keeps Spark's status words."""
    if "successful" in table.columns:
        table["status"] = np.where(table.pop("successful").astype(bool), "SUCCESS", "FAILED")
    return table


def conform_sparkmeasure_tasks(raw: pd.DataFrame, **constants: Any) -> pd.DataFrame:
    """sparkmeasure ``TaskMetrics`` rows -> the model's task table."""
    return conform_from("tasks", raw, SPARKMEASURE_TASK_FIELDS, _derive_tasks, **constants)


# sparkmeasure StageVals fields kept with a run (names as sparkmeasure prints them).
STAGE_FIELDS = [
    "jobId", "stageId", "numTasks", "submissionTime", "completionTime", "stageDuration",
    "executorRunTime", "executorCpuTime", "executorDeserializeTime", "jvmGCTime",
    "resultSerializationTime", "shuffleFetchWaitTime", "shuffleWriteTime", "bytesRead",
    "recordsRead", "bytesWritten", "recordsWritten", "shuffleTotalBytesRead",
    "shuffleRemoteBytesRead", "shuffleLocalBytesRead", "shuffleBytesWritten",
    "memoryBytesSpilled", "diskBytesSpilled", "peakExecutionMemory",
]

class ListenerUnavailable(JupyterPerfError):
    """The sparkmeasure jar is not on the driver's classpath."""


class Listeners:
    def __init__(self, spark):
        from sparkmeasure import StageMetrics, TaskMetrics

        self.spark = spark
        problem = ("sparkmeasure jar not loaded (start Spark with jupyter_perf.spark_session() or "
                   "add spark.jars.packages=" + _package_hint() + "); collecting from the REST "
                   "API only")
        if not _jar_loaded(spark):     # sparkmeasure's own API would only print a warning
            raise ListenerUnavailable(problem)
        try:
            self.stage = StageMetrics(spark)
            self.task = TaskMetrics(spark)
        except Exception as exc:  # py4j errors creating the listeners
            raise ListenerUnavailable(problem) from exc

    def begin(self) -> None:
        self.stage.begin()
        self.task.begin()

    def end(self) -> None:
        self.stage.end()
        self.task.end()

    def stage_metrics(self) -> pd.DataFrame:
        """sparkmeasure's stage rows recorded since begin()."""
        rows = self._rows(self.stage.stagemetrics.listenerStage().stageMetricsData())
        return pd.DataFrame(rows).reindex(columns=STAGE_FIELDS)

    def task_metrics(self) -> pd.DataFrame:
        """sparkmeasure's task rows (ms) recorded since begin()."""
        return pd.DataFrame(self._rows(self.task.taskmetrics.listenerTask().taskMetricsData()))

    def _rows(self, buffer) -> list[dict[str, Any]]:
        """A listener buffer as records, in one py4j call (sparkmeasure's own JSON writer).

        Needs only the JVM, not the SparkContext: the buffers stay readable after
        ``spark.stop()``, when neither Spark's REST API nor a DataFrame is available.
        """
        jvm = self.spark.sparkContext._jvm
        return json.loads(str(jvm.ch.cern.sparkmeasure.IOUtils.writeToStringSerializedJSON(buffer)))


def _jar_loaded(spark) -> bool:
    from py4j.java_gateway import JavaClass

    try:
        return isinstance(spark.sparkContext._jvm.ch.cern.sparkmeasure.StageMetrics, JavaClass)
    except Exception:
        return False


def _package_hint() -> str:
    from .session_state import sparkmeasure_package

    return sparkmeasure_package()


def listeners_for(spark) -> Listeners:
    """The session's listeners, created on first use (raises ListenerUnavailable)."""
    from .session_state import session_state

    state = session_state(spark.sparkContext)
    with state.lock:
        if state.listeners is None:
            state.listeners = Listeners(spark)
        return state.listeners
