"""The one version of jupyter-perf (pyproject.toml reads it; package.json carries the same
string, checked by tests/test_packaging.py)."""
__version__ = "0.1.0"
