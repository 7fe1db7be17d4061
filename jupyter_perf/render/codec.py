"""Exact, compact column encoding for the arrays the report's renderer reads.

The what-if replay runs in the browser and must reproduce ``Analysis.whatif`` to the last
bit, so its inputs travel as float64 *values*, but not necessarily as float64 *bytes*:

* a column that is one value everywhere costs nothing (``const``);
* a column that is mostly one value (zeros, or "same as the duration") is sent as the
  positions that differ plus their values (``sparse``);
* whole numbers travel as the narrowest integer type that holds them, other values that
  survive a round trip through float32 (Spark's whole milliseconds) as float32, the rest as
  float64 (``dense``);
* a column the browser can compute from others travels as the rule (``rate``: the
  no-stragglers duration, ``min(base, r[code] × Σx)`` or ``min(base, m[code])`` per stage
  code) plus the positions where the rule does not give the value (exceptions, exact).

``encode`` checks the round trip (``decode``) bit for bit before it returns, so a wrong
choice cannot slip through; ``labextension/src/report/tasks.ts`` has the matching
``decodeColumn``.

Display columns (``encode_display``: bars and hover text only, never replayed) may be
rounded to a step first and may be ``minus`` columns: ``max(0, base − Σ others)``, the part of a
duration the other parts leave (checked here to be within ``tol`` of the value).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

SPARSE_MAX_SHARE = 0.4


def _num(value: float) -> Any:
    """JSON-safe number: infinities as strings (the renderer reads them back)."""
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return float(value)


def smallest_int(values: np.ndarray) -> np.ndarray:
    """Integers in the narrowest typed-array dtype that holds them (uint8 … int32, uint32)."""
    values = np.asarray(values)
    if values.size == 0:
        return values.astype("uint8")
    lo, hi = int(values.min()), int(values.max())
    for dtype in ("uint8", "uint16", "int32", "uint32"):
        info = np.iinfo(dtype)
        if info.min <= lo and hi <= info.max:
            return values.astype(dtype)
    raise ValueError(f"integers out of int32 range: {lo}..{hi}")


def _dense(name: str, values: np.ndarray, arrays: dict[str, np.ndarray]) -> dict:
    if values.size and np.isfinite(values).all() and np.array_equal(np.floor(values), values) \
            and -2**31 <= values.min() and values.max() < 2**32 \
            and not np.signbit(values[values == 0]).any():
        arrays[name] = smallest_int(values.astype("int64"))
        return {"k": "dense", "a": name}
    f32 = values.astype("float32")
    if np.array_equal(f32.astype("float64"), values, equal_nan=True):
        arrays[name] = f32
        return {"k": "dense", "a": name}
    arrays[name] = values.astype("float64")
    return {"k": "dense", "a": name}


def _index(idx: np.ndarray, n: int) -> np.ndarray:
    return smallest_int(idx) if n < 65536 else idx.astype("int32")


def _spec(name: str, values: np.ndarray, arrays: dict[str, np.ndarray], differs: np.ndarray,
          common: dict) -> dict:
    n = len(values)
    count = int(differs.sum())
    if count == 0:
        return {"k": "const", "n": n, **common}
    if "c" in common and count == n and bool(_same(values, np.full(n, values[0])).all()):
        return {"k": "const", "n": n, "c": _num(values[0])}
    if count <= SPARSE_MAX_SHARE * n:
        idx = np.flatnonzero(differs)
        arrays[name + ".i"] = _index(idx, n)
        return {"k": "sparse", "n": n, "i": name + ".i", **common,
                "v": _dense(name + ".v", values[idx], arrays)}
    return _dense(name, values, arrays)


def encode(name: str, values: np.ndarray, arrays: dict[str, np.ndarray], *,
           default: float | None = 0.0, base: np.ndarray | None = None,
           base_name: str = "") -> dict:
    """Spec for ``values`` (float64); the arrays it needs are added to ``arrays``.

    ``default``: the common value of a sparse column; or, with ``base``, a sparse column
    equal to ``base`` (another encoded column, ``base_name``) except at a few positions.
    """
    values = np.asarray(values, dtype="float64")
    if base is not None:
        differs = ~_same(values, np.asarray(base, dtype="float64"))
        common: dict = {"base": base_name}
    else:
        if default is None:
            return _dense(name, values, arrays)
        differs = ~_same(values, np.full(len(values), default, dtype="float64"))
        common = {"c": _num(default)}
    spec = _spec(name, values, arrays, differs, common)
    back = decode(spec, arrays, {base_name: base} if base is not None else {})
    if not np.array_equal(back, values, equal_nan=True):
        raise AssertionError(f"codec round trip changed column {name!r}")
    return spec


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Bit-for-bit equal as float64 values (NaN equals NaN; -0.0 is not 0.0)."""
    return (a.view("int64") == b.view("int64")) | (np.isnan(a) & np.isnan(b))


