"""Compare two runs: what changed between A and B, and why B took the time it took (issue J).

    c = compare(analysis_a, analysis_b, noise_walls=[...])
    c.summary()        # JSON-able: wall delta split into parts that add up, config diff, ...

**Wall-time split.** Each run's wall time is its driver gaps plus the time its task groups
spanned, ``wall = gap + T``; ``T = W / P`` with ``W`` the summed task time and ``P = W / T`` the
parallelism the run actually got. Then, exactly,

    Δwall = Δgap  +  Σ_c ΔC_c / P_a  +  W_b × (1/P_b − 1/P_a)

where ``C_c`` is component ``c``'s part of ``W`` (``analysis/components.py``; its share of the
breakdown times ``W``, so the parts sum to ``W``). The first term is the driver's change, the
second the change in work per component at A's parallelism, the third what B's different
parallelism (slots, partitioning, skew) did to B's work. Whatever the three do not explain
(a run whose groups overran its window) is the residual, shown, never hidden.

**Matching.** Ids differ between runs, so stages and operators are matched by shape:
operators by name and description with expression ids removed (then by name alone, in plan
order), stages by their names and operators in submission order (``difflib``'s longest
matching blocks: a well-kept, exact algorithm for aligning two sequences).

**Noise.** Only the spread of repeated runs of the same cell says what "within noise" means:
``noise_walls`` are their wall times (≥ 3, from the store). With fewer the answer is ``None``
(unknown) and no change is called significant.

Pure: numpy, pandas and the standard library; no Spark, Jupyter or Bokeh.
"""
from __future__ import annotations

import difflib
import math
import re
from typing import Any, Iterable

import numpy as np
import pandas as pd

from .components import BY_KEY, KEYS

#: Settings that differ between any two sessions and say nothing about performance.
IGNORED_CONF = re.compile(
    r"^spark\.(app\.(id|name|startTime|submitTime|initial\.\w+)|driver\.(host|port|appUIAddress)"
    r"|ui\.(proxyBase|port)|repl\.class\.(uri|outputDir)|sql\.warehouse\.dir"
    r"|executor\.id|jars|files|submit\.pyFiles|(driver|executor)\.extraJavaOptions"
    r"|sql\.connect\.\w+|connect\.\w+|jobGroup\.\w+)$|^spark\.app\.")
MIN_NOISE_RUNS = 3
_EXPR_ID = re.compile(r"#\d+L?|\[plan_id=\d+\]|\bplan_id=\d+|@[0-9a-f]{6,}")


def _normalize(text: Any) -> str:
    return " ".join(_EXPR_ID.sub("", str(text or "")).split())


def _pct(delta: float, base: float) -> float | None:
    return delta / base if base > 0 else None


def _secs(ms: float) -> str:
    ms = abs(ms)
    return f"{ms / 1000:.2f} s" if ms >= 1000 else f"{ms:.0f} ms"


# -- the wall-time split ---------------------------------------------------------------------
def _work(a) -> tuple[float, float, float, dict[str, float]]:
    """(gap, T, W, component -> ms of W) of one Analysis."""
    w = float(np.asarray(a.timeline.duration, dtype="float64").sum())
    bd = a.breakdown
    total = sum(float(bd[k]["ms"]) for k in KEYS if k in bd)
    parts = {k: (w * float(bd[k]["ms"]) / total if total > 0 else 0.0) for k in KEYS}
    return float(a.driver_gap_ms), float(a.actual_ms), w, parts


def wall_split(a, b) -> dict[str, Any]:
    """Δwall of B against A as driver, per-component and parallelism parts plus a residual."""
    gap_a, t_a, w_a, c_a = _work(a)
    gap_b, t_b, w_b, c_b = _work(b)
    p_a = w_a / t_a if t_a > 0 else 0.0
    p_b = w_b / t_b if t_b > 0 else 0.0
    ref = p_a or p_b                      # A ran no task: B's work at B's parallelism
    components = {k: ((c_b[k] - c_a[k]) / ref if ref > 0 else 0.0) for k in KEYS}
    parallelism = (w_b * (1.0 / p_b - 1.0 / p_a)) if (p_a > 0 and p_b > 0) else 0.0
    delta = float(b.wall_ms) - float(a.wall_ms)
    explained = (gap_b - gap_a) + sum(components.values()) + parallelism
    return {
        "wall_delta_ms": delta,
        "driver_ms": gap_b - gap_a,
        "components": components,
        "parallelism_ms": parallelism,
        "residual_ms": delta - explained,
        "parallelism": {"a": p_a, "b": p_b},
        "task_time_ms": {"a": w_a, "b": w_b},
    }


