"""The exported report in real Chromium (Debian's /usr/bin/chromium via Python playwright):
every tab renders, the what-if widgets show exactly ``Analysis.whatif``'s numbers with no
kernel, nothing leaves the page, hostile strings stay text, and nbconvert keeps it working."""
from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest
from render_runs import (
    HOSTILE,
    hostile_copy,
    skewed_join_run,
    synthetic,
    with_plan,
    with_skipped,
    with_speculative,
)
from whatif_vectors import expected, label, settings

from jupyter_perf import fmt, render
from jupyter_perf.analysis import analyze

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-gpu"]
LOCAL = ("file:", "data:", "blob:", "about:")

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover
    sync_playwright = None

pytestmark = [
    pytest.mark.skipif(not os.path.exists(CHROMIUM),
                       reason="no Debian chromium at /usr/bin/chromium (apt-get install chromium)"),
    pytest.mark.skipif(sync_playwright is None, reason="Python playwright is not installed"),
]
TABS = ["Summary", "Query", "Timeline", "Stages", "Stragglers", "What-if", "Memory"]

# The screen position of a bar of a renderer, through BokehJS's own views and scales.
BAR_XY = """([name, field]) => {
  const fig = Bokeh.documents[0].get_model_by_name(name);
  let pv = null;
  for (const rv of Bokeh.index.roots) pv = pv || rv.owner.find_one(fig);
  const rect = pv.canvas_view.el.getBoundingClientRect();
  const r = fig.renderers.find((rr) => rr.data_source.data[field] !== undefined &&
                                        rr.data_source.get_length() > 0);
  const d = r.data_source.data;
  const x = (d.left[0] + d.right[0]) / 2, y = (d.bottom[0] + d.top[0]) / 2;
  return [rect.left + pv.frame.x_scale.compute(x), rect.top + pv.frame.y_scale.compute(y)];
}"""
STATE = "Bokeh.documents[0].get_model_by_name('jp-whatif-state').data"
# The report is drawn: report.js has filled the timeline and written its status line.
READY = """() => {
  const d = window.Bokeh && Bokeh.documents[0];
  const m = d && d.get_model_by_name('jp-timeline-status');
  return !!m && m.text.includes('task attempts in view');
}"""


@pytest.fixture(scope="module")
def real_run():
    from sparkhelpers import make_spark
    spark = make_spark("local[2]", **{"spark.sql.autoBroadcastJoinThreshold": "-1",
                                      "spark.sql.adaptive.enabled": "false"})
    try:
        yield skewed_join_run(spark)
    finally:
        spark.stop()


@pytest.fixture(scope="module")
def reports(real_run, tmp_path_factory):
    """(analysis, path) of: the real run with hostile strings injected, and a synthetic run
    whose replay has DAG barriers, several groups, failed/killed/speculative attempts."""
    d = tmp_path_factory.mktemp("reports")
    out = {}
    synth = with_skipped(with_speculative(synthetic(3000, 16, per_stage=400)))
    for key, run in (("real", hostile_copy(real_run)),
                     ("synthetic", with_plan(synth, n_ops=40, hostile=True))):
        a = analyze(run)
        out[key] = (a, render.export(a, d / f"{key}.html"))
    return out


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


class Page:
    """A page that records every request and page error, and blocks anything not local."""

    def __init__(self, browser, path):
        self.page = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.requests: list[str] = []
        self.blocked: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

        def route(r):
            if r.request.url.startswith(LOCAL):
                r.continue_()
            else:
                self.blocked.append(r.request.url)
                r.abort()
        self.page.route("**/*", route)
        if path:
            self.page.goto("file://" + os.path.abspath(path))
            self.page.wait_for_function(READY)

    def tab(self, name):
        self.page.get_by_text(name, exact=True).first.click()

    def shown(self, name, selector):
        """Opens tab ``name`` and waits until the first match of ``selector`` is visible."""
        self.tab(name)
        found = self.page.locator(selector)
        found.first.wait_for(state="visible")
        return found

    def external(self):
        return [u for u in self.requests if not u.startswith(LOCAL)] + self.blocked


