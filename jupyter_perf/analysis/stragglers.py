"""Stragglers and their causes (NSDI'15 §5), and data skew.

Definitions (per stage attempt, over its successful task attempts):

* **inverse progress rate** = duration / bytes read (input + shuffle read). In a stage that
  reads nothing — and for a task that read nothing in a stage that does — duration alone,
  compared with the stage's median duration.
* **slow task**: longer than the stage's median duration by at least ``min_excess_ms`` (ours:
  a task faster than a typical task of its stage cannot delay it, and millisecond jitter on
  tiny tasks is not worth a row), and either its rate ratio (inverse rate / stage median)
  > ``threshold`` (1.5: NSDI'15's straggler) or its duration ratio ≥ ``threshold``.
* a task is **data skew** when its *bytes* (input + shuffle read) are at least ``threshold`` ×
  its stage's median task's and it ran at least ``min_excess_ms`` longer than the stage's
  median task: it had more data (issue W3: the data decide, not the clock — a task with
  1.5× the median's bytes is data skew however fast or slow it processed them, and a task
  with the median's bytes never is). Every other slow task is a **straggler**. The label
  follows the bytes, which repeated runs of a query reproduce; only whether a task counts at
  all follows its duration. A stage needs at least ``MIN_SKEW_PEERS`` successful tasks that
  read data for skew to mean anything: the "median" of two tasks is their mean, and two
  uneven partitions (AQE coalescing, Parquet row groups falling into splits) are no hot key;
  nor is a task that read less than ``MIN_SKEW_EXTRA_BYTES`` (1 KiB) more than the median.
* **cause X** explains a straggler if it would not be one had X taken zero time for every task
  of the stage. Causes (non-exclusive): scheduler delay, deserialization, input read (est.),
  shuffle read, shuffle write, GC; **output skew** (a straggler by input rate but not by output
  rate, output = output + shuffle write bytes); **first task on its executor** (JIT warm-up):
  one of the executor's first tasks after it was added — launched before any other task on that
  executor finished, on an executor added inside the run's window (or in a whole application,
  whose every task is in the run) — and not a straggler among its stage's such first tasks.
  An executor that was there before the measured cell is taken as warm: a session minutes
  old has long compiled its hot code. **host busy**: the time the task waited for a core
  (estimated from the host's sampled CPU: this application's own threads or other processes
  held every core) explains it. A straggler on uniform data that no measured cause explains
  is put down to **host noise** (never to skew).
* **no-stragglers what-if** (NSDI'15 §5): every successful task slower than its stage's median
  progress rate gets the median rate (duration = median inverse rate × its bytes, or the
  median duration where rate is by duration). The *flagged* variant does this only for the
  stragglers flagged here: the saving a verdict may attribute to them.
"""
from __future__ import annotations

from itertools import compress

import numpy as np
import pandas as pd

from ..model import WHOLE_APP_KINDS, Run
from .components import BY_KEY
from .timeline import Timeline, is_success

THRESHOLD = 1.5
MIN_SKEW_PEERS = 3
# a task is data skew only when it read at least this many bytes more than its stage's median
# task: a few hundred bytes more (TPC-H Q1's tiny shuffles read 414-646 B a task) is a handful
# of rows, no hot key, however long a busy host makes the task that read them
MIN_SKEW_EXTRA_BYTES = 1024
SKEW_MATTERS = 0.01    # share of the run's task time a stage's skewed tasks ran beyond its median
MIN_EXCESS_MS = 20.0

