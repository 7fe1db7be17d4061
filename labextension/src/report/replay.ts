/**
 * The what-if replay in the browser: a port of jupyter_perf/analysis/whatif.py
 * (scenario_durations, predict) and analysis/replay.py (replay, scaled_slots,
 * scaled_windows, simulate_group, simulate_windows) and hostcpu.with_floor,
 * operation for operation in float64, including numpy's summation order
 * (pairwise sums), so `whatif(D, s).predicted` equals `Analysis.whatif(...)`
 * bit for bit (tests/render/test_replay_ts.py checks it on the shared
 * vectors). Ported from render/js/report.js (`JP.whatif`, `predict`,
 * `scenarioKeep`, `simPositions`), which it replaces.
 *
 * `D` is the decoded per-task data (`taskData(ctx.data)`, tasks.ts).
 *
 * A slider move needs only the makespans (issue Q: 1M attempts ≤ 50 ms):
 * each task's duration is computed as the replay dispatches it, no array of
 * durations (simulateScenario), with the same operations for every setting
 * (so the first move runs the code the measured setting's replay compiled,
 * not code deoptimised for a branch never taken before); a group is replayed
 * on a sorted run of free times placed without unpredictable branches;
 * groups a setting cannot change are not replayed again (replay's memo); and
 * starts and slots are replayed only when the simulated schedule is drawn
 * (withStarts).
 */
import { pyRound } from '../format';
import { ITaskData } from './tasks';

/** One what-if setting: speed-ups (Infinity removes the time), slots factor, toggles. */
export interface IScenario {
  disk: number;
  network: number;
  slots: number;
  /** false: no GC */
  gc: boolean;
  /** false: no stragglers */
  stragglers: boolean;
}

export interface IReplay {
  /** per group: the replayed makespan (ms) */
  makespan: Float64Array;
  /** the sum of the makespans, numpy's order */
  total: number;
  /** per task (dispatch order), group-relative replayed start; when asked */
  starts: Float64Array | null;
  /** per task, the slot it was replayed on; when asked */
  slot: Int32Array | null;
  /** the most slots any group used in the replay */
  maxK: number;
}

export interface IWhatIf {
  /** the predicted wall time (ms): what Analysis.whatif returns */
  predicted: number;
  /** the simulated total (ms) */
  sim: number;
  /** each task's scenario duration: with the simulated schedule (withStarts) */
  d: Float64Array | null;
  r: IReplay;
}

