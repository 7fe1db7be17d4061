"""Every REST handler of the server extension, through a real Jupyter server (jp_fetch)."""
from __future__ import annotations

import asyncio
import json
import os
import stat

import pytest
from runs_factory import make_run, save_run
from tornado.httpclient import HTTPClientError

import jupyter_perf
from jupyter_perf.atomic import export_owner
from jupyter_perf.server import runs_service

API = ("jupyter-perf", "api")


async def fetch_error(jp_fetch, *parts, **kw) -> tuple[int, dict]:
    """(status, JSON body) of a request that must fail."""
    with pytest.raises(HTTPClientError) as err:
        await jp_fetch(*parts, **kw)
    body = err.value.response.body if err.value.response is not None else b""
    return err.value.code, (json.loads(body) if body else {})


def assert_json_error(code: int, body: dict, expected: int) -> None:
    assert code == expected
    assert set(body) == {"error"} and isinstance(body["error"], str) and body["error"]
    assert "\n" not in body["error"]


# -- GET version --------------------------------------------------------------------------
async def test_version(jp_fetch):
    response = await jp_fetch(*API, "version")
    assert json.loads(response.body) == {"version": jupyter_perf.__version__}


# -- GET runs -----------------------------------------------------------------------------
async def test_list_is_newest_first_and_paged(jp_fetch, seeded, jp_root_dir):
    response = await jp_fetch(*API, "runs")
    assert response.code == 200 and response.headers["Content-Type"].startswith("application/json")
    data = json.loads(response.body)
    assert data["total"] == 3 and data["offset"] == 0 and data["limit"] == 50
    assert [r["run_id"] for r in data["runs"]] == [r.run_id for r in reversed(seeded)]
    newest = data["runs"][0]
    assert newest["label"] == "<img src=x onerror=alert(1)>" and newest["status"] == "failed"
    assert newest["num_tasks"] == 8 and newest["num_stages"] == 2
    assert newest["wall_ms"] == pytest.approx(seeded[2].wall_ms)
    assert newest["verdict"]  # the analysis' one-sentence verdict
    # the notebook path, made relative to the Jupyter root for the frontend
    assert data["runs"][1]["notebook"] == str(jp_root_dir / "work" / "etl.ipynb")
    assert data["runs"][1]["notebook_path"] == "work/etl.ipynb"
    assert data["runs"][0]["notebook_path"] is None

    page = json.loads((await jp_fetch(*API, "runs", params={"limit": 1, "offset": 1})).body)
    assert page["total"] == 3 and page["limit"] == 1 and page["offset"] == 1
    assert [r["run_id"] for r in page["runs"]] == [seeded[1].run_id]
    beyond = json.loads((await jp_fetch(*API, "runs", params={"offset": 10})).body)
    assert beyond["runs"] == [] and beyond["total"] == 3


async def test_list_filters_by_text_and_notebook(jp_fetch, seeded, jp_root_dir):
    q = json.loads((await jp_fetch(*API, "runs", params={"q": "daily"})).body)
    assert [r["run_id"] for r in q["runs"]] == [seeded[0].run_id] and q["total"] == 1
    by_code = json.loads((await jp_fetch(*API, "runs", params={"q": "spark.range"})).body)
    assert [r["run_id"] for r in by_code["runs"]] == [seeded[1].run_id]
    nb = str(jp_root_dir / "work" / "etl.ipynb")
    by_nb = json.loads((await jp_fetch(*API, "runs", params={"notebook": nb})).body)
    assert [r["run_id"] for r in by_nb["runs"]] == [seeded[1].run_id] and by_nb["total"] == 1
    paged = json.loads((await jp_fetch(*API, "runs", params={"q": "groupBy", "limit": 1,
                                                                "offset": 1})).body)
    assert paged["total"] == 3 and len(paged["runs"]) == 1   # total counts every match
    none = json.loads((await jp_fetch(*API, "runs", params={"q": "no such run"})).body)
    assert none == {"runs": [], "total": 0, "offset": 0, "limit": 50}


async def test_list_filter_takes_percent_and_underscore_literally(jp_fetch, store):
    runs = {label: save_run(store, make_run(label=label)).run_id
            for label in ["50% sample", "500 sample", "a_b", "axb"]}
    # (the verdict sentences hold "%" too: the patterns are chosen to match labels only)
    for q, expected in [("0% s", ["50% sample"]), ("% sam", ["50% sample"]), ("a_b", ["a_b"]),
                        ("_b", ["a_b"])]:
        data = json.loads((await jp_fetch(*API, "runs", params={"q": q})).body)
        assert [r["run_id"] for r in data["runs"]] == [runs[e] for e in expected], q
        assert data["total"] == len(expected)


