"""The report's data (payload format 2): everything the browser's one renderer
(``labextension/src/report/``) draws, computed here from the Analysis — no Bokeh, no drawing.

``report_data(a)`` is a JSON-able dict::

    {"format": 2, "run_id", "header": {...}, "tabs": {"summary": {...}, "query": {...}, ...},
     "tasks": {name: {"dtype", "b64"}}, "tasks_meta": {...}}

Each tab's part comes from ``views/<tab>.py``'s ``data(a, ctx)`` (``ViewContext`` shares the
summary, the timeline lanes and the per-task arrays between them) and is drawn by
``labextension/src/report/tabs/<tab>.ts``. ``tasks`` are :func:`..payload.build`'s arrays
(dispatch order, compact dtypes), ``tasks_meta`` its meta. A number shown carries its kind
(measured, sampled or estimated) where the tab says it.
"""
from __future__ import annotations

import base64
import dataclasses
import functools
import gzip
import json
import math
from typing import Any

import numpy as np

from ... import fmt
from ...analysis import Analysis
from ...model import Run
from .. import payload as task_payload
from ..lanes import Lanes, assign_lanes

DATA_FORMAT = 2
DTYPES = ("float64", "float32", "int32", "uint32", "int16", "uint16", "int8", "uint8")


@dataclasses.dataclass
class ViewContext:
    """What several tabs need, computed once per report."""

    a: Analysis
    summary: dict
    lanes: Lanes
    arrays: dict[str, np.ndarray]      # payload.build: per-task arrays, dispatch order
    meta: dict                         # payload.build: their meta
    extras: dict                       # payload.build: pos (task row -> array position), ...

    @classmethod
    def of(cls, a: Analysis) -> "ViewContext":
        tl = a.timeline
        lanes = assign_lanes(a.run, tl.launch, tl.duration)
        arrays, meta, extras = task_payload.build(a, lanes)
        return cls(a, a.summary(), lanes, arrays, meta, extras)


def encode_array(values: np.ndarray) -> dict:
    """``{"dtype", "b64"}``: the array's little-endian bytes (int64 narrowed to int32 when it
    fits, else float64: the browser has no 64-bit integer arrays)."""
    arr = np.asarray(values)
    if arr.dtype == np.bool_:
        arr = arr.astype("uint8")
    if arr.dtype.kind in "iu" and arr.dtype.name not in DTYPES:
        lo = int(arr.min()) if arr.size else 0
        hi = int(arr.max()) if arr.size else 0
        arr = arr.astype("int32" if -2**31 <= lo and hi < 2**31 else "float64")
    elif arr.dtype.name not in DTYPES:
        arr = arr.astype("float64")
    arr = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
    return {"dtype": arr.dtype.name, "b64": base64.b64encode(arr.tobytes()).decode("ascii")}


def decode_array(col: dict) -> np.ndarray:
    return np.frombuffer(base64.b64decode(col["b64"]), dtype=np.dtype(col["dtype"]).newbyteorder("<"))


def jsonable(value: Any) -> Any:
    """``value`` with numpy scalars as Python numbers and non-finite floats as None (JSON has
    none); dicts, lists and tuples walked."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    return value


def spark_ui(run: Run) -> str | None:
    """The Spark UI the run was collected from (its pages are linked while it runs), if any."""
    url = run.extra.get("ui_url") or (run.extra.get("connect") or {}).get("ui_url")
    return str(url).rstrip("/") if isinstance(url, str) and url.startswith(("http://", "https://")) else None


def header(run: Run, a: Analysis | None) -> dict:
    return {
        "title": fmt.run_title(run), "run_id": str(run.run_id), "kind": run.kind,
        "status": run.status, "error": run.error or "",
        "wall_ms": float(a.wall_ms if a is not None else run.wall_ms),
        "model_error": float(a.model_error) if a is not None else 0.0,
        "spark_ui": spark_ui(run), "app_id": run.app_id,
    }


@functools.lru_cache(maxsize=None)
def _tabs():
    from . import memory, query, stages, stragglers, summary, timeline, whatif
    return {"summary": summary, "query": query, "timeline": timeline, "stages": stages,
            "stragglers": stragglers, "whatif": whatif, "memory": memory}


def report_data(a: Analysis) -> dict:
    """The whole report's data (see the module docstring)."""
    ctx = ViewContext.of(a)
    tabs = {key: mod.data(a, ctx) for key, mod in _tabs().items()}
    return {"format": DATA_FORMAT, "run_id": str(a.run.run_id), "header": header(a.run, a),
            "tabs": jsonable(tabs),
            "tasks": {name: encode_array(v) for name, v in ctx.arrays.items()},
            "tasks_meta": jsonable(ctx.meta)}


def fallback_data(run: Run, reason: str) -> dict:
    """A Run the analysis could not handle: the header, the reason, and the Summary tab's
    basic part (``summary.basic``: breakdown and stages from the Run alone)."""
    from . import summary
    return {"format": DATA_FORMAT, "run_id": str(run.run_id), "header": header(run, None),
            "problem": reason, "tabs": jsonable({"summary": summary.basic(run)}),
            "tasks": {}, "tasks_meta": {}}


def encode_data(data: dict) -> str:
    """base64 of the gzip of the data's compact JSON (the MIME payload's ``data``)."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0)).decode("ascii")


def decode_data(encoded: str) -> dict:
    data = json.loads(gzip.decompress(base64.b64decode(encoded)).decode("utf-8"))
    data["tasks"] = {k: decode_array(v) for k, v in data.get("tasks", {}).items()}
    return data


def mime_payload(data: dict) -> dict:
    """The notebook output's ``application/vnd.jupyter-perf.report+json`` data for report data
    (docs/report.md): small fields in the clear, the data compressed."""
    import bokeh

    from ...constants import ITEM_ENCODING
    return {"format": data["format"], "run_id": data["run_id"], "title": data["header"]["title"],
            "bokeh_version": bokeh.__version__, "encoding": ITEM_ENCODING,
            "data": encode_data(data)}


def report_payload(obj: Run | Analysis) -> dict:
    """The MIME payload of a Run (analysed here; if that fails, the fallback data with the
    reason) or an Analysis."""
    from ...analysis import analyze
    if isinstance(obj, Run):
        try:
            obj = analyze(obj)
        except Exception as exc:  # broad on purpose: a measured run always renders
            return mime_payload(fallback_data(obj, f"analysis failed: {type(exc).__name__}: {exc}"))
    return mime_payload(report_data(obj))
