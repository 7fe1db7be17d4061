"""Regenerate the stored runs and today's numbers that ``tests/render/test_views_equal_today.py``
compares the new renderer with (issue Q item 6).

    .venv/bin/python tests/render/golden/make_golden.py runs      # real Spark: re-measure runs/
    .venv/bin/python tests/render/golden/make_golden.py goldens   # no Spark: <run>.json from runs/

``runs``: the stored runs under ``runs/<name>/`` (``jupyter_perf.store.rundir``: the run store's
own per-run files): a synthetic run with a SQL plan, speculative, killed and spilling attempts
and skipped stages; a real skewed join; TPC-H Q1 and Q9 at scale factor 0.01, all on real Spark
``local[2]``.

``goldens``: for each stored run, the numbers the Bokeh report of the time before the
renderer (``render/report.py``'s ``report_document``) shows, view by view, as
``<run>.json``: ``{tab: {view: {column_key: [values]}}}``. Tables are read from the document's
ColumnDataSources (found by name); the key numbers and the per-executor memory peaks, which
that report wrote as HTML, are the raw numbers its Divs format — each formatted value is
checked against the Div's text, so the golden is what the page showed. Running this needs the
old report code (deleted once the renderer replaces it); the test does not. Run it on the
committed code (e.g. from ``git archive HEAD`` unpacked elsewhere, with ``runs/`` and this
script copied in), so work in progress in the tree does not become "today".
"""
from __future__ import annotations