async def test_list_and_get_carry_the_verdict_category_and_headline(jp_fetch, seeded, store):
    """The sidebar's badge reads the category the analysis computed, not the sentence."""
    data = json.loads((await jp_fetch(*API, "runs")).body)
    categories = {"cpu", "gc", "shuffle", "io", "overhead", "other_wait", "core_wait", "driver",
                  "python", "none"}
    for row in data["runs"]:
        summary = store.summary(row["run_id"])
        assert row["verdict_category"] == summary["verdict_category"] in categories
        assert row["verdict_headline"] == summary["verdict_headline"] and row["verdict_headline"]
        one = json.loads((await jp_fetch(*API, "runs", row["run_id"])).body)
        assert (one["verdict_category"], one["verdict_headline"]) == \
            (row["verdict_category"], row["verdict_headline"])
        assert one["created_ms"] == row["created_ms"] and one["num_tasks"] == row["num_tasks"]


async def test_a_run_that_lost_an_executor_to_memory_says_so_in_its_row(jp_fetch, store):
    """Its badge (the row's stored headline and category) names the executor lost to memory,
    even when the cell succeeded (Spark ran the lost tasks again); the text is served as text
    (the sidebar writes it with textContent), markup and all."""
    run = make_run(label="retried")
    run.extra["lost_to_memory"] = [{"executor_id": "<b>1</b>", "host": "h", "remove_ms": None,
                                    "memory": "heap", "exit_code": 52,
                                    "reason": "Command exited with code 52"}]
    save_run(store, run)
    plain = save_run(store, make_run(label="plain"))
    rows = {r["run_id"]: r for r in json.loads((await jp_fetch(*API, "runs")).body)["runs"]}
    row = rows[run.run_id]
    assert row["status"] == "ok"
    assert (row["verdict_category"], row["verdict_headline"]) == (
        "oom", "Executor <b>1</b> lost to memory (exit 52)")
    assert row["verdict"].startswith("Out of memory: executor <b>1</b> was lost (exit 52, "
                                     "java.lang.OutOfMemoryError)")
    assert rows[plain.run_id]["verdict_category"] != "oom"
    one = json.loads((await jp_fetch(*API, "runs", run.run_id)).body)
    assert one["summary"]["verdict_headline"] == row["verdict_headline"]


async def test_list_on_an_empty_store(jp_fetch, store):
    data = json.loads((await jp_fetch(*API, "runs")).body)
    assert data == {"runs": [], "total": 0, "offset": 0, "limit": 50}


async def test_list_sees_runs_written_after_the_server_started(jp_fetch, store):
    assert json.loads((await jp_fetch(*API, "runs")).body)["total"] == 0
    run = save_run(store, make_run(label="late"))   # as a kernel would, in another process
    data = json.loads((await jp_fetch(*API, "runs")).body)
    assert [r["run_id"] for r in data["runs"]] == [run.run_id]


@pytest.mark.parametrize("params", [{"limit": "x"}, {"limit": "0"}, {"offset": "-1"},
                                    {"offset": "1.5"}])
async def test_list_rejects_bad_paging(jp_fetch, seeded, params):
    code, body = await fetch_error(jp_fetch, *API, "runs", params=params)
    assert_json_error(code, body, 400)


async def test_list_caps_the_page_size(jp_fetch, seeded):
    data = json.loads((await jp_fetch(*API, "runs", params={"limit": 10**6})).body)
    assert data["limit"] == runs_service.MAX_LIMIT and len(data["runs"]) == 3


# -- GET runs/{id} ------------------------------------------------------------------------
async def test_get_run(jp_fetch, seeded):
    run = seeded[1]
    data = json.loads((await jp_fetch(*API, "runs", run.run_id)).body)
    assert data["run_id"] == run.run_id and data["source"] == run.source
    assert data["first_line"] == run.first_line and data["notebook_path"] == "work/etl.ipynb"
    assert data["num_tasks"] == 8 and data["wall_ms"] == pytest.approx(run.wall_ms)
    summary = data["summary"]
    assert summary["verdict"] == data["verdict"]
    assert [s["stage_id"] for s in summary["stages"]] == [0, 1]
    assert summary["stages"][0]["executor_run_time_ms"] == sum(380 + 90 * i for i in range(4))
    assert data["cell_id"] is None   # no front end sent a cell id for this run