def test_every_tab_renders(browser, reports):
    a, path = reports["real"]
    p = Page(browser, path)
    page = p.page
    checks = {
        "Summary": lambda: page.get_by_text("Where the task time went").first,
        "Query": lambda: page.get_by_text("Query", exact=True).nth(1),
        "Timeline": lambda: page.locator(".jp-timeline-status").get_by_text("task attempts in view"),
        "Stages": lambda: page.get_by_text("p95 ms", exact=True).first,
        "Stragglers": lambda: page.locator(".jp-straggler-selected"),
        "What-if": lambda: page.locator(".jp-whatif-out .big"),
        "Memory": lambda: page.get_by_text("Memory per executor").first,
    }
    for name in TABS:
        p.tab(name)
        checks[name]().wait_for(state="visible", timeout=15_000)
        if name not in ("Stragglers", "Query"):
            assert page.locator("canvas:visible").count() > 0, name
    # the real run: the timeline shows every attempt as its own bar at full zoom
    n = len(a.run.tasks)
    p.tab("Timeline")
    assert f"{n} of {n} task attempts in view, drawn as {n} single bars" in \
        page.locator(".jp-timeline-status .jp").inner_text()
    # local[2]: two lanes, never an "overflow" lane (Spark's lagging finish stamps included)
    labels = page.evaluate("""() => { const f = Bokeh.documents[0].get_model_by_name('jp-timeline');
        const ax = f.left.find((m) => m.major_label_overrides !== undefined);
        return [...ax.major_label_overrides.values()].filter((l) => l.includes('core')); }""")
    assert len(labels) == a.run.slots == 2 and not any("overflow" in x for x in labels)
    assert p.errors == []


def test_disk_slider_to_infinity_shows_the_python_value(browser, reports):
    a, path = reports["real"]
    p = Page(browser, path)
    page = p.page
    p.tab("What-if")
    want = a.whatif(disk=math.inf)
    handle = page.locator(".noUi-handle").first
    handle.wait_for(state="visible")
    handle.focus()
    page.keyboard.press("End")                         # a real keyboard move to the last stop: ∞
    text = f"Predicted: {fmt.ms(want)} ({fmt.change(want, a.wall_ms)} vs {fmt.ms(a.wall_ms)} measured)"
    page.locator(".jp-whatif-out").get_by_text(text).wait_for(timeout=10_000)
    assert page.evaluate(f"{STATE}.predicted_ms[0]") == want
    assert page.evaluate(f"{STATE}.disk[0]") is None or math.isinf(page.evaluate(f"{STATE}.disk[0]"))
    # the labels that qualify the numbers never go away
    labels = page.locator(".jp-whatif-labels .jp")
    assert "upper bound" in labels.inner_text() and "Model error" in labels.inner_text()
    assert f"{100 * a.model_error:.1f}%" in labels.inner_text()
    assert p.errors == []


@pytest.mark.parametrize("which", ["real", "synthetic"])
def test_widgets_equal_python_on_the_shared_vectors(browser, reports, which):
    a, path = reports[which]
    p = Page(browser, path)
    page = p.page
    p.tab("What-if")
    vecs = settings()[::3] if which == "real" else settings()[::2]
    for s in vecs:
        page.evaluate("""([d, n, k, active]) => {
            const doc = Bokeh.documents[0];
            doc.get_model_by_name('jp-disk').value = d;
            doc.get_model_by_name('jp-network').value = n;
            doc.get_model_by_name('jp-slots').value = k;
            doc.get_model_by_name('jp-toggles').active = active;
        }""", [label(s["disk"]), label(s["network"]), f"×{s['slots']:g}",
               [i for i, on in ((0, not s["gc"]), (1, not s["stragglers"])) if on]])
        want = expected(a, s)
        page.wait_for_function(f"""(s) => {{ const d = {STATE};
            return d.slots_factor[0] === s.slots && d.gc[0] === s.gc && d.stragglers[0] === s.stragglers
                   && d.disk[0] === s.disk && d.network[0] === s.network; }}""", arg=s)
        got = page.evaluate(f"{STATE}.predicted_ms[0]")
        assert got == want, (s, got, want)
        assert f"Predicted: {fmt.ms(want)} " in page.locator(".jp-whatif-out .big").inner_text()
    assert p.errors == []


def test_no_request_leaves_the_page(browser, reports):
    a, path = reports["synthetic"]
    p = Page(browser, path)
    page = p.page
    for name in TABS:
        p.tab(name)
        page.wait_for_timeout(200)
    page.locator(".noUi-handle").nth(1).focus()
    page.keyboard.press("End")
    box = page.locator("canvas:visible").first.bounding_box()
    x, y = box["x"], box["y"]
    page.mouse.move(x + 300, y + 100)
    page.mouse.wheel(0, -400)
    page.wait_for_timeout(500)
    assert p.requests and all(u.startswith(LOCAL) for u in p.requests)
    assert p.external() == []


