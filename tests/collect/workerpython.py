"""A kernel started from a virtualenv, as the Python workers see it: no ``PYSPARK_PYTHON``,
no ``PYSPARK_DRIVER_PYTHON``, and a ``python3`` first on ``PATH`` that is not this interpreter
and lacks its pandas/pyarrow. Shared by ``tests/collect/test_python_workers.py`` (classic) and
``tests/connect/test_python_workers_connect.py`` (Spark Connect).

Importable by name from any test (``from workerpython import ...``).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from typing import Iterator

import pandas as pd
import pytest

#: What a worker running another interpreter cannot import.
KERNEL_ONLY = "import pandas, pyarrow"
SYSTEM_PYTHONS = ("/usr/bin/python3", "/bin/python3", "/usr/local/bin/python3")


def decoy_python3(folder: str) -> str:
    """Put a ``python3`` into ``folder`` that is not this interpreter: the machine's own
    Python when it lacks pandas or pyarrow (the real situation), else a script that fails.
    Returns a description for messages."""
    target = os.path.join(folder, "python3")
    me = os.path.realpath(sys.executable)
    for candidate in SYSTEM_PYTHONS:
        if not os.path.exists(candidate) or os.path.realpath(candidate) == me:
            continue
        probe = subprocess.run([candidate, "-c", KERNEL_ONLY], capture_output=True, timeout=60)
        if probe.returncode != 0:
            os.symlink(candidate, target)
            return f"{candidate} (no pandas/pyarrow)"
    with open(target, "w", encoding="utf-8") as fh:
        fh.write("#!/bin/sh\necho 'decoy python3: not the kernel interpreter' >&2\nexit 3\n")
    os.chmod(target, 0o755)
    return "a python3 that always fails"


@contextlib.contextmanager
def kernel_from_a_virtualenv(folder: str) -> Iterator[str]:
    """The environment above for the duration of the block (restored after)."""
    what = decoy_python3(folder)
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("PYSPARK_PYTHON", raising=False)     # tests/conftest.py sets it
        mp.delenv("PYSPARK_DRIVER_PYTHON", raising=False)
        mp.setenv("PATH", folder + os.pathsep + os.environ.get("PATH", ""))
        found = shutil.which("python3")
        assert found == os.path.join(folder, "python3"), found
        assert os.path.realpath(found) != os.path.realpath(sys.executable)
        yield what


def wrapper_python(folder: str, name: str) -> tuple[str, str]:
    """An interpreter the user could choose: a script that notes each start in a marker file,
    then runs this interpreter. Returns (script, marker)."""
    script, marker = os.path.join(folder, name), os.path.join(folder, name + ".started")
    with open(script, "w", encoding="utf-8") as fh:
        fh.write(f"#!/bin/sh\necho $$ >> '{marker}'\nexec '{sys.executable}' \"$@\"\n")
    os.chmod(script, 0o755)
    return script, marker


MISSING_MODULE = "nonexistent_module_xyz"


def failing_udf_query(spark):
    """A pandas UDF whose worker cannot import a module: the query and the error it raises
    under ``jp.measure``. (``pd`` is this module's: pyspark reads the UDF's type hints, strings
    here, in the function's globals.)"""
    from pyspark.sql.functions import pandas_udf

    import jupyter_perf as jp

    @pandas_udf("long")
    def needs_a_module(v: pd.Series) -> pd.Series:
        import nonexistent_module_xyz  # noqa: F401 -- the failing import is the test
        return v

    df = spark.range(0, 10, 1, 1).select(needs_a_module("id"))
    with pytest.raises(Exception) as raised:
        jp.measure(df.collect, spark=spark)
    assert type(raised.value).__name__ == "PythonException"
    return raised.value
