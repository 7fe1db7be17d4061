"""100 measured cells in one session: no listener leak, no thread leak, bounded driver memory."""
from __future__ import annotations

import gc
import os
import threading

import psutil
from sparkhelpers import run_cell


def listener_count(spark) -> int:
    return int(spark.sparkContext._jsc.sc().listenerBus().listeners().size())


def jvm_heap_used(spark) -> int:
    rt = spark.sparkContext._jvm.java.lang.Runtime.getRuntime()
    spark.sparkContext._jvm.java.lang.System.gc()
    return int(rt.totalMemory() - rt.freeMemory())


def test_hundred_cells(ipshell, spark_local, capsys):
    ipshell.user_ns["spark"] = spark_local
    cell = "%%perfmeasure --no-report\nspark.range(0, 2000, 1, 2).count()\n"
    for _ in range(5):                                    # warm up: listeners exist, JIT done
        run_cell(ipshell, cell)
    listeners, threads = listener_count(spark_local), threading.active_count()
    gc.collect()
    rss0, heap0 = psutil.Process(os.getpid()).memory_info().rss, jvm_heap_used(spark_local)
    for _ in range(100):
        result, _ = run_cell(ipshell, cell)
        assert result.error_in_exec is None
    gc.collect()
    rss1, heap1 = psutil.Process(os.getpid()).memory_info().rss, jvm_heap_used(spark_local)
    growth_py, growth_jvm = (rss1 - rss0) / 2**20, (heap1 - heap0) / 2**20
    print(f"100 cells: python RSS +{growth_py:.1f} MiB, JVM heap after GC +{growth_jvm:.1f} MiB")
    assert listener_count(spark_local) == listeners           # one listener set, reused
    assert threading.active_count() == threads                 # no sampler/poller left
    assert growth_py < 100, growth_py
    assert growth_jvm < 64, growth_jvm