/** numpy's pairwise summation (DOUBLE_pairwise_sum), as np.sum uses it. */
export function pairwise(a: ArrayLike<number>, lo: number, n: number): number {
  if (n < 8) {
    let res = -0.0;
    for (let i = lo; i < lo + n; i++) {
      res += a[i];
    }
    return res;
  }
  if (n <= 128) {
    const r = [
      a[lo],
      a[lo + 1],
      a[lo + 2],
      a[lo + 3],
      a[lo + 4],
      a[lo + 5],
      a[lo + 6],
      a[lo + 7]
    ];
    let i = 8;
    const stop = n - (n % 8);
    for (; i < stop; i += 8) {
      for (let j = 0; j < 8; j++) {
        r[j] += a[lo + i + j];
      }
    }
    let res = r[0] + r[1] + (r[2] + r[3]) + (r[4] + r[5] + (r[6] + r[7]));
    for (; i < n; i++) {
      res += a[lo + i];
    }
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwise(a, lo, n2) + pairwise(a, lo + n2, n - n2);
}

export function npSum(a: ArrayLike<number>): number {
  return pairwise(a, 0, a.length);
}

/** np.add.reduceat over one segment: the first element, then a pairwise sum of the rest. */
export function reduceatSum(
  a: ArrayLike<number>,
  lo: number,
  n: number
): number {
  return n <= 1 ? a[lo] : a[lo] + pairwise(a, lo + 1, n - 1);
}

/** replay.scaled_slots (np.round is half to even: pyRound). */
export function scaledSlots(
  slots: number,
  factor: number,
  nTasks: number
): number {
  if (!(factor === Infinity)) {
    const k = Math.max(pyRound(slots * factor), 1);
    return Math.min(k, Math.max(nTasks, 1));
  }
  return Math.max(nTasks, 1);
}

function savedShare(f: number): number {
  return f === Infinity ? 1.0 : 1.0 - 1.0 / f;
}

/** The speed-up applied to shuffle fetch wait (disk and network both remove it). */
function fetchFactor(s: IScenario): number {
  return s.network !== 1.0 && s.disk !== 1.0
    ? Math.max(s.disk, s.network)
    : s.disk === 1.0
      ? s.network
      : s.disk;
}

/** whatif.scenario_durations of tasks [lo, hi), into out[lo, hi). */
function durationsInto(
  D: ITaskData,
  s: IScenario,
  out: Float64Array,
  lo: number,
  hi: number
): void {
  const disk = s.disk,
    network = s.network,
    strag = s.stragglers,
    noGc = !s.gc;
  const useFetch = disk !== 1.0 || network !== 1.0,
    useDisk = disk !== 1.0;
  const shF = savedShare(fetchFactor(s)),
    shD = savedShare(disk);
  const dur = D.dur,
    ns = D.nostrag,
    fw = D.fw,
    dk = D.disk,
    gc = D.gc,
    run = D.run;
  for (let i = lo; i < hi; i++) {
    const di = dur[i];
    const d = strag ? di : Math.min(di, ns[i]);
    let saved = 0.0;
    if (useFetch) {
      saved = saved + fw[i] * shF;
    }
    if (useDisk) {
      saved = saved + dk[i] * shD;
    }
    if (noGc) {
      saved = saved + gc[i];
    }
    if (saved > run[i]) {
      saved = run[i];
    }
    const keep = di > 0 ? 1.0 - saved / di : 1.0;
    out[i] = d * (keep > 0 ? keep : 0.0);
  }
}

/** whatif.scenario_durations */
export function durations(D: ITaskData, s: IScenario): Float64Array {
  const out = new Float64Array(D.n);
  durationsInto(D, s, out, 0, D.n);
  return out;
}

/** A binary min-heap of (time, slot): the earliest-free slot first, ties by slot number. */
class Heap {
  t: Float64Array;
  s: Int32Array;
  k: number;

  constructor(k: number) {
    this.t = new Float64Array(k);
    this.s = new Int32Array(k);
    for (let i = 0; i < k; i++) {
      this.s[i] = i;
    }
    this.k = k;
  }

  less(i: number, j: number): boolean {
    return (
      this.t[i] < this.t[j] ||
      (this.t[i] === this.t[j] && this.s[i] < this.s[j])
    );
  }

  swap(i: number, j: number): void {
    const t = this.t[i];
    this.t[i] = this.t[j];
    this.t[j] = t;
    const s = this.s[i];
    this.s[i] = this.s[j];
    this.s[j] = s;
  }

  down(i: number): void {
    const k = this.k;
    for (;;) {
      const l = 2 * i + 1,
        r = l + 1;
      let m = i;
      if (l < k && this.less(l, m)) {
        m = l;
      }
      if (r < k && this.less(r, m)) {
        m = r;
      }
      if (m === i) {
        return;
      }
      this.swap(i, m);
      i = m;
    }
  }

  /** Every slot free before `ready` waits for it. */
  raise(ready: number): void {
    for (let i = 0; i < this.k; i++) {
      if (this.t[i] < ready) {
        this.t[i] = ready;
      }
    }
    for (let i = (this.k >> 1) - 1; i >= 0; i--) {
      this.down(i);
    }
  }

  max(): number {
    let m = this.t[0];
    for (let i = 1; i < this.k; i++) {
      if (this.t[i] > m) {
        m = this.t[i];
      }
    }
    return m;
  }
}

/** A group's slot windows: [from], [until or null: the executor stayed]. */
type Windows = [number[], (number | null)[]];

/** replay.scaled_windows: k × the slot windows, repeated in order (or the earliest kept). */
function scaledWindows(
  w: Windows,
  factor: number,
  nTasks: number
): [Float64Array, Float64Array] {
  const m = w[0].length;
  const count =
    factor === Infinity
      ? Math.max(nTasks, m)
      : Math.max(pyRound(m * factor), 1);
  const from = new Float64Array(count),
    until = new Float64Array(count);
  for (let j = 0; j < count; j++) {
    from[j] = w[0][j % m];
    const u = w[1][j % m];
    until[j] = u === null ? Infinity : u;
  }
  return [from, until];
}

type Splits = [number, Set<number>][] | null;

/** Stage codes marked as a barrier's parents (cleared after each use). */
let PARENT_MARK = new Uint8Array(256);

/** PARENT_MARK with 1 at each parent stage's index (grown to hold them). */
function markParents(parents: Set<number>): Uint8Array {
  let top = 0;
  for (const c of parents) {
    top = Math.max(top, c + 1);
  }
  if (PARENT_MARK.length < top) {
    PARENT_MARK = new Uint8Array(2 * top);
  }
  const mark = PARENT_MARK;
  for (const c of parents) {
    mark[c] = 1;
  }
  return mark;
}

/** markParents undone (the mark is shared scratch). */
function clearParents(mark: Uint8Array, parents: Set<number>): void {
  for (const c of parents) {
    mark[c] = 0;
  }
}

/**
 * The finish of the latest parent task before a DAG barrier at `pos`
 * (`loc`: group-relative starts; durations below zero count as zero).
 */
function barrierReady(
  D: ITaskData,
  d: Float64Array,
  lo: number,
  loc: Float64Array,
  pos: number,
  parents: Set<number>
): number {
  const mark = markParents(parents),
    size = mark.length;
  let ready = -Infinity;
  const stage = D.stage;
  for (let p = 0; p < pos; p++) {
    const c = stage[lo + p];
    if (c >= 0 && c < size && mark[c] === 1) {
      const x = d[lo + p];
      const f = loc[p] + (x > 0 ? x : 0.0);
      if (f > ready) {
        ready = f;
      }
    }
  }
  clearParents(mark, parents);
  return ready;
}

/**
 * replay.simulate_windows: slots free from `from`, taking no task at or after
 * `until`; the earliest-free slot still there takes the next task (ties: the
 * lower slot).
 */
function simulateWindows(
  D: ITaskData,
  d: Float64Array,
  lo: number,
  nT: number,
  w: [Float64Array, Float64Array],
  splits: Splits,
  starts: Float64Array | null,
  slot: Int32Array | null
): number {
  const k = w[0].length,
    until = w[1];
  const h = new Heap(k);
  for (let j = 0; j < k; j++) {
    h.t[j] = w[0][j];
  }
  for (let i = (k >> 1) - 1; i >= 0; i--) {
    h.down(i);
  }
  const loc = new Float64Array(nT);
  const nSeg = splits ? splits.length + 1 : 1;
  let next = 0,
    makespan = 0.0;
  for (let sg = 0; sg < nSeg; sg++) {
    const upto = sg < nSeg - 1 ? splits![sg][0] : nT;
    for (; next < upto; next++) {
      while (h.k > 1 && h.t[0] >= until[h.s[0]]) {
        // its executor left: drop it
        h.k -= 1;
        h.t[0] = h.t[h.k];
        h.s[0] = h.s[h.k];
        h.down(0);
      }
      const i = lo + next,
        t0 = h.t[0],
        x = d[i];
      loc[next] = t0;
      if (starts && slot) {
        starts[i] = t0;
        slot[i] = h.s[0];
      }
      h.t[0] = t0 + (x > 0 ? x : 0.0);
      if (h.t[0] > makespan) {
        makespan = h.t[0];
      }
      h.down(0);
    }
    if (sg < nSeg - 1) {
      const [pos, parents] = splits![sg];
      h.raise(barrierReady(D, d, lo, loc, pos, parents));
    }
  }
  return makespan;
}

/**
 * Up to this many slots a group is replayed on a sorted run of free times
 * (simulateSorted); above it, on a binary heap (simulateHeap).
 */
const SORTED_MAX = 128;

/**
 * Scratch space reused by every replay (no allocation per task or per
 * group): the sorted run's free times and slots, the group-relative starts a
 * DAG barrier reads (or one slot's clipped durations).
 */
const SCRATCH = {
  t: new Float64Array(0),
  s: new Int32Array(0),
  loc: new Float64Array(0)
};

function scratchRun(k: number): void {
  // room for k entries sliding right over ~8k pops before one copy back
  if (SCRATCH.t.length < k + 1) {
    const cap = Math.max(9 * k, 1024);
    SCRATCH.t = new Float64Array(cap);
    SCRATCH.s = new Int32Array(cap);
  }
}

function scratchLoc(nT: number): Float64Array {
  if (SCRATCH.loc.length < nT) {
    SCRATCH.loc = new Float64Array(Math.max(nT, 2 * SCRATCH.loc.length));
  }
  return SCRATCH.loc;
}

/**
 * One group on k slots (replay.simulate_group): each task, in dispatch order,
 * on the earliest-free slot, its finish the slot's new free time; at a DAG
 * barrier every slot waits for the parents. The free times are kept sorted in
 * a window sliding along a buffer: the earliest is at its head, and a new
 * finish (the earliest free time plus one task) usually lands at or near its
 * end, so it is placed in a few predictable comparisons where a heap takes
 * two unpredictable ones per level. Each task starts at the earliest free
 * time, so starts and the makespan (the latest free time) are the heap's.
 *
 * With `starts`, each task's slot too: the window then holds (time, slot)
 * pairs in their order (ties: the lower slot), so a task gets the slot the
 * heap gives it. Without, times alone: equal times are interchangeable.
 */
function simulateSorted(
  D: ITaskData,
  d: Float64Array,
  lo: number,
  nT: number,
  k: number,
  splits: Splits,
  starts: Float64Array | null,
  slot: Int32Array | null
): number {
  if (starts && slot) {
    return simulateSortedSlots(D, d, lo, nT, k, splits, starts, slot);
  }
  scratchRun(k);
  const T = SCRATCH.t,
    cap = T.length;
  const loc = splits ? scratchLoc(nT) : null;
  T.fill(0.0, 0, k);
  let head = 0,
    next = 0;
  const nSeg = splits ? splits.length + 1 : 1;
  for (let sg = 0; sg < nSeg; sg++) {
    const upto = sg < nSeg - 1 ? splits![sg][0] : nT;
    for (; next < upto; next++) {
      const t0 = T[head],
        x = d[lo + next];
      head++;
      if (loc) {
        loc[next] = t0;
      }
      const nt = t0 + (x > 0 ? x : 0.0);
      let j = head + k - 1;
      if (j >= cap) {
        // the window reached the buffer's end: move it back to the start
        T.copyWithin(0, head, j);
        head = 0;
        j = k - 1;
      }
      let tp: number;
      while (j > head && (tp = T[j - 1]) > nt) {
        T[j] = tp;
        j--;
      }
      T[j] = nt;
    }
    if (sg < nSeg - 1) {
      // a DAG barrier: every slot free before the parents' last finish waits for it
      const [pos, parents] = splits![sg];
      const ready = barrierReady(D, d, lo, loc!, pos, parents);
      holdUntil(T, head, k, ready);
    }
  }
  return nT ? T[head + k - 1] : 0.0;
}

/**
 * A DAG barrier on a sorted run of `k` free times from `head`: every slot
 * free before `ready` (the parents' last finish) waits for it.
 */
function holdUntil(
  T: Float64Array,
  head: number,
  k: number,
  ready: number
): void {
  for (let j = head, end = head + k; j < end && T[j] < ready; j++) {
    T[j] = ready;
  }
}

/** simulateSorted with each task's start and slot. */
function simulateSortedSlots(
  D: ITaskData,
  d: Float64Array,
  lo: number,
  nT: number,
  k: number,
  splits: Splits,
  starts: Float64Array,
  slot: Int32Array
): number {
  scratchRun(k);
  const T = SCRATCH.t,
    S = SCRATCH.s,
    cap = T.length;
  for (let j = 0; j < k; j++) {
    T[j] = 0.0;
    S[j] = j;
  }
  let head = 0,
    next = 0;
  const nSeg = splits ? splits.length + 1 : 1;
  for (let sg = 0; sg < nSeg; sg++) {
    const upto = sg < nSeg - 1 ? splits![sg][0] : nT;
    for (; next < upto; next++) {
      const i = lo + next,
        t0 = T[head],
        s0 = S[head],
        x = d[i];
      head++;
      starts[i] = t0;
      slot[i] = s0;
      const nt = t0 + (x > 0 ? x : 0.0);
      let j = head + k - 1;
      if (j >= cap) {
        T.copyWithin(0, head, j);
        S.copyWithin(0, head, j);
        head = 0;
        j = k - 1;
      }
      while (j > head) {
        const tp = T[j - 1];
        if (tp > nt || (tp === nt && S[j - 1] > s0)) {
          T[j] = tp;
          S[j] = S[j - 1];
          j--;
        } else {
          break;
        }
      }
      T[j] = nt;
      S[j] = s0;
    }
    if (sg < nSeg - 1) {
      // a DAG barrier: wait for the parents (their starts are in `starts`)
      const [pos, parents] = splits![sg];
      const ready = barrierReady(D, d, lo, starts.subarray(lo), pos, parents);
      if (ready > T[head]) {
        const end = head + k;
        for (let j = head; j < end && T[j] < ready; j++) {
          T[j] = ready;
        }
        // ties at `ready`: back in slot order (insertion sort, k is small)
        for (let a = head + 1; a < end; a++) {
          const ta = T[a],
            sa = S[a];
          let b = a;
          while (
            b > head &&
            (T[b - 1] > ta || (T[b - 1] === ta && S[b - 1] > sa))
          ) {
            T[b] = T[b - 1];
            S[b] = S[b - 1];
            b--;
          }
          T[b] = ta;
          S[b] = sa;
        }
      }
    }
  }
  return nT ? T[head + k - 1] : 0.0;
}

/**
 * A scenario's savings as coefficients: each task saves fw × [0] + disk × [1]
 * + gc × [2] of its run time. A setting that leaves a time as measured has
 * coefficient 0, and its term adds exactly ±0 (the task data are finite:
 * groupFlags checks), so the sum is scenario_durations' bit for bit. Every
 * setting runs the same operations: the code the first (measured) replay
 * compiled is the code a cold slider move runs, with no deoptimisation for a
 * branch not taken before. (A typed array: an object's fields would change
 * representation from 0 to a fraction, and the compiled code with them.)
 */
const COEFS = new Float64Array(3);

function scenarioCoefs(s: IScenario): Float64Array {
  const useFetch = s.disk !== 1.0 || s.network !== 1.0;
  COEFS[0] = useFetch ? savedShare(fetchFactor(s)) : 0.0;
  COEFS[1] = s.disk !== 1.0 ? savedShare(s.disk) : 0.0;
  COEFS[2] = s.gc ? 0.0 : 1.0;
  return COEFS;
}

/**
 * One group's makespan for a scenario (no starts): simulateSorted with each
 * task's duration (durationsInto's arithmetic) computed as it is dispatched,
 * so no duration is stored; a DAG barrier reads the parents' finishes (kept
 * in scratch). `cap`: the no-stragglers cap, D.nostrag, or D.dur itself
 * with stragglers (min(d, d) = d). k ≥ 5.
 *
 * The new finish usually lands 0–3 places from the run's end (on the
 * synthetic 1M-task run: 0 for 34 %, 1 for 26 %, 2 for 17 %, 3 for 10 %),
 * a branch no predictor guesses. So the last four free times are compared
 * with it all at once, each written one place right if later (as 0/1
 * offsets, no branch), and the finish goes where they stop; only past four
 * does a loop go on.
 */
function simulateScenario(
  D: ITaskData,
  coefs: Float64Array,
  cap: Float64Array,
  lo: number,
  nT: number,
  k: number,
  splits: Splits
): number {
  scratchRun(k);
  const T = SCRATCH.t,
    size = T.length;
  const fin = splits ? scratchLoc(nT) : SCRATCH.loc;
  const dur = D.dur,
    ns = cap,
    fw = D.fw,
    dk = D.disk,
    gc = D.gc,
    run = D.run;
  const cF = coefs[0],
    cD = coefs[1],
    cG = coefs[2];
  T.fill(0.0, 0, k);
  let head = 0,
    next = 0;
  const nSeg = splits ? splits.length + 1 : 1;
  for (let sg = 0; sg < nSeg; sg++) {
    const upto = sg < nSeg - 1 ? splits![sg][0] : nT;
    for (; next < upto; next++) {
      const i = lo + next;
      const di = dur[i];
      const d = Math.min(di, ns[i]);
      let saved = 0.0 + fw[i] * cF;
      saved = saved + dk[i] * cD;
      saved = saved + gc[i] * cG;
      saved = Math.min(saved, run[i]);
      const keep = di > 0 ? 1.0 - saved / di : 1.0;
      const x = d * Math.max(keep, 0.0);
      const t0 = T[head];
      head++;
      const nt = t0 + Math.max(x, 0.0);
      if (splits) {
        fin[next] = nt;
      }
      let j = head + k - 1;
      if (j >= size) {
        T.copyWithin(0, head, j);
        head = 0;
        j = k - 1;
      }
      // the last four free times move one place right where later than nt
      const a1 = T[j - 1],
        a2 = T[j - 2],
        a3 = T[j - 3],
        a4 = T[j - 4];
      const b1 = +(a1 > nt),
        b2 = +(a2 > nt),
        b3 = +(a3 > nt),
        b4 = +(a4 > nt);
      T[j - 4 + b4] = a4;
      T[j - 3 + b3] = a3;
      T[j - 2 + b2] = a2;
      T[j - 1 + b1] = a1;
      if (b4) {
        // earlier than all four: on along the run
        j -= 4;
        let tp: number;
        while (j > head && (tp = T[j - 1]) > nt) {
          T[j] = tp;
          j--;
        }
      } else {
        j -= b1 + b2 + b3;
      }
      T[j] = nt;
    }
    if (sg < nSeg - 1) {
      const [pos, parents] = splits![sg];
      const ready = barrierFinish(D, fin, lo, pos, parents);
      holdUntil(T, head, k, ready);
    }
  }
  return nT ? T[head + k - 1] : 0.0;
}

/** barrierReady from the tasks' finishes (`fin`, group-relative positions). */
function barrierFinish(
  D: ITaskData,
  fin: Float64Array,
  lo: number,
  pos: number,
  parents: Set<number>
): number {
  const mark = markParents(parents),
    size = mark.length;
  let ready = -Infinity;
  const stage = D.stage;
  for (let p = 0; p < pos; p++) {
    const c = stage[lo + p];
    if (c >= 0 && c < size && mark[c] === 1 && fin[p] > ready) {
      ready = fin[p];
    }
  }
  clearParents(mark, parents);
  return ready;
}

/** simulateSorted's replay on a binary heap of (time, slot), for many slots. */
function simulateHeap(
  D: ITaskData,
  d: Float64Array,
  lo: number,
  nT: number,
  k: number,
  splits: Splits,
  starts: Float64Array | null,
  slot: Int32Array | null
): number {
  const h = new Heap(k),
    ht = h.t,
    hs = h.s;
  const loc = splits ? scratchLoc(nT) : null;
  const nSeg = splits ? splits.length + 1 : 1;
  let next = 0;
  for (let sg = 0; sg < nSeg; sg++) {
    const upto = sg < nSeg - 1 ? splits![sg][0] : nT;
    for (; next < upto; next++) {
      // heapq.heapreplace(h, h[0] + d), inlined
      const i = lo + next,
        t0 = ht[0],
        s0 = hs[0],
        x = d[i];
      if (loc) {
        loc[next] = t0;
      }
      if (starts && slot) {
        starts[i] = t0;
        slot[i] = s0;
      }
      const nt = t0 + (x > 0 ? x : 0.0);
      let q = 0;
      for (;;) {
        // sift (nt, s0) down from the root
        const l = 2 * q + 1;
        if (l >= k) {
          break;
        }
        const r = l + 1;
        let c = l;
        if (r < k && (ht[r] < ht[l] || (ht[r] === ht[l] && hs[r] < hs[l]))) {
          c = r;
        }
        if (ht[c] < nt || (ht[c] === nt && hs[c] < s0)) {
          ht[q] = ht[c];
          hs[q] = hs[c];
          q = c;
        } else {
          break;
        }
      }
      ht[q] = nt;
      hs[q] = s0;
    }
    if (sg < nSeg - 1) {
      // a DAG barrier: wait for the parents
      const [pos, parents] = splits![sg];
      const ready = barrierReady(D, d, lo, loc!, pos, parents);
      if (ready > ht[0]) {
        h.raise(ready);
      }
    }
  }
  return nT ? h.max() : 0.0;
}

/** Where a replay from a scenario puts each group's durations (reused). */
let DUR_SCRATCH = new Float64Array(0);

/** What can change a group's durations (bit flags, groupFlags). */
const F_FETCH = 1,
  F_DISK = 2,
  F_GC = 4,
  F_STRAG = 8;

const GROUP_FLAGS = new WeakMap<ITaskData, Uint8Array>();

/** Task data whose dur, fw, disk and gc are finite and run a number (simulateScenario). */
const FINITE = new WeakSet<ITaskData>();

/**
 * Per group: which settings can change any of its durations — shuffle fetch
 * wait (disk and network), disk time (disk), GC (no GC), a no-stragglers
 * duration below the measured one (no stragglers). Where a group has none
 * of a setting's time, scenario_durations adds exactly 0 for it, so the
 * group's durations, and its replay, are those of the setting left as
 * measured.
 */
function groupFlags(D: ITaskData): Uint8Array {
  let f = GROUP_FLAGS.get(D);
  if (!f) {
    f = new Uint8Array(D.G);
    const fw = D.fw,
      dk = D.disk,
      gc = D.gc,
      ns = D.nostrag,
      dur = D.dur,
      run = D.run;
    let finite = true;
    for (let g = 0; g < D.G; g++) {
      let x = 0;
      for (let i = D.bounds[g]; i < D.bounds[g + 1]; i++) {
        if (fw[i] !== 0) {
          x |= F_FETCH;
        }
        if (dk[i] !== 0) {
          x |= F_DISK;
        }
        if (gc[i] !== 0) {
          x |= F_GC;
        }
        if (!(ns[i] >= dur[i])) {
          x |= F_STRAG;
        }
        if (
          !(Math.abs(fw[i] + dk[i] + gc[i] + dur[i]) < Infinity) ||
          !(run[i] === run[i])
        ) {
          // NaN or ±∞ where simulateScenario needs a number (x × 0 = 0)
          finite = false;
        }
      }
      f[g] = x;
    }
    GROUP_FLAGS.set(D, f);
    if (finite) {
      FINITE.add(D);
    }
  }
  return f;
}

/**
 * Replayed makespans per group, memoised per D and per setting as it reaches
 * the group (groupFlags): the key of the setting with what cannot change the
 * group left as measured. NaN: not replayed yet.
 */
const GROUP_MEMO = new WeakMap<ITaskData, Map<string, Float64Array>>();

function groupMemo(D: ITaskData): Map<string, Float64Array> {
  let memo = GROUP_MEMO.get(D);
  if (!memo) {
    memo = new Map();
    GROUP_MEMO.set(D, memo);
  }
  return memo;
}

function groupKey(s: IScenario, slotsFactor: number, flags: number): string {
  const io = flags & (F_FETCH | F_DISK);
  return [
    io ? s.disk : 1.0,
    flags & F_FETCH ? s.network : 1.0,
    slotsFactor,
    flags & F_GC ? s.gc : true,
    flags & F_STRAG ? s.stragglers : true
  ].join('|');
}

/** One group's replay (makespan); starts / slots when given. */
function replayGroup(
  D: ITaskData,
  d: Float64Array,
  lo: number,
  nT: number,
  k: number,
  w: [Float64Array, Float64Array] | null,
  splits: Splits,
  starts: Float64Array | null,
  slot: Int32Array | null
): number {
  if (w) {
    // executors came or went
    return simulateWindows(D, d, lo, nT, w, splits, starts, slot);
  }
  const hi = lo + nT;
  if (!splits && k >= nT) {
    // one wave
    let m = 0.0;
    for (let i = lo; i < hi; i++) {
      const x = d[i] > 0 ? d[i] : 0.0;
      if (i === lo || x > m) {
        m = x;
      }
    }
    if (starts && slot) {
      for (let i = lo; i < hi; i++) {
        starts[i] = 0.0;
        slot[i] = i - lo;
      }
    }
    return m;
  }
  if (!splits && k === 1) {
    // one slot
    const dd = scratchLoc(nT);
    for (let i = 0; i < nT; i++) {
      dd[i] = d[lo + i] > 0 ? d[lo + i] : 0.0;
    }
    if (starts && slot) {
      let c = 0.0;
      for (let i = 0; i < nT; i++) {
        starts[lo + i] = c;
        slot[lo + i] = 0;
        c += dd[i];
      }
    }
    return reduceatSum(dd, 0, nT);
  }
  return (k <= SORTED_MAX ? simulateSorted : simulateHeap)(
    D,
    d,
    lo,
    nT,
    k,
    splits,
    starts,
    slot
  );
}

/**
 * replay.replay: per group makespan; starts / slots (group-relative) when
 * asked. `src`: each task's duration (below zero counts as zero), or a
 * scenario: then each group's durations are computed just before it is
 * replayed (while they are in cache; nothing per task is kept), and only
 * the groups the scenario changes are replayed (the others' makespans are
 * remembered from an earlier replay of the same durations).
 */
export function replay(
  D: ITaskData,
  src: Float64Array | IScenario,
  slotsFactor: number,
  wantStarts: boolean
): IReplay {
  const G = D.G,
    bounds = D.bounds,
    gslots = D.slots;
  const makespan = new Float64Array(G);
  const starts = wantStarts ? new Float64Array(D.n) : null;
  const slot = wantStarts ? new Int32Array(D.n) : null;
  const scen = src instanceof Float64Array ? null : src;
  if (scen && DUR_SCRATCH.length < D.n) {
    DUR_SCRATCH = new Float64Array(D.n);
  }
  const d = scen ? DUR_SCRATCH : (src as Float64Array);
  // the memo: one array of makespans per group class (its flags) of this setting
  const flags = scen && !wantStarts ? groupFlags(D) : null;
  const memo = flags ? groupMemo(D) : null;
  const byClass: (Float64Array | undefined)[] = new Array(16);
  // a scenario's durations computed inside its replay (simulateScenario)
  const coefs = flags && FINITE.has(D) ? scenarioCoefs(scen!) : null;
  const cap = scen && scen.stragglers ? D.dur : D.nostrag;
  let maxK = 1;
  for (let g = 0; g < G; g++) {
    const lo = bounds[g],
      nT = bounds[g + 1] - lo;
    const win: Windows | null = D.windows ? D.windows[g] : null;
    const w = win ? scaledWindows(win, slotsFactor, nT) : null;
    const k = w ? w[0].length : scaledSlots(gslots[g], slotsFactor, nT);
    if (k > maxK) {
      maxK = k;
    }
    let known: Float64Array | undefined;
    if (flags && memo) {
      const c = flags[g];
      known = byClass[c];
      if (!known) {
        const key = groupKey(scen!, slotsFactor, c);
        known = memo.get(key);
        if (!known) {
          known = new Float64Array(G).fill(NaN);
          memo.set(key, known);
        }
        byClass[c] = known;
      }
      const m = known[g];
      if (m === m) {
        makespan[g] = m;
        continue;
      }
    }
    const splits = D.splits[g];
    if (coefs && !w && k >= 5 && k <= SORTED_MAX && (splits || k < nT)) {
      makespan[g] = simulateScenario(D, coefs, cap, lo, nT, k, splits);
    } else {
      if (scen) {
        durationsInto(D, scen, d, lo, lo + nT);
      }
      makespan[g] = replayGroup(D, d, lo, nT, k, w, splits, starts, slot);
    }
    if (known) {
      known[g] = makespan[g];
    }
  }
  return { makespan, total: npSum(makespan), starts, slot, maxK };
}

/** Keep the makespans of a replay of scenario `s`'s durations for replay's memo. */
function remember(
  D: ITaskData,
  s: IScenario,
  slotsFactor: number,
  makespan: Float64Array
): void {
  const flags = groupFlags(D),
    memo = groupMemo(D);
  for (let g = 0; g < D.G; g++) {
    const key = groupKey(s, slotsFactor, flags[g]);
    let known = memo.get(key);
    if (!known) {
      known = new Float64Array(D.G).fill(NaN);
      memo.set(key, known);
    }
    known[g] = makespan[g];
  }
}

/** whatif.predict: driver gaps + actual × simulated / simulated baseline. */
export function predict(D: ITaskData, sim: number): number {
  const M = D.meta;
  if (M.base_ms <= 0) {
    return M.driver_gap_ms + M.actual_ms;
  }
  return M.driver_gap_ms + (M.actual_ms * sim) / M.base_ms;
}

const FLOOR_MEMO = new WeakMap<ITaskData, Map<string, Float64Array>>();

function hasHostShare(D: ITaskData): boolean {
  const share: number[] | undefined = D.meta.cpu_share;
  return !!share && share.some(x => x > 0);
}

function floorMemo(D: ITaskData): Map<string, Float64Array> {
  let memo = FLOOR_MEMO.get(D);
  if (!memo) {
    memo = new Map();
    FLOOR_MEMO.set(D, memo);
  }
  return memo;
}

function floorKey(s: IScenario): string {
  return `${s.gc}|${s.stragglers}`;
}

/**
 * Per group: the makespan of the scenario's CPU-only durations (no disk or
 * network savings) on the measured slots — what a host CPU floor scales
 * (hostFloor here, the slots range's high end in the What-if tab). Memoised
 * per task data and toggle pair.
 */
export function cpuOnlyMakespans(D: ITaskData, s: IScenario): Float64Array {
  const memo = floorMemo(D),
    fk = floorKey(s);
  let one = memo.get(fk);
  if (!one) {
    one = replay(
      D,
      { ...s, disk: 1.0, network: 1.0, slots: 1.0 },
      1.0,
      false
    ).makespan;
    memo.set(fk, one);
  }
  return one;
}

/**
 * hostcpu.with_floor: more slots on the same host cannot beat its measured CPU
 * busy share. A faster disk or network does not shrink the CPU work: their
 * floor replays the durations without those savings (Analysis.simulate's
 * cpu_d) on the measured slots. That replay depends only on the two toggles:
 * memoised per pair; its groups are the measured setting's (replay's memo),
 * so a cold move replays once, not twice.
 */
function hostFloor(D: ITaskData, s: IScenario, r: IReplay): void {
  const share: number[] = D.meta.cpu_share;
  const io = s.disk !== 1.0 || s.network !== 1.0;
  if (!(s.slots > 1 || io) || !hasHostShare(D)) {
    return;
  }
  const one = cpuOnlyMakespans(D, s);
  for (let g = 0; g < D.G; g++) {
    const f = share[g] * one[g];
    if (f > r.makespan[g]) {
      r.makespan[g] = f;
    }
  }
  r.total = npSum(r.makespan);
}

/**
 * The prediction of one setting. Its simulated schedule (each task's start
 * and slot) with `wantStarts`, or later from the result (`withStarts`): the
 * predicted number needs only the makespans.
 */
export function whatif(
  D: ITaskData,
  s: IScenario,
  wantStarts = false
): IWhatIf {
  const d = wantStarts ? durations(D, s) : null;
  const r = replay(D, d ?? s, s.slots, wantStarts);
  if (d) {
    remember(D, s, s.slots, r.makespan);
  }
  hostFloor(D, s, r);
  return { predicted: predict(D, r.total), sim: r.total, d, r };
}

/**
 * The simulated schedule of a prediction made without it: the durations and
 * the same replay again, keeping each task's start and slot; the makespans
 * stay the prediction's (with the host floor). Stored on `w`.
 */
export function withStarts(D: ITaskData, s: IScenario, w: IWhatIf): IReplay {
  if (!w.d) {
    w.d = durations(D, s);
  }
  if (!w.r.starts) {
    const r = replay(D, w.d, s.slots, true);
    w.r = { ...r, makespan: w.r.makespan, total: w.r.total };
  }
  return w.r;
}

/**
 * What a scenario keeps of each breakdown component (whatif.scenario_durations,
 * per component): network/disk remove 1 − 1/f of fetch wait, disk of shuffle
 * write and estimated I/O wait, no GC all of GC. The simulated bars draw what
 * is left, scaled to the replayed duration.
 */
export function scenarioKeep(D: ITaskData, s: IScenario): Float64Array {
  const keep = new Float64Array(D.C).fill(1.0);
  const fetchF = fetchFactor(s);
  D.comps.forEach((c, k) => {
    if (
      c.key === 'shuffle_fetch_wait' &&
      (s.disk !== 1.0 || s.network !== 1.0)
    ) {
      keep[k] = 1.0 - savedShare(fetchF);
    }
    if (
      (c.key === 'shuffle_write' || c.key === 'io_wait_est') &&
      s.disk !== 1.0
    ) {
      keep[k] = 1.0 - savedShare(s.disk);
    }
    if (c.key === 'gc' && !s.gc) {
      keep[k] = 0.0;
    }
  });
  return keep;
}

/** Simulated positions (ms from the window start): groups keep the measured driver gaps. */
export function simPositions(
  D: ITaskData,
  r: IReplay
): { pos: Float64Array; end: number } {
  const M = D.meta,
    G = D.G,
    pos = new Float64Array(D.n);
  let t = G ? Math.max(M.group_start[0], 0) : 0;
  for (let g = 0; g < G; g++) {
    if (g > 0) {
      t += Math.max(M.group_start[g] - M.group_end[g - 1], 0);
    }
    for (let i = D.bounds[g]; i < D.bounds[g + 1]; i++) {
      pos[i] = t + (r.starts ? r.starts[i] : 0);
    }
    t += r.makespan[g];
  }
  return { pos, end: t };
}