def test_hostile_strings_show_as_text_and_never_run(browser, reports):
    a, path = reports["real"]
    p = Page(browser, path)
    page = p.page
    # the job description set with sc.setJobDescription in the real run
    assert a.run.jobs["description"].str.contains(HOSTILE, regex=False).any()
    page.get_by_text(f"{HOSTILE} skewed join").filter(visible=True).first.wait_for(state="visible")
    page.get_by_text(f"label {HOSTILE}").filter(visible=True).first.wait_for()      # header
    page.get_by_text("$$x^2$$", exact=False).filter(visible=True).first.wait_for()  # source, no math
    p.tab("Timeline")
    xy = page.evaluate(BAR_XY, ["jp-timeline", "label"])                      # a stage bar
    page.mouse.move(*xy)
    # its tooltip
    page.get_by_text(f"{HOSTILE} stage", exact=False).filter(visible=True).first.wait_for(state="visible")
    p.tab("Stages")
    page.get_by_text(f"{HOSTILE} stage", exact=False).filter(visible=True).first.wait_for(state="visible")
    p.tab("Stragglers")
    if len(a.stragglers):
        page.locator(".jp-stragglers").get_by_text(f"{HOSTILE}host").filter(visible=True).first.wait_for(state="visible")
        page.locator(".jp-stragglers .slick-row").first.locator(".slick-cell").first.click()
        page.locator(".jp-straggler-selected").get_by_text(HOSTILE, exact=False).wait_for()
    p.tab("Memory")
    page.get_by_text(f"{HOSTILE}host").filter(visible=True).first.wait_for(state="visible")
    p.tab("Summary")
    page.get_by_text(f"warning {HOSTILE}").filter(visible=True).first.wait_for(state="visible")
    assert page.evaluate("window.__xss") is None
    assert page.locator("img[src=x]").count() == 0
    assert p.external() == [] and p.errors == []


def test_tables_keep_their_first_column_show_whole_headers_and_fold_skipped_stages(browser, reports):
    a, path = reports["synthetic"]
    p = Page(browser, path)
    page = p.page
    p.shown("Stages", ".jp-stages .slick-header-column")
    grid = page.locator(".jp-stages")
    # no header is cut ("stage median r", "durati" before)
    cut = grid.locator(".slick-column-name").evaluate_all(
        "els => els.filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)")
    assert cut == []
    # scrolled to the far right, the stage column is still in view, beside the last column
    right = grid.locator(".slick-viewport-top.slick-viewport-right")
    assert right.evaluate("e => e.scrollWidth > e.clientWidth")             # it does scroll
    right.evaluate("e => { e.scrollLeft = e.scrollWidth; }")
    last = grid.get_by_text("spill (disk)", exact=True)
    last.wait_for(state="visible")
    box, first = grid.bounding_box(), grid.locator(".slick-viewport-left .slick-cell").first.bounding_box()
    assert box["x"] <= first["x"] and first["x"] + first["width"] <= box["x"] + box["width"]
    assert last.bounding_box()["x"] + last.bounding_box()["width"] <= box["x"] + box["width"] + 1
    # SKIPPED stages are folded, with their count; one click shows them
    n_run = sum(1 for r in a.summary()["stages"] if r["status"] != "SKIPPED")
    rows = grid.locator(".slick-viewport-left .slick-row")
    assert rows.count() == n_run
    assert grid.get_by_text("SKIPPED").count() == 0
    page.get_by_text("show the 3 skipped stages", exact=False).first.click()
    grid.get_by_text("SKIPPED").first.wait_for(state="visible")
    assert rows.count() == n_run + 3
    assert p.errors == []


