"""jupyter-perf: a Jupyter-native profiler for Apache Spark."""
from __future__ import annotations

__version__ = "0.1.0"

from .model import Run  # noqa: E402  (the model needs no Spark)

__all__ = ["Run", "__version__"]
