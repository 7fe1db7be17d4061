"""The run store under concurrent kernels, kills mid-write, corrupt files, a damaged index
and a full disk."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from test_store import sample_run

from jupyter_perf.store import RunStore, StoreError

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


# -- the index is only an index: damaged, truncated, empty or missing -> rebuilt (N1) ----------
def cli_runs(root, *args) -> subprocess.CompletedProcess:
    """``jupyter-perf runs …`` in a new process (a kernel or a server starting up)."""
    env = dict(os.environ, JUPYTER_PERF_HOME=str(root))
    return subprocess.run([sys.executable, "-m", "jupyter_perf.cli", "runs", *args],
                          capture_output=True, text=True, env=env, timeout=300)


def seeded_store(root, n=6) -> tuple[RunStore, list[dict]]:
    store = RunStore(str(root))
    for i in range(n):
        run = sample_run(label=f"run-{i}", source=f"%%perfmeasure\nspark.range({i}).count()\n")
        run.extra["cell_id"] = f"cell-{i % 2}"
        store.save(run, summary={"verdict": f"CPU-bound {i}", "verdict_category": "cpu",
                                 "verdict_headline": "CPU-bound"})
    return store, store.list(limit=100)


KEYS = ("run_id", "label", "first_line", "num_tasks", "num_stages", "verdict",
        "verdict_category", "verdict_headline", "cell_id", "source_hash", "wall_ms")


def comparable(rows) -> list[tuple]:
    return [tuple(r[k] for k in KEYS) for r in rows]


def damage(index_path: str, how: str) -> bytes | None:
    """Damage the index for real; returns the bytes it now holds (None when deleted)."""
    if how == "random bytes":
        data = os.urandom(max(os.path.getsize(index_path), 8192))
        for side in ("-wal", "-shm"):
            with open(index_path + side, "wb") as fh:
                fh.write(os.urandom(4096))
    elif how == "truncated":
        with open(index_path, "rb") as fh:
            data = fh.read()[: os.path.getsize(index_path) // 2 + 100]
    elif how == "zero length":
        data = b""
    else:
        os.remove(index_path)
        return None
    with open(index_path, "wb") as fh:
        fh.write(data)
    return data


@pytest.mark.parametrize("how", ["random bytes", "truncated", "zero length", "deleted"])
def test_a_damaged_index_is_set_aside_and_rebuilt_on_open(tmp_path, how):
    store, before = seeded_store(tmp_path)
    damaged = damage(store.index_path, how)
    proc = cli_runs(tmp_path, "--json")             # a new process opens the store
    assert proc.returncode == 0, proc.stderr
    assert comparable(json.loads(proc.stdout)) == comparable(before)
    [line] = proc.stderr.splitlines()
    assert line.startswith("jupyter-perf: the run index ") and "rebuilt it from 6 run " \
        "directories" in line, line
    aside = [n for n in os.listdir(tmp_path) if n.startswith("index.sqlite3.")]
    if how == "deleted":
        assert "was missing" in line and not [n for n in aside if not n.endswith(("-wal", "-shm"))]
    else:
        [kept] = [n for n in aside if not n.endswith(("-wal", "-shm"))]
        assert kept in line
        with open(os.path.join(tmp_path, kept), "rb") as fh:
            assert fh.read() == damaged                        # kept as it was, never deleted
    # the rebuilt store answers every query and takes writes
    again = RunStore(str(tmp_path))
    assert again.count() == 6 and again.count(text="run-3") == 1
    assert [r["label"] for r in again.cell_runs(cell_id="cell-1")] == ["run-5", "run-3", "run-1"]
    again.save(sample_run(label="after"))
    assert again.list(limit=1)[0]["label"] == "after"
    proc = cli_runs(tmp_path)                            # and the next open is quiet
    assert proc.returncode == 0 and proc.stderr == "" and "after" in proc.stdout


def test_an_index_damaged_while_in_use_is_rebuilt_by_the_next_query(tmp_path):
    store, before = seeded_store(tmp_path)
    damage(store.index_path, "random bytes")              # same file, same inode
    assert comparable(store.list(limit=100)) == comparable(before)
    [note] = store.notes
    assert "was damaged (file is not a database)" in note and "rebuilt it from 6" in note
    store.delete(before[0]["run_id"])
    assert store.count() == 5


def test_rebuild_index_on_request(tmp_path):
    store, before = seeded_store(tmp_path, n=3)
    proc = cli_runs(tmp_path, "--rebuild-index")
    assert proc.returncode == 0, proc.stderr
    [line] = proc.stdout.splitlines()
    assert "was replaced on request; kept it as index.sqlite3.replaced-" in line
    assert "rebuilt it from 3 run directories" in line and proc.stderr == ""
    assert comparable(RunStore(str(tmp_path)).list()) == comparable(before)


def test_an_unreadable_run_directory_is_left_out_of_the_rebuild_not_deleted(tmp_path):
    store, before = seeded_store(tmp_path, n=3)
    broken = before[0]["run_id"]
    with open(os.path.join(store.run_dir(broken), "run.json"), "w") as fh:
        fh.write("{ half a run")
    damage(store.index_path, "random bytes")
    proc = cli_runs(tmp_path, "--json")
    assert proc.returncode == 0, proc.stderr
    assert [r["run_id"] for r in json.loads(proc.stdout)] == [r["run_id"] for r in before[1:]]
    assert "rebuilt it from 2 run directories (1 unreadable, left on disk)" in proc.stderr
    assert os.path.exists(os.path.join(store.run_dir(broken), "run.json"))


def test_an_index_that_is_a_folder_is_one_line(tmp_path):
    store = RunStore(str(tmp_path))
    os.makedirs(os.path.join(store.runs_dir))
    os.mkdir(store.index_path)
    with pytest.raises(StoreError) as err:
        store.list()
    assert "\n" not in str(err.value) and store.index_path in str(err.value)
    proc = cli_runs(tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("jupyter-perf: error: ") and "Traceback" not in proc.stderr


# -- kill -9 of writers: reopening leaves no leftovers (N1, N8) -----------------------------
KILLED_WRITER = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {tests!r})
    from test_store import sample_run
    from jupyter_perf.store import RunStore, index, rundir
    store = RunStore({root!r})
    store.save(sample_run(label="complete"))
    real = {{"write": rundir.write, "upsert": index.upsert}}[{where!r}]

    def then_die(*args, **kwargs):
        real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)       # a real kill -9, at a known point

    setattr({{"write": rundir, "upsert": index}}[{where!r}], {where!r}, then_die)
    store.save(sample_run(label="killed"))
""")


