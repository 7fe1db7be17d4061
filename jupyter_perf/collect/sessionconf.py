"""The session's SQL settings in effect when a window ends, for comparing runs (issue J).

``SparkContext.getConf()`` (read when a window starts) holds the settings the session was
started with; ``spark.conf.set(...)`` — what a user (or a ready cell of advice) changes
between runs — lives only in the SparkSession's SQL conf. At the end of the window we add

- every setting explicitly set in the session (``RuntimeConfig.getAll``: pyspark 4; the
  JVM's ``conf().getAll()`` on 3.5), and
- apart from them, the effective value of the settings the analysis can advise on or that
  shape a query's plan (``WATCHED``) that nobody set: Spark's default in this session
  (``spark.conf.get(key)``; ``get(key, None)`` answers None for an unset key). They are kept
  in ``run.extra["spark_defaults"]``, not among the settings, so advice never calls a default
  "set in the session", and compare reads "200 (default) → 8" instead of "(not set) → 8".

Redacted as the start-up conf is (``redact.py``). Never raises: a session that cannot say
gives nothing more.
"""
from __future__ import annotations

from typing import Any, Mapping

from .redact import redact

#: Settings whose effective value is kept even when nobody set them.
WATCHED = (
    "spark.sql.shuffle.partitions",
    "spark.sql.autoBroadcastJoinThreshold",
    "spark.sql.adaptive.enabled",
    "spark.sql.adaptive.coalescePartitions.enabled",
    "spark.sql.adaptive.advisoryPartitionSizeInBytes",
    "spark.sql.adaptive.skewJoin.enabled",
    "spark.sql.adaptive.skewJoin.skewedPartitionFactor",
    "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes",
    "spark.sql.files.maxPartitionBytes",
    "spark.sql.execution.arrow.pyspark.enabled",
    "spark.sql.execution.pythonUDF.arrow.enabled",
    "spark.sql.codegen.wholeStage",
)


def _explicit(spark: Any) -> dict[str, str]:
    conf = spark.conf
    get_all = getattr(type(conf), "getAll", None)
    if get_all is not None:                          # pyspark 4: a property
        values = conf.getAll
        return dict(values() if callable(values) else values)
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is None:
        raise LookupError("this session cannot list its settings")
    scala_map = jsession.conf().getAll()
    converters = spark.sparkContext._jvm.scala.collection.JavaConverters
    return dict(converters.mapAsJavaMapConverter(scala_map).asJava())


# {id of the session's JVM object: (the fingerprint of its explicit settings, the explicit
# settings, the watched defaults)}. Reading the settings costs two py4j calls an entry plus one
# a watched setting, 20-40 ms on the kernel's thread at every measured cell's end (30 ms median
# on a local[2] session); the whole map as one string is no faster (py4j answers of several KB
# took ~44 ms here, small ones 0.1 ms). The fingerprint is two small answers (the JVM map's
# size and hash, Scala's MurmurHash3 of its entries): while it is unchanged the settings and
# the watched defaults (a default moves only when an explicit setting does) are the same, and
# the read costs 0.8 ms.
_SEEN: dict[int, tuple[tuple[int, int], dict[str, str], dict[str, str]]] = {}


def _fingerprint(spark: Any) -> tuple[int, int] | None:
    """(size, hash) of the session's explicit settings in the JVM, or None (Connect)."""
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is None:
        return None
    try:
        scala_map = jsession.conf().getAll()
        return int(scala_map.size()), int(scala_map.hashCode())
    except Exception:  # noqa: BLE001 - read the slow way
        return None


def session_settings(spark: Any) -> tuple[dict[str, str], dict[str, str]]:
    """(the settings explicitly set in ``spark``'s session now, the effective values of the
    ``WATCHED`` settings not among them: Spark's defaults). No defaults when the explicit
    settings cannot be read (a default could not be told from a setting)."""
    key = id(getattr(spark, "_jsparkSession", None) or spark)
    fingerprint = _fingerprint(spark)
    seen = _SEEN.get(key)
    if fingerprint is not None and seen is not None and seen[0] == fingerprint:
        return dict(seen[1]), dict(seen[2])
    try:
        explicit = {str(k): str(v) for k, v in _explicit(spark).items()}
    except Exception:  # noqa: BLE001 - an old or remote session: nothing to tell them apart
        return {}, {}
    defaults: dict[str, str] = {}
    for name in WATCHED:
        if name in explicit:
            continue
        try:
            value = spark.conf.get(name)
        except Exception:  # noqa: BLE001 - a setting this Spark does not know
            continue
        if value is not None:
            defaults[name] = str(value)
    if fingerprint is not None:
        _SEEN[key] = (fingerprint, dict(explicit), dict(defaults))
    return explicit, defaults


def with_session_conf(start_conf: Mapping[str, str] | None, spark: Any,
                      ) -> tuple[dict[str, str], dict[str, str]]:
    """(the start-up conf with the session's settings laid over it, the watched settings'
    defaults), both redacted. A session starts with every start-up setting among its own,
    so a watched one the session no longer has was unset (``spark.conf.unset``): its default
    is in effect, not the start-up value."""
    explicit, defaults = session_settings(spark)
    merged = dict(start_conf or {})
    merged.update(explicit)
    for key in defaults:
        merged.pop(key, None)
    return redact(merged), redact(defaults)