# -- configuration ---------------------------------------------------------------------------
def _executors(run) -> int:
    ex = run.executors
    if ex.empty:
        return 0
    ids = ex["executor_id"].astype(str)
    return int((ids != "driver").sum()) or int(len(ids))


def config_of(run) -> dict[str, str]:
    """The run's (redacted) Spark conf plus what shapes it: master, executors, cores, version."""
    conf = {str(k): str(v) for k, v in (run.extra.get("spark_conf") or {}).items()
            if not IGNORED_CONF.search(str(k))}
    conf.update({"master": str(run.master or ""), "executors": str(_executors(run)),
                 "cores (slots)": str(int(run.slots)), "Spark version": str(run.spark_version or "")})
    return conf


def config_diff(a_run, b_run) -> dict[str, list]:
    ca, cb = config_of(a_run), config_of(b_run)
    return {k: [ca.get(k), cb.get(k)] for k in sorted(set(ca) | set(cb)) if ca.get(k) != cb.get(k)}


# -- stages and operators matched by shape -----------------------------------------------------
def _align(keys_a: list[str], keys_b: list[str]) -> list[tuple[int | None, int | None]]:
    """Pairs (i, j) of equal keys in order (difflib's matching blocks), then leftovers."""
    sm = difflib.SequenceMatcher(a=keys_a, b=keys_b, autojunk=False)
    pairs, used_a, used_b = [], set(), set()
    for block in sm.get_matching_blocks():
        for k in range(block.size):
            pairs.append((block.a + k, block.b + k))
            used_a.add(block.a + k)
            used_b.add(block.b + k)
    pairs += [(i, None) for i in range(len(keys_a)) if i not in used_a]
    pairs += [(None, j) for j in range(len(keys_b)) if j not in used_b]
    return pairs


STAGE_FIELDS = ["task_attempts", "executor_run_time_ms", "input_bytes", "shuffle_read_bytes",
                "shuffle_write_bytes", "memory_spilled_bytes", "disk_spilled_bytes"]


def _stage_rows(a) -> pd.DataFrame:
    st = a.stage_table()
    if st.empty:
        return st
    st = st[st["status"].astype(str) != "SKIPPED"].copy()
    sub = pd.to_numeric(st.get("submission_ms"), errors="coerce") if "submission_ms" in st else None
    st["_order"] = sub.fillna(np.inf) if sub is not None else 0
    st = st.sort_values(["_order", "stage_id", "attempt"]).reset_index(drop=True)
    name = st["name"].fillna("").astype(str) if "name" in st else pd.Series([""] * len(st))
    st["_key"] = [_normalize(n) for n in name]
    return st


def stage_deltas(a, b) -> list[dict]:
    sa, sb = _stage_rows(a), _stage_rows(b)
    out = []
    for i, j in _align(list(sa.get("_key", [])), list(sb.get("_key", []))):
        ra = sa.iloc[i] if i is not None else None
        rb = sb.iloc[j] if j is not None else None
        row: dict[str, Any] = {
            "name": (ra if ra is not None else rb)["name"],
            "a_stage": None if ra is None else f"{int(ra['stage_id'])}.{int(ra['attempt'])}",
            "b_stage": None if rb is None else f"{int(rb['stage_id'])}.{int(rb['attempt'])}",
            "matched": ra is not None and rb is not None}
        for f in STAGE_FIELDS:
            va = float(ra[f]) if ra is not None and f in ra else 0.0
            vb = float(rb[f]) if rb is not None and f in rb else 0.0
            row[f] = {"a": va if ra is not None else None, "b": vb if rb is not None else None,
                      "delta": vb - va}
        out.append(row)
    return out


OPERATOR_FIELDS = ["task_time_ms", "rows_out", "input_bytes", "spill_bytes"]


def _operator_frame(a) -> pd.DataFrame:
    ops = getattr(a, "operators", None)
    if not isinstance(ops, pd.DataFrame) or ops.empty:
        return pd.DataFrame()
    ops = ops.copy()
    order = (ops.sort_values(["execution_id", "node_id"]) if "node_id" in ops else ops)
    order = order.reset_index(drop=True)
    order["_exec_rank"] = order["execution_id"].rank(method="dense").astype(int) - 1
    order["_key"] = [f"{r}|{n}|{_normalize(d)}" for r, n, d in
                     zip(order["_exec_rank"], order["name"], order.get("description", ""))]
    order["_name"] = [f"{r}|{n}" for r, n in zip(order["_exec_rank"], order["name"])]
    return order