def test_kill_9_mid_write_then_reopen_leaves_no_leftovers(tmp_path):
    tests = os.path.dirname(os.path.dirname(__file__))
    runs = os.path.join(tmp_path, "runs")

    def killed_writer(where):
        proc = subprocess.run([sys.executable, "-c", KILLED_WRITER.format(
            tests=tests, root=str(tmp_path), where=where)], capture_output=True, text=True,
            timeout=300)
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        return proc

    killed_writer("write")                     # files written, not renamed into place
    [tmp] = [n for n in os.listdir(runs) if n.startswith(".tmp-")]
    proc = killed_writer("upsert")             # renamed into place, not indexed
    assert "removed 1 unfinished run directory left by stopped writers" in proc.stderr
    assert not os.path.exists(os.path.join(runs, tmp))   # swept when that writer opened
    older = os.path.join(runs, ".20261101-000000-abcdef.k2j4h5")         # an older version's,
    os.mkdir(older)                                                      # still being written
    stale = os.path.join(runs, ".20261101-000000-fedcba.x9y8z7")         # and one from hours ago
    os.mkdir(stale)
    os.utime(stale, (time.time() - 7200, time.time() - 7200))

    proc = cli_runs(tmp_path, "--json")
    assert proc.returncode == 0, proc.stderr
    labels = sorted(r["label"] for r in json.loads(proc.stdout))
    assert labels == ["complete", "complete", "killed"]      # renamed but unindexed: indexed
    assert "indexed 1 run directory the index did not list" in proc.stderr
    assert "removed 1 unfinished run directory left by stopped writers" in proc.stderr
    left = sorted(n for n in os.listdir(runs) if n.startswith("."))
    assert left == [os.path.basename(older)]               # a live older writer's is kept
    for r in json.loads(proc.stdout):
        assert RunStore(str(tmp_path)).load(r["run_id"]).label == r["label"]


