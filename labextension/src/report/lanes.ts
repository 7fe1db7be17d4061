/**
 * The lane figure: one lane per executor slot (or simulated slot), one bar per
 * task attempt when few are in view, per-lane aggregates per time bin
 * otherwise (a port of render/js/report.js `JP.lod` and of main.js `draw()`).
 * Re-filled whenever the visible x range changes, with a status line
 * "N of M task attempts in view, drawn as …".
 *
 * Used by the Timeline tab (measured schedule) and the What-if tab (the
 * simulated schedule):
 *
 *   const lf = laneFigure(ctx, { name: 'jp-sim', lanes: k, spanMs });
 *   await lf.show(el);                        // status line + figure into el
 *   lf.fill(starts, durations, lanes, { nLanes: k, keep });
 *   // a new scenario: other lanes ("slot k" unless labels given), its span
 *   lf.setLanes(k2);
 *   lf.fill(pos, d, slot, { nLanes: k2, keep, range: [x0Ms, x1Ms] });
 *
 * Bars are coloured per breakdown component (`taskData(ctx.data).comps`: the
 * labels, colours and kinds come from the data); estimated components are
 * lighter. Test hooks: the status element (`.jp-perf-lanes-status`) carries
 * `data-mode` ("detail" | "aggregate"), `data-visible`, `data-total`,
 * `data-bars` and `data-range` ("x0,x1": the ms range drawn); the BokehJS
 * sources are named `<name>-box` (one row per attempt in detail mode, `row` =
 * its position in the arrays), `<name>-seg` (`row` too), `<name>-agg`
 * (`count` per aggregate bar) and `<name>-highlight`.
 */
import { formatCount, formatDuration, formatBytes, pyFixed } from '../format';
import { showModel } from './bokeh';
import { h } from './dom';
import { addStyles } from './style';
import { ITaskData, taskData } from './tasks';
import { ITabContext } from './types';

/** At most this many attempts in view are drawn one by one. */
export const DETAIL_LIMIT = 2000;
/** Time bins per lane in aggregate mode (fewer when there are many lanes). */
export const BINS = 160;

export type Numbers = ArrayLike<number>;

export interface ILaneFigureOptions {
  /** Model name prefix, e.g. "jp-timeline" (sources: `${name}-box`, …). */
  name: string;
  /** Number of lanes (y = 0 … lanes − 1, lane 0 on top). */
  lanes: number;
  /** Per lane, its axis label (default "slot k"). Always drawn as plain text. */
  labels?: string[];
  /** The x span to show first, in ms from the window start. */
  spanMs: number;
  /** Rows reserved above lane 0 (y = −rows … 0), e.g. the stage track. */
  stageRows?: number;
  /** Label of the stage rows' tick (default "stages"). */
  stageLabel?: string;
  height?: number;
  limit?: number;
  bins?: number;
  xLabel?: string;
}

export interface IFillOptions {
  /** Lanes of this fill (default: the figure's). */
  nLanes?: number;
  /** Per component, the share a what-if scenario keeps (null: as measured). */
  keep?: Numbers | null;
  /** Per stage code, 1 for the stages in focus; other attempts are faded. */
  focus?: Numbers | null;
  /** Show [x0, x1] (ms) with these bars (drawn once). */
  range?: [number, number];
}

export interface ILodResult {
  mode: 'detail' | 'aggregate';
  /** Attempts in view. */
  visible: number;
  /** Bars drawn (detail: one per attempt; aggregate: one per lane and bin). */
  bars: number;
  seg: Record<string, any[]> | null;
  box: Record<string, any[]> | null;
  agg: Record<string, any> | null;
}

export interface ILaneFigure {
  /** The BokehJS figure (add glyphs and tools to it before `show`). */
  readonly fig: any;
  /** The status line element. */
  readonly status: HTMLElement;
  /** Append the status line and the figure to `el`, and draw. */
  show(el: HTMLElement): Promise<void>;
  /** Draw these bars (ms from the window start; lane per attempt), now and on every range change. */
  fill(
    starts: Numbers,
    durations: Numbers,
    lanes: Numbers,
    options?: IFillOptions
  ): ILodResult;
  /** Draw the current fill again (e.g. after changing the focus). */
  redraw(): ILodResult | null;
  setFocus(focus: Numbers | null): void;
  /** Show [x0, x1] (ms); the bars follow. */
  setRange(x0Ms: number, x1Ms: number): void;
  /** The lanes (and their labels) of the y axis. */
  setLanes(n: number, labels?: string[]): void;
  /** Outline attempt `pos` of the current fill (null: none). */
  highlight(pos: number | null): void;
  /** The last drawing's result. */
  last(): ILodResult | null;
}

