"""The What-if tab in the standalone page (opened from disk, network blocked): every slider and
toggle, moved as a user moves it, shows exactly ``Analysis.whatif``'s prediction, formatted as
``fmt`` formats it; the words that qualify the numbers (model error, estimated, upper bound,
host CPU) are there; the slider titles never run under the "Predicted:" heading at notebook
width; a cold slider move on a million task attempts answers. One Chromium for the module."""
from __future__ import annotations

import math

import pytest
from render_runs import HOSTILE, hostile_copy, synthetic, with_host_cpu, with_speculative
from viewhelpers import show_tab
from whatif_vectors import expected, settings

from jupyter_perf import fmt
from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.hostcpu import RANGE_REASON
from jupyter_perf.render.payload import DISK_STOPS, SLOT_STOPS
from jupyter_perf.render.views import whatif as whatif_view

MEASURED = {"disk": 1.0, "network": 1.0, "slots": 1.0, "gc": True, "stragglers": True}


@pytest.fixture(scope="module")
def spec():
    return analyze(with_host_cpu(with_speculative(synthetic(3000, 16, per_stage=400))))


def open_whatif(open_report, a, width: int = 1100):
    """The report of ``a`` with the What-if tab shown (conftest's ``tab=`` needs an import of
    show_tab it lacks today)."""
    page = open_report(a, width=width)
    show_tab(page, "whatif")
    return page


