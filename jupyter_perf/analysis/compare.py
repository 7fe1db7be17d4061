"""Compare two runs: what changed between A and B, and why B took the time it took (issue J).

    c = compare(analysis_a, analysis_b, noise_groups=[[...], [...]])
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
order), stages by their plan operators (else their call site without file and line) in
submission order (``difflib``'s opcodes: a well-kept, exact algorithm for aligning two
sequences; stages in a "replace" block are paired in order and marked as changed shape).

**Noise.** Only repeated runs say what "within noise" means, and one rule says it everywhere
(``series.py``: ``jp.compare``, the advice re-run, ``jp.history``). ``noise`` is what the warm
runs with A's code and settings say (a ``series.Noise``, or their wall times): B is within
noise when its wall time lies in the band those runs set (median ± K robust SDs of
``ln(wall)``), beyond it when outside; with fewer than ``series.MIN_WARM_RUNS`` warm runs the
answer is ``None`` (unknown, with how many more runs would settle it).

Pure: numpy, pandas and the standard library; no Spark, Jupyter or Bokeh.
"""
from __future__ import annotations

import difflib
import re
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from .. import fmt
from .components import BY_KEY, KEYS
from .hints import recorded_defaults
from .series import Noise, learn

#: Settings that differ between any two sessions and say nothing about performance.
IGNORED_CONF = re.compile(
    r"^spark\.(app\.(id|name|startTime|submitTime|initial\.\w+)|driver\.(host|port|appUIAddress)"
    r"|ui\.(proxyBase|port)|repl\.class\.(uri|outputDir)|sql\.warehouse\.dir"
    r"|executor\.id|jars|files|submit\.pyFiles|(driver|executor)\.extraJavaOptions"
    r"|sql\.connect\.\w+|connect\.\w+|jobGroup\.\w+|job\.(tags|interruptOnCancel|description))$"
    r"|^spark\.app\.")
#: What shapes a run besides its settings: always shown, changed or not.
SETUP_KEYS = ("master", "executors", "cores (slots)", "Spark version")
_EXPR_ID = re.compile(r"#\d+L?|\[plan_id=\d+\]|\bplan_id=\d+|@[0-9a-f]{6,}")
_CALL_SITE = re.compile(r"\bat \S+:\d+")


def _normalize(text: Any) -> str:
    return " ".join(_EXPR_ID.sub("", str(text or "")).split())


def _pct(delta: float, base: float) -> float | None:
    return delta / base if base > 0 else None


def _dur(ms: float) -> str:
    """A duration's size as the report writes it (``fmt.ms``, unsigned)."""
    return fmt.ms(abs(float(ms)))


# -- the wall-time split ---------------------------------------------------------------------
def _work(a) -> tuple[float, float, float, dict[str, float]]:
    """(gap, T, W, component -> ms of W) of one Analysis."""
    w = float(np.asarray(a.timeline.duration, dtype="float64").sum())
    bd = a.breakdown
    total = sum(float(bd[k]["ms"]) for k in KEYS if k in bd)
    parts = {k: (w * float(bd[k]["ms"]) / total if total > 0 and k in bd else 0.0) for k in KEYS}
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


def config_key(run) -> tuple:
    """What must be equal for two runs to be repeats of one another (besides the code)."""
    return tuple(sorted(config_of(run).items()))


#: After a value nobody set in the session: Spark's default there, recorded at the cell's end
#: (``run.extra["spark_defaults"]``, collect/sessionconf.py).
DEFAULT_NOTE = "(default)"


def config_diff(a_run, b_run) -> dict[str, list]:
    """``{setting: [A's value, B's value]}`` of what differs; a side that did not set it shows
    its recorded default ("200 (default)"), else None (not set, default unknown)."""
    ca, cb = config_of(a_run), config_of(b_run)
    da, db = recorded_defaults(a_run), recorded_defaults(b_run)

    def shown(conf: dict, defaults: dict, k: str) -> str | None:
        if k in conf:
            return conf[k]
        return f"{defaults[k]} {DEFAULT_NOTE}" if k in defaults else None

    return {k: [shown(ca, da, k), shown(cb, db, k)] for k in sorted(set(ca) | set(cb))
            if ca.get(k) != cb.get(k)}


def setup_of(a_run, b_run) -> dict[str, list]:
    """Master, executors, cores and Spark version of both runs, changed or not."""
    ca, cb = config_of(a_run), config_of(b_run)
    return {k: [ca[k], cb[k]] for k in SETUP_KEYS}