def test_temp_dirs_of_a_live_writer_are_never_swept(tmp_path):
    """A writer holds store.lock (shared) while its directory is a temp dir: the sweep of a
    process opening the store meanwhile leaves it alone (and retries at a later open)."""
    store = RunStore(str(tmp_path))
    store.save(sample_run(label="first"))
    fd = os.open(store.lock_path, os.O_RDWR)
    try:
        import fcntl
        fcntl.flock(fd, fcntl.LOCK_SH)                   # as a writer mid-save does
        live = os.path.join(store.runs_dir, ".tmp-20261101-000000-abcdef-0a0b0c0d")
        os.mkdir(live)
        proc = cli_runs(tmp_path, "--json")
        assert proc.returncode == 0 and os.path.isdir(live), proc.stderr
    finally:
        os.close(fd)                                     # the writer is gone (killed)
    proc = cli_runs(tmp_path, "--json")
    assert proc.returncode == 0 and not os.path.exists(live), proc.stderr


# -- reads racing a delete; nothing but StoreError escapes save() -----------------------------
def test_reading_a_run_while_it_is_deleted_is_not_found(tmp_path, monkeypatch):
    """The interleaving is injected (a real race cannot be timed on demand): the run is
    deleted, for real and by another store object, right after the reader read run.json."""
    from jupyter_perf.store import rundir

    store = RunStore(str(tmp_path))
    run = sample_run()
    store.save(run)
    real = rundir.read_meta

    def read_then_delete(folder):
        meta = real(folder)
        assert RunStore(str(tmp_path)).delete(run.run_id)
        return meta

    monkeypatch.setattr(rundir, "read_meta", read_then_delete)
    with pytest.raises(KeyError):
        store.load(run.run_id)
    with pytest.raises(KeyError):
        store.load(run.run_id)
    assert not [n for n in os.listdir(store.runs_dir) if n.startswith(".")]


def test_nothing_but_store_error_escapes_save(tmp_path):
    store = RunStore(str(tmp_path))
    run = sample_run()
    run.tasks = run.tasks.assign(weird=[object()])        # parquet cannot hold it
    with pytest.raises(StoreError) as err:
        store.save(run)
    assert "could not save run" in str(err.value) and "\n" not in str(err.value)
    assert os.listdir(store.runs_dir) == [] and store.count() == 0


# -- N5: any Unicode in a label or a cell ------------------------------------------------------
def test_a_lone_surrogate_in_the_label_and_the_cell_keeps_the_result_and_the_run(
        ipshell, spark_local, jp_home):
    """Real Spark, a real IPython shell, a ``--label`` with a lone surrogate (a lone surrogate
    in the cell's *code* fails plain IPython too, before any magic: not tested here)."""
    from sparkhelpers import run_cell

    import jupyter_perf as jp

    ipshell.user_ns["spark"] = spark_local
    result, cap = run_cell(ipshell, "%%perfmeasure --no-report --label 'odd \ud800 label'\n"
                                    "spark.range(0, 1000, 1, 2).count()\n")
    assert result.error_in_exec is None and result.result == 1000, cap.stderr
    run = jp.last_run()
    assert run.label == "odd \ud800 label" and "not stored" not in cap.stderr
    store = RunStore(str(jp_home))
    assert store.load(run.run_id).label == "odd \ud800 label"
    assert store.list(limit=1)[0]["label"] == "odd \ufffd label"
    proc = cli_runs(jp_home)
    assert proc.returncode == 0 and "odd \ufffd label" in proc.stdout, proc.stderr
