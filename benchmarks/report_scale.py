"""Issue Q scale benchmark: the report of a 100k- and a 1M-task run, drawn by the one
TypeScript renderer (``labextension/src/report/``) from the data payload (format 2).

    python benchmarks/report_scale.py [--tasks 100000,1000000] [--slots 16] [--per-stage 400]
                                      [--repeat 3] [--out DIR]

For each size, in one process: builds the synthetic run of ``tests/render/render_runs.synthetic``
(``analysis_scale``'s generator: stages in waves on ``--slots`` slots, multi-stage groups with a
DAG barrier, GC-heavy stragglers, data skew), analyses it, then times the **kernel side** —
``report_payload(a)`` (every tab's data, the per-task arrays, the compressed payload) and the
standalone page around it — and measures, in headless Debian Chromium (``/usr/bin/chromium``,
via Python playwright), on the page opened from disk:

* **page size** (budget at 1M tasks: ≤ 30 MB);
* **ready**: from navigation start until the renderer marks the report drawn
  (``.jp-perf-report[data-jp-ready='1']``: payload decoded, first tab drawn) — budgets 100k
  ≤ 2 s, 1M ≤ 5 s;
* **what-if slider, cold**: the What-if tab shown, the page kept from idling (so no setting is
  prefetched), then one move of the disk slider to ∞: from the input event to the predicted
  number (``.jp-whatif-predicted[data-predicted-ms]``) changed, in the page (event timestamp
  to the animation frame that shows it), and the renderer's own User Timing measure
  ``jupyter-perf: what-if (replayed)`` — budget ≤ 50 ms at 1M. The value shown is checked
  against ``a.whatif(disk=inf)`` bit for bit. Also the CPU time the renderer's main thread
  ran in the move's input event handler (the ``EventDispatch`` of the ``input`` event in a
  Chromium trace of the move, its thread time ``tdur``): on a shared machine the wall time
  mostly measures the other processes. (The move is traced with the ``devtools.timeline``
  category, what DevTools' Performance panel records.)

The machine's 1-minute load average is printed with every figure.

``--against DIR`` (the ``--out`` of an earlier run, e.g. of an earlier renderer): the earlier
page of each size is measured too, taking turns with the new one in the same Chromium
conditions (the same run, so the same checked value): a before/after at the same load.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from analysis_scale import build_run  # noqa: E402

from jupyter_perf.analysis import analyze  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-gpu"]
READY = ".jp-perf-report[data-jp-ready='1']"
# The cold path: a page that never has idle time, so no what-if setting is prepared ahead.
NO_IDLE = "window.requestIdleCallback = function () { return 0; };"
REPLAYED = "jupyter-perf: what-if (replayed)"

# From the slider's input event (its timeStamp) to the animation frame in which the predicted
# number has changed: that frame paints it.
ARM = """() => {
  const el = document.querySelector('.jp-whatif-predicted');
  const before = el.dataset.predictedMs;
  let t0 = null;
  const onInput = (e) => { if (t0 === null) t0 = e.timeStamp; };
  document.addEventListener('input', onInput, true);
  window.__jpDone = new Promise((resolve) => {
    const poll = () => {
      if (t0 !== null && el.dataset.predictedMs !== before) {
        document.removeEventListener('input', onInput, true);
        resolve({ms: performance.now() - t0, predicted: Number(el.dataset.predictedMs)});
      } else requestAnimationFrame(poll);
    };
    requestAnimationFrame(poll);
  });
  return before;
}"""
# Move a range input to its last stop as a user's drag does: set the value, fire "input".
MOVE = """(control) => {
  const input = document.querySelector(`input[type=range][data-control='${control}']`);
  input.value = input.max;
  input.dispatchEvent(new Event('input', {bubbles: true}));
}"""
# The moment the ready attribute appears, recorded in the page by a MutationObserver set up
# before any script runs (not rounded up to the harness' polling).
READY_WATCH = """
  new MutationObserver((muts, obs) => {
    if (!window.__jpReadyAt && document.querySelector(".jp-perf-report[data-jp-ready='1']")) {
      window.__jpReadyAt = performance.now(); obs.disconnect();
    }
  }).observe(document, {subtree: true, attributes: true, childList: true});