def js(v: float | bool) -> str:
    """A setting as the page's data attributes write it (JavaScript's String())."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return "Infinity" if math.isinf(v) else f"{v:g}"


def wait_for(page, s: dict, sim: bool = True) -> None:
    """Until the tab shows setting ``s`` (and, with ``sim``, has drawn its simulated schedule)."""
    want = {k: js(v) for k, v in s.items()}
    page.wait_for_function(
        """([want, sim]) => {
            const out = document.querySelector('.jp-whatif-out');
            const panel = document.querySelector(".jp-perf-panel[data-tab='whatif']");
            const key = [want.disk, want.network, want.slots, want.gc, want.stragglers].join('|');
            return Object.keys(want).every((k) => out.dataset[k] === want[k])
                && (!sim || panel.dataset.jpSim === key); }""", arg=[want, sim], timeout=120_000)


def shown(page) -> tuple[float, str]:
    el = page.locator(".jp-whatif-predicted")
    return float(el.get_attribute("data-predicted-ms")), el.inner_text()


def heading(a, want: float) -> str:
    return (f"Predicted: {fmt.ms(want)} ({fmt.change(want, a.wall_ms)} vs {fmt.ms(a.wall_ms)} "
            "measured)")


def set_controls(page, s: dict) -> None:
    """Put every control at ``s`` at once (as a user would, one input event)."""
    page.evaluate("""([d, n, k, gc, st]) => {
        const q = (c) => document.querySelector(`.jp-perf-whatif input[data-control='${c}']`);
        q('disk').value = String(d); q('network').value = String(n); q('slots').value = String(k);
        q('gc').checked = !gc; q('stragglers').checked = !st;
        q('disk').dispatchEvent(new Event('input', {bubbles: true})); }""",
                  [DISK_STOPS.index(s["disk"]), DISK_STOPS.index(s["network"]),
                   SLOT_STOPS.index(s["slots"]), s["gc"], s["stragglers"]])


def test_each_control_moved_shows_pythons_prediction(open_report, spec):
    a = spec
    page = open_whatif(open_report, a)
    wait_for(page, MEASURED)
    got, text = shown(page)
    assert got == expected(a, MEASURED)
    assert text == heading(a, got)
    s = dict(MEASURED)
    moves = [("disk", "End", math.inf), ("network", "ArrowRight", DISK_STOPS[1]),
             ("slots", "ArrowRight", SLOT_STOPS[SLOT_STOPS.index(1.0) + 1]),
             ("slots", "Home", SLOT_STOPS[0]), ("disk", "ArrowLeft", DISK_STOPS[-2])]
    for control, keypress, value in moves:
        page.focus(f".jp-perf-whatif input[data-control='{control}']")
        page.keyboard.press(keypress)                        # a real keyboard move
        s[control] = value
        wait_for(page, s)
        want = expected(a, s)
        got, text = shown(page)
        assert got == want, (s, got, want)
        assert text == heading(a, want)
        title = page.locator(f".jp-whatif-slider[data-control='{control}'] .jp-whatif-title")
        label = "∞" if math.isinf(value) else (f"×{value:g}" if control == "slots" else f"{value:g}×")
        assert title.inner_text().endswith(f": {label}")
    for toggle in ("gc", "stragglers"):
        page.click(f".jp-perf-whatif input[data-control='{toggle}']")
        s[toggle] = False
        wait_for(page, s)
        want = expected(a, s)
        got, text = shown(page)
        assert got == want and text == heading(a, want), (s, got, want)
    assert len({expected(a, {**MEASURED, k: v}) for k, _, v in moves}) > 2   # moves mattered
    detail = page.locator(".jp-whatif-detail").inner_text()
    assert "(upper bound)" in detail and "no GC" in detail and "no stragglers" in detail
    assert "(estimated)" in detail
    # the simulated schedule shows every attempt of the scenario's replay
    status = page.locator(".jp-perf-panel[data-tab='whatif'] .jp-perf-lanes-status")
    assert status.get_attribute("data-total") == str(len(a.run.tasks))
    assert page.jp_errors == [] and page.jp_requests == []


def test_shared_vectors_equal_python(open_report, spec):
    a = spec
    page = open_whatif(open_report, a)
    wait_for(page, MEASURED)
    vecs = settings()[::9]
    for s in vecs:
        set_controls(page, s)
        wait_for(page, s, sim=False)
        got, text = shown(page)
        want = expected(a, s)
        assert got == want, (s, got, want)
        assert text == heading(a, want)
    assert page.jp_errors == []


def test_the_numbers_say_what_they_are(open_report, spec):
    a = spec
    page = open_whatif(open_report, a)
    labels = page.locator(".jp-whatif-labels").inner_text()
    assert f"Model error {100 * a.model_error:.1f}%" in labels
    assert f"took {fmt.ms(a.simulated_baseline_ms)} against {fmt.ms(a.actual_ms)}" in labels
    assert "estimates" in labels and "upper bound" in labels
    assert f"Driver gaps (no task running: {fmt.ms(a.driver_gap_ms)}) stay fixed" in labels
    share = a.host_cpu_busy_share
    assert share is not None
    assert f"{100 * share:.0f}% busy (measured)" in page.locator(".jp-whatif-host").inner_text()
    title = page.locator(".jp-whatif-slider[data-control='disk'] .jp-whatif-title").inner_text()
    assert "(upper bound)" in title and "input/output wait (estimated)" in title
    # the legend names the components from the data, estimated ones marked so
    legend = page.locator(".jp-whatif-legend").inner_text()
    assert "CPU" in legend and "input/output wait (estimated)" in legend


def test_without_host_samples_the_note_says_so(open_report):
    a = analyze(synthetic(400, 4, per_stage=100))
    page = open_whatif(open_report, a)
    note = page.locator(".jp-whatif-host").inner_text()
    assert "no host CPU samples" in note
    wait_for(page, MEASURED)
    assert shown(page)[0] == expected(a, MEASURED)


def test_slider_titles_do_not_run_under_the_prediction_at_notebook_width(open_report, spec):
    page = open_whatif(open_report, spec, width=700)
    wait_for(page, MEASURED)
    boxes = page.evaluate("""() => {
        const r = (el) => { const b = el.getBoundingClientRect();
                            return [b.left, b.top, b.right, b.bottom]; };
        return {titles: [...document.querySelectorAll('.jp-whatif-slider, .jp-whatif-toggle')]
                          .map(r),
                result: [...document.querySelectorAll('.jp-whatif-predicted, .jp-whatif-detail, '
                                                      + '.jp-whatif-labels')].map(r),
                panel: r(document.querySelector(".jp-perf-panel[data-tab='whatif']"))}; }""")

    def overlap(p, q):
        return p[0] < q[2] and q[0] < p[2] and p[1] < q[3] and q[1] < p[3]

    assert len(boxes["titles"]) == 5 and len(boxes["result"]) == 3
    for t in boxes["titles"]:
        assert t[2] - t[0] > 0 and t[3] - t[1] > 0
        for r in boxes["result"]:
            assert not overlap(t, r), (t, r)
        assert t[2] <= boxes["panel"][2] + 0.5              # nothing runs off to the right
    for r in boxes["result"]:
        assert r[2] <= boxes["panel"][2] + 0.5


def test_hostile_strings_stay_text(open_report):
    a = analyze(hostile_copy(synthetic(400, 4, per_stage=100)))
    page = open_whatif(open_report, a)
    wait_for(page, MEASURED)
    page.focus(".jp-perf-whatif input[data-control='slots']")
    page.keyboard.press("End")
    wait_for(page, {**MEASURED, "slots": SLOT_STOPS[-1]})
    assert page.evaluate("window.__xss") is None
    assert page.locator(".jp-perf-panel[data-tab='whatif'] img").count() == 0
    assert HOSTILE not in page.locator(".jp-perf-panel[data-tab='whatif']").inner_html()
    assert page.jp_errors == []


def test_a_cold_slider_move_on_a_million_attempts(open_report):
    a = analyze(synthetic(1_000_000))
    page = open_whatif(open_report, a)
    wait_for(page, MEASURED)
    # ×3 slots: neither the shown setting nor one it prefetches (one stop away, or an end)
    s = {**MEASURED, "slots": 3.0}
    assert SLOT_STOPS.index(3.0) - SLOT_STOPS.index(1.0) > 1 and 3.0 != SLOT_STOPS[-1]
    set_controls(page, s)
    wait_for(page, s)
    want = expected(a, s)
    got, text = shown(page)
    assert got == want and text == heading(a, want)
    status = page.locator(".jp-perf-panel[data-tab='whatif'] .jp-perf-lanes-status")
    assert status.get_attribute("data-total") == "1000000"
    assert status.get_attribute("data-mode") == "aggregate"
    assert page.jp_errors == [] and page.jp_requests == []


def high_of(a, s: dict) -> float | None:
    return a.whatif_range(disk=s["disk"], network=s["network"], slots_factor=s["slots"],
                          gc=s["gc"], stragglers=s["stragglers"])["predicted_high_ms"]


def test_more_slots_without_host_samples_on_a_shared_host_show_a_range(open_report):
    run = synthetic(400, 4, per_stage=100)
    run.master = "local[4]"                      # an event log of a local app: no host samples
    a = analyze(run)
    d = whatif_view.data(a, None)["slots_range"]
    assert d["share"] == [float(x) for x in a.no_spare_share] and "{low}" in d["words"]
    sampled = analyze(with_host_cpu(run))                     # a live run: host samples
    assert whatif_view.data(sampled, None)["slots_range"] is None
    assert high_of(sampled, {**MEASURED, "slots": 2.0}) is None
    page = open_whatif(open_report, a)
    wait_for(page, MEASURED)
    assert "no host CPU samples" in page.locator(".jp-whatif-host").inner_text()
    assert page.locator(".jp-whatif-range").is_hidden()
    vecs = [{**MEASURED, "slots": k} for k in SLOT_STOPS if k > 1] + [
        {**MEASURED, "slots": 2.0, "gc": False}, {**MEASURED, "slots": 4.0, "disk": math.inf},
        {**MEASURED, "slots": 0.5}, {**MEASURED, "slots": 1.0}]
    widened = 0
    for s in vecs:
        set_controls(page, s)
        wait_for(page, s, sim=False)
        low, text = shown(page)
        assert low == expected(a, s), s                       # the low end: the plain replay
        high = high_of(a, s)
        got = page.get_attribute(".jp-whatif-predicted", "data-predicted-high-ms")
        if high is None:
            assert got is None and text == heading(a, low)
            assert page.locator(".jp-whatif-range").is_hidden()
            continue
        assert float(got) == high and high >= low, (s, got, high)
        widened += high > low
        assert text == (f"Predicted: between {fmt.ms(low)} and {fmt.ms(high)} "
                        f"({fmt.change(low, a.wall_ms)} to {fmt.change(high, a.wall_ms)} vs "
                        f"{fmt.ms(a.wall_ms)} measured)")
        assert page.locator(".jp-whatif-range").inner_text() == f"({RANGE_REASON})"
    assert widened >= 3                                     # the range is not a point in disguise
    assert page.jp_errors == [] and page.jp_requests == []