async def test_get_run_has_the_cell_id(jp_fetch, store, jp_root_dir):
    """The magic keeps JupyterLab's cell id in run.extra; "Go to Cell" matches on it."""
    run = make_run(notebook=str(jp_root_dir / "etl.ipynb"))
    run.extra["cell_id"] = "7f3c2a9e-0b1d-4c55-9e0a-1b2c3d4e5f60"
    save_run(store, run)
    data = json.loads((await jp_fetch(*API, "runs", run.run_id)).body)
    assert data["cell_id"] == "7f3c2a9e-0b1d-4c55-9e0a-1b2c3d4e5f60"
    assert data["notebook_path"] == "etl.ipynb"
    # an id that is not a non-empty string (a hand-edited run.json) is no id
    for bad in ("", 42, None, ["x"]):
        run.extra["cell_id"] = bad
        save_run(store, run)
        data = json.loads((await jp_fetch(*API, "runs", run.run_id)).body)
        assert data["cell_id"] is None


async def test_unknown_run_is_404_json(jp_fetch, seeded):
    for suffix in ((), ("report",)):
        code, body = await fetch_error(jp_fetch, *API, "runs", "20990101-000000-abcdef", *suffix)
        assert_json_error(code, body, 404)
        assert "20990101-000000-abcdef" in body["error"]
    code, body = await fetch_error(jp_fetch, *API, "runs", "20990101-000000-abcdef", "export",
                                   method="POST", body="{}")
    assert_json_error(code, body, 404)
    code, body = await fetch_error(jp_fetch, *API, "runs", "20990101-000000-abcdef",
                                   method="DELETE")
    assert_json_error(code, body, 404)


# -- traversal and bad ids ----------------------------------------------------------------
TRAVERSALS = [
    "..%2F..%2Fetc%2Fpasswd",        # encoded slashes: one URL segment, decoded to ../../etc/passwd
    "..%2F..",
    "%2Fetc%2Fpasswd",               # an absolute path
    "%2E%2E",                        # '..' fully encoded
    "..",
    "a..b",
    ".hidden",
    "run%00id",
    "%5C..%5C..%5Cwindows",          # backslashes
    "x" * 200,                       # longer than any run id
]


@pytest.fixture
def raw_fetch(http_server_client, jp_auth_header, jp_base_url):
    """Send ``path`` exactly as written (jp_fetch would quote '%' again)."""
    async def fetch(path, method="GET", body=None, auth=True):
        return await http_server_client.fetch(jp_base_url.rstrip("/") + path, method=method, body=body,
                                              raise_error=False,
                                              headers=dict(jp_auth_header) if auth else {},
                                              allow_nonstandard_methods=True)
    return fetch


@pytest.mark.parametrize("bad", TRAVERSALS)
async def test_traversal_ids_are_refused(raw_fetch, jp_fetch, seeded, store, bad):
    sentinel = os.path.join(store.root, "secret.txt")
    with open(sentinel, "w") as fh:
        fh.write("do not touch")
    for suffix, method, body in [("", "GET", None), ("/report", "GET", None),
                                 ("/export", "POST", "{}"), ("", "DELETE", None)]:
        response = await raw_fetch(f"/jupyter-perf/api/runs/{bad}{suffix}", method, body)
        # one URL segment, so it reaches the handler, which refuses it before any file access
        assert_json_error(response.code, json.loads(response.body), 400)
    assert open(sentinel).read() == "do not touch"
    assert json.loads((await jp_fetch(*API, "runs")).body)["total"] == 3


async def test_raw_dotdot_segments_never_reach_the_store(raw_fetch, seeded):
    """A client that does not normalise ``..`` in the path (curl --path-as-is)."""
    for path in ["/jupyter-perf/api/runs/../../../etc/passwd",
                 "/jupyter-perf/api/runs/..%2F..%2Findex.sqlite3/report",
                 "/jupyter-perf/api/runs/%2Fetc%2Fpasswd/report",
                 "/jupyter-perf/api/runs//etc/passwd"]:
        response = await raw_fetch(path)
        assert response.code in (400, 404), path
        assert b"root:" not in response.body