# -- stages and operators matched by shape -----------------------------------------------------
def _align(keys_a: Sequence[str], keys_b: Sequence[str],
           pair_changed: bool = False) -> list[tuple[int | None, int | None, bool]]:
    """(i, j, same_shape) in order: equal keys (difflib's opcodes); with ``pair_changed`` the
    rows of a "replace" block are paired in order (same_shape False); the rest alone."""
    sm = difflib.SequenceMatcher(a=list(keys_a), b=list(keys_b), autojunk=False)
    out: list[tuple[int | None, int | None, bool]] = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            out += [(i1 + k, j1 + k, True) for k in range(i2 - i1)]
            continue
        n = min(i2 - i1, j2 - j1) if (tag == "replace" and pair_changed) else 0
        out += [(i1 + k, j1 + k, False) for k in range(n)]
        out += [(i, None, False) for i in range(i1 + n, i2)]
        out += [(None, j, False) for j in range(j1 + n, j2)]
    return out


STAGE_FIELDS = ["num_tasks", "task_attempts", "executor_run_time_ms", "input_bytes",
                "output_bytes", "shuffle_read_bytes", "shuffle_write_bytes",
                "memory_spilled_bytes", "disk_spilled_bytes", "skew"]


def _stage_rows(a) -> pd.DataFrame:
    st = a.stage_table()
    if st.empty:
        return st
    st = st[st["status"].astype(str) != "SKIPPED"].copy()
    sub = pd.to_numeric(st.get("submission_ms"), errors="coerce") if "submission_ms" in st else None
    st["_order"] = sub.fillna(np.inf) if sub is not None else 0
    st = st.sort_values(["_order", "stage_id", "attempt"]).reset_index(drop=True)
    names = st["name"].fillna("").astype(str) if "name" in st else pd.Series([""] * len(st))
    ops = getattr(a, "stage_operators", None) or {}
    st["_ops"] = [ops.get(int(s), "") for s in st["stage_id"]]
    st["_key"] = [o or _CALL_SITE.sub("at <code>", _normalize(n))
                  for o, n in zip(st["_ops"], names)]
    # skew: the longest task over the median task of the stage attempt (successful ones)
    t = a.run.tasks
    ok = t[t["status"].isin(["SUCCESS", ""])]
    if len(ok):
        g = ok.groupby(["stage_id", "stage_attempt"])["duration_ms"]
        ratio = (g.max() / g.median().where(g.median() > 0)).to_dict()
    else:
        ratio = {}
    st["skew"] = [float(ratio.get((int(s), int(at)), np.nan))
                  for s, at in zip(st["stage_id"], st["attempt"])]
    return st


def _delta(va: float | None, vb: float | None) -> dict:
    return {"a": va, "b": vb,
            "delta": (vb - va) if va is not None and vb is not None else None}


def _num(row, field: str) -> float | None:
    if row is None or field not in row:
        return None
    value = pd.to_numeric(row[field], errors="coerce")
    return None if pd.isna(value) else float(value)


def _stage_label(row) -> str | None:
    """A stage as people read it: ``13``, or ``13 (attempt 1)`` for a retried attempt."""
    if row is None:
        return None
    sid, att = int(row["stage_id"]), int(row["attempt"])
    return f"{sid}" if att == 0 else f"{sid} (attempt {att})"


