"""The report's data (payload format 2): everything the browser's one renderer
(``labextension/src/report/``) draws, computed here from the Analysis — no Bokeh, no drawing.

``report_data(a)`` is a dict, JSON-able but for the per-task arrays::

    {"format": 2, "run_id", "header": {...}, "tabs": {"summary": {...}, "query": {...}, ...},
     "tasks": {name: ndarray}, "tasks_meta": {...}}

Each tab's part comes from ``views/<tab>.py``'s ``data(a, ctx)`` (``ViewContext`` shares the
summary, the timeline lanes and the per-task arrays between them) and is drawn by
``labextension/src/report/tabs/<tab>.ts``. ``tasks`` are :func:`..payload.build`'s arrays
(dispatch order, compact dtypes), ``tasks_meta`` its meta. A number shown carries its kind
(measured, sampled or estimated) where the tab says it.

``encode_data`` packs it for the MIME payload: the JSON and the arrays' raw bytes in one
binary container, gzipped, as base-85 text (see ``pack_data`` and ``b85``).
"""
from __future__ import annotations

import base64
import dataclasses
import functools
import gzip
import json
import math
import struct
import zlib
from typing import Any

import numpy as np

from ... import fmt
from ...analysis import Analysis
from ...constants import REPORT_DATA_FORMAT
from ...model import Run
from .. import payload as task_payload
from ..lanes import Lanes, assign_lanes

DATA_FORMAT = REPORT_DATA_FORMAT          # constants.json: shared with the renderer
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
    series: dict | None = None         # service/history.cell_series: the cell's runs, or None

    @classmethod
    def of(cls, a: Analysis, series: dict | None = None) -> "ViewContext":
        tl = a.timeline
        lanes = assign_lanes(a.run, tl.launch, tl.duration)
        arrays, meta, extras = task_payload.build(a, lanes)
        return cls(a, a.summary(), lanes, arrays, meta, extras, series)


def _narrow(values: np.ndarray) -> np.ndarray:
    """The array as the browser can hold it, little-endian (bool as uint8; int64 narrowed to
    int32 when it fits, else float64: the browser has no 64-bit integer arrays)."""
    arr = np.asarray(values)
    if arr.dtype == np.bool_:
        arr = arr.astype("uint8")
    if arr.dtype.kind in "iu" and arr.dtype.name not in DTYPES:
        lo = int(arr.min()) if arr.size else 0
        hi = int(arr.max()) if arr.size else 0
        arr = arr.astype("int32" if -2**31 <= lo and hi < 2**31 else "float64")
    elif arr.dtype.name not in DTYPES:
        arr = arr.astype("float64")
    return np.ascontiguousarray(arr.astype(arr.dtype.newbyteorder("<"), copy=False))


def encode_array(values: np.ndarray) -> dict:
    """``{"dtype", "b64"}``: the array's little-endian bytes (see ``_narrow``). The JSON form
    of an array (``decode.ts`` ``fromJson`` reads it); payloads use the binary container."""
    arr = _narrow(values)
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
    from . import memory, profile, query, series, stages, stragglers, summary, timeline, whatif
    return {"summary": summary, "query": query, "timeline": timeline, "stages": stages,
            "stragglers": stragglers, "whatif": whatif, "memory": memory, "profile": profile,
            "history": series}


def report_data(a: Analysis, series: dict | None = None) -> dict:
    """The whole report's data (see the module docstring); ``series``: the cell's runs
    (``service/history.cell_series``) for the History tab and the Summary's context line."""
    ctx = ViewContext.of(a, series)
    tabs = {key: part for key, mod in _tabs().items() if (part := mod.data(a, ctx)) is not None}
    return {"format": DATA_FORMAT, "run_id": str(a.run.run_id), "header": header(a.run, a),
            "tabs": jsonable(tabs),
            "tasks": dict(ctx.arrays),
            "tasks_meta": jsonable(ctx.meta)}


