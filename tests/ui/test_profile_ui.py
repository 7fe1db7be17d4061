"""The Profile tab (issue P) of a real ``%%perfmeasure --profile`` cell, in a real JupyterLab
and Chromium, and in its standalone export opened from disk with the network off.

One JupyterLab server, one kernel and its embedded ``local[*]`` Spark for the module; one
profiled cell: a regex filter (its own stage) feeding a sort (another stage), so the samples
fall into several stages. The tab shows a flame graph and the hot functions; a stage filter
narrows both to that stage's samples; a search marks the frames it matches and counts their
samples; the export shows the same tab from the file alone.
"""
from __future__ import annotations

import pytest
from labhelpers import (
    KERNEL_IDLE_JS,
    TOKEN,
    offline_page,
    open_page,
    require_browser,
    start_lab,
    write_notebook,
)

require_browser()

pytestmark = pytest.mark.timeout(900)

NAME = "profile.ipynb"
EXPORT = "profile-export.html"
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
TAB = ".jp-perf-panel[data-tab='profile']"
CELLS = [
    "%load_ext jupyter_perf\nimport jupyter_perf as jp\nfrom pyspark.sql import functions as F\n"
    "spark = jp.spark_session()",
    # the regex runs in the map stage of the sort's shuffle, the sort in the stage after it
    '%%perfmeasure --profile -o run --label "profiled regex and sort"\n'
    "(spark.range(0, 2_000_000, 1, 4)\n"
    ' .select(F.concat(F.lit("abc"), F.col("id").cast("string"), F.lit("xyz")).alias("s"))\n'
    ' .where(F.col("s").rlike("^a.*(1|2)3+x"))\n'
    ' .select((F.rand(7) * 1e9).cast("long").alias("r"), "s")\n'
    ' .orderBy("r").write.format("noop").mode("overwrite").save())',
    f"%perfmeasure export {{run.run_id}} {EXPORT}",
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    base = tmp_path_factory.mktemp("lab")
    yield from start_lab(base, [write_notebook(base, NAME, CELLS)])


@pytest.fixture(scope="module")
def page(lab, browser):
    context, page = open_page(browser, f"{lab['url']}/lab/tree/{NAME}?reset&token={TOKEN}",
                              viewport=(1500, 900))
    page.wait_for_function(KERNEL_IDLE_JS, timeout=120_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.locator(f"{PANEL} .jp-perf-report-output").first.wait_for(state="attached",
                                                                   timeout=600_000)
    page.wait_for_function(KERNEL_IDLE_JS, timeout=600_000)
    yield page
    context.close()


def _profile_tab(scope, page):
    """Show the report's Profile tab; wait until it is drawn with its flame graph."""
    scope.locator(".jp-perf-report[data-jp-ready='1']").wait_for(state="attached",
                                                                 timeout=120_000)
    button = scope.locator(".jp-perf-tabbar button[data-tab='profile']")
    button.scroll_into_view_if_needed()
    button.click()
    panel = scope.locator(TAB)
    page.wait_for_function("el => el.dataset.jpDrawn === '1'", arg=panel.element_handle(),
                           timeout=60_000)
    panel.locator(".jp-perf-profile-flame canvas").first.wait_for(state="attached",
                                                                  timeout=60_000)
    return panel


def _flame(panel) -> dict:
    return panel.locator(".jp-perf-profile-flame").evaluate("c => ({...c.dataset})")


def _hot(panel) -> list[list[str]]:
    return panel.locator("table[data-view='profile-hot'] tbody tr").evaluate_all(
        "rs => rs.map(r => Array.from(r.cells).map(c => c.textContent))")


def _wait_samples(page, panel, value: str) -> None:
    page.wait_for_function("([el, v]) => el.dataset.samples === v",
                           arg=[panel.locator(".jp-perf-profile-flame").element_handle(), value],
                           timeout=30_000)


def test_the_profile_tab_draws_filters_and_searches(page, lab):
    report = page.locator(f"{PANEL} .jp-perf-report-output").first
    report.scroll_into_view_if_needed()
    panel = _profile_tab(report, page)
    assert panel.locator(".jp-perf-warn", has_text="could not be drawn").count() == 0
    text = panel.inner_text()
    assert "of CPU (sampled)" in text and "(measured)" in text
    whole = _flame(panel)
    total = int(whole["samples"])
    assert total > 0 and int(whole["frames"]) > 1
    hot = _hot(panel)
    assert hot and any(r[0].startswith("java.util.regex.") for r in hot[:20]), hot[:20]
    columns = panel.locator("table[data-view='profile-hot'] th").all_inner_texts()
    stage_col, ex_col = columns.index("stages"), columns.index("executors")
    assert {r[ex_col] for r in hot} == {"driver"}          # local[*]: the driver's JVM
    # a stage filter narrows the flame graph and the hot functions to that stage's samples
    stage_select = panel.locator("select.jp-perf-profile-stage")
    stages = stage_select.locator("option").all_inner_texts()[1:]
    assert len(stages) >= 2, stages
    narrowed = []
    for label in stages:
        stage_select.select_option(label=label)      # the tab redraws in the change event
        got = int(_flame(panel)["samples"])
        assert got <= total
        if 0 < got < total:
            stage = label.split()[-1]
            rows = _hot(panel)
            assert rows and all(stage in r[stage_col].split(", ") for r in rows), rows[:5]
            assert "Filtered: " in panel.inner_text()
            narrowed.append(label)
    assert narrowed, "no stage filter narrowed the profile"
    stage_select.select_option(index=0)
    _wait_samples(page, panel, str(total))
    assert len(_hot(panel)) == len(hot)
    # the search marks the regex frames and counts their samples (sampled)
    panel.locator("input[type=search]").fill("regex")
    page.wait_for_function(
        "el => Number(el.dataset.matches) > 0",
        arg=panel.locator(".jp-perf-profile-flame").element_handle(), timeout=30_000)
    flame = _flame(panel)
    matched = int(flame["matchSamples"])
    assert 0 < matched <= total
    found = panel.locator(".jp-perf-profile-found").inner_text()
    assert found.endswith("(sampled)") and f"{matched:,} sample" in found, found


def test_the_exported_file_shows_the_same_profile_offline(page, lab, browser):
    path = lab["root"] / EXPORT
    page.wait_for_function(KERNEL_IDLE_JS, timeout=120_000)
    assert path.is_file(), list(lab["root"].iterdir())
    report = page.locator(f"{PANEL} .jp-perf-report-output").first
    inline = _flame(_profile_tab(report, page))
    with offline_page(browser, path) as offline:
        panel = _profile_tab(offline, offline)
        exported = _flame(panel)
        assert exported["samples"] == inline["samples"]
        assert exported["frames"] == inline["frames"]
        assert _hot(panel) and panel.locator("select.jp-perf-profile-stage").count() == 1
        assert offline.requests == [path.as_uri()]              # offline: nothing fetched