def stage_deltas(a, b) -> list[dict]:
    sa, sb = _stage_rows(a), _stage_rows(b)
    out = []
    for i, j, same in _align(list(sa.get("_key", [])), list(sb.get("_key", [])), True):
        ra = sa.iloc[i] if i is not None else None
        rb = sb.iloc[j] if j is not None else None
        ref = ra if ra is not None else rb
        row: dict[str, Any] = {
            "name": ref["_ops"] or ref["name"],
            "a_stage": _stage_label(ra), "b_stage": _stage_label(rb),
            "a_stage_id": None if ra is None else int(ra["stage_id"]),
            "b_stage_id": None if rb is None else int(rb["stage_id"]),
            "a_attempt": None if ra is None else int(ra["attempt"]),
            "b_attempt": None if rb is None else int(rb["attempt"]),
            "a_name": None if ra is None else (ra["_ops"] or ra["name"]),
            "b_name": None if rb is None else (rb["_ops"] or rb["name"]),
            "matched": ra is not None and rb is not None, "same_shape": same}
        for f in STAGE_FIELDS:
            row[f] = _delta(_num(ra, f), _num(rb, f))
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
    pairs: list[tuple[int | None, int | None, str]] = []
    free_a = list(range(len(oa)))
    free_b = list(range(len(ob)))
    for key in ("_key", "_name"):           # exact shape first, then the name alone
        ka = [oa[key].iloc[i] for i in free_a] if len(oa) else []
        kb = [ob[key].iloc[j] for j in free_b] if len(ob) else []
        matched = [(free_a[i], free_b[j]) for i, j, same in _align(ka, kb) if same]
        pairs += [(i, j, "shape" if key == "_key" else "name") for i, j in matched]
        free_a = [i for i in free_a if i not in {p[0] for p in matched}]
        free_b = [j for j in free_b if j not in {p[1] for p in matched}]
    pairs += [(i, None, "") for i in free_a] + [(None, j, "") for j in free_b]
    out = []
    for i, j, how in pairs:
        ra = oa.iloc[i] if i is not None else None
        rb = ob.iloc[j] if j is not None else None
        ref = ra if ra is not None else rb
        row: dict[str, Any] = {"name": ref["name"], "description": ref.get("description", ""),
                               "a_description": None if ra is None else ra.get("description", ""),
                               "b_description": None if rb is None else rb.get("description", ""),
                               "a_node": None if ra is None else int(ra["node_id"]),
                               "b_node": None if rb is None else int(rb["node_id"]),
                               "matched": ra is not None and rb is not None,
                               "matched_by": how or None}
        for f in OPERATOR_FIELDS:
            row[f] = _delta(_num(ra, f) or 0.0 if ra is not None else None,
                            _num(rb, f) or 0.0 if rb is not None else None)
            # one side missing: the change is all of the other side
            if row[f]["delta"] is None:
                row[f]["delta"] = (row[f]["b"] or 0.0) - (row[f]["a"] or 0.0)
        out.append(row)
    out.sort(key=lambda r: -abs(r["task_time_ms"]["delta"]))
    return out


# -- data volume, stragglers, noise, predictions -----------------------------------------------
VOLUME = ("input_bytes", "input_records", "output_bytes", "output_records",
          "shuffle_read_bytes", "shuffle_read_records", "shuffle_write_bytes",
          "shuffle_write_records")


def _volume(a) -> dict[str, float]:
    t = a.run.tasks
    out = {k: float(t[k].sum()) for k in VOLUME if k in t}
    out["spilled_bytes"] = float(t["memory_spilled_bytes"].sum() + t["disk_spilled_bytes"].sum())
    out["task_attempts"] = float(len(t))
    st = _stage_rows(a)
    out["partitions"] = float(st["num_tasks"].sum()) if len(st) else 0.0
    out["stages"] = float(len(st))
    return out


def _straggler_counts(a) -> dict[str, int]:
    s = a.stragglers
    if s is None or len(s) == 0:
        return {"stragglers": 0, "data_skew": 0}
    kind = s["kind"].astype(str)
    return {"stragglers": int((kind == "straggler").sum()), "data_skew": int((kind != "straggler").sum())}


def noise_of(noise: Noise | Iterable | None) -> Noise:
    """``noise`` as a ``series.Noise``: given, or learned from wall times of warm repeats of
    A's code and settings (a flat list; a list of lists is read as one list, oldest first)."""
    if isinstance(noise, Noise):
        return noise
    items = list(noise) if noise is not None else []
    flat: list = []
    for x in items:
        flat += list(x) if isinstance(x, (list, tuple, np.ndarray)) else [x]
    return learn(flat)


def slot_prediction(a, b) -> dict | None:
    """A's what-if for B's slots beside B's measured wall time, when the slots changed
    (master and executor count may change with them)."""
    sa, sb = int(a.run.slots), int(b.run.slots)
    if sa <= 0 or sb <= 0 or sa == sb:
        return None
    factor = sb / sa
    predicted = float(a.whatif(slots_factor=factor))
    measured = float(b.wall_ms)
    return {"what": f"slots ×{factor:g} ({sa} → {sb})", "setting": "slots",
            "value": str(sb), "kind": "slots", "hint": None,
            "predicted_ms": predicted, "measured_ms": measured,
            "error": abs(predicted - measured) / measured if measured > 0 else None,
            "signed_error": (predicted - measured) / measured if measured > 0 else None}