const CSS = `
.jp-perf .jp-perf-lanes-status { margin: 2px 0; }
.jp-perf .jp-perf-lanes { width: 100%; }
`;

const BAR_TOOLTIPS = [
  ['task', '@task'],
  ['stage', '@stage'],
  ['executor', '@exec'],
  ['time', '@time'],
  ['breakdown', '@parts'],
  ['data', '@read'],
  ['notes', '@notes']
];
const AGG_TOOLTIPS = [
  ['one bar for', '@count_text task attempts (zoom in to see each)'],
  ['span', '@span'],
  ['task time', '@busy_text'],
  ['mostly', '@mostly (@share_text)'],
  ['stages', '@stages'],
  ['failed/killed', '@failed']
];

const SEG_KEYS = ['left', 'right', 'bottom', 'top', 'color', 'alpha', 'row'];
const BOX_KEYS = [
  'left',
  'right',
  'bottom',
  'top',
  'line',
  'dash',
  'row',
  'task',
  'stage',
  'exec',
  'time',
  'parts',
  'read',
  'notes'
];
const AGG_KEYS = [
  'left',
  'right',
  'bottom',
  'top',
  'color',
  'alpha',
  'count',
  'count_text',
  'span',
  'busy',
  'busy_text',
  'mostly',
  'share',
  'share_text',
  'stages',
  'failed'
];
const HL_KEYS = ['left', 'right', 'bottom', 'top'];

function empty(keys: string[]): Record<string, any[]> {
  const out: Record<string, any[]> = {};
  for (const k of keys) {
    out[k] = [];
  }
  return out;
}

const en = (n: number): string => formatCount(n);

/** Each attempt is drawn as its components (the scenario's remainder, `keep`), scaled to span `d`. */
export function barScale(
  D: ITaskData,
  i: number,
  d: number,
  keep: Numbers | null
): number {
  const C = D.C,
    o = i * C;
  let tot = 0;
  if (keep) {
    for (let k = 0; k < C; k++) {
      tot += D.comp[o + k] * keep[k];
    }
  } else {
    tot = D.compSum[i];
  }
  return tot > 0 ? d / tot : 0;
}

/** The stage of array position `i`: "5", or "5 (attempt 1)" for a retried stage. */
export function stageText(D: ITaskData, i: number): string {
  const M = D.meta,
    c = D.stage[i];
  return M.stage_attempts?.[c] > 0
    ? `${M.stage_ids[c]} (attempt ${M.stage_attempts[c]})`
    : `${M.stage_ids?.[c]}`;
}

/** The notes of attempt `i` from its flags. */
export function flagNotes(D: ITaskData, i: number): string[] {
  const F = D.meta.flags || {},
    f = D.flags[i];
  const notes: string[] = [];
  if (f & F.failed) {
    notes.push('FAILED');
  }
  if (f & F.killed) {
    notes.push('KILLED');
  }
  if (f & F.speculative) {
    notes.push('speculative');
  }
  if (f & F.straggler) {
    notes.push('straggler');
  }
  if (f & F.skew) {
    notes.push('data skew');
  }
  if (f & F.spill) {
    notes.push('spilled');
  }
  return notes;
}

/** The hover text of attempt `i` (report.js `taskText`). */
export function taskText(
  D: ITaskData,
  i: number,
  startMs: number,
  durMs: number,
  keep: Numbers | null,
  scale: number
): Record<string, string> {
  const M = D.meta,
    lane = D.lane[i];
  const parts: string[] = [];
  for (let k = 0; k < D.C; k++) {
    const v = D.comp[i * D.C + k] * (keep ? keep[k] : 1) * scale;
    if (v > 0) {
      parts.push(`${D.comps[k].short} ${formatDuration(v)}`);
    }
  }
  return {
    task: `${D.tid[i]} (index ${D.idx[i]}, attempt ${D.att[i]})`,
    stage: stageText(D, i),
    exec: `${M.lane_exec?.[lane]} on ${M.lane_host?.[lane]}`,
    time: `${formatDuration(durMs)} from ${pyFixed(startMs / 1000, 3)} s`,
    parts: parts.join(' · ') || '–',
    read: `input ${formatBytes(D.inb[i])} · shuffle read ${formatBytes(D.shr[i])}`,
    notes: flagNotes(D, i).join(', ') || '–'
  };
}

