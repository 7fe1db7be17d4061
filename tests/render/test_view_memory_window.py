"""The Memory tab's window section (issue V: views/memory.py ``window``, tabs/memory.ts
``windowSection``), in Chromium, from hand-built runs: the sizing answer with its setting,
value and kind; per executor this window's peaks and how they were obtained; per stage and
executor the JVM and Python peaks; hostile strings stay text; and the chart's legend never
covers a limit line."""
from __future__ import annotations

from viewhelpers import show_tab

from jupyter_perf.analysis import analyze
from jupyter_perf.model import Run, conform
from jupyter_perf.render.views import memory as view

MiB, GiB = 1 << 20, 1 << 30
T0 = 1_700_000_000_000.0
HOSTILE = "<img src=x onerror=window.__xss=1>"


def window_run(operator: str = "HashAggregate") -> Run:
    """Two executors on a cluster; stage 0 (an aggregate) spilled on executor 1; Python
    workers peaked on executor 2; samples with limits near the peaks."""
    tasks = []
    for i, (ex, spill) in enumerate([("1", 300 * MiB), ("2", 0)]):
        tasks.append({"stage_id": 0, "stage_attempt": 0, "task_id": i, "index": i,
                      "executor_id": ex, "host": "h", "status": "SUCCESS",
                      "launch_ms": T0, "finish_ms": T0 + 1000, "duration_ms": 1000,
                      "run_ms": 1000, "cpu_ms": 800, "gc_ms": 150,
                      "memory_spilled_bytes": spill, "disk_spilled_bytes": spill // 3,
                      "peak_execution_memory_bytes": 200 * MiB})
    run = Run(kind="cell", start_ms=T0, end_ms=T0 + 2000, master="local-cluster[2,1,1024]",
              spark_version="3.5.1", tasks=conform("tasks", tasks))
    run.executors = [
        {"executor_id": ex, "host": "h", "total_cores": 1, "max_memory_bytes": 400 * MiB,
         "jvm_heap_limit_bytes": GiB, "peak_jvm_heap_bytes": 900 * MiB}
        for ex in ("1", "2")] + [{"executor_id": "driver", "host": "h", "total_cores": 0,
                                  "max_memory_bytes": 400 * MiB, "jvm_heap_limit_bytes": GiB}]
    run.stage_memory = [
        {"stage_id": 0, "attempt": 0, "executor_id": "1", "peak_jvm_heap_bytes": 700 * MiB,
         "peak_on_heap_execution_bytes": 390 * MiB, "peak_process_rss_bytes": 900 * MiB},
        {"stage_id": 0, "attempt": 0, "executor_id": "2", "peak_jvm_heap_bytes": 500 * MiB,
         "peak_python_rss_bytes": 900 * MiB, "peak_process_rss_bytes": 700 * MiB}]
    run.memory = [{"time_ms": T0 + t, "executor_id": ex, "peak_jvm_heap_bytes": h * MiB,
                   "max_memory_bytes": 400 * MiB}
                  for ex in ("1", "2") for t, h in ((0, 600), (1000, 1000))]
    run.operators = [{"execution_id": 0, "node_id": 3, "name": operator, "description": "",
                      "stage_attempts": [[0, 0]]}]
    return run


def test_window_data_is_the_analysis(jp_home):
    a = analyze(window_run())
    d = view.data(a, None)["window"]
    assert "error" not in d
    assert [r["executor_id"] for r in d["table"]] == list(a.memory_table["executor_id"])
    one = next(r for r in d["table"] if r["executor_id"] == "1")
    assert one["basis"] == "stage peaks" and one["window_heap_bytes"] == 700 * MiB
    assert one["peak_stage_id"] == 0
    assert len(d["stages"]) == len(a.stage_memory) == 2
    assert [s["setting"] for s in d["sizing"]] == [h["setting"] for h in a.memory_sizing]
    assert {s["kind"] for s in d["sizing"]} <= {"measured", "estimated"}
    assert d["sizing_line"] == a.summary()["memory"]["sizing_line"]
    assert all(k in d["labels"] for k in {r["basis"] for r in d["table"]})


def legend_and_limits(page) -> dict:
    """Screen y (px) of the legend's bottom edge and of each limit line of the chart shown."""
    return page.evaluate("""() => {
      const views = [];
      const walk = v => { if (!v || views.includes(v)) return; views.push(v);
        for (const c of (v.child_views || [])) walk(c);
        if (v.renderer_views) for (const c of v.renderer_views.values()) walk(c); };
      for (const v of Object.values(Bokeh.index)) walk(v);
      const plot = views.find(v => v.model && v.model.name === 'jp-memory');
      if (!plot) return null;
      const legend = views.find(v => v.model && v.model.type === 'Legend');
      const out = {legend_bottom: legend.bbox.bottom, legend_top: legend.bbox.top, limits: []};
      for (const r of plot.model.renderers) {
        const s = r.data_source;
        if (s && s.name && s.name.startsWith('jp-memory-limit-'))
          out.limits.push(plot.frame.y_scale.compute(
            (s.data instanceof Map ? s.data.get('y') : s.data.y)[0]));
      }
      return out; }""")


def test_tab_shows_sizing_tables_and_a_legend_that_never_covers_a_limit(open_report):
    run = window_run()
    a = analyze(run)
    page = open_report(a)
    show_tab(page, "memory")
    sizing = page.locator("[data-view='memory-sizing'] li")
    assert sizing.count() == len(a.memory_sizing) >= 1
    first = a.memory_sizing[0]
    assert f"{first['setting']}={first['value']}" in sizing.nth(0).inner_text()
    assert sizing.nth(0).get_attribute("data-kind") == first["kind"]
    rows = page.locator("table[data-view='memory-window-executors'] tbody tr")
    assert rows.count() == len(a.memory_table)
    assert page.locator("table[data-view='memory-stages'] tbody tr").count() == 2
    text = page.inner_text("[data-view='memory-window']")
    assert "stage peaks" in text and "900.0 MiB" in text            # Python RSS of executor 2
    geometry = legend_and_limits(page)
    assert geometry is not None and geometry["limits"], geometry
    # screen y grows downwards: every limit line lies below the legend's bottom edge
    assert all(y > geometry["legend_bottom"] for y in geometry["limits"]), geometry
    assert page.jp_errors == []


def test_hostile_operator_names_stay_text(open_report):
    page = open_report(analyze(window_run(operator=f"HashAggregate{HOSTILE}")))
    show_tab(page, "memory")
    assert page.evaluate("() => window.__xss") is None
    assert page.locator("[data-view='memory-window'] img").count() == 0
    assert page.jp_errors == []


def test_a_failing_memory_analysis_costs_only_its_section(monkeypatch):
    a = analyze(window_run())

    def boom(*_):
        raise ValueError("odd peaks")
    monkeypatch.setattr("jupyter_perf.analysis.memory.executor_table", boom)
    d = view.data(a, None)
    assert d["window"] == {"error": "memory analysis failed: ValueError: odd peaks"}
    assert isinstance(d["series"], list)
