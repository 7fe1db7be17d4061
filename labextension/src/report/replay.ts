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
  /** each task's scenario duration */
  d: Float64Array;
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

/** whatif.scenario_durations */
export function durations(D: ITaskData, s: IScenario): Float64Array {
  const n = D.n,
    out = new Float64Array(n);
  const disk = s.disk,
    network = s.network;
  const useFetch = disk !== 1.0 || network !== 1.0;
  const shF = savedShare(fetchFactor(s)),
    shD = savedShare(disk);
  const dur = D.dur,
    ns = D.nostrag,
    fw = D.fw,
    dk = D.disk,
    gc = D.gc,
    run = D.run;
  for (let i = 0; i < n; i++) {
    const d = s.stragglers ? dur[i] : Math.min(dur[i], ns[i]);
    let saved = 0.0;
    if (useFetch) {
      saved = saved + fw[i] * shF;
    }
    if (disk !== 1.0) {
      saved = saved + dk[i] * shD;
    }
    if (!s.gc) {
      saved = saved + gc[i];
    }
    if (saved > run[i]) {
      saved = run[i];
    }
    const keep = dur[i] > 0 ? 1.0 - saved / dur[i] : 1.0;
    out[i] = d * (keep > 0 ? keep : 0.0);
  }
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

/** The finish of the latest parent task before a DAG barrier at `pos`. */
function barrierReady(
  D: ITaskData,
  dd: Float64Array,
  lo: number,
  loc: Float64Array,
  pos: number,
  parents: Set<number>
): number {
  let ready = -Infinity;
  const stage = D.stage;
  for (let p = 0; p < pos; p++) {
    if (parents.has(stage[lo + p])) {
      const f = loc[p] + dd[lo + p];
      if (f > ready) {
        ready = f;
      }
    }
  }
  return ready;
}

/**
 * replay.simulate_windows: slots free from `from`, taking no task at or after
 * `until`; the earliest-free slot still there takes the next task (ties: the
 * lower slot).
 */
function simulateWindows(
  D: ITaskData,
  dd: Float64Array,
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
        t0 = h.t[0];
      loc[next] = t0;
      if (starts && slot) {
        starts[i] = t0;
        slot[i] = h.s[0];
      }
      h.t[0] = t0 + dd[i];
      if (h.t[0] > makespan) {
        makespan = h.t[0];
      }
      h.down(0);
    }
    if (sg < nSeg - 1) {
      const [pos, parents] = splits![sg];
      h.raise(barrierReady(D, dd, lo, loc, pos, parents));
    }
  }
  return makespan;
}

/** replay.replay: per group makespan; starts / slots (group-relative) when asked. */
export function replay(
  D: ITaskData,
  d: Float64Array,
  slotsFactor: number,
  wantStarts: boolean
): IReplay {
  const G = D.G,
    bounds = D.bounds,
    gslots = D.slots;
  const makespan = new Float64Array(G);
  const starts = wantStarts ? new Float64Array(D.n) : null;
  const slot = wantStarts ? new Int32Array(D.n) : null;
  const dd = new Float64Array(d.length);
  for (let i = 0; i < d.length; i++) {
    dd[i] = d[i] > 0 ? d[i] : 0.0;
  }
  let maxK = 1;
  for (let g = 0; g < G; g++) {
    const lo = bounds[g],
      hi = bounds[g + 1],
      nT = hi - lo;
    const splits: Splits = D.splits[g];
    const win: Windows | null = D.windows ? D.windows[g] : null;
    if (win) {
      // executors came or went
      const w = scaledWindows(win, slotsFactor, nT);
      if (w[0].length > maxK) {
        maxK = w[0].length;
      }
      makespan[g] = simulateWindows(D, dd, lo, nT, w, splits, starts, slot);
      continue;
    }
    const k = scaledSlots(gslots[g], slotsFactor, nT);
    if (k > maxK) {
      maxK = k;
    }
    if (!splits && k >= nT) {
      // one wave
      let m = nT ? dd[lo] : 0.0;
      for (let i = lo + 1; i < hi; i++) {
        if (dd[i] > m) {
          m = dd[i];
        }
      }
      makespan[g] = m;
      if (starts && slot) {
        for (let i = lo; i < hi; i++) {
          starts[i] = 0.0;
          slot[i] = i - lo;
        }
      }
      continue;
    }
    if (!splits && k === 1) {
      // one slot
      makespan[g] = reduceatSum(dd, lo, nT);
      if (starts && slot) {
        let c = 0.0;
        for (let i = lo; i < hi; i++) {
          starts[i] = c;
          slot[i] = 0;
          c += dd[i];
        }
      }
      continue;
    }
    const h = new Heap(k),
      ht = h.t,
      hs = h.s;
    const loc = new Float64Array(nT); // group-relative starts (barriers need them)
    const nSeg = splits ? splits.length + 1 : 1;
    let next = 0;
    for (let sg = 0; sg < nSeg; sg++) {
      const upto = sg < nSeg - 1 ? splits![sg][0] : nT;
      for (; next < upto; next++) {
        // heapq.heapreplace(h, h[0] + d), inlined
        const i = lo + next,
          t0 = ht[0],
          s0 = hs[0];
        loc[next] = t0;
        if (starts && slot) {
          starts[i] = t0;
          slot[i] = s0;
        }
        const nt = t0 + dd[i];
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
        const ready = barrierReady(D, dd, lo, loc, pos, parents);
        if (ready > ht[0]) {
          h.raise(ready);
        }
      }
    }
    makespan[g] = nT ? h.max() : 0.0;
  }
  return { makespan, total: npSum(makespan), starts, slot, maxK };
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

/**
 * hostcpu.with_floor: more slots on the same host cannot beat its measured CPU
 * busy share. A faster disk or network does not shrink the CPU work: their
 * floor replays the durations without those savings (Analysis.simulate's
 * cpu_d). The floor's replay depends only on the two toggles: memoised per
 * pair, so a cold move replays once, not twice.
 */
function hostFloor(
  D: ITaskData,
  s: IScenario,
  d: Float64Array,
  r: IReplay
): void {
  const share: number[] | undefined = D.meta.cpu_share;
  const io = s.disk !== 1.0 || s.network !== 1.0;
  if (!(s.slots > 1 || io) || !share || !share.some(x => x > 0)) {
    return;
  }
  const fk = `${s.gc}|${s.stragglers}`;
  let memo = FLOOR_MEMO.get(D);
  if (!memo) {
    memo = new Map();
    FLOOR_MEMO.set(D, memo);
  }
  let one = memo.get(fk);
  if (!one) {
    const dc = io ? durations(D, { ...s, disk: 1.0, network: 1.0 }) : d;
    one = replay(D, dc, 1.0, false).makespan;
    memo.set(fk, one);
  }
  for (let g = 0; g < D.G; g++) {
    const f = share[g] * one[g];
    if (f > r.makespan[g]) {
      r.makespan[g] = f;
    }
  }
  r.total = npSum(r.makespan);
}

/** The prediction of one setting (and, with `wantStarts`, its simulated schedule). */
export function whatif(
  D: ITaskData,
  s: IScenario,
  wantStarts = false
): IWhatIf {
  const d = durations(D, s);
  const r = replay(D, d, s.slots, wantStarts);
  hostFloor(D, s, d, r);
  return { predicted: predict(D, r.total), sim: r.total, d, r };
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
