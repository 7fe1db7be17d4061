"""labextension/src/report/replay.ts under node: the report's in-browser what-if replay equals
``Analysis.whatif`` exactly on the shared vectors (tests/render/whatif_vectors.py), on runs with
DAG barriers, failed/killed/speculative attempts,
the host-CPU floor, executors coming and going. The per-task data reach it the way the report
gets them: ``encode_array`` in Python, then the renderer's own decode.ts and tasks.ts.

replay.ts and what it imports are transpiled one file at a time with the project's TypeScript
(the types are checked by ``npx tsc --noEmit -p .``), as CommonJS, into a temporary folder."""
from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from render_runs import synthetic, with_host_cpu, with_speculative
from whatif_vectors import expected, settings

from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.replay import replay
from jupyter_perf.analysis.whatif import scenario_durations
from jupyter_perf.render import payload
from jupyter_perf.render.views import encode_array, jsonable

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "labextension" / "src"
NODE = shutil.which("node")
TS = ROOT / "node_modules" / "typescript"
# replay.ts and everything it (and the harness) imports, relative to labextension/src
FILES = ["format.ts", "report/types.ts", "report/tasks.ts", "report/decode.ts", "report/replay.ts"]

pytestmark = pytest.mark.skipif(NODE is None or not TS.exists(),
                                reason="no node on PATH or no node_modules/typescript")

TRANSPILE = """
const ts = require(process.argv[2]);
const fs = require('fs'), path = require('path');
const [src, out, ...files] = process.argv.slice(3);
for (const f of files) {
  const res = ts.transpileModule(fs.readFileSync(path.join(src, f), 'utf8'), {
    compilerOptions: {module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2018},
    fileName: f, reportDiagnostics: true});
  if (res.diagnostics && res.diagnostics.length) { console.error(f, res.diagnostics); process.exit(1); }
  const dest = path.join(out, f.replace(/\\.ts$/, '.js'));
  fs.mkdirSync(path.dirname(dest), {recursive: true});
  fs.writeFileSync(dest, res.outputText);
}
"""

HARNESS = """
const fs = require('fs');
const {fromJson} = require('./report/decode.js');
const {taskData} = require('./report/tasks.js');
const R = require('./report/replay.js');
const inp = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const data = fromJson({header: {}, tasks: inp.tasks, tasks_meta: inp.tasks_meta, tabs: {}});
const D = taskData(data);
const num = (v) => (v === 'inf' ? Infinity : v);
const scen = (s) => ({disk: num(s.disk), network: num(s.network), slots: s.slots, gc: s.gc,
                      stragglers: s.stragglers});
const predicted = inp.settings.map((s) => R.whatif(D, scen(s)).predicted);
// the simulated schedules: replayed starts (group-relative) and positions, in dispatch order
const schedules = inp.schedules.map((raw) => {
  const r = R.whatif(D, scen(raw), true), p = R.simPositions(D, r.r);
  return {starts: Array.from(r.r.starts), pos: Array.from(p.pos), end: p.end,
          makespan: Array.from(r.r.makespan), d: Array.from(r.d), maxK: r.r.maxK,
          slotMax: Math.max(...r.r.slot), keep: Array.from(R.scenarioKeep(D, scen(raw)))};
});
// numpy's summation order: np.sum (pairwise) and np.add.reduceat of one segment
const sums = (inp.sums || []).map((a) => [R.npSum(a), R.reduceatSum(a, 0, a.length)]);
console.log(JSON.stringify({predicted, schedules, sums}));
"""


