"""codec: every encoding decodes to the same float64 values, in the smallest form."""
import math

import numpy as np
import pytest

from jupyter_perf.render.codec import decode, encode, smallest_int


def roundtrip(values, **kw):
    arrays = {}
    spec = encode("x", np.asarray(values, dtype="float64"), arrays, **kw)
    decoded = {"base": kw.get("base")} if "base" in kw else {}
    return spec, arrays, decode(spec, arrays, decoded)


def test_whole_milliseconds_travel_as_float32():
    v = np.arange(1000, dtype="float64") * 7.0
    spec, arrays, back = roundtrip(v)
    assert spec["k"] == "dense" and arrays["x"].dtype == np.float32
    assert np.array_equal(back, v)


def test_fractions_stay_float64():
    v = np.linspace(0.1, 99.7, 500)
    spec, arrays, back = roundtrip(v)
    assert arrays["x"].dtype == np.float64 and np.array_equal(back, v)


def test_mostly_zero_is_sparse_and_all_zero_is_free():
    v = np.zeros(1000)
    v[[3, 500]] = [1.25, 1e-3]
    spec, arrays, back = roundtrip(v)
    assert spec["k"] == "sparse" and len(arrays["x.i"]) == 2
    assert np.array_equal(back, v)
    spec, arrays, back = roundtrip(np.zeros(10))
    assert spec["k"] == "const" and arrays == {} and np.array_equal(back, np.zeros(10))


def test_infinite_default_and_base_column():
    v = np.full(100, math.inf)
    v[7] = 3.5
    spec, arrays, back = roundtrip(v, default=math.inf)
    assert spec["c"] == "inf" and np.array_equal(back, v)
    base = np.arange(100, dtype="float64") + 0.5
    other = base.copy()
    other[[1, 2]] = [0.1, 0.2]
    spec, arrays, back = roundtrip(other, base=base, base_name="base")
    assert spec["base"] == "base" and spec["k"] == "sparse" and np.array_equal(back, other)


def test_smallest_int():
    assert smallest_int(np.array([0, 255])).dtype == np.uint8
    assert smallest_int(np.array([0, 256])).dtype == np.uint16
    assert smallest_int(np.array([-1, 5])).dtype == np.int32
    with pytest.raises(ValueError):
        smallest_int(np.array([0, 2**40]))
