"""Operators named the way their user would: "HashAggregate by l_orderkey", "SortMergeJoin
on o_orderkey = l_orderkey", "Scan parquet lineitem", "Exchange hash on l_orderkey".

Spark's node names say only the kind of work ("HashAggregate"), so two different parts of a
query read the same in a verdict; the node's plan description (``run.operators.description``)
holds the keys, tables and UDFs. The label is Spark's node name plus the part of the
description a user wrote: grouping keys, join keys and type, sort and partitioning keys,
the table or file a scan reads, the Python UDF called. Attribute ids (``#12L``) are dropped;
long key lists keep their first :data:`MAX_KEYS`. A description it cannot read leaves the
node name alone (the label never guesses).
"""
from __future__ import annotations

import re

MAX_KEYS = 3
MAX_LEN = 80
ATTR_ID = re.compile(r"#\d+L?")
SCAN_TABLE = re.compile(r"(?:FileScan|Scan) \w+ ([\w.`$-]+)\[")
SCAN_PATH = re.compile(r"Location: \w+\(\d+ paths?\)\[([^\],]+)")
AGGREGATE_KEYS = re.compile(r"keys=\[(.*?)\], functions=")
JOIN = re.compile(r"^\w+ \[(.*?)\], \[(.*?)\], (\w+)")
PARTITIONING = re.compile(r"^Exchange (hash|range)partitioning\((.*)\)")
SORT_KEYS = re.compile(r"^Sort \[(.*)\], (?:true|false)")
PYTHON_CALLS = re.compile(r"^\w+ \[(.*?)\], \[")
SORT_SUFFIX = re.compile(r" (ASC|DESC)( NULLS (FIRST|LAST))?$")


def split_top_level(text: str) -> list[str]:
    """``text`` split at the commas outside brackets ("a, substr(b, 1, 2)" → 2 items)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _keys(items: list[str]) -> str:
    clean = [ATTR_ID.sub("", k) for k in items]
    more = len(clean) - MAX_KEYS
    return ", ".join(clean[:MAX_KEYS]) + (f" +{more}" if more > 0 else "")


def _sort_key(key: str) -> str:
    """A sort key without its attribute id and default order ("v#2 DESC NULLS LAST" → "v DESC")."""
    return SORT_SUFFIX.sub(lambda m: " DESC" if m.group(1) == "DESC" else "", ATTR_ID.sub("", key))


def scan_source(description: str) -> str:
    """The table (catalog name) or the last part of the path a scan reads, '' if unnamed."""
    m = SCAN_TABLE.search(description)
    if m:
        return m.group(1).removeprefix("spark_catalog.")
    p = SCAN_PATH.search(description)
    return p.group(1).rstrip("/").rsplit("/", 1)[-1].split(".", 1)[0] if p else ""


def _subject(name: str, description: str) -> str:
    if name.startswith(("Scan", "FileScan", "BatchScan")):
        where = scan_source(description)
        return where if where and where not in name else ""
    if "Aggregate" in name:
        m = AGGREGATE_KEYS.search(description)
        if m is None:
            return ""
        keys = split_top_level(m.group(1))
        return f"by {_keys(keys)}" if keys else "(no grouping keys)"
    if "Join" in name:
        m = JOIN.match(description)
        if m is None:
            return ""
        left, right = split_top_level(m.group(1)), split_top_level(m.group(2))
        how = "" if m.group(3) == "Inner" else f"{m.group(3)} "
        if not left or len(left) != len(right):
            return how.strip()
        pairs = [f"{a} = {b}" for a, b in zip(left, right)]
        return f"{how}on {_keys(pairs)}"
    if name.startswith("Exchange"):
        m = PARTITIONING.match(description)
        if m:
            keys = split_top_level(m.group(2))[:-1]       # the last item is the partition count
            keys = [_sort_key(k) for k in keys]
            return f"{m.group(1)} on {_keys(keys)}" if keys else ""
        if "SinglePartition" in description:
            return "to one partition"
        if "RoundRobinPartitioning" in description:
            return "round robin"
        return ""
    if name == "Sort":
        m = SORT_KEYS.match(description)
        if m is None:
            return ""
        keys = [_sort_key(k) for k in split_top_level(m.group(1))]
        return f"by {_keys(keys)}" if keys else ""
    if name.endswith("EvalPython"):
        m = PYTHON_CALLS.match(description)
        return _keys(split_top_level(m.group(1))) if m else ""
    return ""


def operator_label(name: str, description: str) -> str:
    """Spark's node ``name`` plus what its ``description`` says the user wrote."""
    name = (name or "").strip()
    subject = _subject(name, description or "")
    label = f"{name} {subject}" if subject else name
    return label if len(label) <= MAX_LEN else label[:MAX_LEN - 1] + "…"


__all__ = ["operator_label", "scan_source", "split_top_level"]
