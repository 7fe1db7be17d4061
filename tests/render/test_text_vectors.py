"""fmt.run_title and fmt.count: the shared vectors (read by the sidebar's jest specs too) are
fmt's own strings, and every caller titles a run by the one rule."""
import json
from pathlib import Path
from types import SimpleNamespace

from jupyter_perf import fmt

PATH = Path(__file__).resolve().parent / "text_vectors.json"
DATA = json.loads(PATH.read_text(encoding="utf-8"))


def test_run_titles_are_fmts_own():
    assert [fmt.run_title(row) for row, _ in DATA["run_title"]] == \
        [title for _, title in DATA["run_title"]]
    # each field wins in turn, and a blank one is skipped
    titles = {title for _, title in DATA["run_title"]}
    assert {"daily aggregate", "padded label", "spark.range(10).count()",
            "app-20261122115900-0001", "20261122-115900-abcdef", ""} <= titles


def test_a_run_object_is_titled_as_its_stored_row():
    for row, title in DATA["run_title"]:
        run = SimpleNamespace(**row)
        assert fmt.run_title(run) == title


def test_counts_are_fmts_own():
    assert [fmt.count(n, noun) for n, noun, _ in DATA["count"]] == \
        [text for _, _, text in DATA["count"]]
    texts = [text for _, _, text in DATA["count"]]
    assert "1 job" in texts and "2 jobs" in texts and "1,234 task attempts" in texts
    assert fmt.UNKNOWN in texts
