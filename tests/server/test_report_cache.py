"""The server's report cache (server/report_cache.py): bounded in bytes, least recently served
evicted first, one render at a time; through a real Jupyter server (jp_fetch).

The renderer is replaced by one that returns a report of a known size (and, for the
one-at-a-time test, records how many renders overlap): real reports differ in size from run
to run, which would make the byte bound untestable. Memory itself is measured in
benchmarks/server_memory.py (docs/benchmarks.md), not asserted here.
"""
from __future__ import annotations

import asyncio
import os
import threading
import time

import pytest
from runs_factory import make_run, save_run

from jupyter_perf.server import report_cache, runs_service

API = ("jupyter-perf", "api")
KB = 1024


@pytest.fixture
def jp_server_config():
    # room for two 400 KiB reports, not three
    return {"ServerApp": {"jpserver_extensions": {"jupyter_perf": True}},
            "JupyterPerf": {"report_cache_mb": 1.0}}


@pytest.fixture
def sized_reports(monkeypatch):
    def render(run, _store=None):
        body = f"<html><!-- {run.run_id} -->"
        return body + "x" * (400 * KB - len(body) - 7) + "</html>"

    monkeypatch.setattr(runs_service, "render_report", render)


def cached_files(store) -> dict[str, int]:
    out = {}
    for run_id in os.listdir(store.runs_dir):
        path = os.path.join(store.runs_dir, run_id, report_cache.REPORT_FILE)
        if os.path.exists(path):
            out[run_id] = os.path.getsize(path)
    return out


async def fetch_report(jp_fetch, run_id):
    response = await jp_fetch(*API, "runs", run_id, "report")
    assert response.headers["Content-Type"].startswith("text/html")
    return response.headers["X-Jupyter-Perf-Report-Cache"], response.body.decode()


async def test_the_cache_is_bounded_in_bytes_and_evicts_the_least_recently_served(
        jp_fetch, store, sized_reports):
    a, b, c = (save_run(store, make_run(label=x)).run_id for x in "abc")
    assert (await fetch_report(jp_fetch, a))[0] == "miss"
    assert (await fetch_report(jp_fetch, b))[0] == "miss"
    os.utime(os.path.join(store.run_dir(a), report_cache.REPORT_FILE), (0, time.time() - 60))
    os.utime(os.path.join(store.run_dir(b), report_cache.REPORT_FILE), (0, time.time() - 120))
    state, body = await fetch_report(jp_fetch, a)            # served: a is now the newest
    assert state == "hit" and a in body and len(body) == 400 * KB
    assert (await fetch_report(jp_fetch, c))[0] == "miss"   # over 1 MB: b (oldest) goes
    files = cached_files(store)
    assert set(files) == {a, c} and sum(files.values()) <= 1024 * KB
    assert not os.path.exists(os.path.join(store.run_dir(b), report_cache.REPORT_KEY_FILE))
    assert (await fetch_report(jp_fetch, b))[0] == "miss"   # rendered again when asked
    assert (await fetch_report(jp_fetch, b))[0] == "hit"
    assert sum(cached_files(store).values()) <= 1024 * KB


async def test_a_report_larger_than_the_cache_is_served_but_not_kept(jp_fetch, store,
                                                                    monkeypatch):
    monkeypatch.setattr(runs_service, "render_report", lambda run, _s=None: "<html>" + "y" * 2 * 1024 * KB)
    run = save_run(store, make_run())
    for _ in range(2):
        state, body = await fetch_report(jp_fetch, run.run_id)
        assert state == "miss" and len(body) > 2 * 1024 * KB
    assert cached_files(store) == {}


async def test_one_render_at_a_time(jp_fetch, store, monkeypatch):
    active, most = [0], [0]
    guard = threading.Lock()

    def render(run, _store=None):
        with guard:
            active[0] += 1
            most[0] = max(most[0], active[0])
        time.sleep(0.3)               # long enough for the other requests to arrive
        with guard:
            active[0] -= 1
        return f"<html>{run.run_id}</html>"

    monkeypatch.setattr(runs_service, "render_report", render)
    ids = [save_run(store, make_run(label=str(i))).run_id for i in range(3)]
    results = await asyncio.gather(*(fetch_report(jp_fetch, run_id) for run_id in ids))
    assert [r[1] for r in results] == [f"<html>{run_id}</html>" for run_id in ids]
    assert most == [1]


def test_evict_keeps_what_fits_and_the_report_just_written(store):
    ids = [save_run(store, make_run(label=str(i))).run_id for i in range(3)]
    for age, run_id in zip((300, 200, 100), ids):
        path = os.path.join(store.run_dir(run_id), report_cache.REPORT_FILE)
        with open(path, "w") as fh:
            fh.write("z" * 1000)
        os.utime(path, (0, time.time() - age))
    assert report_cache.evict(store, 2500, keep=store.run_dir(ids[0])) == 1
    assert set(cached_files(store)) == {ids[0], ids[2]}           # ids[1] was the oldest left
    assert report_cache.evict(store, 0) == 2 and cached_files(store) == {}
