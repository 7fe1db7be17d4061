"""The analysis core loads no Spark, Jupyter or Bokeh, and exports its public names.

What analysis/ may import (only analysis, model, numpy, pandas and the standard library) is
checked statically, with every other room's rule, in ``tests/test_rooms.py``. This checks the
same promise at run time: a fresh interpreter that imports ``jupyter_perf.analysis`` (and so
``jupyter_perf/__init__.py`` too, as any user's import does) has loaded none of them — which
also catches an import the source does not spell out (``importlib``, a dependency's own).
"""
import json
import subprocess
import sys

import jupyter_perf.analysis as analysis

FORBIDDEN = ("pyspark", "py4j", "sparkmeasure", "IPython", "ipykernel", "ipywidgets", "jupyter",
             "tornado", "traitlets", "bokeh", "nbconvert", "nbformat", "zmq")


def test_importing_the_analysis_core_loads_no_spark_jupyter_or_bokeh():
    code = ("import json, sys, jupyter_perf.analysis; "
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], check=True,
                                       capture_output=True, text=True).stdout)
    bad = [m for m in loaded if m.startswith(FORBIDDEN) and m != "jupyter_perf"]
    assert bad == [], f"import jupyter_perf.analysis loaded {bad}"


def test_public_names():
    from jupyter_perf.analysis import Analysis, analyze  # noqa: F401 -- importable is the test
    assert set(analysis.__all__) >= {"Analysis", "analyze"}