# The breakdown component whose time each time cause takes away: the cause is shown by that
# component's label (analysis/components.py), the words of every other view.
CAUSE_COMPONENTS: dict[str, str] = {
    "scheduler_delay": "scheduler_delay",
    "deserialization": "deserialize",
    "input_read_est": "io_wait_est",      # of the tasks that read input
    "shuffle_read": "shuffle_fetch_wait",
    "shuffle_write": "shuffle_write",
    "gc": "gc",
}
# cause (the key of ``causes`` and ``by_cause``) -> the words shown for it
CAUSES: dict[str, str] = {
    **{cause: BY_KEY[key].label for cause, key in CAUSE_COMPONENTS.items()},
    "output_skew": "output skew",
    "first_task_jit": "first task on executor (JIT)",
    "host_busy": "host busy (waited for a core)",
    "host_noise": "host noise (no measured cause)",
}
# the components a "host busy" straggler waited in (analysis/hostcpu.py, estimated)
HOST_BUSY_COMPONENTS = ("core_wait_est", "contention_est")

COLUMNS = ["stage_id", "stage_attempt", "task_id", "index", "attempt", "executor_id", "host",
           "kind", "duration_ms", "stage_median_ms", "rate_ratio", "duration_ratio",
           "bytes_read", "causes", "data_skew"]


