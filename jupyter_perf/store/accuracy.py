"""The store-wide record of predictions against measurements (issue J: ``jupyter-perf accuracy``).

Every comparison whose B changed something the what-if models (slots, or a setting one of
A's hints advised) appends one line per prediction to ``<store root>/accuracy.jsonl``; so does
``jp.history`` for each run that changed only that against the previous warm run of its cell:

    {"recorded_ms", "a", "b", "what", "kind", "setting", "value", "predicted_ms",
     "measured_ms", "error", "signed_error", "a_wall_ms", "a_master", "b_master", "title"}

One JSON object per line, written with a single ``O_APPEND`` write, so writers in several
kernels never interleave inside a line. The same comparison made again replaces its earlier
line when read (the key is ``(a, b, kind, setting)``); a damaged line (a torn write, an
edited file) is skipped and counted, never fatal. The file is not the index: it is not
rebuilt from the run directories, and deleting a run keeps the predictions made with it.
"""
from __future__ import annotations

import json
import math
import os
import statistics
import time
from typing import Any, Iterable

from .layout import StoreError

ACCURACY_FILE = "accuracy.jsonl"
FIELDS = ("recorded_ms", "a", "b", "what", "kind", "setting", "value", "predicted_ms",
          "measured_ms", "error", "signed_error", "a_wall_ms", "a_master", "b_master", "title")


def rows_of(a: str, b: str, predictions: Iterable[dict[str, Any]], *, a_wall_ms: Any = None,
            a_master: Any = None, b_master: Any = None, title: Any = None) -> list[dict[str, Any]]:
    """The record's lines for A's predictions (``analysis/compare.py``'s ``slot_prediction`` /
    ``hint_predictions`` dicts) of what B changed: what ``jp.compare`` and ``jp.history`` record."""
    return [{"a": a, "b": b, "what": p["what"], "kind": p["kind"], "setting": p["setting"],
             "value": p.get("value"), "predicted_ms": p["predicted_ms"],
             "measured_ms": p["measured_ms"], "error": p["error"],
             "signed_error": p["signed_error"], "a_wall_ms": a_wall_ms, "a_master": a_master,
             "b_master": b_master, "title": title} for p in predictions]


def path_of(root: str) -> str:
    return os.path.join(root, ACCURACY_FILE)


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def record(root: str, rows: Iterable[dict[str, Any]]) -> int:
    """Append ``rows`` (predictions, see the module doc); returns how many were written."""
    now = time.time() * 1000.0
    lines = []
    for row in rows:
        item = {k: _clean(row.get(k)) for k in FIELDS}
        item["recorded_ms"] = item["recorded_ms"] or now
        lines.append(json.dumps(item, ensure_ascii=True, allow_nan=False) + "\n")
    if not lines:
        return 0
    data = "".join(lines).encode("ascii")
    try:
        os.makedirs(root, exist_ok=True)
        fd = os.open(path_of(root), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    except OSError as exc:
        raise StoreError(f"could not record the prediction in {path_of(root)}: "
                         f"{exc.strerror or exc}; check the run store is writable") from exc
    return len(lines)


def read(root: str) -> tuple[list[dict[str, Any]], int]:
    """(the predictions recorded, newest comparison of each key kept, oldest first;
    how many lines were damaged and skipped)."""
    try:
        with open(path_of(root), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except FileNotFoundError:
        return [], 0
    except OSError as exc:
        raise StoreError(f"cannot read {path_of(root)}: {exc.strerror or exc}") from exc
    latest: dict[tuple, dict[str, Any]] = {}
    damaged = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            if not isinstance(item, dict) or not isinstance(item.get("measured_ms"), (int, float)):
                raise ValueError("not a prediction")
        except ValueError:
            damaged += 1
            continue
        key = (item.get("a"), item.get("b"), item.get("kind"), item.get("setting"))
        latest.pop(key, None)
        latest[key] = item
    return list(latest.values()), damaged


def digest(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per kind of prediction ("slots", or a setting): how many, and their errors."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        name = "slots" if r.get("kind") == "slots" else str(r.get("setting") or r.get("kind"))
        groups.setdefault(name, []).append(r)
    out = []
    for name, items in sorted(groups.items()):
        errors = [abs(float(r["error"])) for r in items if isinstance(r.get("error"), (int, float))]
        signed = [float(r["signed_error"]) for r in items
                  if isinstance(r.get("signed_error"), (int, float))]
        out.append({"what": name, "comparisons": len(items), "predicted": len(errors),
                    "not_simulated": len(items) - len(errors),
                    "median_error": statistics.median(errors) if errors else None,
                    "max_error": max(errors) if errors else None,
                    "median_signed_error": statistics.median(signed) if signed else None})
    return out
