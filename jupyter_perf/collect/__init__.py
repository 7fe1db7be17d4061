"""Turn Spark into a ``Run``: listener, REST client, memory sampler (and event logs)."""
from .rest import RestError, SparkRest
from .window import Window

__all__ = ["RestError", "SparkRest", "Window"]