/**
 * The bars for [x0, x1] (ms): every attempt in view when at most `limit`,
 * else one bar per lane and time bin (report.js `lod`). x values in seconds.
 */
export function lod(
  D: ITaskData,
  xs: Numbers,
  ds: Numbers,
  lanes: Numbers,
  nLanes: number,
  x0: number,
  x1: number,
  opts: {
    limit?: number;
    bins?: number;
    keep?: Numbers | null;
    focus?: Numbers | null;
  } = {}
): ILodResult {
  const n = Math.min(xs.length, ds.length, lanes.length),
    limit = opts.limit || DETAIL_LIMIT,
    nb = opts.bins || BINS;
  const C = D.C,
    comps = D.comps,
    keep = opts.keep || null,
    est = D.estimated;
  const focus = opts.focus || null;
  const fade = (i: number): number =>
    focus && !focus[D.stage[i]] ? 0.15 : 1.0;
  let vis = 0;
  for (let i = 0; i < n; i++) {
    const s = xs[i];
    if (s <= x1 && s + ds[i] >= x0) {
      vis++;
    }
  }
  const F = D.meta.flags || {};
  if (vis <= limit) {
    const seg = empty(SEG_KEYS);
    const box = empty(BOX_KEYS);
    for (let i = 0; i < n; i++) {
      const s = xs[i],
        d = ds[i];
      if (!(s <= x1 && s + d >= x0)) {
        continue;
      }
      const y = lanes[i];
      const scale = barScale(D, i, d, keep);
      let x = s;
      for (let k = 0; k < C; k++) {
        const w = D.comp[i * C + k] * (keep ? keep[k] : 1) * scale;
        if (w <= 0) {
          continue;
        }
        seg.left.push(x / 1000);
        seg.right.push((x + w) / 1000);
        seg.bottom.push(y + 0.12);
        seg.top.push(y + 0.88);
        seg.color.push(comps[k].color);
        // estimated components are lighter
        seg.alpha.push((est[k] ? 0.45 : 1.0) * fade(i));
        seg.row.push(i);
        x += w;
      }
      const f = D.flags[i];
      box.left.push(s / 1000);
      box.right.push((s + d) / 1000);
      box.bottom.push(y + 0.08);
      box.top.push(y + 0.92);
      box.line.push(
        f & (F.failed | F.killed)
          ? '#d62728'
          : f & F.speculative
            ? '#9467bd'
            : f & F.straggler
              ? '#111111'
              : 'rgba(0,0,0,0.25)'
      );
      box.dash.push(f & F.speculative ? 'dashed' : 'solid');
      box.row.push(i);
      const t = taskText(D, i, s, d, keep, scale);
      for (const key of [
        'task',
        'stage',
        'exec',
        'time',
        'parts',
        'read',
        'notes'
      ]) {
        box[key].push(t[key]);
      }
    }
    return {
      mode: 'detail',
      visible: vis,
      bars: box.left.length,
      seg,
      box,
      agg: null
    };
  }
  // Bins per lane: enough to follow the schedule, few enough to draw fast (≤ ~6000 bars).
  const nbl = Math.max(
    12,
    Math.min(nb, Math.floor(6000 / Math.max(nLanes, 1)))
  );
  const w = (x1 - x0) / nbl;
  const L = Math.max(nLanes, 1),
    cells = L * nbl;
  const count = new Int32Array(cells),
    fail = new Int32Array(cells),
    inFocus = new Int32Array(cells);
  const minS = new Float64Array(cells).fill(Infinity),
    maxE = new Float64Array(cells).fill(-Infinity);
  const sums = new Float64Array(cells * C);
  const stMin = new Int32Array(cells).fill(2147483647),
    stMax = new Int32Array(cells).fill(-1);
  const bad = (F.failed || 0) | (F.killed || 0),
    sids: number[] = D.meta.stage_ids || [];
  const comp = D.comp,
    flags = D.flags,
    stage = D.stage;
  for (let i = 0; i < n; i++) {
    const s = xs[i],
      d = ds[i];
    if (!(s <= x1 && s + d >= x0)) {
      continue;
    }
    let b = Math.floor((Math.max(s, x0) - x0) / w);
    if (b >= nbl) {
      b = nbl - 1;
    }
    let ln = lanes[i];
    if (ln >= L) {
      ln = L - 1;
    }
    const key = ln * nbl + b;
    count[key]++;
    if (s < minS[key]) {
      minS[key] = s;
    }
    if (s + d > maxE[key]) {
      maxE[key] = s + d;
    }
    const scale = barScale(D, i, d, keep);
    const o = key * C,
      oi = i * C;
    for (let k = 0; k < C; k++) {
      sums[o + k] += comp[oi + k] * (keep ? keep[k] : 1) * scale;
    }
    if (flags[i] & bad) {
      fail[key]++;
    }
    if (focus && focus[stage[i]]) {
      inFocus[key]++;
    }
    const sid = sids[stage[i]];
    if (sid < stMin[key]) {
      stMin[key] = sid;
    }
    if (sid > stMax[key]) {
      stMax[key] = sid;
    }
  }
  let m = 0;
  for (let key = 0; key < cells; key++) {
    if (count[key]) {
      m++;
    }
  }
  const agg: Record<string, any> = {
    left: new Float64Array(m),
    right: new Float64Array(m),
    bottom: new Float64Array(m),
    top: new Float64Array(m),
    color: new Array(m),
    alpha: new Float64Array(m),
    count: new Int32Array(m),
    count_text: new Array(m),
    span: new Array(m),
    busy: new Float64Array(m),
    busy_text: new Array(m),
    mostly: new Array(m),
    share: new Float64Array(m),
    share_text: new Array(m),
    stages: new Array(m),
    failed: new Int32Array(m)
  };
  let j = 0;
  for (let key = 0; key < cells; key++) {
    const c = count[key];
    if (!c) {
      continue;
    }
    const lane = Math.floor(key / nbl);
    let total = 0,
      best = 0,
      bi = 0;
    for (let k = 0; k < C; k++) {
      const v = sums[key * C + k];
      total += v;
      if (v > best) {
        best = v;
        bi = k;
      }
    }
    const comp0 = comps[bi] || { color: '#bab0ac', label: '–' };
    agg.left[j] = minS[key] / 1000;
    agg.right[j] = maxE[key] / 1000;
    agg.bottom[j] = lane + 0.12;
    agg.top[j] = lane + 0.88;
    agg.color[j] = comp0.color;
    agg.alpha[j] =
      (est[bi] ? 0.45 : 0.9) * (focus && !inFocus[key] ? 0.15 : 1.0);
    agg.count[j] = c;
    agg.count_text[j] = en(c);
    agg.span[j] =
      `${pyFixed(minS[key] / 1000, 3)} – ${pyFixed(maxE[key] / 1000, 3)} s`;
    agg.busy[j] = total / 1000;
    agg.busy_text[j] = formatDuration(total);
    agg.mostly[j] = comp0.label;
    agg.share[j] = total > 0 ? best / total : 0;
    agg.share_text[j] = `${Math.round(100 * agg.share[j])}%`;
    agg.stages[j] =
      stMin[key] === stMax[key]
        ? `${stMin[key]}`
        : `${stMin[key]} – ${stMax[key]}`;
    agg.failed[j] = fail[key];
    j++;
  }
  return {
    mode: 'aggregate',
    visible: vis,
    bars: m,
    seg: null,
    box: null,
    agg
  };
}