def hint_predictions(a, b) -> list[dict]:
    """A's hints whose setting B changed, with what A predicted: for B's value when B applied
    the value A advised (``exact``; ``predicted_ms`` None when A could not simulate it), else
    the hint beside B's other value (``predicted_ms`` None: A predicted nothing for it, its
    prediction for the advised value is ``advised_predicted_ms``)."""
    conf_a, conf_b = config_of(a.run), config_of(b.run)
    out, seen = [], set()
    for h in getattr(a, "hints", None) or []:
        setting, value = h.get("setting"), h.get("value")
        if not setting or value is None or setting in seen:
            continue
        if conf_a.get(setting) == conf_b.get(setting) or setting not in conf_b:
            continue
        seen.add(setting)
        exact = str(conf_b.get(setting)) == str(value)
        predicted = h.get("predicted_ms") if exact else None
        measured = float(b.wall_ms)
        error = signed = None
        if predicted is not None and measured > 0:
            signed = (float(predicted) - measured) / measured
            error = abs(signed)
        what = (f"{setting}={value}" if exact
                else f"{setting}={conf_b.get(setting)} (A advised {value})")
        out.append({"what": what, "setting": setting, "value": str(conf_b.get(setting)),
                    "kind": "setting", "hint": h.get("text", ""), "exact": exact,
                    "advised_value": str(value), "advised_predicted_ms": h.get("predicted_ms"),
                    "predicted_ms": predicted, "measured_ms": measured,
                    "error": error, "signed_error": signed})
    return out


