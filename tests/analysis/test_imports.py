"""The analysis core imports only the model, numpy, pandas and the standard library."""
import ast
import sys
from pathlib import Path

import jupyter_perf.analysis as analysis

ALLOWED_THIRD_PARTY = {"numpy", "pandas"}


def test_analysis_imports_no_spark_jupyter_or_bokeh():
    root = Path(analysis.__file__).parent
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:                      # relative: only the package or the model
                    assert node.level == 1 or node.module == "model", (path.name, node.module)
                    continue
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top in ALLOWED_THIRD_PARTY or top in sys.stdlib_module_names, \
                    f"{path.name} imports {name}"


def test_public_names():
    from jupyter_perf.analysis import Analysis, analyze  # noqa: F401
    assert set(analysis.__all__) >= {"Analysis", "analyze"}
