"""The comparison drawn by the TypeScript renderer (labextension/src/report/compare.ts) says
what render/compare.py's Python HTML said before it (issue Q: one renderer for every view).

``golden/compare_<pair>.json`` holds a comparison's summary and ``golden/compare_<pair>.txt``
that old HTML's text, section by section (``golden/make_compare_golden.py``, read by
``comparetext.SECTIONS_JS``). Here each summary's standalone page is opened offline in
Chromium and the same function reads what the renderer drew: the same sections in the same
order, every line (words, numbers, no-break spaces, where each bar of the split sits) equal.
"""
from __future__ import annotations

import json
import os

import pytest
from comparetext import SECTIONS_JS, open_comparison, parse

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
PAIRS = ("hostile", "slots", "described", "tpch_q1_q9")


def _golden(pair: str) -> tuple[dict, list[dict]]:
    with open(os.path.join(GOLDEN, f"compare_{pair}.json"), encoding="utf-8") as fh:
        summary = json.load(fh)
    with open(os.path.join(GOLDEN, f"compare_{pair}.txt"), encoding="utf-8") as fh:
        return summary, parse(fh.read())


@pytest.mark.parametrize("pair", PAIRS)
def test_every_section_reads_as_the_python_html_did(pair, jp_browser, tmp_path):
    summary, want = _golden(pair)
    page = open_comparison(jp_browser, tmp_path / "cmp.html", summary)
    try:
        got = page.evaluate(SECTIONS_JS)
        assert [s["title"] for s in got] == [s["title"] for s in want]
        for g, w in zip(got, want):
            assert g["lines"] == w["lines"], f"section {w['title']!r} differs"
        assert page.jp_requests == [] and page.jp_errors == [] and page.jp_dialogs == []
    finally:
        page.close()


def test_the_goldens_cover_what_the_renderer_draws():
    """The pairs hold every section, both kinds of prediction row, both sides'
    descriptions, an advice line, warnings and more than one stage (a test that could not
    fail on those would compare nothing)."""
    texts = {p: _golden(p)[1] for p in PAIRS}
    titles = {s["title"] for secs in texts.values() for s in secs}
    assert titles == {"head", "Where the change comes from", "Predicted vs measured",
                      "Setup and settings", "Operators", "Stages",
                      "Data volume, stragglers and skew", "How this was compared"}
    lines = "\n".join(line for secs in texts.values() for s in secs for line in s["lines"])
    for words in ("nothing for this value", "not simulated", "A: hashpartitioning(k#1, 200)",
                  "Advice:", "⚠ run A:", "[bar est", "different Spark applications",
                  "\u00a0s"):
        assert words in lines, words
    stages = [s for s in texts["tpch_q1_q9"] if s["title"] == "Stages"][0]["lines"]
    assert len(stages) > 3