class _Groups:
    """Task rows grouped by stage code, sorted once; per-group medians of masked values."""

    def __init__(self, codes: np.ndarray, n: int):
        self.codes, self.n = codes, n
        self.perm = np.argsort(codes, kind="stable")
        counts = np.bincount(codes, minlength=n)
        self.bounds = np.concatenate([[0], np.cumsum(counts)])
        self.present = np.flatnonzero(counts)

    def median(self, values: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Per code: median of ``values[mask]``; NaN where a code has none."""
        out = np.full(self.n, np.nan)
        if not mask.any():
            return out
        if len(self.present) > 2000:       # many small stages: one pandas groupby
            med = pd.Series(values[mask]).groupby(self.codes[mask]).median()
            out[med.index.to_numpy()] = med.to_numpy()
            return out
        v, m, b = values[self.perm], mask[self.perm], self.bounds
        for c in self.present:
            x = v[b[c]:b[c + 1]][m[b[c]:b[c + 1]]]
            if len(x):
                out[c] = np.median(x)
        return out


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a / b, where b == 0: 1 if a == 0 too, else a huge (finite, JSON-able) ratio."""
    a = np.asarray(a, dtype="float64")
    out = np.where(a > 0, 1e12, 1.0)
    np.divide(a, b, out=out, where=b > 0)
    return out


def progress(d: np.ndarray, nbytes: np.ndarray, groups: _Groups,
             ok: np.ndarray) -> dict[str, np.ndarray]:
    """Per task: rate ratio vs its stage median, median duration, median inverse rate."""
    codes = groups.codes
    byte_stage = np.bincount(codes[ok & (nbytes > 0)], minlength=groups.n) > 0
    by_rate = byte_stage[codes] & (nbytes > 0)
    rho = _div(d, nbytes.astype("float64"))
    med_rho = groups.median(rho, ok & by_rate)[codes]
    med_d = groups.median(d, ok)[codes]
    med_rho = np.nan_to_num(med_rho, nan=0.0)
    med_d = np.nan_to_num(med_d, nan=0.0)
    ratio = np.where(by_rate, _div(rho, med_rho), _div(d, med_d))
    return {"ratio": ratio, "med_d": med_d, "med_rho": med_rho, "by_rate": by_rate}


def bytes_ratio(nbytes, groups: _Groups, ok, by_rate) -> np.ndarray:
    """Per task: its bytes over its stage's median bytes (0 where rate is by duration, where
    fewer than ``MIN_SKEW_PEERS`` successful tasks of the stage read data, or where the task
    read less than ``MIN_SKEW_EXTRA_BYTES`` more than the median)."""
    if not by_rate.any():
        return np.zeros(len(nbytes))
    peers = np.bincount(groups.codes[ok & by_rate], minlength=groups.n)[groups.codes]
    med_b = np.nan_to_num(groups.median(nbytes, ok & by_rate)[groups.codes], nan=0.0)
    counts = by_rate & (peers >= MIN_SKEW_PEERS) & (nbytes - med_b >= MIN_SKEW_EXTRA_BYTES)
    return np.where(counts, _div(nbytes, med_b), 0.0)


def classify(d, p, ok, b_ratio, threshold=THRESHOLD,
             min_excess_ms=MIN_EXCESS_MS) -> tuple[np.ndarray, np.ndarray]:
    """(straggler, data skew) masks, from durations, the stage medians ``p`` and the bytes
    ratios ``b_ratio``."""
    excess = ok & (d > p["med_d"]) & (d - p["med_d"] >= min_excess_ms)
    dur_ratio = _div(d, p["med_d"])
    slow = excess & ((p["ratio"] > threshold) | (dur_ratio >= threshold))
    skew = excess & p["by_rate"] & (b_ratio >= threshold)
    return slow & ~skew, skew


def is_straggler(d, nbytes, groups, ok, threshold=THRESHOLD, min_excess_ms=MIN_EXCESS_MS,
                 b_ratio: np.ndarray | None = None) -> np.ndarray:
    p = progress(d, nbytes, groups, ok)
    if b_ratio is None:
        b_ratio = bytes_ratio(nbytes, groups, ok, p["by_rate"])
    return classify(d, p, ok, b_ratio, threshold, min_excess_ms)[0]


def fresh_executors(run: Run, lo: float) -> set[str]:
    """Executors whose first tasks are in the run: added at or after ``lo`` (the window's
    start), or every executor of a whole application."""
    ex = run.executors
    ids = ex["executor_id"].astype(str)
    if run.kind in WHOLE_APP_KINDS:
        return set(ids) | set(run.tasks["executor_id"].astype(str))
    added = pd.to_numeric(ex["add_ms"], errors="coerce")
    return set(ids[added >= lo])


def _first_on_executor(codes, executor, launch, finish, ok) -> np.ndarray:
    """Launched before any *other* successful task with its code finished on its executor."""
    ex_code = pd.factorize(executor)[0].astype("int64")
    key = codes.astype("int64") * (int(ex_code.max(initial=0)) + 1) + ex_code
    fin = np.where(ok, finish, np.inf)
    order = np.lexsort((fin, key))
    k_sorted, f_sorted = key[order], fin[order]
    head = np.ones(len(order), dtype=bool)
    head[1:] = k_sorted[1:] != k_sorted[:-1]
    head_idx = np.flatnonzero(head)
    grp = np.cumsum(head) - 1
    min1 = f_sorted[head_idx][grp]
    second = np.minimum(head_idx + 1, len(order) - 1)
    has_second = np.append(head_idx[1:], len(order)) - head_idx > 1
    min2 = np.where(has_second, f_sorted[second], np.inf)[grp]
    other = np.where(head, min2, min1)
    out = np.empty(len(order), dtype=bool)
    out[order] = launch[order] < other
    return out


def analyze_stragglers(run: Run, tl: Timeline, per_task: pd.DataFrame,
                       threshold: float = THRESHOLD,
                       min_excess_ms: float = MIN_EXCESS_MS
                       ) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray]:
    """(stragglers DataFrame, no-straggler durations per task row, the same for the flagged
    stragglers only, the same with the data of each data-skewed stage spread evenly: every
    successful task of the stage at the stage's mean duration)."""
    t = run.tasks
    n = len(t)
    d = tl.duration
    if n == 0:
        return pd.DataFrame(columns=COLUMNS), d.copy(), d.copy(), d.copy()
    ok = is_success(t["status"])
    codes = tl.stage_code
    S = len(tl.stage_keys)
    nbytes = (t["input_bytes"].to_numpy() + t["shuffle_read_bytes"].to_numpy()).astype("float64")
    groups = _Groups(codes, S)
    p = progress(d, nbytes, groups, ok)
    strag, skew = classify(d, p, ok, bytes_ratio(nbytes, groups, ok, p["by_rate"]),
                           threshold, min_excess_ms)
    dur_ratio = _div(d, p["med_d"])

    # No-stragglers durations: slower than the median rate -> the median rate.
    target = np.where(p["by_rate"], p["med_rho"] * nbytes, p["med_d"])
    no_strag = np.where(ok, np.minimum(d, target), d)
    flagged = np.where(strag, no_strag, d)
    even = d.copy()
    if skew.any():
        skewed = (np.bincount(codes[skew], minlength=S) > 0)[codes] & ok
        total = np.bincount(codes[skewed], weights=d[skewed], minlength=S)
        count = np.bincount(codes[skewed], minlength=S)
        mean = np.divide(total, count, out=np.zeros(S), where=count > 0)
        even = np.where(skewed, mean[codes], d)

    rows = np.flatnonzero(strag | skew)
    if len(rows) == 0:
        return pd.DataFrame(columns=COLUMNS), no_strag, flagged, even

    # Causes: re-test only the stages that have stragglers.
    causes = {c: np.zeros(n, dtype=bool) for c in CAUSES}
    if strag.any():
        in_stage = np.bincount(codes[strag], minlength=S) > 0
        sub = np.flatnonzero(in_stage[codes])
        sc, sd, sok, sb = codes[sub], d[sub], ok[sub], nbytes[sub]
        sg = _Groups(sc, S)
        s_strag = strag[sub]
        input_read = np.where(t["input_bytes"].to_numpy()[sub] > 0,
                              per_task["io_wait_est"].to_numpy()[sub], 0.0)
        times = {
            "scheduler_delay": t["scheduler_delay_ms"].to_numpy()[sub],
            "deserialization": t["deserialize_ms"].to_numpy()[sub],
            "input_read_est": input_read,
            "shuffle_read": t["fetch_wait_ms"].to_numpy()[sub],
            "shuffle_write": t["shuffle_write_time_ms"].to_numpy()[sub],
            "gc": t["gc_ms"].to_numpy()[sub],
            "host_busy": sum(per_task[c].to_numpy()[sub] for c in HOST_BUSY_COMPONENTS
                             if c in per_task.columns) + np.zeros(len(sub)),
        }
        s_ratio = None          # bytes ratios do not change when a time is taken away
        for name, x in times.items():
            if not (x[s_strag] > 0).any():
                continue
            dx = np.maximum(sd - np.minimum(x, sd), 0.0)
            if s_ratio is None:
                s_ratio = bytes_ratio(sb, sg, sok, progress(dx, sb, sg, sok)["by_rate"])
            still = is_straggler(dx, sb, sg, sok, threshold, min_excess_ms, s_ratio)
            causes[name][sub] = s_strag & ~still
        out_bytes = (t["output_bytes"].to_numpy() + t["shuffle_write_bytes"].to_numpy())[sub]
        out_bytes = out_bytes.astype("float64")
        if (out_bytes > 0).any():
            by_out = is_straggler(sd, out_bytes, sg, sok, threshold, min_excess_ms)
            has_out = np.bincount(sc[out_bytes > 0], minlength=S) > 0
            causes["output_skew"][sub] = s_strag & ~by_out & has_out[sc]
        ex_code, ex_names = pd.factorize(t["executor_id"].astype(str).to_numpy())
        new_ex = set(fresh_executors(run, float(tl.window[0])))
        fresh = np.array([e in new_ex for e in ex_names], dtype=bool)[ex_code]
        if (s_strag & fresh[sub]).any():
            first_ever = _first_on_executor(np.zeros(n, dtype="int64"), ex_code, tl.launch,
                                            tl.launch + d, ok) & fresh
            first = first_ever[sub]
            fmask = sok & first
            among_first = is_straggler(sd, sb, sg, fmask, threshold, min_excess_ms)
            causes["first_task_jit"][sub] = s_strag & first & ~among_first
        explained = np.zeros(n, dtype=bool)
        for c in CAUSES:
            explained |= causes[c]
        causes["host_noise"] = strag & ~explained

    # per row, its causes in CAUSES' order (one row of a bool matrix each, not a lookup per
    # cause and row: 0.14 s for the 250k-task benchmark log's rows before)
    flags = np.stack([causes[c][rows] for c in CAUSES], axis=1).tolist()
    cause_lists = [list(compress(CAUSES, f)) for f in flags]
    df = pd.DataFrame({
        "stage_id": t["stage_id"].to_numpy()[rows],
        "stage_attempt": t["stage_attempt"].to_numpy()[rows],
        "task_id": t["task_id"].to_numpy()[rows],
        "index": t["index"].to_numpy()[rows],
        "attempt": t["attempt"].to_numpy()[rows],
        "executor_id": t["executor_id"].to_numpy()[rows],
        "host": t["host"].to_numpy()[rows],
        "kind": np.where(strag[rows], "straggler", "data_skew"),
        "duration_ms": d[rows],
        "stage_median_ms": p["med_d"][rows],
        "rate_ratio": p["ratio"][rows],
        "duration_ratio": dur_ratio[rows],
        "bytes_read": nbytes[rows].astype("int64"),
        "causes": cause_lists,
        "data_skew": skew[rows],
    })
    df["_excess"] = df["duration_ms"] - df["stage_median_ms"]
    df = df.sort_values("_excess", ascending=False, kind="stable").drop(columns="_excess")
    return df.reset_index(drop=True), no_strag, flagged, even