"""
LAST = ("(name) => { const e = performance.getEntriesByName(name); "
        "return e.length ? e[e.length - 1].duration : null; }")


def load() -> float:
    return os.getloadavg()[0]


def input_cpu_ms(trace: bytes) -> float:
    """The renderer main thread's CPU time (ms) in the ``input`` event's handler, from a
    Chromium trace (``EventDispatch``, thread time ``tdur``): unlike wall time it does not grow
    with the other processes sharing the cores, and unlike the thread's CPU counter read from
    outside it stops where the handler returns (not at the harness' next look, by when the
    page may be drawing the simulated schedule)."""
    events = json.loads(trace)
    events = events["traceEvents"] if isinstance(events, dict) else events
    cpu = [e["tdur"] / 1000 for e in events
           if e.get("name") == "EventDispatch" and "tdur" in e
           and (e.get("args", {}).get("data") or {}).get("type") == "input"]
    assert len(cpu) == 1, f"{len(cpu)} input events traced"
    return cpu[0]


def measure(path: str, expected: float, repeat: int) -> dict:
    from playwright.sync_api import sync_playwright

    r: dict = {"ready_ms": [], "ready_load": [], "slider_ms": [], "replayed_ms": [],
               "slider_load": [], "slider_cpu_ms": []}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for _ in range(repeat):
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.add_init_script(NO_IDLE)
            page.add_init_script(READY_WATCH)
            page.goto(Path(path).resolve().as_uri(), wait_until="commit", timeout=120_000)
            page.wait_for_selector(READY, timeout=120_000, state="attached")
            page.wait_for_function("() => !!window.__jpReadyAt", timeout=120_000)
            # navigation start (performance.now()'s origin) -> the attribute set
            r["ready_ms"].append(page.evaluate("window.__jpReadyAt"))
            r["ready_load"].append(load())
            errors = page.evaluate("document.querySelector('.jp-perf-report').dataset.jpError || ''")
            assert not errors, errors
            page.click(".jp-perf-tabbar button[data-tab='whatif']")
            page.wait_for_function(
                """() => { const p = document.querySelector(".jp-perf-panel[data-tab='whatif']");
                           return p && p.dataset.jpDrawn === '1'; }""", timeout=120_000)
            page.wait_for_timeout(300)
            page.evaluate(ARM)
            browser.start_tracing(page=page, categories=["devtools.timeline"])
            page.evaluate(MOVE, "disk")
            done = page.evaluate("window.__jpDone")
            r["slider_cpu_ms"].append(input_cpu_ms(browser.stop_tracing()))
            r["slider_ms"].append(done["ms"])
            r["replayed_ms"].append(page.evaluate(LAST, REPLAYED))
            r["slider_load"].append(load())
            assert done["predicted"] == expected, (done["predicted"], expected)
            page.close()
        browser.close()
    return r


def _turns(path: str, earlier: str, expected: float, repeat: int) -> tuple[dict, dict]:
    """``measure`` of two pages, one run of each in turn."""
    new: dict = {}
    old: dict = {}
    for _ in range(repeat):
        for page, into in ((path, new), (earlier, old)):
            for k, v in measure(page, expected, 1).items():
                into.setdefault(k, []).extend(v)
    return new, old


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", default="100000,1000000")
    ap.add_argument("--slots", type=int, default=16)
    ap.add_argument("--per-stage", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default="")
    ap.add_argument("--against", default="",
                    help="--out of an earlier run: measure its pages in turns with the new ones")
    args = ap.parse_args()
    from jupyter_perf.render.standalone import report_page
    from jupyter_perf.render.views import report_payload

    out_dir = args.out or tempfile.mkdtemp(prefix="jp-bench-")
    os.makedirs(out_dir, exist_ok=True)
    print(f"{os.cpu_count()} cores; chromium {CHROMIUM}; pages in {out_dir}")
    for n in (int(x) for x in args.tasks.split(",")):
        t = time.perf_counter()
        a = analyze(build_run(n, args.slots, per_stage=args.per_stage))
        a.summary()
        analysis_s = time.perf_counter() - t
        builds = []
        for _ in range(max(1, min(args.repeat, 2))):
            lo = load()
            t = time.perf_counter()
            payload = report_payload(a)
            payload_s = time.perf_counter() - t
            page = report_page(payload)
            builds.append((payload_s, time.perf_counter() - t, lo))
        path = os.path.join(out_dir, f"report-{n}.html")
        Path(path).write_text(page, encoding="utf-8")
        size = os.path.getsize(path)
        print(f"\n=== {len(a.run.tasks):,} tasks, {len(a.run.stages)} stages, {args.slots} slots "
              f"(run + analysis {analysis_s:.1f} s)")
        for p_s, page_s, lo in builds:
            print(f"kernel: report_payload {p_s:.2f} s, + standalone page {page_s:.2f} s "
                  f"(load {lo:.1f})")
        print(f"page: {size:,} bytes = {size / 1e6:.2f} MB (payload data {len(payload['data']) / 1e6:.2f} MB)"
              + ("  [budget <= 30 MB]" if n >= 1_000_000 else ""))
        if not os.path.exists(CHROMIUM):
            print("no /usr/bin/chromium: browser measurements skipped")
            continue
        expected = a.whatif(disk=math.inf)
        earlier = os.path.join(args.against, f"report-{n}.html") if args.against else ""
        if earlier and os.path.exists(earlier):
            r, e = _turns(path, earlier, expected, args.repeat)
            print(f"earlier page {earlier}, in turns with this one: ready median "
                  f"{statistics.median(e['ready_ms']):.0f} ms; what-if cold median "
                  f"{statistics.median(e['slider_ms']):.0f} ms runs "
                  f"{[round(x) for x in e['slider_ms']]} load "
                  f"{[round(x, 1) for x in e['slider_load']]}; renderer main-thread CPU in the "
                  f"handler median {statistics.median(e['slider_cpu_ms']):.0f} ms "
                  f"{[round(x) for x in e['slider_cpu_ms']]}")
        else:
            r = measure(path, expected, args.repeat)
        budget = 2000 if n <= 100_000 else 5000
        print(f"ready (navigation -> data-jp-ready): median {statistics.median(r['ready_ms']):.0f} ms "
              f"runs {[round(x) for x in r['ready_ms']]} load {[round(x, 1) for x in r['ready_load']]}"
              f"  [budget <= {budget}]")
        print(f"what-if disk slider -> inf, cold: input to number shown median "
              f"{statistics.median(r['slider_ms']):.0f} ms runs {[round(x) for x in r['slider_ms']]}; "
              f"replay measure {[None if x is None else round(x) for x in r['replayed_ms']]} ms; "
              f"load {[round(x, 1) for x in r['slider_load']]}  [budget <= 50]; renderer "
              f"main-thread CPU in the move's handler median {statistics.median(r['slider_cpu_ms']):.0f} ms "
              f"{[round(x) for x in r['slider_cpu_ms']]}")
        print("predicted value equals a.whatif(disk=inf) on every run")


if __name__ == "__main__":
    main()