def fallback_data(run: Run, reason: str) -> dict:
    """A Run the analysis could not handle: the header, the reason, and the Summary tab's
    basic part (``summary.basic``: breakdown and stages from the Run alone)."""
    from . import summary
    return {"format": DATA_FORMAT, "run_id": str(run.run_id), "header": header(run, None),
            "problem": reason, "tabs": jsonable({"summary": summary.basic(run)}),
            "tasks": {}, "tasks_meta": {}}


# The compressed payload (``encode_data``) is a binary container, gzipped, then base64 once:
#   MAGIC (4 bytes) · uint32 LE length of the header · the header: the data as UTF-8 JSON, with
#   "tasks" {name: {"dtype", "n", "o": byte offset, "s": 1 if byte-shuffled, "d": the dtype of
#   its differences if sent as those}} · each array's bytes at its offset (8-byte aligned, so
#   the browser views them in place).
# Multi-byte arrays are byte-shuffled (all first bytes, then all second bytes, …: the sign
# and exponent bytes of similar numbers sit together, which gzip compresses far better).
# Integer arrays that mostly step by little (task ids, indexes in dispatch order) travel as
# their differences (exact; the reader sums them up).
MAGIC = b"JPR\x02"
GZIP_LEVEL = 6
SHUFFLE_MIN = 64


def _shuffle(arr: np.ndarray) -> bytes:
    w = arr.dtype.itemsize
    return arr.view(np.uint8).reshape(-1, w).T.tobytes()


def _unshuffle(buf: bytes, dtype: np.dtype, n: int) -> np.ndarray:
    w = dtype.itemsize
    return np.frombuffer(buf, np.uint8).reshape(w, n).T.copy().view(dtype).reshape(n)


def _differences(arr: np.ndarray) -> np.ndarray | None:
    """An integer array's differences (first value, then each step), little-endian, if most
    steps are small; else None."""
    if arr.dtype.kind not in "iu" or arr.dtype.itemsize < 2 or arr.size < SHUFFLE_MIN:
        return None
    d = np.diff(arr.astype("int64"), prepend=0)
    steps = np.abs(d[1:])
    if np.median(steps) * 16 > np.median(np.abs(arr.astype("int64"))) or steps.max() >= 2**31:
        return None
    lo, hi = int(d.min()), int(d.max())
    for dtype in ("int8", "int16", "int32"):
        info = np.iinfo(dtype)
        if info.min <= lo and hi <= info.max:
            return d.astype(np.dtype(dtype).newbyteorder("<"))
    return None