@pytest.fixture(scope="module")
def js_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("replay_ts")
    script = out / "transpile.js"
    script.write_text(TRANSPILE)
    res = subprocess.run([NODE, str(script), str(TS), str(SRC), str(out), *FILES],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    (out / "harness.js").write_text(HARNESS)
    return out


def enc(f: float):
    return "inf" if math.isinf(f) else f


def run_ts(js_dir, a, vecs, schedules=(), sums=()):
    arrays, meta, _ = payload.build(a)
    data = {"sums": [list(x) for x in sums],
            "tasks": {k: encode_array(v) for k, v in arrays.items()}, "tasks_meta": jsonable(meta),
            "settings": [{**s, "disk": enc(s["disk"]), "network": enc(s["network"])} for s in vecs],
            "schedules": [{**s, "disk": enc(s["disk"]), "network": enc(s["network"])}
                          for s in schedules]}
    path = js_dir / "in.json"
    path.write_text(json.dumps(data, allow_nan=False))
    res = subprocess.run([NODE, str(js_dir / "harness.js"), str(path)], capture_output=True,
                         text=True, timeout=300, cwd=js_dir)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def mismatches(a, vecs, got):
    want = [expected(a, s) for s in vecs]
    assert len(got) == len(want)
    return [(s, g, w) for s, g, w in zip(vecs, got, want) if g != w]


@pytest.fixture(scope="module")
def spec_run():
    a = analyze(with_speculative(synthetic(4000, 16, per_stage=500)))
    assert any(a.timeline.splits), "the vectors must exercise a DAG barrier"
    return a


def test_replay_ts_equals_python_on_every_setting(js_dir, spec_run):
    vecs = settings(full=True)
    got = run_ts(js_dir, spec_run, vecs)["predicted"]
    assert not mismatches(spec_run, vecs, got)[:5]
    # and the settings are not all one number: the sliders change the prediction
    assert len(set(got)) > len(vecs) // 4


def test_measured_setting_predicts_the_wall_time(js_dir, spec_run):
    s = {"disk": 1.0, "network": 1.0, "slots": 1.0, "gc": True, "stragglers": True}
    assert run_ts(js_dir, spec_run, [s])["predicted"] == [spec_run.wall_ms]


def test_replay_ts_equals_python_with_the_host_cpu_floor(js_dir):
    a = analyze(with_host_cpu(with_speculative(synthetic(4000, 16, per_stage=500))))
    assert 0.3 < a.cpu_share.min() and a.cpu_share.max() > 0.9
    vecs = [s for s in settings(full=True)
            if s["slots"] > 1 or s["disk"] != 1.0 or s["network"] != 1.0]
    got = run_ts(js_dir, a, vecs)["predicted"]
    assert not mismatches(a, vecs, got)[:5]
    plain = analyze(with_speculative(synthetic(4000, 16, per_stage=500)))
    assert sum(expected(a, s) > expected(plain, s) for s in vecs) > len(vecs) // 4   # it binds


def test_replay_ts_equals_python_with_slot_windows(js_dir):
    # executors arriving late and leaving early in every group
    a = analyze(with_speculative(synthetic(4000, 16, per_stage=500)))
    tl = a.timeline
    rng = np.random.default_rng(3)
    windows = []
    for g in range(tl.n_groups):
        span = float(tl.group_end[g] - tl.group_start[g])
        begin = np.where(rng.uniform(size=16) < 0.5, rng.uniform(0, span / 3, 16), 0.0)
        end = np.where(rng.uniform(size=16) < 0.25, begin + rng.uniform(span / 4, span, 16),
                       np.inf)
        end[0] = np.inf
        order = np.lexsort((-end, begin))
        windows.append((begin[order], end[order]))
    tl.slot_windows = windows
    assert any(tl.splits) and all(w is not None for w in tl.slot_windows)
    vecs = settings(full=True)
    got = run_ts(js_dir, a, vecs)["predicted"]
    assert not mismatches(a, vecs, got)[:5]
    plain = analyze(with_speculative(synthetic(4000, 16, per_stage=500)))
    assert a.simulated_baseline_ms != plain.simulated_baseline_ms     # the windows mattered


def test_replay_ts_equals_python_on_many_slots(js_dir):
    """Groups of 3000 attempts on 64 slots: up to 128 slots replay.ts keeps the free times as a
    sorted run, above it on a heap; both give Python's predictions and starts exactly, with
    DAG barriers."""
    a = analyze(with_speculative(synthetic(6000, 64, per_stage=1000)))
    assert any(a.timeline.splits) and set(a.timeline.group_slots.tolist()) == {64}
    vecs = [s for s in settings() if s["slots"] in (1.5, 4.0)]     # 96 and 256 slots
    base = {"disk": 1.0, "network": 1.0, "gc": True, "stragglers": True}
    scen = [{**base, "slots": 2.0}, {**base, "slots": 3.0, "gc": False}]   # 128 and 192 slots
    got = run_ts(js_dir, a, vecs, schedules=scen)
    assert not mismatches(a, vecs, got["predicted"])[:5]
    _, _, extras = payload.build(a)
    for s, g in zip(scen, got["schedules"]):
        d = scenario_durations(a._inputs, s["disk"], s["network"], s["gc"], s["stragglers"])
        r = replay(a.timeline, d, s["slots"], want_starts=True)
        assert np.asarray(g["starts"])[extras["pos"]] == pytest.approx(r.starts, rel=1e-12,
                                                                       abs=1e-9)
        assert g["makespan"] == pytest.approx(r.makespan.tolist(), rel=1e-12)
        assert g["slotMax"] < g["maxK"] == round(64 * s["slots"])


def test_simulated_schedule_equals_pythons_replay(js_dir, spec_run):
    """The simulated timeline's inputs: each attempt's replayed start and duration equal
    analysis.replay's (want_starts) for the scenario, positions keep the measured driver gaps,
    and scenarioKeep drops what the scenario removes."""
    a = spec_run
    base = {"disk": 1.0, "network": 1.0, "slots": 1.0, "gc": True, "stragglers": True}
    scen = [base, {**base, "slots": 2.0}, {**base, "disk": math.inf, "gc": False},
            {**base, "network": 4.0, "slots": 0.5, "stragglers": False}]
    got = run_ts(js_dir, a, [], schedules=scen)["schedules"]
    _, meta, extras = payload.build(a)
    pos = extras["pos"]                                  # task row -> dispatch position
    tl = a.timeline
    gaps = np.maximum(np.asarray(meta["group_start"][1:]) - np.asarray(meta["group_end"][:-1]), 0)
    for s, g in zip(scen, got):
        d = scenario_durations(a._inputs, s["disk"], s["network"], s["gc"], s["stragglers"])
        r = replay(tl, d, s["slots"], want_starts=True)
        assert np.asarray(g["d"])[pos].tolist() == d.tolist()   # exactly
        assert np.asarray(g["starts"])[pos] == pytest.approx(r.starts, rel=1e-12, abs=1e-9)
        assert g["makespan"] == pytest.approx(r.makespan.tolist(), rel=1e-12)
        offset = max(meta["group_start"][0], 0) + np.concatenate(
            [[0.0], np.cumsum(gaps + r.makespan[:-1])])
        group = np.repeat(np.arange(tl.n_groups), np.diff(tl.bounds))   # dispatch order
        assert np.asarray(g["pos"]) == pytest.approx(offset[group] + np.asarray(g["starts"]),
                                                     rel=1e-12, abs=1e-9)
        assert g["end"] == pytest.approx(offset[-1] + r.makespan[-1], rel=1e-12)
        assert g["slotMax"] < g["maxK"]
    assert got[1]["maxK"] == 2 * got[0]["maxK"]          # ×2 slots: twice the lanes
    keys = [c["key"] for c in meta["components"]]
    keep_inf = dict(zip(keys, got[2]["keep"]))
    for k in ("shuffle_write", "shuffle_fetch_wait", "io_wait_est", "gc"):
        assert keep_inf[k] == 0.0, k
    assert keep_inf["cpu"] == 1.0
    keep_net = dict(zip(keys, got[3]["keep"]))
    assert keep_net["shuffle_fetch_wait"] == 0.25 and keep_net["shuffle_write"] == 1.0
    assert all(v == 1.0 for v in got[0]["keep"])


def test_sums_follow_numpys_order(js_dir):
    """The group makespans are summed as np.sum sums them (pairwise in blocks of 8 and 128):
    the replay's vectors have few groups, so the longer paths are checked here directly."""
    rng = np.random.default_rng(7)
    arrays = [rng.lognormal(3, 2, n) * rng.choice([1e-3, 1.0, 1e6], n)
              for n in (1, 2, 7, 8, 9, 15, 16, 17, 100, 127, 128, 129, 255, 256, 257, 1000, 4099)]
    a = analyze(synthetic(200, 4, per_stage=50))
    got = run_ts(js_dir, a, [], sums=[x.tolist() for x in arrays])["sums"]
    for x, (total, segment) in zip(arrays, got):
        assert total == float(np.sum(x)), len(x)
        assert segment == float(np.add.reduceat(x, [0])[0]), len(x)
    # the order matters on these numbers: a left-to-right sum differs somewhere
    assert any(float(np.sum(x)) != sum(x.tolist()) for x in arrays)
