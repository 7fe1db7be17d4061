/**
 * The per-task arrays of the report data, decoded once (a port of render/js/
 * report.js's `decode` and `init`; the Python side is render/payload.py and
 * render/codec.py): replay inputs as exact float64 columns, display columns
 * as sent, the group splits, and each attempt's breakdown components.
 *
 * Every tab that needs tasks calls `taskData(ctx.data)`: the result is cached
 * on the data object, so the report decodes once.
 */
import { IReportData, NumberArray } from './types';

export interface ISpec {
  k: 'dense' | 'const' | 'sparse' | 'rate' | 'minus';
  a?: string;
  n?: number;
  c?: number | string;
  i?: string;
  v?: ISpec;
  base?: string;
  /** rate: stage code array, summed columns, per-code rate and fallback arrays */
  code?: string;
  x?: string[];
  r?: string;
  m?: string;
  /** minus: the columns subtracted from `base` */
  minus?: string[];
}

export interface IComponent {
  key: string;
  label: string;
  color: string;
  kind: string; // "measured" | "estimated"
  col: string;
  [name: string]: unknown;
}

/** What report.js called `D`. */
export interface ITaskData {
  meta: Record<string, any>;
  n: number;
  G: number;
  windows: any[] | null;
  dur: Float64Array;
  fw: Float64Array;
  disk: Float64Array;
  gc: Float64Array;
  run: Float64Array;
  nostrag: Float64Array;
  start: NumberArray;
  lane: NumberArray;
  stage: NumberArray;
  inb: NumberArray;
  shr: NumberArray;
  tid: NumberArray;
  idx: NumberArray;
  att: NumberArray;
  flags: NumberArray;
  bounds: NumberArray;
  slots: NumberArray;
  /** per group: null, or [position, set of parent stage codes] per split */
  splits: ([number, Set<number>][] | null)[];
  comps: IComponent[];
  C: number;
  /** n × C, row-major: attempt i's component k at i * C + k (negative -> 0) */
  comp: Float32Array;
  compSum: Float64Array;
  estimated: boolean[];
  [name: string]: unknown;
}

/** "inf" / "-inf" (JSON has no infinities) back to numbers. */
export function num(v: unknown): number {
  return v === 'inf' ? Infinity : v === '-inf' ? -Infinity : (v as number);
}

function toF64(a: ArrayLike<number>): Float64Array {
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) {
    out[i] = a[i];
  }
  return out;
}

/**
 * Twin of codec.decode (Python). `done`: columns already decoded; with
 * `cols` (name -> spec), a column a spec refers to is decoded (into `done`)
 * when first needed.
 */
export function decodeColumn(
  spec: ISpec,
  P: Record<string, NumberArray>,
  done: Record<string, Float64Array>,
  cols?: Record<string, ISpec>
): Float64Array {
  const col = (name: string): Float64Array => {
    if (!done[name] && cols?.[name]) {
      done[name] = decodeColumn(cols[name], P, done, cols);
    }
    return done[name];
  };
  const overrides = (out: Float64Array): Float64Array => {
    if (spec.i !== undefined) {
      const idx = P[spec.i];
      const vals = decodeColumn(spec.v!, P, done, cols);
      for (let j = 0; j < idx.length; j++) {
        out[idx[j]] = vals[j];
      }
    }
    return out;
  };
  if (spec.k === 'dense') {
    return toF64(P[spec.a!]);
  }
  if (spec.k === 'rate') {
    // min(base, r[code] * Σx) where r[code] is a number and Σx > 0, else min(base, m[code])
    const base = col(spec.base!),
      xs = spec.x!.map(col),
      code = P[spec.code!],
      r = P[spec.r!],
      m = P[spec.m!];
    const n = spec.n!,
      out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      let x = 0.0;
      for (let q = 0; q < xs.length; q++) {
        x = x + xs[q][i];
      }
      const rc = r[code[i]];
      const t = rc === rc && x > 0 ? rc * x : m[code[i]];
      out[i] = Math.min(base[i], t);
    }
    return overrides(out);
  }
  if (spec.k === 'minus') {
    const out = Float64Array.from(col(spec.base!));
    for (const name of spec.minus!) {
      const v = col(name);
      for (let i = 0; i < out.length; i++) {
        out[i] = out[i] - v[i];
      }
    }
    for (let i = 0; i < out.length; i++) {
      out[i] = out[i] > 0 ? out[i] : 0;
    }
    return overrides(out);
  }
  let out: Float64Array;
  if (spec.base !== undefined) {
    out = Float64Array.from(col(spec.base));
  } else {
    out = new Float64Array(spec.n!).fill(num(spec.c));
  }
  if (spec.k === 'sparse') {
    const idx = P[spec.i!];
    const vals = decodeColumn(spec.v!, P, done, cols);
    for (let j = 0; j < idx.length; j++) {
      out[idx[j]] = vals[j];
    }
  }
  return out;
}

