"""What the browser needs, per task attempt, to draw the timelines and replay what-ifs.

Everything is in the replay's dispatch order (``timeline.order``: group, launch, task id),
so the JavaScript replay walks the arrays front to back. Two kinds of columns:

* **replay inputs** (exact): duration, fetch wait, disk-only time (shuffle write + estimated
  input/output wait), GC, the no-straggler duration, and ``run`` where it can cap a saving —
  the same numbers ``analysis.whatif.ScenarioInputs`` holds, encoded without loss
  (:mod:`.codec`);
* **display columns**: launch offset (float32), lane, stage, each breakdown component of
  each attempt (to 1/64 ms, float32; the one a duration's other parts leave — CPU — and the
  input/output wait — the disk-only time less the shuffle write — computed in the browser
  where that is within 0.05 ms), input and shuffle-read bytes (exact: the no-stragglers
  duration is computed from them), task id, index, attempt and flags — for bars and hover
  text only.

The no-stragglers duration travels as its rule (``codec.encode_rate``: the stage's median
rate times the task's bytes, or the stage's median duration, capped by the duration), with
the positions the rule misses (failed attempts) exact.

``meta`` (JSON) carries the group structure, the constants of ``predict``, lane labels and
the breakdown components (``analysis.components.as_json()``: labels, colours, measured or
estimated), each with the column that holds it.
"""
from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd

from ..analysis import Analysis
from ..analysis.components import as_json as components_json
from .codec import decode, encode, encode_display, encode_minus, encode_rate, smallest_int
from .lanes import Lanes, assign_lanes

FLAG_FAILED, FLAG_KILLED, FLAG_SPECULATIVE, FLAG_STRAGGLER, FLAG_SKEW, FLAG_SPILL = 1, 2, 4, 8, 16, 32

# Slider stops. The browser shows them as labels and replays the chosen factors.
DISK_STOPS = [1.0, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0, math.inf]
NETWORK_STOPS = DISK_STOPS
SLOT_STOPS = [0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0]


def stop_label(f: float) -> str:
    return "∞" if math.isinf(f) else f"{f:g}×"


def straggler_rows(a: Analysis) -> tuple[np.ndarray, np.ndarray]:
    """Task rows of ``a.stragglers`` (same order), and a per-row kind flag array."""
    t = a.run.tasks
    s = a.stragglers
    if s is None or len(s) == 0:
        return np.zeros(0, dtype="int64"), np.zeros(len(t), dtype="uint8")
    key = pd.MultiIndex.from_arrays([t["stage_id"], t["stage_attempt"], t["task_id"], t["attempt"]])
    pos = pd.Series(np.arange(len(t)), index=key)
    pos = pos[~pos.index.duplicated()]
    want = pd.MultiIndex.from_arrays([s["stage_id"], s["stage_attempt"], s["task_id"], s["attempt"]])
    rows = pos.reindex(want).to_numpy()
    rows = np.where(np.isnan(rows.astype("float64")), -1, rows).astype("int64")
    flags = np.zeros(len(t), dtype="uint8")
    ok = rows >= 0
    kinds = s["kind"].to_numpy()
    flags[rows[ok & (kinds == "straggler")]] |= FLAG_STRAGGLER
    flags[rows[ok & (kinds != "straggler")]] |= FLAG_SKEW
    return rows, flags


# Components the replay inputs already carry exactly (no second column for them).
SHARED_COLUMNS = {"gc": "gc", "shuffle_fetch_wait": "fw"}
# Display precision of a component (ms): bars and whole-millisecond hover text.
COMPONENT_STEP = 1.0 / 64
# Components the browser computes from other columns where that is within DERIVED_TOL ms:
# key -> (base column, components subtracted; None: every other component).
DERIVED = {"io_wait_est": ("disk", ["shuffle_write"]), "cpu": ("dur", None)}
DERIVED_TOL = 0.05


def component_columns(a: Analysis, order: np.ndarray, cols: dict, arrays: dict,
                      decoded: dict) -> list[dict]:
    """Each breakdown component per attempt (display precision), in dispatch order;
    returns ``components.as_json()`` with ``col``, the decoded column that holds each.
    ``decoded``: the replay columns as the browser decodes them (components are added)."""
    bd = a.task_breakdown
    comps = components_json()
    col_of = {c["key"]: SHARED_COLUMNS.get(c["key"], f"c_{c['key']}") for c in comps}

    def values(key):
        return bd[key].to_numpy(dtype="float64")[order] if len(bd) else np.zeros(0)

    for comp in comps:                         # sent columns first, then the derived ones
        key, col = comp["key"], col_of[comp["key"]]
        if key not in SHARED_COLUMNS and key not in DERIVED:
            cols[col] = encode_display(col, values(key), arrays, step=COMPONENT_STEP)
            decoded[col] = decode(cols[col], arrays, decoded)
    for key, (base, minus) in DERIVED.items():
        if key not in col_of:
            continue
        col = col_of[key]
        subtract = [col_of[k] for k in (minus if minus is not None else col_of) if k != key]
        if all(c in decoded for c in subtract) and base in decoded and len(order):
            cols[col] = encode_minus(col, values(key), arrays, decoded=decoded, base=base,
                                     minus=subtract, tol=DERIVED_TOL, step=COMPONENT_STEP)
        else:
            cols[col] = encode_display(col, values(key), arrays, step=COMPONENT_STEP)
        decoded[col] = decode(cols[col], arrays, decoded)
    return [{**comp, "col": col_of[comp["key"]]} for comp in comps]


