"""GET compare/{a}/{b} and POST compare/{a}/{b}/export through a real Jupyter server."""
from __future__ import annotations

import json
import os
import re

import pytest
from compare_synth import cell_run, stored
from test_handlers import API, assert_json_error, fetch_error

from jupyter_perf.atomic import EXPORT_MARKER
from jupyter_perf.constants import COMPARE_MIME_TYPE
from jupyter_perf.model import Run
from jupyter_perf.service.comparing import export_id
from jupyter_perf.store import accuracy


@pytest.fixture
def pair(perf_home):
    a = stored(cell_run([100] * 8, slots=2, label="<img src=x onerror=alert(1)>"))
    b = stored(cell_run([100] * 8, slots=4, conf={"spark.sql.shuffle.partitions": "8"}))
    return a, b


async def test_the_comparison_is_html_in_a_sandbox(jp_fetch, pair, perf_home):
    a, b = pair
    response = await jp_fetch(*API, "compare", a, b)
    assert response.code == 200
    assert response.headers["Content-Type"].startswith("text/html")
    assert "sandbox allow-scripts" in response.headers["Content-Security-Policy"]
    html = response.body.decode()
    assert html.startswith("<!DOCTYPE html>") and a in html and b in html
    # the renderer's page: the label sits in the comparison's payload, escaped (issue Q)
    assert "<img src=x" not in html and "\\u003cimg src=x onerror=alert(1)\\u003e" in html
    payload = re.search(rf'<script type="{re.escape(COMPARE_MIME_TYPE)}">(.*?)</script>', html, re.S)
    summary = json.loads(payload.group(1))["summary"]
    assert summary["config_diff"]["spark.sql.shuffle.partitions"] == ["200", "8"]
    # the slots prediction it showed is in the store's record
    rows, _ = accuracy.read(str(perf_home))
    assert [(r["a"], r["b"], r["kind"]) for r in rows] == [(a, b, "slots")]


async def test_the_summary_as_json(jp_fetch, pair):
    a, b = pair
    response = await jp_fetch(*API, "compare", a, b, params={"format": "json"})
    s = json.loads(response.body)
    assert (s["a"], s["b"]) == (a, b)
    assert s["setup"]["cores (slots)"] == ["2", "4"]
    [p] = s["predicted_vs_measured"]
    assert p["measured_ms"] == pytest.approx(s["wall_b_ms"])


async def test_bad_pairs_are_one_line_json(jp_fetch, pair, store):
    a, b = pair
    code, body = await fetch_error(jp_fetch, *API, "compare", a, "20990101-000000-abcdef")
    assert_json_error(code, body, 404)
    code, body = await fetch_error(jp_fetch, *API, "compare", a, a)
    assert_json_error(code, body, 400)
    assert "same run" in body["error"]
    code, body = await fetch_error(jp_fetch, *API, "compare", "..", b)
    assert_json_error(code, body, 400)
    empty = Run(kind="cell", source="x = 1", start_ms=0.0, end_ms=5.0, status="no-jobs")
    store.save(empty)
    code, body = await fetch_error(jp_fetch, *API, "compare", empty.run_id, b)
    assert_json_error(code, body, 400)
    assert "ran no Spark jobs" in body["error"]
    with open(os.path.join(store.run_dir(b), "run.json"), "w") as fh:
        fh.write("{ not json")
    code, body = await fetch_error(jp_fetch, *API, "compare", a, b)
    assert_json_error(code, body, 500)
    assert "damaged" in body["error"] and os.path.isdir(store.run_dir(b))


async def test_export_writes_the_comparison_into_the_root(jp_fetch, pair, jp_root_dir):
    a, b = pair
    response = await jp_fetch(*API, "compare", a, b, "export", method="POST", body="{}")
    assert response.code == 201
    data = json.loads(response.body)
    name = f"jupyter-perf-{export_id(a, b)}.html"
    assert data["path"] == name and (data["a"], data["b"]) == (a, b)
    text = (jp_root_dir / name).read_text(encoding="utf-8")
    assert text.rstrip().endswith(EXPORT_MARKER.format(run_id=export_id(a, b)))
    assert data["bytes"] == os.path.getsize(jp_root_dir / name)
    # again: an earlier export of the same pair is replaced; a user's file is refused (409)
    await jp_fetch(*API, "compare", a, b, "export", method="POST", body="{}")
    (jp_root_dir / "notes.html").write_text("mine")
    code, body = await fetch_error(jp_fetch, *API, "compare", a, b, "export", method="POST",
                                   body=json.dumps({"path": "notes.html"}))
    assert_json_error(code, body, 409)
    assert (jp_root_dir / "notes.html").read_text() == "mine"
    code, body = await fetch_error(jp_fetch, *API, "compare", a, b, "export", method="POST",
                                   body=json.dumps({"path": "../out.html"}))
    assert_json_error(code, body, 400)
    code, body = await fetch_error(jp_fetch, *API, "compare", a, b, "export", method="POST",
                                   body="[1]")
    assert_json_error(code, body, 400)


@pytest.mark.parametrize("suffix,method,body", [((), "GET", None), (("export",), "POST", "{}")])
async def test_anonymous_requests_are_refused(jp_fetch, pair, jp_root_dir, perf_home, suffix,
                                              method, body):
    a, b = pair
    code, err = await fetch_error(jp_fetch, *API, "compare", a, b, *suffix, method=method,
                                  body=body, headers={"Authorization": ""})
    assert code in (401, 403) and "token" in err["error"]
    assert not (jp_root_dir / f"jupyter-perf-{export_id(a, b)}.html").exists()
    assert accuracy.read(str(perf_home)) == ([], 0)            # nothing compared