async def test_bad_id_is_400_json(jp_fetch, seeded):
    code, body = await fetch_error(jp_fetch, *API, "runs", "..%2F..%2Fetc%2Fpasswd")
    assert_json_error(code, body, 400)
    assert "not a valid run id" in body["error"]


# -- GET runs/{id}/report -----------------------------------------------------------------
async def test_report_is_html_and_cached_on_disk(jp_fetch, seeded, store, monkeypatch):
    calls = []
    real = runs_service.render_report

    def counting(run, _store=None):
        calls.append(run.run_id)
        return real(run, _store)

    monkeypatch.setattr(runs_service, "render_report", counting)
    run = seeded[0]
    first = await jp_fetch(*API, "runs", run.run_id, "report")
    assert first.code == 200
    assert first.headers["Content-Type"].startswith("text/html")
    assert "sandbox allow-scripts" in first.headers["Content-Security-Policy"]
    assert first.headers["X-Jupyter-Perf-Report-Cache"] == "miss"
    html = first.body.decode()
    assert html.lstrip().lower().startswith(("<!doctype html", "<html"))
    assert run.run_id in html or "daily aggregate" in html
    cached = os.path.join(store.run_dir(run.run_id), "report.html")
    assert open(cached, encoding="utf-8").read() == html
    assert not [f for f in os.listdir(store.run_dir(run.run_id)) if f.startswith(".")]

    second = await jp_fetch(*API, "runs", run.run_id, "report")
    assert second.body.decode() == html and second.headers["X-Jupyter-Perf-Report-Cache"] == "hit"
    assert calls == [run.run_id]

    forced = await jp_fetch(*API, "runs", run.run_id, "report", params={"refresh": "1"})
    assert forced.headers["X-Jupyter-Perf-Report-Cache"] == "miss" and len(calls) == 2


async def test_report_cache_is_invalidated_when_the_run_is_saved_again(jp_fetch, seeded, store,
                                                                       monkeypatch):
    monkeypatch.setattr(runs_service, "render_report", lambda run, _store=None: f"<html>{run.label}</html>")
    run = seeded[0]
    assert (await jp_fetch(*API, "runs", run.run_id, "report")).body == b"<html>daily aggregate</html>"
    run.label = "relabelled"
    save_run(store, run)                        # a kernel re-saves the same run id
    again = await jp_fetch(*API, "runs", run.run_id, "report")
    assert again.body == b"<html>relabelled</html>"
    assert again.headers["X-Jupyter-Perf-Report-Cache"] == "miss"


async def test_report_cache_key_mismatch_rerenders(jp_fetch, seeded, store, monkeypatch):
    monkeypatch.setattr(runs_service, "render_report", lambda run, _store=None: "<html>fresh</html>")
    run_dir = store.run_dir(seeded[0].run_id)
    with open(os.path.join(run_dir, "report.html"), "w") as fh:
        fh.write("<html>stale</html>")
    with open(os.path.join(run_dir, "report.key"), "w") as fh:
        fh.write("an older run.json")
    response = await jp_fetch(*API, "runs", seeded[0].run_id, "report")
    assert response.body == b"<html>fresh</html>"


async def test_render_failure_is_500_json(jp_fetch, seeded, monkeypatch):
    def broken(run, _store=None):
        raise ValueError("boom")

    monkeypatch.setattr(runs_service, "render_report", broken)
    code, body = await fetch_error(jp_fetch, *API, "runs", seeded[0].run_id, "report")
    assert_json_error(code, body, 500)
    assert "boom" in body["error"] and "server log" in body["error"]


async def test_damaged_run_is_500_json(jp_fetch, seeded, store):
    run = seeded[0]
    os.remove(os.path.join(store.run_dir(run.run_id), "tasks.parquet"))
    # the metadata does not need the task data: it still answers, from run.json and the index
    data = json.loads((await jp_fetch(*API, "runs", run.run_id)).body)
    assert data["run_id"] == run.run_id and data["num_tasks"] == 8
    code, body = await fetch_error(jp_fetch, *API, "runs", run.run_id, "report")
    assert_json_error(code, body, 500)
    assert "damaged" in body["error"] and f"--delete {run.run_id}" in body["error"]
    with open(os.path.join(store.run_dir(run.run_id), "run.json"), "w") as fh:
        fh.write("{ not json")
    code, body = await fetch_error(jp_fetch, *API, "runs", run.run_id)
    assert_json_error(code, body, 500)
    assert "damaged" in body["error"]


