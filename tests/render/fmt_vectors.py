"""Shared test vectors of ``render/fmt.py``: input → the exact string, for every port.

``fmt_vectors.json`` (beside this file) is checked in; two suites read it:
``tests/render/test_fmt.py`` (Python: the file is exactly what ``fmt`` gives for these
inputs) and the jest test of ``labextension/src/format.ts`` (``labextension/src/__tests__``),
the one browser formatter: the sidebar's and the report renderer's. After a deliberate change to ``fmt``:

    .venv/bin/python tests/render/fmt_vectors.py      # rewrites fmt_vectors.json

The inputs cover every unit boundary on both sides, exact ties (Python rounds them to even),
values that round up into the next unit, negatives, zero, null, and seeded random values.

Every input is exact by construction, so the file is the same on every machine: the random
values come from integer arithmetic only (a seeded splitmix64, below), and each becomes a
float through a short decimal literal (``float("1234567891e-3")``, correctly rounded by Python
and by ``JSON.parse`` alike), a dyadic fraction (``k / 8``) or a plain integer. No ``pow``,
``log`` or ``exp`` and no library RNG: those differ in the last digit across numpy builds and
are not promised to stay the same across versions.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PATH = HERE / "fmt_vectors.json"
MASK64 = (1 << 64) - 1


class SplitMix64:
    """Steele, Lea and Flood's splitmix64 on Python integers: the same numbers everywhere."""

    def __init__(self, seed: int):
        self.state = seed & MASK64

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Uniform in [0, n) (rejection sampling, no modulo bias)."""
        limit = (1 << 64) - (1 << 64) % n
        while (x := self.next()) >= limit:
            pass
        return x % n


def ms_inputs() -> list[float | None]:
    edges = [0, 0.4, 0.5, 0.6, 1.5, 2.5, 12.5, 999, 999.4, 999.5, 999.6, 1000, 1004.9, 1005,
             1125, 1135, 1234.5, 9999, 9995, 10_005, 59_994.9, 59_995, 59_999.9, 60_000,
             60_499, 60_500, 61_500, 119_499, 119_500, 119_700, 185_000, 184_600, 599_999,
             3_599_000, 3_599_499, 3_599_500, 3_600_000, 3_629_999, 3_630_000, 7_322_000.5,
             86_400_000, 359_999_999, 1e10]
    edges += [-x for x in edges if x] + [None]
    rng = SplitMix64(20261123)
    # uniform in [0, 1e7) with three decimals, multiples of 1/8 in [0, 2500), and a spread
    # over nine decades (six significant digits times 10**-6 .. 10**2: 0.1 to 1e8)
    rand = [float(f"{rng.below(10 ** 10)}e-3") for _ in range(150)]
    rand += [rng.below(20_000) / 8 for _ in range(150)]
    rand += [float(f"{100_000 + rng.below(900_000)}e{rng.below(9) - 6}") for _ in range(100)]
    return edges + rand


def bytes_inputs() -> list[float | None]:
    k = 1024
    edges = [0, 1, 0.5, 1.5, 512, 1023, 1023.4, 1023.5, 1024, 1075.2, 1126.4, 1536,
             k * k - 52, k * k - 51, k * k, 10.7 * k * k, 10.75 * k * k, k ** 3 - 1, k ** 3,
             1.25 * k ** 4, k ** 5, 3 * k ** 5]
    edges += [-x for x in edges if x] + [None]
    rng = SplitMix64(1123)
    # whole bytes spread over 45 binary orders: a uniform integer in [2**b, 2**(b+1))
    rand = []
    for _ in range(300):
        b = rng.below(45)
        rand.append(float((1 << b) + rng.below(1 << b)))
    return edges + rand


def build() -> dict:
    sys.path.insert(0, str(HERE.parents[1]))
    from jupyter_perf import fmt
    return {
        "_comment": "render/fmt.py's strings for these inputs (null = unknown). Written by "
                    "tests/render/fmt_vectors.py; checked by tests/render/test_fmt.py and "
                    "the jest test of labextension/src/format.ts.",
        "ms": [[x, fmt.ms(x)] for x in ms_inputs()],
        "bytes": [[x, fmt.nbytes(x)] for x in bytes_inputs()],
    }


def dumps(data: dict) -> str:
    """One pair a line, so a changed string shows as a one-line diff."""
    def pairs(rows):
        return ",\n".join("  " + json.dumps(r, ensure_ascii=False) for r in rows)
    return ("{\n" f' "_comment": {json.dumps(data["_comment"], ensure_ascii=False)},\n'
            f' "ms": [\n{pairs(data["ms"])}\n ],\n'
            f' "bytes": [\n{pairs(data["bytes"])}\n ]\n}}\n')


if __name__ == "__main__":
    PATH.write_text(dumps(build()), encoding="utf-8")
    print(f"wrote {PATH}")