/** The y ticks: one per lane (every k-th beyond 40 lanes), and the stage rows' tick. */
export function laneTicks(
  n: number,
  stageRows: number,
  labels: string[] | undefined,
  stageLabel = 'stages'
): { ticks: number[]; labels: Map<number, string> } {
  const step = n <= 40 ? 1 : Math.ceil(n / 40);
  const ticks: number[] = [];
  const out = new Map<number, string>();
  for (let k = 0; k < n; k += step) {
    ticks.push(k + 0.5);
    out.set(k + 0.5, labels?.[k] ?? `slot ${k}`);
  }
  if (stageRows) {
    ticks.push(-stageRows / 2);
    out.set(-stageRows / 2, stageLabel);
  }
  return { ticks, labels: out };
}

/** An empty lane figure; `fill` draws bars into it. */
export function laneFigure(
  ctx: ITabContext,
  options: ILaneFigureOptions
): ILaneFigure {
  addStyles('lanes', CSS);
  const B: any = ctx.bokeh;
  const D = taskData(ctx.data);
  const name = options.name;
  const stageRows = options.stageRows ?? 0;
  const limit = options.limit ?? DETAIL_LIMIT;
  const bins = options.bins ?? BINS;
  let nLanes = Math.max(options.lanes, 0);
  const spanS = Math.max(options.spanMs, 0) / 1000;
  const pad = Math.max(spanS * 0.01, 0.001);
  const heightFor = (lanes: number): number =>
    Math.round(Math.min(620, Math.max(220, 60 + 16 * (lanes + stageRows))));
  const x_range = new B.Range1d({
    start: -pad,
    end: spanS + pad,
    ...(spanS > 0 ? { bounds: [-pad * 5, spanS + pad * 5] } : {})
  });
  const y_range = new B.Range1d({
    start: Math.max(nLanes, 1) + 0.3,
    end: -stageRows - 0.3
  });
  const fig = B.Plotting.figure({
    name,
    height: options.height ?? heightFor(nLanes),
    sizing_mode: 'stretch_width',
    x_range,
    y_range,
    tools: 'xpan,xwheel_zoom,xbox_zoom,reset,save',
    active_scroll: 'xwheel_zoom',
    active_drag: 'xpan',
    x_axis_label: options.xLabel ?? 'seconds since the window started',
    toolbar_location: 'above',
    output_backend: 'canvas'
  });
  fig.xgrid.visible = false;
  fig.ygrid.visible = false;
  const yaxis = fig.yaxes[0];
  yaxis.major_label_text_font_size = '8pt';
  const ticker = new B.FixedTicker({ ticks: [] });
  yaxis.ticker = ticker;
  function labelLanes(n: number, labels?: string[]): void {
    const t = laneTicks(n, stageRows, labels, options.stageLabel);
    ticker.ticks = t.ticks;
    // PlainText: a label is never parsed for TeX delimiters or markup.
    const overrides = new Map<number, any>();
    for (const [k, v] of t.labels) {
      overrides.set(k, new B.PlainText({ text: v }));
    }
    yaxis.major_label_overrides = overrides;
  }
  labelLanes(nLanes, options.labels);

  const src = (keys: string[], suffix: string): any =>
    new B.ColumnDataSource({ data: empty(keys), name: `${name}-${suffix}` });
  const agg = src(AGG_KEYS, 'agg');
  const seg = src(SEG_KEYS, 'seg');
  const box = src(BOX_KEYS, 'box');
  const hl = src(HL_KEYS, 'highlight');
  const q = { left: { field: 'left' }, right: { field: 'right' } };
  const qy = { bottom: { field: 'bottom' }, top: { field: 'top' } };
  const rAgg = fig.quad({
    ...q,
    ...qy,
    source: agg,
    fill_color: { field: 'color' },
    fill_alpha: { field: 'alpha' },
    line_color: null
  });
  // (no hatch patterns: canvas hatching of thousands of bars takes seconds per frame)
  fig.quad({
    ...q,
    ...qy,
    source: seg,
    fill_color: { field: 'color' },
    fill_alpha: { field: 'alpha' },
    line_color: null
  });
  const rBox = fig.quad({
    ...q,
    ...qy,
    source: box,
    fill_alpha: 0,
    line_color: { field: 'line' },
    line_dash: { field: 'dash' },
    line_width: 1
  });
  fig.quad({
    ...q,
    ...qy,
    source: hl,
    fill_color: '#ffd400',
    fill_alpha: 0.25,
    line_color: '#111111',
    line_width: 2.5
  });
  fig.add_tools(
    new B.HoverTool({ renderers: [rAgg], tooltips: AGG_TOOLTIPS }),
    new B.HoverTool({ renderers: [rBox], tooltips: BAR_TOOLTIPS })
  );

  const status = h(
    'div',
    { class: 'jp-perf-muted jp-perf-lanes-status' },
    'drawing…'
  );
  status.dataset.name = name;

  let cur: {
    xs: Numbers;
    ds: Numbers;
    lanes: Numbers;
    nLanes: number;
    keep: Numbers | null;
    focus: Numbers | null;
  } | null = null;
  let last: ILodResult | null = null;
  let hlPos: number | null = null;
  let pending = 0;

  function draw(): ILodResult | null {
    if (pending) {
      cancel(pending);
      pending = 0;
    }
    if (!cur) {
      return null;
    }
    const x0 = x_range.start * 1000,
      x1 = x_range.end * 1000;
    const res = lod(D, cur.xs, cur.ds, cur.lanes, cur.nLanes, x0, x1, {
      limit,
      bins,
      keep: cur.keep,
      focus: cur.focus
    });
    if (res.mode === 'detail') {
      seg.data = res.seg;
      box.data = res.box;
      agg.data = empty(AGG_KEYS);
    } else {
      agg.data = res.agg;
      seg.data = empty(SEG_KEYS);
      box.data = empty(BOX_KEYS);
    }
    const total = cur.xs.length;
    status.textContent =
      `${en(res.visible)} of ${en(total)} task attempts in view, drawn as ` +
      (res.mode === 'detail'
        ? `${en(res.bars)} single bars.`
        : `${en(res.bars)} aggregate bars (each stands for all attempts of its lane ` +
          `and time bin; hover for the count). Zoom in to at most ${en(limit)} for single attempts.`);
    Object.assign(status.dataset, {
      mode: res.mode,
      visible: String(res.visible),
      total: String(total),
      bars: String(res.bars),
      range: `${x0},${x1}`
    });
    last = res;
    return res;
  }

  const hasRaf = typeof requestAnimationFrame === 'function';
  const cancel = (id: number): void =>
    hasRaf ? cancelAnimationFrame(id) : clearTimeout(id);
  function schedule(): void {
    if (pending) {
      return;
    }
    const run = (): void => {
      pending = 0;
      draw();
    };
    pending = hasRaf
      ? requestAnimationFrame(run)
      : (setTimeout(run, 16) as unknown as number);
  }

  const onRange = (): void => schedule();
  x_range.change.connect(onRange);
  ctx.onDispose(() => x_range.change.disconnect(onRange));

  function putHighlight(): void {
    if (hlPos === null || !cur || hlPos < 0 || hlPos >= cur.xs.length) {
      hl.data = empty(HL_KEYS);
      return;
    }
    const s = cur.xs[hlPos],
      d = cur.ds[hlPos],
      ln = cur.lanes[hlPos];
    hl.data = {
      left: [s / 1000],
      right: [(s + d) / 1000],
      bottom: [ln + 0.02],
      top: [ln + 0.98]
    };
  }

  /** Set the x range (ms), widening the pan/zoom bounds when it lies beyond them. */
  function setX(x0Ms: number, x1Ms: number): void {
    const x0 = x0Ms / 1000,
      x1 = x1Ms / 1000;
    const b = x_range.bounds;
    if (Array.isArray(b) && (x0 < b[0] || x1 > b[1])) {
      x_range.bounds = [Math.min(b[0], x0), Math.max(b[1], x1)];
    }
    x_range.setv({ start: x0, end: x1 });
  }

  return {
    fig,
    status,
    async show(el: HTMLElement): Promise<void> {
      const holder = h('div', { class: 'jp-perf-lanes' });
      el.append(status, holder);
      await showModel(ctx, fig, holder);
      if (cur) {
        draw();
      }
    },
    fill(starts, durations, lanes, opts = {}) {
      cur = {
        xs: starts,
        ds: durations,
        lanes,
        nLanes: opts.nLanes ?? nLanes,
        keep: opts.keep ?? null,
        focus: opts.focus !== undefined ? opts.focus : (cur?.focus ?? null)
      };
      putHighlight();
      if (opts.range) {
        setX(opts.range[0], opts.range[1]);
      }
      return draw()!;
    },
    redraw: () => draw(),
    setFocus(focus) {
      if (cur) {
        cur.focus = focus;
        draw();
      }
    },
    setRange(x0Ms, x1Ms) {
      setX(x0Ms, x1Ms);
      draw();
    },
    setLanes(n, labels) {
      nLanes = Math.max(n, 0);
      if (cur) {
        cur.nLanes = nLanes;
      }
      y_range.setv({ start: Math.max(nLanes, 1) + 0.3, end: -stageRows - 0.3 });
      labelLanes(nLanes, labels);
      if (options.height === undefined) {
        const hh = heightFor(nLanes);
        if (fig.height !== hh) {
          fig.height = hh;
        }
      }
    },
    highlight(pos) {
      hlPos = pos;
      putHighlight();
    },
    last: () => last
  };
}