@pytest.mark.parametrize("how", ["random bytes", "zero length", "deleted"])
async def test_a_damaged_index_is_rebuilt_and_the_server_answers(jp_fetch, seeded, store, how):
    if how == "deleted":
        os.remove(store.index_path)
    else:
        with open(store.index_path, "wb") as fh:          # the same file, in place
            fh.write(os.urandom(16384) if how == "random bytes" else b"")
    data = json.loads((await jp_fetch(*API, "runs")).body)
    assert data["total"] == 3
    assert [r["run_id"] for r in data["runs"]] == [r.run_id for r in reversed(seeded)]
    assert data["runs"][0]["verdict_category"] and data["runs"][0]["num_tasks"] == 8
    kept = [n for n in os.listdir(store.root) if n.startswith("index.sqlite3.")]
    assert bool(kept) == (how != "deleted")
    one = json.loads((await jp_fetch(*API, "runs", seeded[1].run_id)).body)
    assert one["source"] == seeded[1].source


async def test_get_racing_delete_is_found_or_not_found_never_damaged(jp_fetch, store):
    """Real concurrent requests: the server runs each in a worker thread."""
    async def status(*parts, method="GET"):
        try:
            response = await jp_fetch(*API, *parts, method=method)
            return response.code, ""
        except HTTPClientError as exc:
            return exc.code, json.loads(exc.response.body)["error"]

    for i in range(4):
        run = save_run(store, make_run(label=f"doomed {i}"))
        gets = [status("runs", run.run_id) for _ in range(12)]
        gets.insert(6, status("runs", run.run_id, "report"))
        results = await asyncio.gather(*gets[:6], status("runs", run.run_id, method="DELETE"),
                                       *gets[6:])
        assert results[6] == (200, "")
        for code, error in results:
            assert code in (200, 404), error
            if code == 404:
                assert f"no run {run.run_id}" in error
        assert not os.path.exists(store.run_dir(run.run_id))
    assert [n for n in os.listdir(store.runs_dir) if n.startswith(".")] == []


async def test_lone_surrogates_in_a_label_are_served(jp_fetch, store):
    run = save_run(store, make_run(label="odd \ud800 label", source="x = '\udcff'\n"))
    row = json.loads((await jp_fetch(*API, "runs")).body)["runs"][0]
    assert row["label"] == "odd \ufffd label"
    one = json.loads((await jp_fetch(*API, "runs", run.run_id)).body)
    assert one["label"] == "odd \ud800 label" and one["source"] == "x = '\udcff'\n"
    report = await jp_fetch(*API, "runs", run.run_id, "report")
    assert report.code == 200 and "<html" in report.body.decode("utf-8")    # valid UTF-8