import json
import math
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = os.path.join(HERE, "runs")
TESTS = os.path.abspath(os.path.join(HERE, os.pardir, os.pardir))
REPO = os.path.dirname(TESTS)
for _p in (REPO, TESTS, os.path.join(TESTS, "render"), os.path.join(TESTS, "analysis")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

#: Stored run name -> what it is (the test parametrises over these).
RUN_NAMES = ("synthetic", "skewed_join", "tpch_q1", "tpch_q9")


# -- stored runs ------------------------------------------------------------------------------
def save_run(run, name: str) -> str:
    """``run`` written as ``runs/<name>/`` by the run store's own writer."""
    from jupyter_perf.store import rundir

    folder = os.path.join(RUNS, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    rundir.write(folder, run, None)
    return folder


def load_run(name: str):
    from jupyter_perf.store import rundir

    return rundir.read_run(os.path.join(RUNS, name))


def make_runs() -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["JUPYTER_PERF_HOME"] = tempfile.mkdtemp(prefix="jp-golden-")   # not the user's store
    import render_runs as rr
    import tpch
    from sparkhelpers import make_spark

    import jupyter_perf as jp

    save_run(rr.with_skipped(rr.with_speculative(rr.with_plan(rr.synthetic(600), n_ops=24))),
             "synthetic")
    spark = make_spark("local[2]")
    try:
        save_run(rr.skewed_join_run(spark), "skewed_join")
        tpch.register(spark)
        for n in (1, 9):
            text = tpch.query(n)
            run = jp.measure(lambda text=text: spark.sql(text).collect(), spark=spark,
                             label=f"TPC-H Q{n} (SF {tpch.TEST_SCALE:g})", store=False)
            save_run(run, f"tpch_q{n}")
    finally:
        spark.stop()


# -- goldens ------------------------------------------------------------------------------------
def _plain(values: list) -> list:
    import numpy as np

    out = []
    for v in values:
        if isinstance(v, (np.integer,)):
            out.append(int(v))
        elif isinstance(v, (float, np.floating)):
            f = float(v)
            out.append(f if math.isfinite(f) else None)
        elif isinstance(v, (np.bool_, bool)):
            out.append(bool(v))
        elif isinstance(v, (list, tuple, np.ndarray)):
            out.append(_plain(list(v)))
        else:
            out.append(v)
    return out


def _source(doc, name: str) -> dict[str, list]:
    from bokeh.models import ColumnDataSource, DataTable

    found = list(doc.select({"name": name}))
    if not found:
        return {}
    model = found[0]
    src = model.source if isinstance(model, DataTable) else model
    assert isinstance(src, ColumnDataSource), name
    return {k: _plain(list(v)) for k, v in src.data.items()}


def _table_columns(doc, name: str) -> list[str]:
    """The fields a DataTable shows (its columns), in order."""
    found = list(doc.select({"name": name}))
    return [c.field for c in found[0].columns] if found else []


def _div_text(doc, css: str) -> str:
    from bokeh.models import Div

    return "".join(d.text for d in doc.select({"type": Div}) if css in d.text)


def _shown(doc, name: str) -> dict[str, list]:
    """The columns a DataTable shows, with their values."""
    data = _source(doc, name)
    return {c: data[c] for c in _table_columns(doc, name) if c in data}


def key_numbers(a, s: dict) -> dict[str, list]:
    """The numbers of the Summary's key-numbers table (``tabs/summary.py`` ``_key_numbers``),
    one row, keyed by what each is."""
    import pandas as pd

    run = a.run
    st = s["stages"]

    def tot(key: str) -> float:
        return float(sum((r.get(key) or 0) for r in st))

    ex = run.executors

    def peak(col: str):
        return (pd.to_numeric(ex[col], errors="coerce").max()
                if not ex.empty and col in ex else None)

    skipped = sum(1 for r in st if r.get("status") == "SKIPPED")
    w = s["whatif"]
    row = {
        "wall_ms": s["wall_ms"], "actual_ms": a.actual_ms, "driver_gap_ms": a.driver_gap_ms,
        "jobs": len(run.jobs), "stages_ran": len(st) - skipped, "stages_skipped": skipped,
        "task_attempts": s["task_attempts"],
        "failed_tasks": sum((r.get("failed_tasks") or 0) for r in st), "slots": s["slots"],
        "task_time_ms": s["task_time_ms"],
        "input_bytes": tot("input_bytes"), "output_bytes": tot("output_bytes"),
        "shuffle_write_bytes": tot("shuffle_write_bytes"),
        "shuffle_read_bytes": tot("shuffle_read_bytes"),
        "shuffle_remote_bytes": tot("shuffle_remote_bytes"),
        "memory_spilled_bytes": tot("memory_spilled_bytes"),
        "disk_spilled_bytes": tot("disk_spilled_bytes"),
        "peak_jvm_heap_bytes": peak("peak_jvm_heap_bytes"),
        "jvm_heap_limit_bytes": peak("jvm_heap_limit_bytes"),
        "peak_on_heap_execution_bytes": peak("peak_on_heap_execution_bytes"),
        "max_memory_bytes": peak("max_memory_bytes"),
        "infinite_disk_ms": w["infinite_disk_ms"], "infinite_network_ms": w["infinite_network_ms"],
        "no_gc_ms": w["no_gc_ms"], "no_stragglers_ms": w["no_stragglers_ms"],
        "slots_x2_ms": w["slots_x2_ms"], "model_error": w["model_error"] or 0.0,
        "simulated_baseline_ms": w["simulated_baseline_ms"],
        "stragglers": s["stragglers"]["count"],
        "data_skew": s["stragglers"]["data_skew_count"],
    }
    return {k: _plain([v]) for k, v in row.items()}


def _check_key_numbers(doc, row: dict[str, list]) -> None:
    """Every key number, formatted as the old Div formatted it, is in that Div's text."""
    from jupyter_perf import fmt

    text = _div_text(doc, "<table class='kv'><tr><td class='muted'>wall time")
    assert text, "no key-numbers Div"
    for key, (v,) in row.items():
        if key in ("model_error",):
            shown = f"{100 * (v or 0):.1f}%"
        elif key.endswith("_ms"):
            shown = fmt.ms(v)
        elif key.endswith("_bytes"):
            shown = fmt.nbytes(v)
        elif key == "task_attempts":
            shown = f"{v:,}"
        else:
            shown = str(v)
        assert shown in text, (key, shown)


EXECUTOR_COLS = ("peak_jvm_heap_bytes", "jvm_heap_limit_bytes", "peak_on_heap_execution_bytes",
                 "peak_on_heap_storage_bytes", "max_memory_bytes", "peak_process_rss_bytes")


def memory_executors(a) -> dict[str, list]:
    """The Memory tab's per-executor peaks (``tabs/memory.py``'s HTML table), one row per
    executor in ``run.executors`` order."""
    import pandas as pd

    ex = a.run.executors
    if ex.empty:
        return {}
    hosts = ex["host"] if "host" in ex else [None] * len(ex)
    out: dict[str, list] = {"executor_id": [str(e) for e in ex["executor_id"]],
                            "host": [None if pd.isna(h) else str(h) for h in hosts]}
    for col in EXECUTOR_COLS:
        vals = pd.to_numeric(ex[col], errors="coerce") if col in ex else [None] * len(ex)
        out[col] = _plain(list(vals))
    return out


def _check_memory(doc, rows: dict[str, list]) -> None:
    from jupyter_perf import fmt

    text = _div_text(doc, "<b>Memory per executor</b>")
    if not rows:
        return
    assert text, "no Memory Div"
    for i, e in enumerate(rows["executor_id"]):
        cells = "".join(f"<td>{fmt.nbytes(rows[c][i])}</td>" for c in EXECUTOR_COLS)
        assert cells in text, (e, cells)


def memory_series(a) -> dict[str, list]:
    """The Memory chart's samples (MiB), per executor in sample-time order: what the old tab
    plotted (``tabs/memory.py``; x = seconds since the window started)."""
    import numpy as np
    import pandas as pd

    run, tl = a.run, a.timeline
    mem = run.memory
    if mem.empty:
        return {}
    lo = float(tl.window[0]) if tl.has_times else float(run.start_ms)
    out: dict[str, list] = {"executor_id": [], "x": []}
    cols = ("peak_jvm_heap_bytes", "peak_on_heap_execution_bytes", "used_on_heap_storage_bytes",
            "peak_process_rss_bytes")
    for c in cols:
        out[c] = []
    for e in [str(x) for x in mem["executor_id"].dropna().unique()]:
        rows_e = mem[mem["executor_id"].astype(str) == e].sort_values("time_ms")
        out["executor_id"] += [e] * len(rows_e)
        out["x"] += _plain(list((pd.to_numeric(rows_e["time_ms"], errors="coerce") - lo) / 1000.0))
        for c in cols:
            v = (pd.to_numeric(rows_e[c], errors="coerce").to_numpy(dtype="float64") / 2**20
                 if c in rows_e else np.full(len(rows_e), np.nan))
            out[c] += _plain(list(v))
    return out


def whatif_defaults(a, doc) -> dict[str, list]:
    """The What-if tab as it opens (the state source's defaults) and the summary's scenarios
    (``Analysis.whatif``), one row."""
    state = _source(doc, "jp-whatif-state")
    row = {k: state[k] for k in ("predicted_ms", "simulated_ms")}
    for name, kw in (("infinite_disk_ms", {"disk": math.inf}),
                     ("infinite_network_ms", {"network": math.inf}),
                     ("no_gc_ms", {"gc": False}), ("no_stragglers_ms", {"stragglers": False}),
                     ("slots_x2_ms", {"slots_factor": 2.0})):
        row[name] = _plain([a.whatif(**kw)])
    row["model_error"] = _plain([a.model_error])
    return row


def golden_of(run) -> dict:
    """Today's numbers of ``run``'s report, per tab and view."""
    from jupyter_perf.analysis import analyze
    from jupyter_perf.render.report import report_document

    a = analyze(run)
    s = a.summary()
    doc = report_document(a)
    kn = key_numbers(a, s)
    _check_key_numbers(doc, kn)
    mem = memory_executors(a)
    _check_memory(doc, mem)
    out = {
        "summary": {"key-numbers": kn, "jobs": _shown(doc, "jp-jobs")},
        "query": {"operators": _shown(doc, "jp-operators")},
        "stages": {"stages": _shown(doc, "jp-stages")},
        "stragglers": {"stragglers": _shown(doc, "jp-stragglers")},
        "whatif": {"defaults": whatif_defaults(a, doc)},
        "memory": {"memory-executors": mem, "memory-series": memory_series(a)},
    }
    return out


#: Views the new renderer draws as tables (``table[data-view]``), per tab; the other views of
#: a golden (what-if defaults, memory series) are kept for checks the tab tests may make.
TABLE_VIEWS = {"summary": ("key-numbers", "jobs"), "query": ("operators",),
               "stages": ("stages",), "stragglers": ("stragglers",),
               "memory": ("memory-executors",)}


def make_goldens() -> None:
    for name in RUN_NAMES:
        golden = golden_of(load_run(name))
        path = os.path.join(HERE, f"{name}.json")
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(golden, fh, indent=0, ensure_ascii=True, allow_nan=False)
            fh.write("\n")
        print(path, {t: {v: len(next(iter(c.values()), [])) for v, c in views.items()}
                     for t, views in golden.items()})


if __name__ == "__main__":
    what = sys.argv[1:] or ["runs", "goldens"]
    if "runs" in what:
        make_runs()
    if "goldens" in what:
        make_goldens()
