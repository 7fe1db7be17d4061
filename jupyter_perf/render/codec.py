"""Exact, compact column encoding for the arrays the report's JavaScript reads.

The what-if replay runs in the browser and must reproduce ``Analysis.whatif`` to the last
bit, so its inputs travel as float64 *values*, but not necessarily as float64 *bytes*:

* a column that is one value everywhere costs nothing (``const``);
* a column that is mostly one value (zeros, or "same as the duration") is sent as the
  positions that differ plus their values (``sparse``);
* values that survive a round trip through float32 (Spark's whole milliseconds) travel as
  float32, others as float64.

``encode`` checks the round trip (``decode``) bit for bit before it returns, so a wrong
choice cannot slip through; ``report.js`` has the matching ``decode``. Bokeh then gzips and
base64-encodes each array in the HTML.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

SPARSE_MAX_SHARE = 0.4


def _num(value: float) -> Any:
    """JSON-safe number: infinities as strings (``report.js`` reads them back)."""
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return float(value)


def smallest_int(values: np.ndarray) -> np.ndarray:
    """Integers in the narrowest dtype BokehJS understands (uint8 … int32)."""
    values = np.asarray(values)
    if values.size == 0:
        return values.astype("uint8")
    lo, hi = int(values.min()), int(values.max())
    for dtype in ("uint8", "uint16", "int32"):
        info = np.iinfo(dtype)
        if info.min <= lo and hi <= info.max:
            return values.astype(dtype)
    raise ValueError(f"integers out of int32 range: {lo}..{hi}")


def _dense(name: str, values: np.ndarray, arrays: dict[str, np.ndarray]) -> dict:
    f32 = values.astype("float32")
    if np.array_equal(f32.astype("float64"), values, equal_nan=True):
        arrays[name] = f32
        return {"k": "dense", "a": name}
    arrays[name] = values.astype("float64")
    return {"k": "dense", "a": name}


def encode(name: str, values: np.ndarray, arrays: dict[str, np.ndarray], *,
           default: float | None = 0.0, base: np.ndarray | None = None,
           base_name: str = "") -> dict:
    """Spec for ``values`` (float64); the arrays it needs are added to ``arrays``.

    ``default``: the common value of a sparse column; or, with ``base``, a sparse column
    equal to ``base`` (another encoded column, ``base_name``) except at a few positions.
    """
    values = np.asarray(values, dtype="float64")
    n = len(values)
    if base is not None:
        differs = values != np.asarray(base, dtype="float64")
        common: dict = {"base": base_name}
    else:
        differs = values != default
        common = {"c": _num(default)}
    count = int(differs.sum())
    if count == 0:
        spec = {"k": "const", "n": n, **common}
    elif count <= SPARSE_MAX_SHARE * n:
        idx = np.flatnonzero(differs)
        arrays[name + ".i"] = smallest_int(idx) if n < 65536 else idx.astype("int32")
        spec = {"k": "sparse", "n": n, "i": name + ".i", **common,
                "v": _dense(name + ".v", values[idx], arrays)}
    else:
        spec = _dense(name, values, arrays)
    back = decode(spec, arrays, {base_name: base} if base is not None else {})
    if not np.array_equal(back, values, equal_nan=True):
        raise AssertionError(f"codec round trip changed column {name!r}")
    return spec


def decode(spec: dict, arrays: dict[str, np.ndarray], decoded: dict[str, np.ndarray]) -> np.ndarray:
    """The Python twin of ``report.js``'s ``decode`` (used to verify every encoding)."""
    if spec["k"] == "dense":
        return np.asarray(arrays[spec["a"]]).astype("float64")
    n = spec["n"]
    if "base" in spec:
        out = np.array(decoded[spec["base"]], dtype="float64", copy=True)
    else:
        out = np.full(n, float(spec["c"]), dtype="float64")
    if spec["k"] == "sparse":
        idx = np.asarray(arrays[spec["i"]]).astype("int64")
        out[idx] = decode(spec["v"], arrays, decoded)
    return out
