"""codec: every encoding decodes to the same float64 values, in the smallest form."""
import math

import numpy as np
import pytest

from jupyter_perf.render.codec import decode, encode, encode_display, encode_minus, encode_rate, smallest_int


def roundtrip(values, **kw):
    arrays = {}
    spec = encode("x", np.asarray(values, dtype="float64"), arrays, **kw)
    decoded = {"base": kw.get("base")} if "base" in kw else {}
    return spec, arrays, decode(spec, arrays, decoded)


def test_whole_milliseconds_travel_as_small_ints_and_halves_as_float32():
    v = np.arange(1000, dtype="float64") * 7.0
    spec, arrays, back = roundtrip(v)
    assert spec["k"] == "dense" and arrays["x"].dtype == np.uint16
    assert np.array_equal(back, v)
    spec, arrays, back = roundtrip(v + 0.5)
    assert spec["k"] == "dense" and arrays["x"].dtype == np.float32
    assert np.array_equal(back, v + 0.5)
    v = np.array([-0.0, 1.0, 2.0] * 100)       # -0.0 is not an integer 0
    spec, arrays, back = roundtrip(v, default=None)
    assert arrays["x"].dtype == np.float32 and np.array_equal(np.signbit(back), np.signbit(v))


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


def test_rate_rule_with_exact_exceptions():
    rng = np.random.default_rng(1)
    n = 2000
    code = np.repeat(np.arange(4), n // 4).astype("uint8")
    x = rng.integers(1 << 20, 1 << 24, n).astype("float64")
    x[code == 3] = 0.0                                    # a stage without bytes: by duration
    dur = rng.uniform(50, 500, n)
    r = np.array([1e-5, 2.5e-5, np.nan, 3e-5])
    m = np.array([100.0, 200.0, 150.0, 120.0])
    t = np.where(~np.isnan(r[code]) & (x > 0), r[code] * x, m[code])
    values = np.minimum(dur, t)
    values[[5, 777]] = dur[[5, 777]]                      # e.g. failed attempts keep theirs
    arrays = {"code": code}
    decoded = {"dur": dur, "x": x}
    spec = encode_rate("ns", values, arrays, decoded=decoded, base="dur", code="code", x=["x"],
                       r=r, m=m)
    assert spec["k"] == "rate" and len(arrays["ns.i"]) == 2
    assert np.array_equal(decode(spec, arrays, dict(decoded)), values)
    # a rule that does not fit falls back to "the base, except …" — still exact
    noise = rng.uniform(1, 2, n)
    spec = encode_rate("nz", noise, arrays, decoded=decoded, base="dur", code="code", x=["x"],
                       r=r, m=m)
    assert spec["k"] != "rate" and np.array_equal(decode(spec, arrays, dict(decoded)), noise)


def test_display_columns_round_and_derive():
    rng = np.random.default_rng(2)
    a = rng.uniform(0, 100, 1000)
    arrays = {}
    spec = encode_display("a", a, arrays, step=1 / 64)
    back = decode(spec, arrays, {})
    assert np.abs(back - a).max() <= 1 / 128 + 1e-5
    spec = encode_display("c", np.full(1000, 2.0), arrays)
    assert spec["k"] == "const" and spec["c"] == 2.0
    b = rng.uniform(0, 50, 1000)
    total = a + b
    b[3] = 99.0                                            # where the rule misses: sent
    decoded = {"total": total, "a": back}
    spec = encode_minus("b", b, arrays, decoded=decoded, base="total", minus=["a"], tol=0.05,
                        step=1 / 64)
    assert spec["k"] == "minus" and len(arrays["b.i"]) == 1
    got = decode(spec, arrays, dict(decoded))
    assert np.abs(got - b).max() <= 0.05
    # with cols, the columns a spec refers to are decoded on demand
    cols = {"b": spec, "a": {"k": "dense", "a": "a"}}
    got2 = decode(cols["b"], arrays, {"total": total}, cols)
    assert np.array_equal(got, got2)


def test_smallest_int():
    assert smallest_int(np.array([0, 255])).dtype == np.uint8
    assert smallest_int(np.array([0, 256])).dtype == np.uint16
    assert smallest_int(np.array([-1, 5])).dtype == np.int32
    assert smallest_int(np.array([0, 2**32 - 1])).dtype == np.uint32
    with pytest.raises(ValueError):
        smallest_int(np.array([0, 2**40]))
