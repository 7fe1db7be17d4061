"""report.js under node (when there is one): the replay port equals Analysis.whatif exactly
on every slider setting, and the report's formatter (format.js, built from the sidebar's
format.ts) gives fmt's strings on the shared vectors. The browser test repeats a sample of
this in Chromium through the real widgets."""
import json
import math
import shutil
import subprocess

import numpy as np
import pytest
from fmt_vectors import PATH as FMT_VECTORS
from render_runs import synthetic, with_host_cpu, with_speculative
from whatif_vectors import expected, settings

from jupyter_perf import fmt
from jupyter_perf.analysis import analyze
from jupyter_perf.render import payload
from jupyter_perf.render.report import js_source

NODE = shutil.which("node")
MAIN_STARTS = "function timed("          # main.js's first statement: the harness keeps JP only
pytestmark = pytest.mark.skipif(NODE is None, reason="no node on PATH to run report.js")

# The payload decoded as the report does, and segRows: the attempt of each segment lod drew
# in detail mode (lod pushes an attempt's segments, then its box).
DECODE = """
const fs = require('fs');
const inp = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const T = {uint8: Uint8Array, uint16: Uint16Array, int32: Int32Array, float32: Float32Array,
           float64: Float64Array};
const P = {};
for (const [k, v] of Object.entries(inp.P)) P[k] = T[v.dtype].from(v.data);
const D = JP.init(P, inp.meta);
function segRows(res) {
  const rows = [];
  let k = 0;
  for (let j = 0; j < res.box.row.length; j++) {
    const i = res.box.row[j], lo = res.box.left[j] - 1e-9, hi = res.box.right[j] + 1e-9;
    while (k < res.seg.left.length && res.seg.left[k] >= lo && res.seg.right[k] <= hi &&
           Math.abs(res.seg.bottom[k] - res.box.bottom[j] - 0.04) < 1e-9) { rows.push(i); k++; }
  }
  return rows;
}
"""

HARNESS = DECODE + """
const out = inp.settings.map((s) => JP.whatif(D, {disk: JP.num(s.disk), network: JP.num(s.network),
  slots: s.slots, gc: s.gc, stragglers: s.stragglers}, false).predicted);
// The simulated timeline of each `bars` setting: ms drawn per component, and the largest
// gap between an attempt's drawn bar and its replayed duration.
const bars = (inp.bars || []).map((raw) => {
  const s = {disk: JP.num(raw.disk), network: JP.num(raw.network), slots: raw.slots, gc: raw.gc,
             stragglers: raw.stragglers};
  const r = JP.whatif(D, s, true), p = JP.simPositions(D, r.r);
  const res = JP.lod(D, p.pos, r.d, r.r.slot, r.r.maxK, -1e300, 1e300,
                     {limit: 1e9, keep: JP.scenarioKeep(D, s)});
  const byColor = {}, perRow = new Float64Array(D.n), rows = segRows(res);
  for (let k = 0; k < rows.length; k++) {
    const w = (res.seg.right[k] - res.seg.left[k]) * 1000;
    byColor[res.seg.color[k]] = (byColor[res.seg.color[k]] || 0) + w; perRow[rows[k]] += w;
  }
  let gap = 0;
  for (let i = 0; i < D.n; i++) if (D.compSum[i] > 0) gap = Math.max(gap, Math.abs(perRow[i] - r.d[i]));
  return {byColor, gap, maxK: r.r.maxK};
});
const V = inp.vectors;
console.log(JSON.stringify({predicted: out, bars,
  ms: V ? V.ms.map(([x]) => JP.fmt.formatDuration(x)) : [],
  bytes: V ? V.bytes.map(([x]) => JP.fmt.formatBytes(x)) : []}));
"""


