"""SQL operators of a run: which plan nodes ran, and what they tell the verdict."""
from __future__ import annotations

import re

from ..model import Run

# Physical plan nodes that evaluate Python in Python workers (Spark 3.5 and 4.x names).
PYTHON_NODE = re.compile(
    r"^(BatchEvalPython|ArrowEvalPython|FlatMapGroupsInPandas|FlatMapCoGroupsInPandas|"
    r"FlatMapGroupsInArrow|FlatMapCoGroupsInArrow|MapInPandas|MapInArrow|PythonMapInArrow|"
    r"AggregateInPandas|ArrowAggregatePython|WindowInPandas|ArrowWindowPython|"
    r"FlatMapGroupsInPandasWithState|TransformWithStateInPandas|BatchEvalPythonUDTF|"
    r"ArrowEvalPythonUDTF|PythonDataSource|MapInBatch)")


def python_nodes(run: Run) -> list[str]:
    """Names of the plan nodes that ran Python."""
    names = run.operators["name"].dropna().astype(str)
    return [n for n in names if PYTHON_NODE.match(n.strip())]


def has_python(run: Run, breakdown: dict | None = None) -> bool:
    """Evidence that the run evaluated Python: a Python evaluation node in its plan, or
    Python time Spark measured (the ``python_udf`` component)."""
    if python_nodes(run):
        return True
    return bool(breakdown and breakdown.get("python_udf", {}).get("ms", 0.0) > 0)
