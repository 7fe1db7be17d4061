"""Secrets never reach the store or a report: Spark's own redaction rule, applied once here.

Spark redacts a setting when its key *or* its value matches ``spark.redaction.regex``
(default below, as in Spark 3.5/4.x); we do the same for every key/value pair we keep
(Spark conf, environment variables).
"""
from __future__ import annotations

import re
from typing import Iterable, Mapping

DEFAULT_REGEX = r"(?i)secret|password|token|access[.]?key"
REDACTED = "*********(redacted)"


def redaction_pattern(conf: Mapping[str, str] | None = None) -> re.Pattern[str]:
    text = (conf or {}).get("spark.redaction.regex") or DEFAULT_REGEX
    try:
        return re.compile(text)
    except re.error:              # a Java-only regex: fall back to Spark's default rule
        return re.compile(DEFAULT_REGEX)


def redact(pairs: Mapping[str, str] | Iterable[tuple[str, str]],
           pattern: re.Pattern[str] | None = None) -> dict[str, str]:
    items = dict(pairs.items() if isinstance(pairs, Mapping) else pairs)
    pattern = pattern or redaction_pattern(items)
    return {k: (REDACTED if pattern.search(k) or pattern.search(str(v)) else str(v))
            for k, v in items.items()}