def operator_deltas(a, b) -> list[dict]:
    """Operators of A and B matched by name and description (ids removed), then by name."""
    oa, ob = _operator_frame(a), _operator_frame(b)
    if oa.empty and ob.empty:
        return []
    pairs = []
    free_a = list(range(len(oa)))
    free_b = list(range(len(ob)))
    for key in ("_key", "_name"):           # exact shape first, then the name alone
        ka = [oa[key].iloc[i] for i in free_a] if len(oa) else []
        kb = [ob[key].iloc[j] for j in free_b] if len(ob) else []
        matched = [(free_a[i], free_b[j]) for i, j in _align(ka, kb)
                   if i is not None and j is not None]
        pairs += matched
        free_a = [i for i in free_a if i not in {p[0] for p in matched}]
        free_b = [j for j in free_b if j not in {p[1] for p in matched}]
    pairs += [(i, None) for i in free_a] + [(None, j) for j in free_b]
    out = []
    for i, j in pairs:
        ra = oa.iloc[i] if i is not None else None
        rb = ob.iloc[j] if j is not None else None
        ref = ra if ra is not None else rb
        row: dict[str, Any] = {"name": ref["name"], "description": ref.get("description", ""),
                               "a_node": None if ra is None else int(ra["node_id"]),
                               "b_node": None if rb is None else int(rb["node_id"]),
                               "matched": ra is not None and rb is not None}
        for f in OPERATOR_FIELDS:
            va = float(ra[f]) if ra is not None and f in ra and pd.notna(ra[f]) else 0.0
            vb = float(rb[f]) if rb is not None and f in rb and pd.notna(rb[f]) else 0.0
            row[f] = {"a": va if ra is not None else None, "b": vb if rb is not None else None,
                      "delta": vb - va}
        out.append(row)
    out.sort(key=lambda r: -abs(r["task_time_ms"]["delta"]))
    return out


# -- data volume, stragglers, noise, predictions -----------------------------------------------
VOLUME = {"input_bytes": "input_bytes", "output_bytes": "output_bytes",
          "shuffle_read_bytes": "shuffle_read_bytes", "shuffle_write_bytes": "shuffle_write_bytes",
          "spilled_bytes": None, "input_records": "input_records"}


def _volume(run) -> dict[str, float]:
    t = run.tasks
    out = {k: float(t[c].sum()) for k, c in VOLUME.items() if c}
    out["spilled_bytes"] = float(t["memory_spilled_bytes"].sum() + t["disk_spilled_bytes"].sum())
    out["task_attempts"] = float(len(t))
    return out


def _straggler_counts(a) -> dict[str, int]:
    s = a.stragglers
    if s is None or len(s) == 0:
        return {"stragglers": 0, "data_skew": 0}
    kind = s["kind"].astype(str)
    return {"stragglers": int((kind == "straggler").sum()), "data_skew": int((kind != "straggler").sum())}


def noise_band(walls: Iterable[float] | None) -> dict | None:
    """The spread (max − min) of repeated runs of one cell; None with fewer than three."""
    w = [float(x) for x in (walls or []) if x is not None and math.isfinite(float(x))]
    if len(w) < MIN_NOISE_RUNS:
        return None
    return {"runs": len(w), "band_ms": max(w) - min(w), "median_ms": float(np.median(w))}


def slot_prediction(a, b) -> dict | None:
    """A's what-if for B's slots beside B's measured wall time, when only the slots changed
    among what the what-if models (master and executor count may change with them)."""
    sa, sb = int(a.run.slots), int(b.run.slots)
    if sa <= 0 or sb <= 0 or sa == sb:
        return None
    factor = sb / sa
    predicted = float(a.whatif(slots_factor=factor))
    measured = float(b.wall_ms)
    return {"what": f"slots ×{factor:g} ({sa} → {sb})", "setting": "slots",
            "predicted_ms": predicted, "measured_ms": measured,
            "error": abs(predicted - measured) / measured if measured > 0 else None}


