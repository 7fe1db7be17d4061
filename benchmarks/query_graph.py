"""Issue H benchmark: the Query tab's plan graph at 200 operators renders in ≤ 1 s.

    python benchmarks/query_graph.py [--ops 200] [--repeat 5]

A synthetic run (``tests/render/render_runs.with_plan``: a plan of ``--ops`` nodes with
WholeStageCodegen clusters and InputAdapters over 3,000 task attempts) is analysed; then

* **build**: Python time of the Query tab's data — grandalf's layered layout and the operator
  rows (``render/views/query.data``, with the shared ``ViewContext``), median of ``--repeat``;
* **render**: in headless Debian Chromium, from the click on the "Query" tab to the frame
  after the renderer marks the tab drawn (``tabs/query.ts`` awaits its BokehJS views),
  measured inside the page, median of ``--repeat`` fresh page loads; beside it the renderer
  main thread's CPU time over the same span (DevTools ``ThreadTime``, read just before the
  click and just after the plan is drawn).

Also prints the same for TPC-H Q9's size (~40 operators) for comparison.

    python benchmarks/query_graph.py --size [--tasks 100000] [--ops 200]

**report size with the Query tab** (target ≤ 10 MB at 100k tasks): the 100k-task run of
``report_scale.py`` (``analysis_scale.build_run``, 64 slots) exported once as it is and once
with a plan of ``--ops`` operators over its stages; prints both HTML sizes.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "benchmarks", ROOT / "tests", ROOT / "tests" / "render",
          ROOT / "tests" / "analysis"):
    sys.path.insert(0, str(p))

from render_runs import synthetic, with_plan  # noqa: E402 -- tests/render, put on sys.path above

from jupyter_perf.analysis import analyze  # noqa: E402 -- this checkout, put on sys.path above
from jupyter_perf.render import export  # noqa: E402 -- this checkout, put on sys.path above
from jupyter_perf.render.views import ViewContext  # noqa: E402 -- this checkout, as above
from jupyter_perf.render.views import query as query_view  # noqa: E402 -- this checkout, as above

CHROMIUM = "/usr/bin/chromium"
READY = """() => !!document.querySelector(".jp-perf-report[data-jp-ready='1']")"""
# Armed before the click: the click's timestamp to the frame after the renderer marks the Query
# panel drawn (its BokehJS views built: tabs/query.ts awaits them before it returns).
ARM = """() => {
  window.__jpQuery = new Promise((resolve) => {
    document.addEventListener('click', (e) => {
      const t0 = e.timeStamp;
      const poll = () => {
        const panel = document.querySelector(".jp-perf-panel[data-tab='query']");
        if (panel && panel.dataset.jpDrawn === '1') {
          requestAnimationFrame(() => resolve(performance.now() - t0));
        } else requestAnimationFrame(poll);
      };
      requestAnimationFrame(poll);
    }, { capture: true, once: true });
  });
}"""


def measure(n_ops: int, repeat: int) -> dict:
    a = analyze(with_plan(synthetic(3000, 16, per_stage=400), n_ops=n_ops))
    build, cpu = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        query_view.data(a, ViewContext.of(a))
        build.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    path = os.path.join(tempfile.mkdtemp(prefix="jp-query-"), "report.html")
    export(a, path)
    render, busy = [], []
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        for _ in range(repeat):
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(Path(path).as_uri())
            page.wait_for_function(READY, timeout=60_000)
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")
            page.evaluate(ARM)
            busy0 = task_seconds(cdp)
            page.click(".jp-perf-tabbar button[data-tab='query']")
            render.append(page.evaluate("window.__jpQuery"))
            busy.append((task_seconds(cdp) - busy0) * 1000)
            page.close()
        browser.close()
    return {"operators": len(a.operators), "build": build, "cpu": cpu, "render": render,
            "busy": busy}


def task_seconds(cdp) -> float:
    """The renderer main thread's CPU time so far (DevTools Performance.getMetrics
    ``ThreadTime``): the page's own work, which the machine's load does not inflate the way it
    inflates wall-clock time."""
    metrics = cdp.send("Performance.getMetrics")["metrics"]
    return next(m["value"] for m in metrics if m["name"] == "ThreadTime")


def report_size(n_tasks: int, n_ops: int) -> None:
    from analysis_scale import build_run

    run = build_run(n_tasks, 64)
    d = tempfile.mkdtemp(prefix="jp-query-size-")
    sizes = {}
    for key, r in (("without plan", run), (f"plan of {n_ops} nodes", with_plan(run, n_ops=n_ops))):
        a = analyze(r)
        path = os.path.join(d, key.replace(" ", "-") + ".html")
        export(a, path)
        sizes[key] = os.path.getsize(path)
        print(f"tasks={len(r.tasks):,} stages={len(r.stages)} operators={len(a.operators)} "
              f"({key}): html_bytes={sizes[key]:,} html_mb={sizes[key] / 1e6:.2f}  "
              f"(target <= 10 MB)")
    a, b = sizes.values()
    print(f"the Query tab adds {b - a:,} bytes")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--size", action="store_true", help="report size at --tasks with the Query tab")
    ap.add_argument("--tasks", type=int, default=100_000)
    args = ap.parse_args()
    if args.size:
        report_size(args.tasks, args.ops)
        return
    for n in (40, args.ops):
        r = measure(n, args.repeat)
        print(f"plan of {r['operators']} operators: build (layout + figure + table) median "
              f"{statistics.median(r['build']):.0f} ms {[round(x) for x in r['build']]} "
              f"(CPU {statistics.median(r['cpu']):.0f} ms); "
              f"render (tab click -> plan drawn) median {statistics.median(r['render']):.0f} ms "
              f"{[round(x) for x in r['render']]}  (target at 200: <= 1000 ms); main-thread CPU "
              f"time in that span median {statistics.median(r['busy']):.0f} ms "
              f"{[round(x) for x in r['busy']]}")
    print(f"load average (1 min): {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
