"""Shared test vectors of ``render/fmt.py``: input → the exact string, for every port.

``fmt_vectors.json`` (beside this file) is checked in; three suites read it:
``tests/render/test_fmt.py`` (Python: the file is exactly what ``fmt`` gives for these
inputs), ``tests/render/test_report_js.py`` (the report's ``report.js`` under node) and the
sidebar's jest test (``labextension/src/__tests__``). After a deliberate change to ``fmt``:

    .venv/bin/python tests/render/fmt_vectors.py      # rewrites fmt_vectors.json

The inputs cover every unit boundary on both sides, exact ties (Python rounds them to even),
values that round up into the next unit, negatives, zero, null, and seeded random values.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
PATH = HERE / "fmt_vectors.json"


def ms_inputs() -> list[float | None]:
    edges = [0, 0.4, 0.5, 0.6, 1.5, 2.5, 12.5, 999, 999.4, 999.5, 999.6, 1000, 1004.9, 1005,
             1125, 1135, 1234.5, 9999, 9995, 10_005, 59_994.9, 59_995, 59_999.9, 60_000,
             60_499, 60_500, 61_500, 119_499, 119_500, 119_700, 185_000, 184_600, 599_999,
             3_599_000, 3_599_499, 3_599_500, 3_600_000, 3_629_999, 3_630_000, 7_322_000.5,
             86_400_000, 359_999_999, 1e10]
    edges += [-x for x in edges if x] + [None]
    rng = np.random.default_rng(20261123)
    rand = rng.uniform(0, 1e7, 150).tolist() + (rng.integers(0, 20_000, 150) / 8).tolist()
    rand += (10 ** rng.uniform(-1, 8, 100)).tolist()
    return edges + [float(x) for x in rand]


def bytes_inputs() -> list[float | None]:
    k = 1024
    edges = [0, 1, 0.5, 1.5, 512, 1023, 1023.4, 1023.5, 1024, 1075.2, 1126.4, 1536,
             k * k - 52, k * k - 51, k * k, 10.7 * k * k, 10.75 * k * k, k ** 3 - 1, k ** 3,
             1.25 * k ** 4, k ** 5, 3 * k ** 5]
    edges += [-x for x in edges if x] + [None]
    rng = np.random.default_rng(1123)
    rand = (2 ** rng.uniform(0, 45, 300)).round().tolist()
    return edges + [float(x) for x in rand]


def build() -> dict:
    sys.path.insert(0, str(HERE.parents[1]))
    from jupyter_perf.render import fmt
    return {
        "_comment": "render/fmt.py's strings for these inputs (null = unknown). Written by "
                    "tests/render/fmt_vectors.py; checked by tests/render/test_fmt.py, "
                    "tests/render/test_report_js.py and the sidebar's jest test.",
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
