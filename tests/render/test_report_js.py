"""report.js under node (when there is one): the replay port equals Analysis.whatif exactly
on every slider setting, and fmtMs / fmtBytes give fmt's strings on the shared vectors. The
browser test repeats a sample of this in Chromium through the real widgets."""
import json
import math
import shutil
import subprocess

import numpy as np
import pytest

from jupyter_perf.analysis import analyze
from jupyter_perf.render import fmt, payload
from jupyter_perf.render.report import js_source
from render_runs import synthetic, with_host_cpu, with_speculative
from fmt_vectors import PATH as FMT_VECTORS
from whatif_vectors import expected, settings

NODE = shutil.which("node")
MAIN_STARTS = "function timed("          # main.js's first statement: the harness keeps JP only
pytestmark = pytest.mark.skipif(NODE is None, reason="no node on PATH to run report.js")

HARNESS = """
const fs = require('fs');
const inp = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const T = {uint8: Uint8Array, uint16: Uint16Array, int32: Int32Array, float32: Float32Array, float64: Float64Array};
const P = {};
for (const [k, v] of Object.entries(inp.P)) P[k] = T[v.dtype].from(v.data);
const D = JP.init(P, inp.meta);
const out = inp.settings.map((s) => JP.whatif(D, {disk: JP.num(s.disk), network: JP.num(s.network),
  slots: s.slots, gc: s.gc, stragglers: s.stragglers}, false).predicted);
const V = inp.vectors;
console.log(JSON.stringify({predicted: out,
  ms: V ? V.ms.map(([x]) => JP.fmtMs(x)) : [], bytes: V ? V.bytes.map(([x]) => JP.fmtBytes(x)) : []}));
"""


def run_js(a, tmp_path, vecs, vectors=None):
    arrays, meta, _ = payload.build(a)
    enc = lambda f: "inf" if math.isinf(f) else f  # noqa: E731
    data = {"P": {k: {"dtype": str(v.dtype), "data": v.tolist()} for k, v in arrays.items()},
            "meta": meta, "vectors": vectors,
            "settings": [{**s, "disk": enc(s["disk"]), "network": enc(s["network"])} for s in vecs]}
    path = tmp_path / "in.json"
    path.write_text(json.dumps(data))
    script = tmp_path / "h.js"
    script.write_text(js_source().split(MAIN_STARTS)[0] + HARNESS)
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