def hint_predictions(a, b) -> list[dict]:
    """A's hints whose setting B applied, with what A predicted for it (when it could)."""
    conf_b = config_of(b.run)
    out = []
    for h in getattr(a, "hints", None) or []:
        setting, value = h.get("setting"), h.get("value")
        if not setting or value is None or str(conf_b.get(setting)) != str(value):
            continue
        predicted = h.get("predicted_ms")
        measured = float(b.wall_ms)
        out.append({"what": f"{setting}={value}", "setting": setting, "hint": h.get("text", ""),
                    "predicted_ms": predicted, "measured_ms": measured,
                    "error": (abs(predicted - measured) / measured
                              if predicted is not None and measured > 0 else None)})
    return out


# -- the comparison --------------------------------------------------------------------------
class Comparison:
    """B against A. ``summary()`` is the JSON digest; the HTML view renders it."""

    def __init__(self, a, b, noise_walls: Iterable[float] | None = None) -> None:
        self.a, self.b = a, b
        self.noise = noise_band(noise_walls)

    @property
    def within_noise(self) -> bool | None:
        if self.noise is None:
            return None
        return abs(float(self.b.wall_ms) - float(self.a.wall_ms)) <= self.noise["band_ms"]

    def sentence(self, split: dict, within: bool | None) -> str:
        a_ms, b_ms, delta = float(self.a.wall_ms), float(self.b.wall_ms), split["wall_delta_ms"]
        rel = _pct(delta, a_ms)
        how = "the same time as" if delta == 0 else ("longer than" if delta > 0 else "less than")
        head = (f"B took {_secs(b_ms)}, {_secs(delta)} {how} A ({_secs(a_ms)}"
                + (f", {rel:+.0%})" if rel is not None and delta else ")"))
        parts = [("driver gaps", split["driver_ms"]), ("parallelism", split["parallelism_ms"])]
        parts += [(BY_KEY[k].label, v) for k, v in split["components"].items()]
        top = [p for p in sorted(parts, key=lambda p: -abs(p[1])) if abs(p[1]) > 0][:2]
        if top and delta:
            head += "; mostly " + " and ".join(f"{n} ({'+' if v > 0 else '−'}{_secs(v)})"
                                              for n, v in top)
        if within is None:
            head += "; noise unknown (fewer than 3 runs of this cell to compare with)"
        elif within:
            head += f"; within noise (±{_secs(self.noise['band_ms'])} over {self.noise['runs']} runs)"
        else:
            head += (f"; beyond noise (runs of this cell spread {_secs(self.noise['band_ms'])} "
                     f"over {self.noise['runs']} runs)")
        return head + "."

    def summary(self) -> dict:
        from .result import jsonable

        a, b = self.a, self.b
        split = wall_split(a, b)
        within = self.within_noise
        predictions = [p for p in [slot_prediction(a, b)] if p] + hint_predictions(a, b)
        va, vb = _volume(a.run), _volume(b.run)
        sa, sb = _straggler_counts(a), _straggler_counts(b)
        out = {
            "a": a.run.run_id, "b": b.run.run_id,
            "wall_a_ms": float(a.wall_ms), "wall_b_ms": float(b.wall_ms),
            "wall_delta_ms": split["wall_delta_ms"],
            "wall_delta_share": _pct(split["wall_delta_ms"], float(a.wall_ms)),
            "sentence": self.sentence(split, within),
            "driver_ms": split["driver_ms"],
            "parallelism_ms": split["parallelism_ms"],
            "components": dict(split["components"]),
            "component_kinds": {k: BY_KEY[k].kind for k in split["components"]},
            "residual_ms": split["residual_ms"],
            "parallelism": split["parallelism"],
            "task_time_ms": split["task_time_ms"],
            "config_diff": config_diff(a.run, b.run),
            "within_noise": within,
            "noise": self.noise,
            "stages": stage_deltas(a, b),
            "operators": operator_deltas(a, b),
            "volume": {k: {"a": va[k], "b": vb[k], "delta": vb[k] - va[k]} for k in va},
            "stragglers": {k: {"a": sa[k], "b": sb[k], "delta": sb[k] - sa[k]} for k in sa},
            "predicted_vs_measured": predictions or None,
            "same_app": a.run.app_id == b.run.app_id,
            "spark_versions": [a.run.spark_version, b.run.spark_version],
        }
        return jsonable(out)

    def __repr__(self) -> str:
        return (f"<jupyter_perf.Comparison {self.a.run.run_id} → {self.b.run.run_id}: "
                f"{float(self.b.wall_ms) - float(self.a.wall_ms):+.0f} ms>")


def compare(a, b, noise_walls: Iterable[float] | None = None) -> Comparison:
    """B (an Analysis) against A (an Analysis); ``noise_walls``: wall ms of repeated runs."""
    return Comparison(a, b, noise_walls)
