"""Run the test suite: one pytest process for most modules, a fresh one per isolated module.

pyspark starts one JVM per Python process and keeps it across SparkSessions, so settings
that shape the JVM itself (the driver heap, the jars on its class path) only take effect in
a new process. Modules that need them carry ``pytestmark = pytest.mark.fresh_jvm`` and run
alone, as do ``own_process`` modules (JupyterLab + browser tests, whose event loops must not
meet the ones earlier tests left behind); everything else shares one process.

    python scripts/run_tests.py [pytest args, e.g. -m spark4]

Prints one closing line over every run: ``suite: N passed, N failed, N skipped``.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = re.compile(r"pytest\.mark\.(fresh_jvm|own_process)")


def fresh_jvm_modules() -> list[str]:
    found = []
    for folder, _, files in os.walk(os.path.join(ROOT, "tests")):
        for name in files:
            if name.startswith("test_") and name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as fh:
                    own = MARK.search(fh.read())
                if own or os.path.basename(folder) == "ui":    # JupyterLab UI tests: always
                    found.append(os.path.relpath(path, ROOT))
    return sorted(found)


def run(args: list[str], junit: str) -> tuple[int, dict[str, int]]:
    code = subprocess.call([sys.executable, "-m", "pytest", *args, f"--junitxml={junit}"],
                           cwd=ROOT)
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    if os.path.exists(junit):
        for suite in ET.parse(junit).getroot().iter("testsuite"):
            for key in counts:
                counts[key] += int(suite.get(key, 0))
    return code, counts


def main() -> int:
    extra = sys.argv[1:]
    fresh = fresh_jvm_modules()
    out = tempfile.mkdtemp(prefix="jp-junit-")
    plan = [(["tests", *[f"--ignore={m}" for m in fresh], *extra], "shared")]
    plan += [([m, *extra, "-p", "no:cacheprovider"], m) for m in fresh]
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    failed_runs = []
    for i, (args, name) in enumerate(plan):
        print(f"\n=== pytest run {i + 1}/{len(plan)}: {name} ===", flush=True)
        code, counts = run(args, os.path.join(out, f"run{i}.xml"))
        for key in total:
            total[key] += counts[key]
        if code not in (0, 5):          # 5: every test deselected by a marker
            failed_runs.append(f"{name} (exit {code})")
    failed = total["failures"] + total["errors"]
    passed = total["tests"] - failed - total["skipped"]
    if failed_runs:
        print("\nruns that failed: " + ", ".join(failed_runs))
    print(f"\nsuite: {passed} passed, {failed} failed, {total['skipped']} skipped")
    return 1 if failed_runs else 0


if __name__ == "__main__":
    sys.exit(main())
