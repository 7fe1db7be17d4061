"""Run the test suite: one pytest process for most modules, a fresh one per isolated module.

pyspark starts one JVM per Python process and keeps it across SparkSessions, so settings
that shape the JVM itself (the driver heap, the jars on its class path) only take effect in
a new process. Modules that need them carry ``pytestmark = pytest.mark.fresh_jvm`` and run
alone, as do ``own_process`` modules (JupyterLab + browser tests, whose event loops must not
meet the ones earlier tests left behind); everything else shares one process.

    python scripts/run_tests.py [pytest args, e.g. -m spark4]

A module whose tests are all deselected by the given arguments (``-m spark4``) gets no run
of its own, so every pytest run the script starts executes tests. It closes with one line
over every run, in pytest's form: ``==== N passed, N failed, N skipped in S s (suite) ====``.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
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


def selected_files(extra: list[str]) -> set[str] | None:
    """Test files with at least one test selected by ``extra``; None when nothing narrows."""
    if not extra:
        return None
    out = subprocess.run([sys.executable, "-m", "pytest", "tests", "--collect-only", "-q",
                          "-p", "no:cacheprovider", *extra],
                         cwd=ROOT, capture_output=True, text=True)
    return {line.split("::", 1)[0] for line in out.stdout.splitlines() if "::" in line}


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
    started = time.monotonic()
    fresh = fresh_jvm_modules()
    wanted = selected_files(extra)
    out = tempfile.mkdtemp(prefix="jp-junit-")
    plan = []
    if wanted is None or wanted - set(fresh):
        plan.append((["tests", *[f"--ignore={m}" for m in fresh], *extra], "shared"))
    plan += [([m, *extra, "-p", "no:cacheprovider"], m) for m in fresh
             if wanted is None or m in wanted]
    if not plan:
        print(f"no test selected by {' '.join(extra)}")
        return 1
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
    took = time.monotonic() - started
    print(f"\n{'=' * 20} {passed} passed, {failed} failed, {total['skipped']} skipped "
          f"in {took:.2f}s (suite of {len(plan)} pytest runs) {'=' * 20}")
    if total["tests"] == 0:
        print("no test ran: that is a failure, not a pass")
        return 1
    return 1 if failed_runs else 0


if __name__ == "__main__":
    sys.exit(main())