async def test_unwritable_store_is_500_json(jp_fetch, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the store should be")
    monkeypatch.setenv("JUPYTER_PERF_HOME", str(blocker))
    code, body = await fetch_error(jp_fetch, *API, "runs")
    assert_json_error(code, body, 500)
    assert "JUPYTER_PERF_HOME" in body["error"]


# -- POST runs/{id}/export ----------------------------------------------------------------
async def test_export_default_path(jp_fetch, seeded, jp_root_dir, monkeypatch):
    monkeypatch.setattr(runs_service, "render_report", lambda run, _store=None: f"<html>{run.run_id}</html>")
    run = seeded[2]
    response = await jp_fetch(*API, "runs", run.run_id, "export", method="POST", body="")
    assert response.code == 201
    data = json.loads(response.body)
    assert data["path"] == f"jupyter-perf-{run.run_id}.html"
    written = (jp_root_dir / data["path"]).read_text()
    assert written.startswith(f"<html>{run.run_id}</html>\n") and data["bytes"] == len(written)
    assert export_owner(jp_root_dir / data["path"]) == run.run_id
    again = await jp_fetch(*API, "runs", run.run_id, "export", method="POST", body="")
    assert again.code == 201                       # its own earlier export is replaced


async def test_export_to_a_given_path_with_the_real_report(jp_fetch, seeded, jp_root_dir):
    (jp_root_dir / "reports").mkdir()
    run = seeded[1]
    response = await jp_fetch(*API, "runs", run.run_id, "export", method="POST",
                              body=json.dumps({"path": "reports/etl.html"}))
    assert json.loads(response.body)["path"] == "reports/etl.html"
    exported = (jp_root_dir / "reports" / "etl.html").read_text(encoding="utf-8")
    report = (await jp_fetch(*API, "runs", run.run_id, "report")).body.decode()
    assert exported.startswith(report) and export_owner(jp_root_dir / "reports" / "etl.html") \
        == run.run_id                            # the report, then the export marker line
    assert exported[len(report):].strip() == f"<!-- jupyter-perf export of run {run.run_id} -->"


@pytest.mark.parametrize("path", [
    "../outside.html", "reports/../../outside.html", "/tmp/outside.html", "~/outside.html",
    "C:/outside.html", "..\\outside.html", ".hidden.html", "reports/.git/x.html",
    "notebook.ipynb", "no-such-folder/x.html", "..", "reports",
])
async def test_export_refuses_paths_outside_the_root(jp_fetch, seeded, jp_root_dir, path):
    (jp_root_dir / "reports").mkdir()
    before = set(os.listdir(jp_root_dir.parent))
    code, body = await fetch_error(jp_fetch, *API, "runs", seeded[0].run_id, "export",
                                   method="POST", body=json.dumps({"path": path}))
    assert_json_error(code, body, 400)
    assert set(os.listdir(jp_root_dir.parent)) == before
    assert list((jp_root_dir / "reports").iterdir()) == []


async def test_export_refuses_symlink_escapes(jp_fetch, seeded, jp_root_dir, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, jp_root_dir / "link")
    code, body = await fetch_error(jp_fetch, *API, "runs", seeded[0].run_id, "export",
                                   method="POST", body=json.dumps({"path": "link/x.html"}))
    assert_json_error(code, body, 400)
    assert list(outside.iterdir()) == []


async def test_export_never_writes_through_a_symlink_or_over_a_users_file(
        jp_fetch, seeded, jp_root_dir, monkeypatch):
    """The issue's case: ``nb-alias.html`` -> ``keep.ipynb`` in the Jupyter root."""
    monkeypatch.setattr(runs_service, "render_report",
                        lambda run, _s=None: "<html>" + "x" * 10000 + "</html>")
    notebook = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    (jp_root_dir / "keep.ipynb").write_text(notebook)
    os.symlink("keep.ipynb", jp_root_dir / "nb-alias.html")
    (jp_root_dir / "notes.html").write_text("<p>mine</p>")
    a, b = seeded[0].run_id, seeded[1].run_id
    for path, said in [("nb-alias.html", "is a symbolic link"),
                       ("notes.html", f"is not an export of run {a}")]:
        code, body = await fetch_error(jp_fetch, *API, "runs", a, "export", method="POST",
                                       body=json.dumps({"path": path}))
        assert_json_error(code, body, 409)
        assert body["error"].startswith(path) and said in body["error"]
        assert str(jp_root_dir) not in body["error"]           # the root-relative path only
    assert (jp_root_dir / "keep.ipynb").read_text() == notebook
    assert os.path.islink(jp_root_dir / "nb-alias.html")
    assert (jp_root_dir / "notes.html").read_text() == "<p>mine</p>"
    # an export of run a is not replaced by one of run b
    await jp_fetch(*API, "runs", a, "export", method="POST", body=json.dumps({"path": "a.html"}))
    code, body = await fetch_error(jp_fetch, *API, "runs", b, "export", method="POST",
                                   body=json.dumps({"path": "a.html"}))
    assert_json_error(code, body, 409)
    assert export_owner(jp_root_dir / "a.html") == a
    old = os.umask(0o022)          # the server's umask: files are 0644 like any other, not 0600
    os.umask(old)
    assert stat.S_IMODE(os.stat(jp_root_dir / "a.html").st_mode) == 0o666 & ~old


@pytest.mark.parametrize("body", ["not json", "[1, 2]", '{"path": 3}'])
async def test_export_rejects_bad_bodies(jp_fetch, seeded, body):
    code, err = await fetch_error(jp_fetch, *API, "runs", seeded[0].run_id, "export",
                                  method="POST", body=body)
    assert_json_error(code, err, 400)


# -- DELETE runs/{id} ---------------------------------------------------------------------
async def test_delete(jp_fetch, seeded, store):
    run = seeded[0]
    response = await jp_fetch(*API, "runs", run.run_id, method="DELETE")
    assert json.loads(response.body) == {"run_id": run.run_id, "deleted": True}
    assert not os.path.exists(store.run_dir(run.run_id))
    data = json.loads((await jp_fetch(*API, "runs")).body)
    assert data["total"] == 2 and run.run_id not in [r["run_id"] for r in data["runs"]]
    code, body = await fetch_error(jp_fetch, *API, "runs", run.run_id, method="DELETE")
    assert_json_error(code, body, 404)


# -- authentication -----------------------------------------------------------------------
ENDPOINTS = [
    (("version",), "GET", None),
    (("runs",), "GET", None),
    (("runs", "{id}"), "GET", None),
    (("runs", "{id}", "report"), "GET", None),
    (("runs", "{id}", "export"), "POST", "{}"),
    (("runs", "{id}"), "DELETE", None),
]


@pytest.mark.parametrize("parts,method,body", ENDPOINTS)
async def test_every_endpoint_refuses_anonymous_requests(jp_fetch, seeded, store, jp_root_dir,
                                                         parts, method, body):
    run_id = seeded[0].run_id
    path = [p.format(id=run_id) for p in parts]
    code, err = await fetch_error(jp_fetch, *API, *path, method=method, body=body,
                                  headers={"Authorization": ""})
    assert code in (401, 403)
    assert "error" in err and "token" in err["error"]
    code, _ = await fetch_error(jp_fetch, *API, *path, method=method, body=body,
                                headers={"Authorization": "token wrong-token"})
    assert code in (401, 403)
    # nothing happened
    assert os.path.exists(store.run_dir(run_id))
    assert not (jp_root_dir / f"jupyter-perf-{run_id}.html").exists()
    assert not os.path.exists(os.path.join(store.run_dir(run_id), "report.html"))


async def test_report_is_served_with_the_login_cookie(jp_serverapp, http_server_client,
                                                      jp_base_url, seeded, monkeypatch):
    """A browser tab (or an iframe) sends the login cookie, not the token header."""
    from jupyter_server.utils import url_path_join

    monkeypatch.setattr(runs_service, "render_report", lambda run, _store=None: "<html>ok</html>")
    login_url = url_path_join(jp_base_url, "login")
    form = await http_server_client.fetch(login_url, raise_error=False)
    cookies = {c.split(";")[0].split("=", 1)[0]: c.split(";")[0]
               for c in form.headers.get_list("Set-Cookie")}
    xsrf = cookies["_xsrf"].split("=", 1)[1]
    token = jp_serverapp.identity_provider.token
    login = await http_server_client.fetch(
        login_url, method="POST", follow_redirects=False, raise_error=False,
        body=f"password={token}&_xsrf={xsrf}", headers={"Cookie": "; ".join(cookies.values())})
    cookies.update({c.split(";")[0].split("=", 1)[0]: c.split(";")[0]
                    for c in login.headers.get_list("Set-Cookie")})
    assert any(name.startswith("username-") for name in cookies), login.code
    path = url_path_join(jp_base_url, "jupyter-perf/api/runs", seeded[0].run_id, "report")
    ok = await http_server_client.fetch(path, headers={"Cookie": "; ".join(cookies.values())})
    assert ok.body == b"<html>ok</html>"
    anonymous = await http_server_client.fetch(path, raise_error=False)
    assert anonymous.code in (401, 403) and b"<html>ok" not in anonymous.body


# -- settings -----------------------------------------------------------------------------
@pytest.fixture
def configured_store(tmp_path):
    return tmp_path / "configured-store"


async def test_store_dir_setting(jp_fetch, jp_serverapp, configured_store):
    """``c.JupyterPerf.store_dir`` (set in jp_server_config below) beats $JUPYTER_PERF_HOME."""
    from jupyter_perf.store import RunStore

    run = save_run(RunStore(str(configured_store)), make_run(label="configured"))
    data = json.loads((await jp_fetch(*API, "runs")).body)
    assert [r["run_id"] for r in data["runs"]] == [run.run_id]


@pytest.fixture
def jp_server_config(request, tmp_path):
    config = {"ServerApp": {"jpserver_extensions": {"jupyter_perf": True}}}
    if request.node.name == "test_store_dir_setting":
        config["JupyterPerf"] = {"store_dir": str(tmp_path / "configured-store")}
    return config