def run_js(a, tmp_path, vecs, vectors=None, bars=(), harness=HARNESS, **extra):
    arrays, meta, _ = payload.build(a)

    def enc(f):
        return "inf" if math.isinf(f) else f

    data = {"P": {k: {"dtype": str(v.dtype), "data": v.tolist()} for k, v in arrays.items()},
            "meta": meta, "vectors": vectors,
            "bars": [{**s, "disk": enc(s["disk"]), "network": enc(s["network"])} for s in bars],
            "settings": [{**s, "disk": enc(s["disk"]), "network": enc(s["network"])} for s in vecs],
            **extra}
    path = tmp_path / "in.json"
    path.write_text(json.dumps(data))
    script = tmp_path / "h.js"
    script.write_text(js_source().split(MAIN_STARTS)[0] + harness)
    res = subprocess.run([NODE, str(script), str(path)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_replay_port_equals_python_on_every_setting(tmp_path):
    # multi-stage groups with a DAG barrier, failed/killed/speculative attempts, spills
    a = analyze(with_speculative(synthetic(4000, 16, per_stage=500)))
    assert any(a.timeline.splits), "the vectors must exercise a DAG barrier"
    vecs = settings(full=True)
    got = run_js(a, tmp_path, vecs)["predicted"]
    want = [expected(a, s) for s in vecs]
    bad = [(s, g, w) for s, g, w in zip(vecs, got, want) if g != w]
    assert not bad, bad[:5]


def test_replay_port_equals_python_with_the_host_cpu_floor(tmp_path):
    a = analyze(with_host_cpu(with_speculative(synthetic(4000, 16, per_stage=500))))
    assert 0.3 < a.cpu_share.min() and a.cpu_share.max() > 0.9
    vecs = [s for s in settings(full=True) if s["slots"] > 1]
    got = run_js(a, tmp_path, vecs)["predicted"]
    want = [expected(a, s) for s in vecs]
    bad = [(s, g, w) for s, g, w in zip(vecs, got, want) if g != w]
    assert not bad, bad[:5]
    # the floor binds on some settings: the plain replay would have predicted less
    plain = analyze(with_speculative(synthetic(4000, 16, per_stage=500)))
    assert sum(expected(a, s) > expected(plain, s) for s in vecs) > len(vecs) // 4


def test_fmt_port_gives_the_shared_vectors(tmp_path):
    a = analyze(synthetic(200, 4, per_stage=50))
    vectors = json.loads(FMT_VECTORS.read_text(encoding="utf-8"))
    got = run_js(a, tmp_path, [], vectors)
    assert got["ms"] == [s for _, s in vectors["ms"]]
    assert got["bytes"] == [s for _, s in vectors["bytes"]]
    # and on more values than the file holds
    rng = np.random.default_rng(0)
    values = rng.uniform(-1e7, 1e7, 2000).tolist() + (rng.integers(0, 200_000, 2000) / 8).tolist()
    more = {"ms": [[v, None] for v in values], "bytes": [[v * 997.0, None] for v in values]}
    got = run_js(a, tmp_path, [], more)
    assert got["ms"] == [fmt.ms(v) for v in values]
    assert got["bytes"] == [fmt.nbytes(v * 997.0) for v in values]


def test_replay_port_equals_python_with_slot_windows(tmp_path):
    # Executors arriving late and leaving early (analysis.timeline.slot_windows), in every
    # group, one with a DAG barrier: the windows are set on the timeline directly, before
    # anything is replayed, so every group exercises the windowed replay.
    a = analyze(with_speculative(synthetic(4000, 16, per_stage=500)))
    tl = a.timeline
    rng = np.random.default_rng(3)
    windows = []
    for g in range(tl.n_groups):
        span = float(tl.group_end[g] - tl.group_start[g])
        begin = np.where(rng.uniform(size=16) < 0.5, rng.uniform(0, span / 3, 16), 0.0)
        end = np.where(rng.uniform(size=16) < 0.25, begin + rng.uniform(span / 4, span, 16),
                       np.inf)
        end[0] = np.inf                       # one executor stays
        order = np.lexsort((-end, begin))
        windows.append((begin[order], end[order]))
    tl.slot_windows = windows
    assert any(tl.splits) and all(w is not None for w in tl.slot_windows)
    vecs = settings(full=True)
    got = run_js(a, tmp_path, vecs)["predicted"]
    want = [expected(a, s) for s in vecs]
    bad = [(s, g, w) for s, g, w in zip(vecs, got, want) if g != w]
    assert not bad, bad[:5]
    plain = analyze(with_speculative(synthetic(4000, 16, per_stage=500)))
    assert a.simulated_baseline_ms != plain.simulated_baseline_ms     # the windows mattered


def test_replay_port_equals_python_with_the_host_cpu_floor_on_disk_and_network(tmp_path):
    # a faster disk or network cannot beat the host's measured CPU work either
    a = analyze(with_host_cpu(with_speculative(synthetic(4000, 16, per_stage=500))))
    vecs = [s for s in settings(full=True) if s["disk"] != 1.0 or s["network"] != 1.0]
    got = run_js(a, tmp_path, vecs)["predicted"]
    want = [expected(a, s) for s in vecs]
    bad = [(s, g, w) for s, g, w in zip(vecs, got, want) if g != w]
    assert not bad, bad[:5]
    plain = analyze(with_speculative(synthetic(4000, 16, per_stage=500)))
    assert sum(expected(a, s) > expected(plain, s) for s in vecs) > 0     # the floor binds


def test_simulated_bars_show_the_scenario(tmp_path):
    """What a scenario removes is gone from the simulated bars (disk ∞: shuffle write, fetch
    wait and estimated I/O wait; no GC: GC), the rest stays, and each bar spans the attempt's
    replayed duration."""
    from jupyter_perf.analysis.components import BY_KEY
    a = analyze(with_speculative(synthetic(600, 8, per_stage=100)))
    base = {"disk": 1.0, "network": 1.0, "slots": 1.0, "gc": True, "stragglers": True}
    scenarios = [base, {**base, "disk": math.inf}, {**base, "gc": False},
                 {**base, "network": math.inf}, {**base, "disk": 2.0, "slots": 4.0}]
    got = run_js(a, tmp_path, [], bars=scenarios)["bars"]
    color = {k: BY_KEY[k].color for k in BY_KEY}
    drawn = [g["byColor"] for g in got]
    measured = drawn[0]
    for k in ("cpu", "gc", "shuffle_write", "shuffle_fetch_wait", "io_wait_est"):
        assert measured.get(color[k], 0) > 0, k            # the synthetic run has each of them
    for k in ("shuffle_write", "shuffle_fetch_wait", "io_wait_est"):
        assert color[k] not in drawn[1], k                  # disk ∞
    assert color["gc"] not in drawn[2]                      # no GC
    assert color["shuffle_fetch_wait"] not in drawn[3]      # network ∞
    assert drawn[3].get(color["shuffle_write"], 0) > 0      # network ∞ leaves shuffle write
    for d in drawn[1:3]:
        assert d[color["cpu"]] > 0.9 * measured[color["cpu"]]
    half = drawn[4][color["shuffle_write"]] / measured[color["shuffle_write"]]
    assert 0.3 < half < 0.7                                 # disk 2×: about half of it left
    assert all(g["gap"] < 1e-3 for g in got)                # bars span the replayed durations
    assert got[4]["maxK"] > got[0]["maxK"]                  # ×4 slots: more lanes


FOCUS = DECODE + """
// The measured timeline with the stages of a selected operator in focus (main.js: S.focus),
// drawn once per attempt (detail) and once in aggregate bins.
const focus = Uint8Array.from(D.meta.stage_ids, (sid) => (inp.want.includes(sid) ? 1 : 0));
const draw = (limit, f) => JP.lod(D, D.start, D.dur, D.lane, D.meta.lanes.length, -1e300, 1e300,
                                  {limit, focus: f});
const plain = draw(1e9, null), det = draw(1e9, focus), agg = draw(1, focus).agg, agg0 = draw(1, null).agg;
const sid = (i) => D.meta.stage_ids[D.stage[i]];
console.log(JSON.stringify({
  detail: segRows(det).map((i, k) => [sid(i), det.seg.alpha[k] / plain.seg.alpha[k]]),
  agg: [...agg.alpha.keys()].map((j) => [agg.smin[j], agg.smax[j], agg.alpha[j] / agg0.alpha[j]]),
}));
"""


def test_a_selected_operators_stages_stay_drawn_and_the_rest_fade(tmp_path):
    """main.js passes the selected operator's stages to lod as ``focus``: their attempts keep
    their colours' alpha, every other attempt (and every aggregate bin without one of them)
    is drawn at 0.15 of it."""
    a = analyze(synthetic(600, 8, per_stage=100))
    stage_ids = sorted(int(s) for s in a.run.tasks["stage_id"].unique())
    want = stage_ids[1:3]
    got = run_js(a, tmp_path, [], harness=FOCUS, want=want)
    assert len(got["detail"]) >= len(a.run.tasks)
    assert {sid for sid, _ in got["detail"]} == set(stage_ids)
    for sid, ratio in got["detail"]:
        assert ratio == pytest.approx(1.0 if sid in want else 0.15), sid
    assert got["agg"]
    for lo, hi, ratio in got["agg"]:
        if hi < want[0] or lo > want[-1]:
            assert ratio == pytest.approx(0.15), (lo, hi)
        elif lo >= want[0] and hi <= want[-1]:
            assert ratio == pytest.approx(1.0), (lo, hi)