const CACHE = new WeakMap<IReportData, ITaskData>();

export function taskData(data: IReportData): ITaskData {
  let D = CACHE.get(data);
  if (!D) {
    D = init(data.tasks, data.tasks_meta);
    CACHE.set(data, D);
  }
  return D;
}

export function init(
  P: Record<string, NumberArray>,
  meta: Record<string, any>
): ITaskData {
  const D: any = {
    meta,
    n: meta.n ?? 0,
    G: meta.groups ?? 0,
    windows: meta.slot_windows || null
  };
  const done: Record<string, Float64Array> = {};
  const cols: Record<string, ISpec> = meta.cols ?? {};
  for (const name of ['dur', 'fw', 'disk', 'gc', 'run', 'nostrag']) {
    done[name] = cols[name]
      ? (done[name] ?? decodeColumn(cols[name], P, done, cols))
      : new Float64Array(0);
  }
  Object.assign(D, done);
  // display columns sent as specs (bytes: exact, the no-stragglers rule reads them)
  for (const name of ['inb', 'shr']) {
    if (cols[name] && !P[name]) {
      D[name] =
        done[name] ?? (done[name] = decodeColumn(cols[name], P, done, cols));
    }
  }
  for (const name of [
    'start',
    'lane',
    'stage',
    'inb',
    'shr',
    'tid',
    'idx',
    'att',
    'flags',
    'bounds',
    'slots'
  ]) {
    D[name] = D[name] ?? P[name] ?? new Float64Array(0);
  }
  const sg = P.split_g ?? [],
    sp = P.split_pos ?? [],
    so = P.split_off ?? [],
    sc = P.split_codes ?? [];
  D.splits = new Array(D.G).fill(null);
  for (let j = 0; j < sg.length; j++) {
    const set = new Set<number>();
    for (let q = so[j]; q < so[j + 1]; q++) {
      set.add(sc[q]);
    }
    (D.splits[sg[j]] = D.splits[sg[j]] || []).push([sp[j], set]);
  }
  // The breakdown components (analysis/components.py, carried in the payload):
  // labels, colours, measured or estimated, and each attempt's ms of each.
  const comps: IComponent[] = meta.components ?? [];
  const C = comps.length,
    n = D.n;
  const comp = new Float32Array(n * C),
    compSum = new Float64Array(n);
  for (let k = 0; k < C; k++) {
    const col = comps[k].col;
    const v: Float64Array =
      done[col] ?? (done[col] = decodeColumn(cols[col], P, done, cols));
    for (let i = 0; i < n; i++) {
      comp[i * C + k] = v[i] > 0 ? v[i] : 0;
    }
  }
  for (let i = 0; i < n; i++) {
    let t = 0;
    for (let k = 0; k < C; k++) {
      t += comp[i * C + k];
    }
    compSum[i] = t;
  }
  D.comps = comps;
  D.C = C;
  D.comp = comp;
  D.compSum = compSum;
  D.estimated = comps.map(c => c.kind === 'estimated');
  return D as ITaskData;
}