def test_simulated_timeline_labels_every_lane_and_drops_removed_time(browser, reports):
    from jupyter_perf.analysis.components import BY_KEY
    a, path = reports["synthetic"]
    p = Page(browser, path)
    page = p.page
    p.tab("What-if")
    measured_slots = int(a.timeline.group_slots.max())
    axis = """() => { const f = Bokeh.documents[0].get_model_by_name('jp-sim');
        const ax = f.left.find((m) => m.major_label_overrides !== undefined);
        return {ticks: ax.ticker.ticks, labels: [...ax.major_label_overrides.values()]}; }"""
    handles = page.locator(".noUi-handle")
    handles.nth(2).wait_for(state="visible")
    handles.nth(2).focus()
    page.keyboard.press("End")                                          # slots ×4
    page.wait_for_function(f"() => {STATE}.slots_factor[0] === 4")
    page.wait_for_function(f"() => ({axis})().labels.length > {min(measured_slots, 40)}")
    got = page.evaluate(axis)
    n = 4 * measured_slots
    step = 1 if n <= 40 else -(-n // 40)
    assert got["labels"] == [f"slot {k}" for k in range(0, n, step)]
    assert got["ticks"] == [k + 0.5 for k in range(0, n, step)]
    handles.nth(2).focus()
    page.keyboard.press("Home")                                         # slots ×0.5
    page.wait_for_function(f"() => {STATE}.slots_factor[0] === 0.5")
    page.wait_for_function(f"() => ({axis})().labels.length === {max(1, round(measured_slots * 0.5))}")
    assert p.errors == []
    # the real run (every attempt drawn as its own bar): disk ∞ removes shuffle write
    a, path = reports["real"]
    assert a.breakdown["shuffle_write"]["ms"] > 0
    p = Page(browser, path)
    page = p.page
    p.tab("What-if")
    colors = """() => { const f = Bokeh.documents[0].get_model_by_name('jp-sim');
        const out = new Set();
        for (const r of f.renderers) { const d = r.data_source.data;
          if (d.color && d.alpha && d.count === undefined) for (const c of d.color) out.add(c); }
        return [...out]; }"""
    page.wait_for_function(f"() => ({colors})().length > 0")
    assert BY_KEY["shuffle_write"].color in page.evaluate(colors)
    page.locator(".noUi-handle").first.focus()
    page.keyboard.press("End")                                          # disk ∞
    page.wait_for_function(f"() => !({colors})().includes('{BY_KEY['shuffle_write'].color}')")
    assert BY_KEY["cpu"].color in page.evaluate(colors)
    assert p.errors == []


def test_an_operator_click_highlights_its_stages_everywhere(browser, reports):
    a, path = reports["synthetic"]
    p = Page(browser, path)
    page = p.page
    rows = p.shown("Query", ".jp-operators .slick-viewport-left .slick-row")
    assert rows.count() > 0
    doc = "Bokeh.documents[0]"
    # a click on the graph's box of the top operator selects it (the table and graph share data)
    xy = page.evaluate("""() => {
      const fig = Bokeh.documents[0].get_model_by_name('jp-plan');
      let pv = null;
      for (const rv of Bokeh.index.roots) pv = pv || rv.owner.find_one(fig);
      const rect = pv.canvas_view.el.getBoundingClientRect();
      const d = Bokeh.documents[0].get_model_by_name('jp-operators-source').data;
      return [rect.left + pv.frame.x_scale.compute(d.x[0]), rect.top + pv.frame.y_scale.compute(d.y[0])];
    }""")
    page.mouse.click(*xy)
    selected = f"{doc}.get_model_by_name('jp-operators-source').selected.indices"
    page.wait_for_function(f"() => {selected}.length === 1")
    assert page.evaluate(f"{selected}[0]") == 0
    top = a.operators.iloc[0]
    want = sorted(int(s) for s in top["stage_ids"])
    info = page.locator(".jp-operator-selected .jp")
    info.get_by_text("highlighted on the").wait_for()
    assert f"stage{'s' if len(want) > 1 else ''} {', '.join(map(str, want))}" in info.inner_text()
    n = int(a.run.tasks["stage_id"].isin(want).sum())
    assert f"its {n:,} task attempt" in info.inner_text()
    # Stages: its rows selected; stage track: the others faded; Stragglers: its rows selected
    st = page.evaluate(f"(() => {{ const s = {doc}.get_model_by_name('jp-stages-source'); "
                       "return s.selected.indices.map((i) => s.data.stage_id[i]); })()")
    assert sorted(st) == want
    track = page.evaluate(f"(() => {{ const d = {doc}.get_model_by_name('jp-stage-track').data; "
                          "return [...d.stage_id].map((s, i) => [s, d.alpha[i]]); })()")
    assert all((alpha == 1.0) == (sid in want) for sid, alpha in track)
    strag = page.evaluate(f"(() => {{ const s = {doc}.get_model_by_name('jp-stragglers-source'); "
                          "return s.selected.indices.map((i) => s.data.stage_id[i]); })()")
    assert set(strag) <= set(want)
    assert len(strag) == int(a.stragglers["stage_id"].isin(want).sum())
    p.tab("Timeline")
    status = page.locator(".jp-timeline-status .jp").inner_text()
    assert "task attempts in view" in status
    # its attempts drawn as measured, the other stages' faded (x 0.15)
    alphas = page.evaluate("""() => { const f = Bokeh.documents[0].get_model_by_name('jp-timeline');
        const out = [];
        for (const r of f.renderers) { const d = r.data_source.data;
          if (d.color && d.alpha && d.stage_id === undefined) out.push(...d.alpha); }
        return out; }""")
    assert any(x > 0.3 for x in alphas)
    assert all(x > 0.3 or x < 0.2 for x in alphas)
    # an operator row with a hostile description: text in the table, never run
    page.get_by_text("Query", exact=True).first.click()
    page.locator(".jp-operators").get_by_text(HOSTILE, exact=False).first.wait_for(state="attached")
    assert page.evaluate("window.__xss") is None and page.locator("img[src=x]").count() == 0
    assert p.errors == []


def test_selecting_a_straggler_highlights_it_on_the_timeline(browser, reports):
    a, path = reports["synthetic"]
    assert len(a.stragglers)
    p = Page(browser, path)
    page = p.page
    p.tab("Stragglers")
    first = a.stragglers.iloc[0]
    page.locator(".jp-stragglers .slick-row").first.locator(".slick-cell").first.click()
    page.locator(".jp-straggler-selected").get_by_text(f"Task attempt {int(first['task_id'])}").wait_for()
    hl = page.evaluate("Bokeh.documents[0].get_model_by_name('jp-timeline-highlight').data_source.data")
    assert len(hl["left"]) == 1
    assert math.isclose(hl["right"][0] - hl["left"][0], first["duration_ms"] / 1000, rel_tol=1e-6)
    p.tab("Timeline")
    assert "single bars" in page.locator(".jp-timeline-status .jp").inner_text()   # zoomed in on it
    assert p.errors == []


def test_nbconvert_html_keeps_the_reports_working_offline(browser, reports, tmp_path):
    """A saved notebook with two reports, `jupyter nbconvert --to html` (no option: the
    installed preprocessor), opened offline: both reports draw, BokehJS is in the page once,
    the sliders answer with the Python numbers, hostile strings stay text."""
    import nbformat

    from jupyter_perf.render import inline

    nb = nbformat.v4.new_notebook()
    for key in ("real", "synthetic"):
        a, _ = reports[key]
        cell = nbformat.v4.new_code_cell("%%perfmeasure\n...")
        cell.outputs = [nbformat.v4.new_output("display_data", data=inline.bundle(a.run, a))]
        nb.cells.append(cell)
    src = tmp_path / "saved.ipynb"
    nbformat.write(nb, src)
    res = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "html", str(src)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    html = (tmp_path / "saved.html").read_text(encoding="utf-8")
    assert html.count("/* END bokeh.min.js */") == 1
    p = Page(browser, None)
    page = p.page
    page.goto((tmp_path / "saved.html").as_uri())
    for i, key in enumerate(("real", "synthetic")):
        a, _ = reports[key]
        report = page.locator(f"#jupyter-perf-report-{i}")
        report.get_by_text("What-if", exact=True).first.click()
        handle = report.locator(".noUi-handle").first
        handle.wait_for(state="visible", timeout=30_000)
        handle.focus()
        page.keyboard.press("End")
        want = a.whatif(disk=math.inf)
        report.locator(".jp-whatif-out").get_by_text(f"Predicted: {fmt.ms(want)}").wait_for(timeout=10_000)
    page.locator("#jupyter-perf-report-0").get_by_text(f"label {HOSTILE}").first.wait_for()
    assert page.evaluate("window.__xss") is None
    # nbconvert's own template may ask for CDN assets (blocked here); the reports ask for none
    ours = [u for u in p.requests + p.blocked if not u.startswith(LOCAL)]
    assert all("bokeh" not in u for u in ours), ours
    assert p.errors == []