def pack_data(data: dict) -> bytes:
    """The binary container (uncompressed) of report data whose ``tasks`` are arrays."""
    heads: dict[str, dict] = {}
    chunks: list[bytes] = []
    offset = 0
    for name, values in (data.get("tasks") or {}).items():
        arr = _narrow(values)
        head = {"dtype": arr.dtype.name, "n": int(arr.size), "o": offset}
        diffs = _differences(arr)
        if diffs is not None:
            head["d"] = diffs.dtype.name
            arr = diffs
        shuffle = arr.dtype.itemsize > 1 and arr.size >= SHUFFLE_MIN
        raw = _shuffle(arr) if shuffle else arr.tobytes()
        heads[name] = {**head, "s": int(shuffle)}
        pad = (-len(raw)) % 8
        chunks.append(raw + b"\0" * pad)
        offset += len(raw) + pad
    # ASCII: a lone surrogate in a user string stays a \\udXXX escape (JSON.parse keeps it)
    text = json.dumps({**data, "tasks": heads}, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("ascii")
    start = len(MAGIC) + 4 + len(text)
    text += b" " * ((-start) % 8)          # arrays start 8-byte aligned
    return b"".join([MAGIC, struct.pack("<I", len(text)), text, *chunks])


def unpack_data(blob: bytes) -> dict:
    if not blob.startswith(MAGIC):       # the JSON form: arrays as base64 inside
        data = json.loads(blob.decode("utf-8"))
        data["tasks"] = {k: decode_array(v) for k, v in data.get("tasks", {}).items()}
        return data
    (size,) = struct.unpack_from("<I", blob, len(MAGIC))
    start = len(MAGIC) + 4
    data = json.loads(blob[start:start + size].decode("utf-8"))
    body = start + size
    tasks = {}
    for name, h in data.get("tasks", {}).items():
        final = np.dtype(h["dtype"]).newbyteorder("<")
        dtype = np.dtype(h.get("d", h["dtype"])).newbyteorder("<")
        lo = body + h["o"]
        buf = blob[lo:lo + dtype.itemsize * h["n"]]
        arr = _unshuffle(buf, dtype, h["n"]) if h["s"] else np.frombuffer(buf, dtype).copy()
        tasks[name] = np.cumsum(arr.astype("int64")).astype(final) if "d" in h else arr
    data["tasks"] = tasks
    return data


# The compressed bytes as text: base 85 (4 bytes in 5 characters, where base64 takes 4 in
# 5⅓), "b85:" then the number of zero bytes padded at the end (0-3) then the characters. The
# alphabet leaves out what JSON or an HTML <script> would escape (" \ < > &) and ' `.
B85_PREFIX = "b85:"
B85_ALPHABET = bytes(c for c in range(0x21, 0x7F) if chr(c) not in "\"&'<>\\`")[:85]


def b85(raw: bytes) -> str:
    pad = (-len(raw)) % 4
    words = np.frombuffer(raw + b"\0" * pad, dtype=">u4").astype("uint64")
    digits = np.empty((len(words), 5), dtype="uint8")
    for k in range(4, -1, -1):
        digits[:, k] = words % 85
        words //= 85
    table = np.frombuffer(B85_ALPHABET, dtype="uint8")
    return f"{B85_PREFIX}{pad}" + table[digits.reshape(-1)].tobytes().decode("ascii")


def unb85(text: str) -> bytes:
    pad = int(text[len(B85_PREFIX)])
    chars = np.frombuffer(text[len(B85_PREFIX) + 1:].encode("ascii"), dtype="uint8")
    lookup = np.zeros(256, dtype="uint64")
    lookup[np.frombuffer(B85_ALPHABET, dtype="uint8")] = np.arange(85, dtype="uint64")
    digits = lookup[chars].reshape(-1, 5)
    words = np.zeros(len(digits), dtype="uint64")
    for k in range(5):
        words = words * 85 + digits[:, k]
    raw = words.astype(">u4").tobytes()
    return raw[:len(raw) - pad] if pad else raw


def encode_data(data: dict) -> str:
    """The gzip of the data's binary container, as base-85 text (the MIME payload's
    ``data``)."""
    blob = pack_data(data)
    z = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)   # gzip, mtime 0
    return b85(z.compress(blob) + z.flush())


def decode_data(encoded: str) -> dict:
    """Report data of a MIME payload's ``data`` (base 85 or, as first written, base64)."""
    raw = unb85(encoded) if encoded.startswith(B85_PREFIX) else base64.b64decode(encoded)
    return unpack_data(gzip.decompress(raw))


def mime_payload(data: dict) -> dict:
    """The notebook output's ``application/vnd.jupyter-perf.report+json`` data for report data
    (docs/report.md): small fields in the clear, the data compressed."""
    import bokeh

    from ...constants import REPORT_DATA_ENCODING
    return {"format": data["format"], "run_id": data["run_id"], "title": data["header"]["title"],
            "bokeh_version": bokeh.__version__, "encoding": REPORT_DATA_ENCODING,
            "data": encode_data(data)}


def report_payload(obj: Run | Analysis, series: dict | None = None) -> dict:
    """The MIME payload of a Run (analysed here; if that fails, the fallback data with the
    reason) or an Analysis; ``series``: the cell's stored runs (the History tab), if any."""
    from ...analysis import analyze
    if isinstance(obj, Run):
        try:
            obj = analyze(obj)
        except Exception as exc:  # broad on purpose: a measured run always renders
            return mime_payload(fallback_data(obj, f"analysis failed: {type(exc).__name__}: {exc}"))
    return mime_payload(report_data(obj, series) if series is not None else report_data(obj))