def skewed_stages(run: Run, df: pd.DataFrame, min_share: float = SKEW_MATTERS) -> dict[int, dict]:
    """Per stage id whose data-skewed tasks cost something: ``{"max_bytes", "median_bytes",
    "ratio", "tasks", "excess_ms"}`` (bytes read: input + shuffle read, over the stage's
    successful tasks that read any; ``excess_ms``: how long its skewed tasks ran beyond the
    stage's median task). A stage whose skewed tasks ran less than ``min_share`` of the run's
    task time beyond the median keeps its rows in the stragglers table but is not flagged,
    named in the verdict or advised on: a few hundred bytes more in a tiny final stage, or
    skew a busy host's jitter decides, is not worth a user's change."""
    if df is None or not len(df) or not (df["kind"] == "data_skew").any():
        return {}
    t = run.tasks
    ok = is_success(t["status"])
    total = float(pd.to_numeric(t.loc[ok, "duration_ms"], errors="coerce").fillna(0).sum())
    out = {}
    for stage_id, rows in df[df["kind"] == "data_skew"].groupby("stage_id"):
        excess = float((rows["duration_ms"] - rows["stage_median_ms"]).clip(lower=0).sum())
        if total > 0 and excess < min_share * total:
            continue
        sel = (t["stage_id"] == stage_id) & is_success(t["status"])
        b = (t.loc[sel, "input_bytes"] + t.loc[sel, "shuffle_read_bytes"]).astype("float64")
        b = b[b > 0]
        med = float(b.median()) if len(b) else 0.0
        hot = float(rows["bytes_read"].max())
        out[int(stage_id)] = {"max_bytes": hot, "median_bytes": med,
                              "ratio": hot / med if med > 0 else float("inf"),
                              "tasks": int(len(rows)), "excess_ms": excess}
    return out


def straggler_summary(df: pd.DataFrame, limit: int = 50, threshold: float = THRESHOLD) -> dict:
    strag = df[df["kind"] == "straggler"] if len(df) else df
    by_cause = {c: 0 for c in CAUSES}
    for cs in strag["causes"] if len(strag) else []:
        for c in cs:
            by_cause[c] += 1
    rows = []
    for rec in df.head(limit).to_dict("records"):
        rec["causes"] = list(rec["causes"])
        rows.append(rec)
    return {
        "count": int(len(strag)),
        "data_skew_count": int((df["kind"] == "data_skew").sum()) if len(df) else 0,
        "max_skew_ratio": (float(df.loc[df["kind"] == "data_skew", "duration_ratio"].max())
                           if len(df) and (df["kind"] == "data_skew").any() else None),
        "explained": int(sum(1 for cs in strag["causes"] if cs)) if len(strag) else 0,
        "by_cause": by_cause,
        "threshold": threshold,
        "tasks": rows,
        "truncated": bool(len(df) > limit),
    }