def encode_rate(name: str, values: np.ndarray, arrays: dict[str, np.ndarray], *,
                decoded: dict[str, np.ndarray], base: str, code: str, x: list[str],
                r: np.ndarray, m: np.ndarray) -> dict:
    """``values`` as the rule ``min(base, t)`` per position, ``t = r[code] × Σ x`` where
    ``r[code]`` is a number and ``Σ x > 0``, else ``m[code]`` (``r``, ``m``: one float64 per code;
    ``decoded``: the already encoded columns ``base`` and ``x`` as the browser decodes them,
    ``code`` an int array in ``arrays``) — plus, exactly, the positions where the rule misses.
    Falls back to :func:`encode` (against ``base``) when the rule does not pay."""
    values = np.asarray(values, dtype="float64")
    n = len(values)
    spec: dict = {"k": "rate", "n": n, "base": base, "code": code, "x": list(x),
                  "r": name + ".r", "m": name + ".m"}
    arrays[name + ".r"] = np.asarray(r, dtype="float64")
    arrays[name + ".m"] = np.asarray(m, dtype="float64")
    ruled = _rate(spec, arrays, decoded)
    misses = ~_same(values, ruled)
    plain = ~_same(values, np.asarray(decoded[base], dtype="float64"))
    if misses.sum() * 2 > plain.sum():          # no better than "same as base, except …"
        del arrays[name + ".r"], arrays[name + ".m"]
        return encode(name, values, arrays, base=decoded[base], base_name=base)
    if misses.any():
        idx = np.flatnonzero(misses)
        arrays[name + ".i"] = _index(idx, n)
        spec["i"] = name + ".i"
        spec["v"] = _dense(name + ".v", values[idx], arrays)
    back = decode(spec, arrays, decoded)
    if not np.array_equal(back, values, equal_nan=True):
        raise AssertionError(f"codec round trip changed column {name!r}")
    return spec


def _rate(spec: dict, arrays: dict, decoded: dict) -> np.ndarray:
    base = np.asarray(decoded[spec["base"]], dtype="float64")
    c = np.asarray(arrays[spec["code"]]).astype("int64")
    xs = np.zeros(len(base))
    for name in spec["x"]:
        xs = xs + np.asarray(decoded[name], dtype="float64")
    r = np.asarray(arrays[spec["r"]], dtype="float64")[c]
    m = np.asarray(arrays[spec["m"]], dtype="float64")[c]
    by_rate = ~np.isnan(r) & (xs > 0)
    with np.errstate(invalid="ignore", over="ignore"):
        t = np.where(by_rate, r * xs, m)
    return np.minimum(base, t)


def encode_display(name: str, values: np.ndarray, arrays: dict[str, np.ndarray], *,
                   step: float | None = None) -> dict:
    """A display column (bars, hover text): float32 precision, rounded to a multiple of
    ``step`` first if given; const, sparse or dense as it pays."""
    v = np.asarray(values, dtype="float64")
    if step:
        v = np.round(v / step) * step
    v = v.astype("float32").astype("float64")
    return encode(name, v, arrays)


def encode_minus(name: str, values: np.ndarray, arrays: dict[str, np.ndarray], *,
                 decoded: dict[str, np.ndarray], base: str, minus: list[str], tol: float,
                 step: float | None = None) -> dict:
    """A display column as ``max(0, base − Σ minus)`` (decoded columns) where that is within
    ``tol`` of ``values``; elsewhere its values (display precision, as
    :func:`encode_display`) travel as exceptions. Falls back to :func:`encode_display` when
    the rule does not pay."""
    v = np.asarray(values, dtype="float64")
    spec: dict = {"k": "minus", "n": len(v), "base": base, "minus": list(minus)}
    ruled = decode(spec, arrays, decoded)
    misses = ~(np.abs(ruled - v) <= tol)
    if misses.sum() > SPARSE_MAX_SHARE * len(v):
        return encode_display(name, v, arrays, step=step)
    if misses.any():
        idx = np.flatnonzero(misses)
        arrays[name + ".i"] = _index(idx, len(v))
        spec["i"] = name + ".i"
        spec["v"] = encode_display(name + ".v", v[idx], arrays, step=step)
    back = decode(spec, arrays, decoded)
    if not (np.abs(back - v) <= max(tol, step or 0.0) + 1e-6 * np.abs(v)).all():
        raise AssertionError(f"codec: column {name!r} is not within {tol} of its values")
    return spec


def decode(spec: dict, arrays: dict[str, np.ndarray], decoded: dict[str, np.ndarray],
           cols: dict[str, dict] | None = None) -> np.ndarray:
    """The Python twin of ``tasks.ts``'s ``decodeColumn`` (used to verify every encoding).
    ``decoded``: columns already decoded; with ``cols`` (name -> spec) a column a spec
    refers to is decoded (and added to ``decoded``) when first needed."""
    def col(name: str) -> np.ndarray:
        if name not in decoded and cols is not None and name in cols:
            decoded[name] = decode(cols[name], arrays, decoded, cols)
        return decoded[name]

    if spec["k"] == "dense":
        return np.asarray(arrays[spec["a"]]).astype("float64")
    n = spec["n"]
    if spec["k"] == "rate":
        for name in [spec["base"], *spec["x"]]:
            col(name)
        out = _rate(spec, arrays, decoded)
        if "i" in spec:
            out[np.asarray(arrays[spec["i"]]).astype("int64")] = decode(spec["v"], arrays, decoded)
        return out
    if spec["k"] == "minus":
        out = np.array(col(spec["base"]), dtype="float64", copy=True)
        for name in spec["minus"]:
            out = out - col(name)
        out = np.maximum(out, 0.0)
        if "i" in spec:
            out[np.asarray(arrays[spec["i"]]).astype("int64")] = decode(spec["v"], arrays, decoded, cols)
        return out
    if "base" in spec:
        out = np.array(col(spec["base"]), dtype="float64", copy=True)
    else:
        out = np.full(n, float(spec["c"]), dtype="float64")
    if spec["k"] == "sparse":
        idx = np.asarray(arrays[spec["i"]]).astype("int64")
        out[idx] = decode(spec["v"], arrays, decoded, cols)
    return out