# -- the comparison --------------------------------------------------------------------------
class Comparison:
    """B against A. ``summary()`` is the JSON digest; ``jupyter_perf.compare_html`` renders it."""

    def __init__(self, a, b, noise_groups: Noise | Iterable | None = None,
                 notes: Iterable[str] = ()) -> None:
        self.a, self.b = a, b
        #: The band of A's warm repeats (``series.Noise``; ``.known`` False: unknown).
        self.band = noise_of(noise_groups)
        self.noise = self.band.as_dict() if self.band.runs else None
        #: Lines about how the comparison was made (where the noise came from, ...).
        self.notes = list(notes)

    @property
    def judged(self) -> str | None:
        """B against the band of A's warm repeats: None (unknown) | within | slower | faster."""
        return self.band.judge(float(self.b.wall_ms))

    @property
    def within_noise(self) -> bool | None:
        j = self.judged
        return None if j is None else j == "within"

    def _noise_words(self, within: bool | None) -> str:
        n = self.band
        if within is None:
            have = (f"{n.runs} warm run{'s' if n.runs != 1 else ''}" if n.runs
                    else "no warm run")
            return (f"noise unknown ({have} with the code and settings of A to learn it "
                    f"from; {n.more} more would settle it)")
        usual = (f"the code and settings of A usually take {_dur(n.low_ms)}–"
                 f"{_dur(n.high_ms)}, from {n.runs} warm runs")
        if within:
            return f"within noise ({usual})"
        side = "slower" if self.judged == "slower" else "faster"
        return f"beyond noise: {side} than usual ({usual})"

    def sentence(self, split: dict, within: bool | None) -> str:
        a_ms, b_ms, delta = float(self.a.wall_ms), float(self.b.wall_ms), split["wall_delta_ms"]
        rel = _pct(delta, a_ms)
        if delta == 0:
            head = f"B took {_dur(b_ms)}, the same as A"
        else:
            how = "longer than" if delta > 0 else "less than"
            head = (f"B took {_dur(b_ms)}, {_dur(delta)} {how} A ({_dur(a_ms)}"
                    + (f", {rel:+.0%})" if rel is not None else ")"))
        parts = [("driver gaps", split["driver_ms"]), ("parallelism", split["parallelism_ms"])]
        parts += [(BY_KEY[k].label, v) for k, v in split["components"].items()]
        top = [p for p in sorted(parts, key=lambda p: -abs(p[1])) if abs(p[1]) >= 0.5][:2]
        if top and delta:
            head += "; mostly " + " and ".join(f"{n} ({'+' if v > 0 else '−'}{_dur(v)})"
                                              for n, v in top)
        return head + "; " + self._noise_words(within) + "."

    def advice_outcome(self) -> dict | None:
        """Whether the advice B followed helped: None when B applied no setting A advised
        (nor more slots where A's verdict advised them); else ``{verdict, words}`` where verdict
        is helped | slower | no_change | unknown (no noise estimate: faster or slower cannot be
        told from noise)."""
        followed = [p for p in hint_predictions(self.a, self.b) if p["exact"]]
        if any(h.get("cause") == "slots" for h in getattr(self.a, "hints", None) or []):
            followed += [p for p in [slot_prediction(self.a, self.b)] if p]
        if not followed:
            return None
        what = ", ".join(p["what"] for p in followed)
        delta = float(self.b.wall_ms) - float(self.a.wall_ms)
        judged = self.judged
        # the same rule as within_noise: B against the band of A's warm repeats, so the
        # direction is B's side of that band (A itself may have been an odd run)
        if judged is None:
            verdict = "unknown"
            words = (f"B ({what}) took {_dur(abs(delta))} {'less' if delta < 0 else 'more'} than "
                     f"A; noise unknown, so whether the advice helped cannot be told yet: run "
                     f"the advised cell {self.band.more} more time"
                     f"{'s' if self.band.more != 1 else ''}")
        elif judged == "within":
            verdict = "no_change"
            words = f"the advice ({what}) made no difference beyond noise"
        elif judged == "faster":
            verdict = "helped"
            words = (f"the advice ({what}) helped: {_dur(self.band.median_ms - float(self.b.wall_ms))}"
                     " faster than the advised run usually takes, beyond noise")
        else:
            verdict = "slower"
            words = (f"the advice ({what}) made the cell {_dur(float(self.b.wall_ms) - self.band.median_ms)}"
                     " slower than the advised run usually takes, beyond noise")
        return {"verdict": verdict, "words": words, "followed": followed}

    def summary(self) -> dict:
        from .result import jsonable

        a, b = self.a, self.b
        split = wall_split(a, b)
        within = self.within_noise
        predictions = [p for p in [slot_prediction(a, b)] if p] + hint_predictions(a, b)
        va, vb = _volume(a), _volume(b)
        sa, sb = _straggler_counts(a), _straggler_counts(b)
        out = {
            "a": a.run.run_id, "b": b.run.run_id,
            "a_title": a.run.label or a.run.first_line or a.run.app_name or a.run.run_id,
            "b_title": b.run.label or b.run.first_line or b.run.app_name or b.run.run_id,
            "wall_a_ms": float(a.wall_ms), "wall_b_ms": float(b.wall_ms),
            "wall_delta_ms": split["wall_delta_ms"],
            "wall_delta_share": _pct(split["wall_delta_ms"], float(a.wall_ms)),
            "sentence": self.sentence(split, within),
            "driver_ms": split["driver_ms"],
            "parallelism_ms": split["parallelism_ms"],
            "components": dict(split["components"]),
            "component_kinds": {k: BY_KEY[k].kind for k in split["components"]},
            "component_labels": {k: BY_KEY[k].label for k in split["components"]},
            "residual_ms": split["residual_ms"],
            "parallelism": split["parallelism"],
            "task_time_ms": split["task_time_ms"],
            "config_diff": config_diff(a.run, b.run),
            "setup": setup_of(a.run, b.run),
            "within_noise": within,
            "noise_verdict": self.judged,      # None | within | slower | faster (series.py)
            "noise": self.noise,
            "stages": stage_deltas(a, b),
            "operators": operator_deltas(a, b),
            "volume": {k: _delta(va[k], vb.get(k, 0.0)) for k in va},
            "stragglers": {k: _delta(float(sa[k]), float(sb[k])) for k in sa},
            "predicted_vs_measured": predictions or None,
            "advice": self.advice_outcome(),
            "same_app": a.run.app_id == b.run.app_id,
            "spark_versions": [a.run.spark_version, b.run.spark_version],
            "model_error": {"a": float(a.model_error), "b": float(b.model_error)},
            "notes": list(self.notes),
            "warnings": {"a": list(a.run.warnings), "b": list(b.run.warnings)},
        }
        return jsonable(out)

    def __repr__(self) -> str:
        return (f"<jupyter_perf.Comparison {self.a.run.run_id} → {self.b.run.run_id}: "
                f"{float(self.b.wall_ms) - float(self.a.wall_ms):+.0f} ms>")


def compare(a, b, noise_groups: Noise | Iterable | None = None, notes: Iterable[str] = (),
            noise_walls: Iterable | None = None) -> Comparison:
    """B (an Analysis) against A (an Analysis). ``noise_groups`` (or ``noise_walls``): a
    ``series.Noise``, or the wall ms of warm repeats of A's code and settings."""
    return Comparison(a, b, noise_groups if noise_groups is not None else noise_walls, notes)
