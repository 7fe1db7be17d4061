"""The run store under concurrent kernels, kills mid-write, corrupt files and a full disk."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from jupyter_perf.store import RunStore, StoreError
from test_store import sample_run

WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    from test_store import sample_run
    from jupyter_perf.store import RunStore
    store = RunStore({root!r})
    for i in range({n}):
        store.save(sample_run(label="{who}-%d" % i), summary={{"verdict": "ok"}})
""")


def writer(root, who, n):
    code = WRITER.format(tests=os.path.dirname(os.path.dirname(__file__)), root=str(root),
                         n=n, who=who)
    return subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)


def test_two_kernels_writing_at_once(tmp_path):
    procs = [writer(tmp_path, "a", 40), writer(tmp_path, "b", 40)]
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stderr.read()
    store = RunStore(str(tmp_path))
    rows = store.list(limit=1000)
    assert store.count() == 80 and len({r["run_id"] for r in rows}) == 80
    for r in rows[:10]:
        assert store.load(r["run_id"]).label == r["label"]


def wait_for_runs(root, n: int, proc) -> None:
    """Until the writer has renamed ``n`` run directories into place (it is still writing)."""
    runs = os.path.join(root, "runs")
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if os.path.isdir(runs) and sum(not n.startswith(".") for n in os.listdir(runs)) >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"the writer did not store {n} runs: {proc.stderr.read()}")


def test_kill_during_writes_leaves_a_consistent_index(tmp_path):
    proc = writer(tmp_path, "k", 10_000)
    wait_for_runs(tmp_path, 5, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    store = RunStore(str(tmp_path))
    rows = store.list(limit=100_000)
    assert rows, "the writer saved nothing before it was killed"
    for r in rows:                                   # every indexed run is complete
        assert store.load(r["run_id"]).label == r["label"]
    store.save(sample_run(label="after"))            # and the store still takes writes
    assert store.list(limit=1)[0]["label"] == "after"


def test_a_corrupt_run_is_reported_and_the_others_still_load(tmp_path):
    store = RunStore(str(tmp_path))
    good, bad = sample_run(label="good"), sample_run(label="bad")
    store.save(good)
    store.save(bad)
    with open(os.path.join(store.run_dir(bad.run_id), "tasks.parquet"), "wb") as fh:
        fh.write(b"garbage")
    with pytest.raises(StoreError) as err:
        store.load(bad.run_id)
    assert "damaged" in str(err.value) and "\n" not in str(err.value)
    assert {r["label"] for r in store.list()} == {"good", "bad"}
    assert store.load(good.run_id).label == "good"
    json.loads(open(os.path.join(store.run_dir(good.run_id), "run.json")).read())


def _tiny_tmpfs(path) -> bool:
    os.makedirs(path, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(path)],
                          capture_output=True).returncode == 0


def test_disk_full_gives_a_clear_error_and_no_half_run(tmp_path):
    full = tmp_path / "full"
    if not _tiny_tmpfs(full):
        pytest.skip("cannot mount a 64 KiB tmpfs here (needs root): disk-full not reproducible")
    try:
        store = RunStore(str(full))
        big = sample_run(label="x" * 10)
        big.source = "y" * 200_000                     # more than the disk holds
        with pytest.raises(StoreError) as err:
            store.save(big)
        assert "No space left" in str(err.value) and "JUPYTER_PERF_HOME" in str(err.value)
        assert os.listdir(store.runs_dir) == []           # the half-written run was removed
    finally:
        subprocess.run(["umount", str(full)], capture_output=True)