def _stage_rates(a: Analysis, nbytes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per stage code: the median inverse rate (NaN where the stage's rate is by duration)
    and the median duration — what the no-stragglers duration is made of
    (``analysis.stragglers.progress``)."""
    from ..analysis.stragglers import _Groups, progress
    from ..analysis.timeline import is_success
    tl = a.timeline
    S = len(tl.stage_keys)
    codes = tl.stage_code
    ok = is_success(a.run.tasks["status"])
    p = progress(tl.duration, nbytes, _Groups(codes, S), ok)
    r, m = np.full(S, np.nan), np.zeros(S)
    byte_stage = np.zeros(S, dtype=bool)
    byte_stage[codes[p["by_rate"]]] = True
    r[codes] = p["med_rho"]
    m[codes] = p["med_d"]
    r[~byte_stage] = np.nan
    return r, m


def build(a: Analysis, lanes: Lanes | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any], dict]:
    """(arrays, meta, extras): ``arrays`` for Bokeh (name -> ndarray), ``meta`` JSON-able,
    ``extras`` Python-only helpers (``pos``: task row -> position in the arrays, lanes)."""
    run, tl = a.run, a.timeline
    t = run.tasks
    n = len(t)
    inp = a._inputs
    order = tl.order if n else np.zeros(0, dtype="int64")
    pos = np.empty(n, dtype="int64")
    pos[order] = np.arange(n)
    lanes = lanes or assign_lanes(run, tl.launch, tl.duration)
    arrays: dict[str, np.ndarray] = {}
    cols: dict[str, dict] = {}

    dur = np.asarray(inp.duration, dtype="float64")[order]
    fw = np.asarray(inp.fetch_wait, dtype="float64")[order]
    disk_only = np.asarray(inp.disk_only, dtype="float64")[order]
    gc = np.asarray(inp.gc, dtype="float64")[order]
    run_ms = np.asarray(inp.run, dtype="float64")[order]
    no_strag = np.asarray(inp.no_straggler, dtype="float64")[order]
    # run only caps a saving where every saving together could exceed it (see report.js).
    cap = ((fw + disk_only) + gc) > run_ms
    run_cap = np.where(cap, run_ms, math.inf)
    cols["dur"] = encode("dur", dur, arrays)
    cols["fw"] = encode("fw", fw, arrays)
    cols["disk"] = encode("disk", disk_only, arrays)
    cols["gc"] = encode("gc", gc, arrays)
    cols["run"] = encode("run", run_cap, arrays, default=math.inf)
    arrays["stage"] = smallest_int(tl.stage_code[order]) if n else np.zeros(0, "uint8")
    inb = t["input_bytes"].to_numpy(dtype="float64")
    shr = t["shuffle_read_bytes"].to_numpy(dtype="float64")
    cols["inb"] = encode("inb", inb[order], arrays)          # exact: nostrag's rule uses them
    cols["shr"] = encode("shr", shr[order], arrays)
    decoded = {"dur": dur, "fw": fw, "disk": disk_only, "gc": gc, "inb": inb[order],
               "shr": shr[order]}
    if n:
        r, m = _stage_rates(a, (t["input_bytes"].to_numpy() + t["shuffle_read_bytes"].to_numpy())
                            .astype("float64"))
        cols["nostrag"] = encode_rate("nostrag", no_strag, arrays, decoded=decoded, base="dur",
                                      code="stage", x=["inb", "shr"], r=r, m=m)
    else:
        cols["nostrag"] = encode("nostrag", no_strag, arrays, base=dur, base_name="dur")

    # display columns
    lo = float(tl.window[0]) if n else 0.0
    launch = tl.launch[order] - (lo if tl.has_times else 0.0)
    arrays["start"] = launch.astype("float32")
    arrays["lane"] = smallest_int(lanes.lane[order])
    components = component_columns(a, order, cols, arrays, decoded)
    arrays["tid"] = t["task_id"].to_numpy()[order].astype("int32") if n else np.zeros(0, "int32")
    arrays["idx"] = smallest_int(t["index"].to_numpy()[order]) if n else np.zeros(0, "uint8")
    arrays["att"] = smallest_int(t["attempt"].to_numpy()[order]) if n else np.zeros(0, "uint8")
    status = t["status"].astype(str).to_numpy()
    flags = np.zeros(n, dtype="uint8")
    flags[status == "FAILED"] |= FLAG_FAILED
    flags[status == "KILLED"] |= FLAG_KILLED
    flags[t["speculative"].to_numpy(dtype=bool)] |= FLAG_SPECULATIVE
    spilled = (t["memory_spilled_bytes"].to_numpy() + t["disk_spilled_bytes"].to_numpy()) > 0
    flags[spilled] |= FLAG_SPILL
    srows, sflags = straggler_rows(a)
    flags |= sflags
    arrays["flags"] = flags[order]

    # group structure
    arrays["bounds"] = tl.bounds.astype("int32")
    arrays["slots"] = tl.group_slots.astype("int32")
    gs, ge = tl.group_start, tl.group_end
    split_g, split_pos, split_off, split_codes = [], [], [0], []
    stage_ids = tl.stage_keys[:, 0] if len(tl.stage_keys) else np.zeros(0, "int64")
    for g, splits in enumerate(tl.splits):
        lo_g = int(tl.bounds[g])
        codes_g = tl.stage_code[order[lo_g:int(tl.bounds[g + 1])]]
        for p, parents in splits:
            parent_sids = set(stage_ids[np.unique(codes_g[np.asarray(parents)])].tolist())
            pc = [c for c in range(len(stage_ids)) if int(stage_ids[c]) in parent_sids]
            split_g.append(g)
            split_pos.append(int(p))
            split_codes.extend(pc)
            split_off.append(len(split_codes))
            # The browser finds the parents as "earlier positions of these stages"; make sure
            # that is exactly the analysis' parent list.
            mask = np.isin(codes_g[:p], pc)
            if not np.array_equal(np.flatnonzero(mask), np.asarray(parents)):
                raise AssertionError("split parents are not the earlier tasks of parent stages")
    arrays["split_g"] = np.asarray(split_g, dtype="int32")
    arrays["split_pos"] = np.asarray(split_pos, dtype="int32")
    arrays["split_off"] = np.asarray(split_off, dtype="int32")
    arrays["split_codes"] = np.asarray(split_codes, dtype="int32")

    sk = tl.stage_keys
    meta = {
        "n": int(n), "groups": int(tl.n_groups),
        "cols": cols,
        "components": components,
        "actual_ms": float(a.actual_ms), "driver_gap_ms": float(a.driver_gap_ms),
        "wall_ms": float(a.wall_ms), "base_ms": float(a.simulated_baseline_ms),
        "model_error": float(a.model_error),
        "cpu_share": [float(x) for x in a.cpu_share],
        # per group: null, or the slots' [from, until] (ms from the group's start; until null:
        # the executor stayed) where executors came or went (analysis.timeline.slot_windows)
        "slot_windows": [None if w is None else
                         [[float(x) for x in w[0]],
                          [None if math.isinf(x) else float(x) for x in w[1]]]
                         for w in tl.slot_windows],
        "group_start": [float(x - lo) for x in gs] if tl.has_times else [0.0] * len(gs),
        "group_end": [float(x - lo) for x in ge] if tl.has_times else [0.0] * len(ge),
        "window_ms": float(tl.window[1] - tl.window[0]) if n else float(a.wall_ms),
        "has_times": bool(tl.has_times),
        "stage_ids": [int(x) for x in sk[:, 0]] if len(sk) else [],
        "stage_attempts": [int(x) for x in sk[:, 1]] if len(sk) else [],
        "lanes": lanes.labels, "lane_exec": lanes.executor, "lane_host": lanes.host,
        "disk_stops": [stop_label(f) for f in DISK_STOPS],
        "disk_values": ["inf" if math.isinf(f) else f for f in DISK_STOPS],
        "slot_stops": [f"×{f:g}" for f in SLOT_STOPS],
        "slot_values": SLOT_STOPS,
        "flags": {"failed": FLAG_FAILED, "killed": FLAG_KILLED, "speculative": FLAG_SPECULATIVE,
                  "straggler": FLAG_STRAGGLER, "skew": FLAG_SKEW, "spill": FLAG_SPILL},
    }
    extras = {"pos": pos, "lanes": lanes, "straggler_rows": srows}
    return arrays, meta, extras


def meta_json(meta: dict) -> str:
    return json.dumps(meta, separators=(",", ":"), allow_nan=False)
