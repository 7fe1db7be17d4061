"""Write the comparisons that ``tests/render/test_compare_golden.py`` draws with the TypeScript
renderer, and what the Python HTML of the time before it (``render/compare.py``'s
``comparison_html`` at commit ``BEFORE``) showed for each, section by section:

    .venv/bin/python tests/render/golden/make_compare_golden.py

For each pair: ``compare_<name>.json`` (``jp.compare(a, b).summary()``, the renderer's input)
and ``compare_<name>.txt`` (``comparetext.SECTIONS_JS`` run in Chromium on the old HTML page).
The pairs: two synthetic cell runs with a hostile label and setting (tests/compare_synth.py),
slots 2 -> 4 (a prediction beside the measurement), the hostile pair with both sides'
operator descriptions, a prediction for another value than A advised and an advice line, and
TPC-H Q1 against Q9 (real Spark runs stored under golden/runs/: operators, stages, volume).
The old renderer is read from git (``git show BEFORE:jupyter_perf/render/compare.py``), so
this still runs once the tree's compare.py draws no HTML any more.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.abspath(os.path.join(HERE, os.pardir, os.pardir))
REPO = os.path.dirname(TESTS)
for _p in (REPO, TESTS, os.path.join(TESTS, "render"), os.path.join(TESTS, "analysis"), HERE):
    if _p not in sys.path:
        sys.path.insert(0, _p)

#: The last commit whose render/compare.py drew the comparison as HTML in Python.
BEFORE = "c39c775"
HOSTILE = "<img src=x onerror=alert(1)>&\"'"
PAIRS = ("hostile", "slots", "described", "tpch_q1_q9")


def old_renderer():
    """``render/compare.py`` as it was at ``BEFORE`` (a module of ``jupyter_perf.render``)."""
    src = subprocess.run(["git", "show", f"{BEFORE}:jupyter_perf/render/compare.py"], cwd=REPO,
                         check=True, capture_output=True, text=True).stdout
    mod = types.ModuleType("jupyter_perf.render._compare_before")
    mod.__package__ = "jupyter_perf.render"
    exec(compile(src, "compare_before.py", "exec"), mod.__dict__)
    return mod


def summaries() -> dict[str, dict]:
    import make_golden
    from compare_synth import cell_run

    import jupyter_perf as jp

    out = {}
    a = cell_run([100] * 4, label=HOSTILE)
    b = cell_run([60] * 6, conf={"spark.sql.shuffle.partitions": "8",
                                 f"spark.x.{HOSTILE}": HOSTILE})
    out["hostile"] = jp.compare(a, b, record=False).summary()
    out["slots"] = jp.compare(cell_run([100] * 8, slots=2), cell_run([100] * 8, slots=4),
                              record=False).summary()
    s = json.loads(json.dumps(out["hostile"]))
    s["operators"] = [{"name": "Exchange", "description": "hashpartitioning(k#1, 200)",
                       "a_description": "hashpartitioning(k#1, 200)",
                       "b_description": "hashpartitioning(k#7, 8)", "a_node": 1, "b_node": 1,
                       "matched": True, "matched_by": "name",
                       "task_time_ms": {"a": 900.0, "b": 100.0, "delta": -800.0},
                       "rows_out": {"a": 10.0, "b": 10.0, "delta": 0.0}},
                      {"name": HOSTILE, "description": "x" * 200, "a_node": 2, "b_node": None,
                       "matched": False, "matched_by": None,
                       "task_time_ms": {"a": 50.0, "b": None, "delta": -50.0},
                       "rows_out": {"a": 3.0, "b": 0.0, "delta": -3.0}}]
    s["predicted_vs_measured"] = [{
        "what": "spark.sql.shuffle.partitions=8 (A advised 4)", "kind": "setting",
        "setting": "spark.sql.shuffle.partitions", "value": "8", "exact": False,
        "advised_value": HOSTILE, "advised_predicted_ms": 1234.0, "predicted_ms": None,
        "measured_ms": 999.0, "error": None, "signed_error": None},
        {"what": "slots ×2", "kind": "slots", "predicted_ms": None, "measured_ms": 61234.0,
         "error": None, "signed_error": None}]
    s["advice"] = {"verdict": "helped", "words": f"the advice ({HOSTILE}) made B 12.34 s faster"}
    s["warnings"] = {"a": [f"a warning with {HOSTILE}"], "b": []}
    s["same_app"] = False
    out["described"] = s
    out["tpch_q1_q9"] = jp.compare(make_golden.load_run("tpch_q1"), make_golden.load_run("tpch_q9"),
                                   record=False).summary()
    return out


def main() -> None:
    os.environ["JUPYTER_PERF_HOME"] = tempfile.mkdtemp(prefix="jp-cmp-golden-")
    from comparetext import SECTIONS_JS, as_text
    from playwright.sync_api import sync_playwright

    old = old_renderer()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page()
        for name, s in summaries().items():
            with open(os.path.join(HERE, f"compare_{name}.json"), "w", encoding="utf-8") as fh:
                json.dump(s, fh, indent=1, ensure_ascii=False, allow_nan=False)
                fh.write("\n")
            page.set_content(old.comparison_html(s))
            text = as_text(page.evaluate(SECTIONS_JS))
            with open(os.path.join(HERE, f"compare_{name}.txt"), "w", encoding="utf-8") as fh:
                fh.write(text)
            print(f"compare_{name}: {text.count(chr(10))} lines")
        browser.close()


if __name__ == "__main__":
    main()
