"""payload: the browser's arrays are the analysis' numbers, in replay order, compactly."""
import math

import numpy as np
from render_runs import synthetic, with_speculative

from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.components import as_json
from jupyter_perf.render import payload
from jupyter_perf.render.codec import decode


def decoded(arrays, meta):
    out = {}
    cols = meta["cols"]
    for name in ("dur", "fw", "disk", "gc", "run", "nostrag", "inb", "shr"):
        if name not in out:
            out[name] = decode(cols[name], arrays, out, cols)
    for comp in meta["components"]:
        if comp["col"] not in out:
            out[comp["col"]] = decode(cols[comp["col"]], arrays, out, cols)
    return out


def test_replay_inputs_are_exact_and_in_dispatch_order():
    a = analyze(with_speculative(synthetic(3000, 16, per_stage=400)))
    arrays, meta, extras = payload.build(a)
    order = a.timeline.order
    inp = a._inputs
    d = decoded(arrays, meta)
    assert np.array_equal(d["dur"], inp.duration[order])
    assert np.array_equal(d["fw"], inp.fetch_wait[order])
    assert np.array_equal(d["disk"], inp.disk_only[order])
    assert np.array_equal(d["gc"], inp.gc[order])
    assert np.array_equal(d["nostrag"], inp.no_straggler[order])
    # the no-stragglers durations travel as their rule, with the attempts it misses exact
    assert meta["cols"]["nostrag"]["k"] == "rate"
    assert len(arrays.get("nostrag.i", [])) < 0.05 * len(order)
    t = a.run.tasks
    assert np.array_equal(d["inb"], t["input_bytes"].to_numpy(dtype="float64")[order])
    assert np.array_equal(d["shr"], t["shuffle_read_bytes"].to_numpy(dtype="float64")[order])
    # run is sent only where it can cap a saving; elsewhere +inf changes nothing
    cap = np.isfinite(d["run"])
    assert np.array_equal(d["run"][cap], inp.run[order][cap])
    assert ((d["fw"] + d["disk"]) + d["gc"] <= inp.run[order])[~cap].all()
    assert np.array_equal(extras["pos"][order], np.arange(len(order)))
    assert meta["n"] == len(a.run.tasks) and meta["groups"] == a.timeline.n_groups
    assert arrays["bounds"].tolist() == a.timeline.bounds.tolist()
    assert len(arrays["split_g"]) == sum(len(s) for s in a.timeline.splits) > 0


def test_components_travel_with_their_definition_and_values():
    a = analyze(with_speculative(synthetic(3000, 16, per_stage=400)))
    arrays, meta, _ = payload.build(a)
    comps = meta["components"]
    assert [{k: v for k, v in c.items() if k != "col"} for c in comps] == as_json()
    d = decoded(arrays, meta)
    order = a.timeline.order
    for c in comps:                       # each attempt's ms of each component, display precision
        want = a.task_breakdown[c["key"]].to_numpy()[order]
        assert np.allclose(d[c["col"]], want, rtol=1e-6, atol=payload.DERIVED_TOL), c["key"]
    # CPU and the input/output wait are computed in the browser from the other columns
    assert meta["cols"]["c_cpu"]["k"] == "minus" and meta["cols"]["c_io_wait_est"]["k"] == "minus"
    # the breakdown of an attempt spans its duration, except where Spark's measured parts
    # overlap (GC time beyond run − CPU): the timeline scales those bars to the duration
    total = sum(d[c["col"]] for c in comps)
    fits = np.isclose(total, d["dur"], rtol=1e-5, atol=0.05)
    assert fits.mean() > 0.99
    assert (total[~fits] > d["dur"][~fits]).all()


def test_flags_and_straggler_rows():
    run = with_speculative(synthetic(3000, 16, per_stage=400))
    a = analyze(run)
    arrays, meta, extras = payload.build(a)
    flags = arrays["flags"][extras["pos"]]               # back to task-row order
    t = run.tasks
    F = meta["flags"]
    assert ((flags & F["speculative"]) > 0).sum() == int(t["speculative"].sum())
    assert ((flags & F["killed"]) > 0).sum() == int((t["status"] == "KILLED").sum())
    assert ((flags & F["failed"]) > 0).sum() == int((t["status"] == "FAILED").sum())
    rows = extras["straggler_rows"]
    s = a.stragglers
    assert len(rows) == len(s) and (rows >= 0).all()
    assert t["task_id"].to_numpy()[rows].tolist() == s["task_id"].tolist()
    kinds = np.where(s["kind"] == "straggler", F["straggler"], F["skew"])
    assert ((flags[rows] & kinds) > 0).all()


def test_size_per_task_is_small():
    a = analyze(synthetic(20_000, 32, per_stage=2000))
    arrays, meta, _ = payload.build(a)
    raw = sum(v.nbytes for v in arrays.values())
    # before gzip: the exact replay inputs (the no-stragglers duration as its rule), the
    # breakdown components not derived (float32 to 1/64 ms where not constant or sparse), start,
    # lane, stage, bytes, ids and flags
    assert raw / len(a.run.tasks) < 60, raw / len(a.run.tasks)
    assert meta["disk_values"][-1] == "inf" and math.isinf(payload.DISK_STOPS[-1])


def test_container_round_trip_and_size():
    from jupyter_perf.render.views import (
        decode_data,
        encode_array,
        encode_data,
        pack_data,
        report_data,
        unpack_data,
    )
    a = analyze(with_speculative(synthetic(3000, 16, per_stage=400)))
    data = report_data(a)
    enc = encode_data(data)
    back = decode_data(enc)
    assert back["tabs"] == data["tabs"] and back["tasks_meta"] == data["tasks_meta"]
    assert set(back["tasks"]) == set(data["tasks"])
    for k, v in data["tasks"].items():
        got = back["tasks"][k]
        assert np.array_equal(got, v), k
    blob = pack_data(data)
    assert blob[:4] == b"JPR\x02"
    # every array starts 8-byte aligned in the container
    import json
    import struct
    (size,) = struct.unpack_from("<I", blob, 4)
    assert (8 + size) % 8 == 0
    heads = json.loads(blob[8:8 + size])["tasks"]
    assert all(h["o"] % 8 == 0 for h in heads.values())
    # the older JSON form (arrays as base64 inside) still decodes
    old = json.dumps({**data, "tasks": {k: encode_array(v) for k, v in data["tasks"].items()}})
    assert set(unpack_data(old.encode())["tasks"]) == set(data["tasks"])
    # the container is smaller than base64 inside the JSON
    import gzip
    assert len(enc) < 0.8 * len(gzip.compress(old.encode())) * 4 / 3
