/**
 * The Summary tab (data: jupyter_perf/render/views/summary.py): the verdict
 * and hints (each with its ready-to-run cell), collection warnings, where the
 * task time went (one stacked bar: measured solid, estimated hatched and
 * lighter; the legend says which per component), the key numbers (with the
 * what-if headlines), the jobs and the cell's source. A fallback report (the
 * analysis failed: `basic`) shows the key numbers, the bar and the stages.
 *
 * Every word beside a number comes from the data; this file only formats.
 */
import {
  formatBytes,
  formatCount,
  formatDuration,
  pyFixed,
  UNKNOWN
} from '../../format';
import { componentBars, showModel } from '../bokeh';
import { callSite, Child, h } from '../dom';
import { addStyles } from '../style';
import { IColumn, table } from '../table';
import { ITab, ITabContext } from '../types';

/** A key-number item: text, a number to format, or styled text. */
export type Item =
  | string
  | { v: number | null; f: string; key: string; strong?: boolean }
  | { t: string; c: string };

export interface IKeyRow {
  key: string;
  label: string;
  items: Item[];
}

export interface ISegment {
  key: string;
  label: string;
  short: string;
  kind: string;
  color: string;
  ms: number;
  share: number;
  spark_metric: string;
  hatch: string;
}

export interface IHint {
  text: string;
  setting: string | null;
  value: string | null;
  cell: string | null;
}

export interface ISummaryData {
  basic?: boolean;
  verdict?: string;
  /** issue W: one short headline, then at most five bullets (the full sentence: verdict) */
  headline?: string;
  bullets?: string[];
  hints?: IHint[];
  warnings: string[];
  breakdown: ISegment[];
  legend: { measured: string; estimated: string };
  key_numbers: IKeyRow[];
  jobs?: Record<string, any>[];
  stage_columns?: { key: string; title: string; format: string }[];
  stages?: Record<string, any>[];
  source: string;
}

const CSS = `
.jp-perf-summary > * { margin: 4px 0; }
.jp-perf-summary .jp-perf-section { font-weight: 600; margin-top: 10px; }
.jp-perf-summary .jp-perf-swatch { display: inline-block; width: 11px; height: 11px;
  vertical-align: -1px; margin-right: 3px; box-sizing: border-box; }
.jp-perf-summary .jp-perf-legend-item { white-space: nowrap; margin-right: 12px;
  display: inline-block; }
.jp-perf-summary .jp-perf-table-wrap { width: 100%; overflow-x: auto; }
.jp-perf-summary table.jp-perf-table { width: 100%; }
.jp-perf-summary table.jp-perf-table td { overflow-wrap: anywhere; white-space: normal; }
.jp-perf .jp-perf-summary table.jp-perf-table th.jp-perf-num,
.jp-perf .jp-perf-summary table.jp-perf-table th { white-space: normal; vertical-align: bottom; }
.jp-perf .jp-perf-summary table.jp-perf-table th,
.jp-perf .jp-perf-summary table.jp-perf-table td { padding: 2px 5px; }
.jp-perf-summary table[data-view='jobs'] td:nth-child(2),
.jp-perf-summary table[data-view='jobs'] td:nth-child(3) { min-width: 8ch; }
.jp-perf-summary table[data-view='jobs'] td:nth-child(4) { overflow-wrap: normal; }
.jp-perf-summary table.jp-perf-kv td:first-child { white-space: nowrap; }
.jp-perf-summary details.jp-ready-cell pre { margin: 4px 0; }
.jp-perf-summary ul { margin: 4px 0; padding-left: 20px; }
`;

/** A number as its format writes it ("–" when unknown). */
export function formatItem(v: number | null | undefined, f: string): string {
  if (v === null || v === undefined || Number.isNaN(v)) {
    return UNKNOWN;
  }
  switch (f) {
    case 'ms':
      return formatDuration(v);
    case 'bytes':
      return formatBytes(v);
    case 'int':
      return formatCount(v);
    case 'pct':
      return `${pyFixed(100 * v, 1)}%`;
    default:
      return String(v);
  }
}

/** Key-number items as nodes: numbers carry `data-key` and `data-value`. */
export function itemNodes(items: Item[]): Child[] {
  return items.map(item => {
    if (typeof item === 'string') {
      return item;
    }
    if ('t' in item) {
      return h('span', { class: `jp-perf-${item.c}` }, item.t);
    }
    const el = h(item.strong ? 'b' : 'span', {}, formatItem(item.v, item.f));
    el.dataset.key = item.key;
    el.dataset.value =
      item.v === null || item.v === undefined ? '' : String(item.v);
    el.dataset.format = item.f;
    return el;
  });
}

export function keyNumbers(rows: IKeyRow[]): HTMLElement {
  const tbl = h('table', { class: 'jp-perf-kv' });
  tbl.dataset.view = 'key-numbers';
  const body = h('tbody');
  for (const row of rows) {
    const tr = h(
      'tr',
      {},
      h('td', { class: 'jp-perf-muted' }, row.label),
      h('td', {}, ...itemNodes(row.items))
    );
    tr.dataset.key = row.key;
    body.append(tr);
  }
  tbl.append(body);
  return tbl;
}

/** A legend square: estimated = hatched and lighter. */
export function swatch(color: string, estimated: boolean): HTMLElement {
  const el = h('span', { class: 'jp-perf-swatch' });
  el.style.border = `1px solid ${color}`;
  el.style.background = estimated
    ? `repeating-linear-gradient(135deg, ${color} 0 3px, #fff 3px 5px)`
    : color;
  if (estimated) {
    el.style.opacity = '0.75';
  }
  return el;
}

function kindLabel(seg: ISegment): string {
  if (seg.kind === 'estimated') {
    return /estimated/.test(seg.label) ? seg.label : `${seg.label} (estimated)`;
  }
  return `${seg.label} (${seg.kind})`;
}

/** The bar's legend: one entry per segment, saying measured or estimated. */
export function breakdownLegend(segments: ISegment[]): HTMLElement {
  const el = h('div', { class: 'jp-perf-breakdown-legend' });
  for (const seg of segments) {
    const item = h(
      'span',
      { class: 'jp-perf-legend-item' },
      swatch(seg.color, seg.kind === 'estimated'),
      `${kindLabel(seg)} `,
      h('b', {}, formatDuration(seg.ms)),
      ` (${pyFixed(100 * seg.share, 0)}%)`
    );
    item.dataset.key = seg.key;
    item.dataset.kind = seg.kind;
    item.dataset.value = String(seg.ms);
    el.append(item, ' ');
  }
  return el;
}

/** One stacked bar of task time, drawn with BokehJS into `el`. */
export async function breakdownBar(
  ctx: ITabContext,
  segments: ISegment[],
  el: HTMLElement
): Promise<void> {
  const B: any = ctx.bokeh;
  const cols: Record<string, any[]> = {
    y: [],
    left: [],
    right: [],
    color: [],
    alpha: [],
    hatch: [],
    key: [],
    label: [],
    kind: [],
    ms: [],
    ms_text: [],
    share: [],
    metric: []
  };
  let left = 0;
  for (const seg of segments) {
    const w = seg.ms / 1000;
    const estimated = seg.kind === 'estimated';
    cols.y.push(0);
    cols.left.push(left);
    cols.right.push(left + w);
    cols.color.push(seg.color);
    cols.alpha.push(estimated ? 0.55 : 1.0);
    cols.hatch.push(seg.hatch);
    cols.key.push(seg.key);
    cols.label.push(seg.label);
    cols.kind.push(seg.kind);
    cols.ms.push(seg.ms);
    cols.ms_text.push(formatDuration(seg.ms));
    cols.share.push(`${pyFixed(100 * seg.share, 1)}%`);
    cols.metric.push(seg.spark_metric);
    left += w;
  }
  const source = new B.ColumnDataSource({
    data: cols,
    name: 'jp-breakdown-source'
  });
  const fig = B.Plotting.figure({
    height: 110,
    sizing_mode: 'stretch_width',
    x_range: new B.Range1d({ start: 0, end: Math.max(left, 1e-3) * 1.005 }),
    y_range: new B.Range1d({ start: -0.5, end: 0.5 }),
    toolbar_location: null,
    tools: '',
    min_border_left: 12,
    min_border_right: 12,
    x_axis_label: 'seconds of task time (all attempts)',
    name: 'jp-breakdown'
  });
  componentBars(B, fig, source, [
    ['component', '@label'],
    ['', '@kind'],
    ['time', '@ms_text'],
    ['share', '@share'],
    ['Spark metric', '@metric']
  ]);
  fig.yaxis.visible = false;
  await showModel(ctx, fig, el);
}

/** Copies the ready cell's text: the clipboard API, else a selection. */
function copyButton(pre: HTMLElement): HTMLElement {
  const button = h(
    'button',
    { type: 'button', class: 'jp-ready-cell-copy' },
    'Copy cell'
  );
  button.addEventListener('click', () => {
    const done = () => {
      button.textContent = 'Copied';
    };
    const select = () => {
      const range = document.createRange();
      range.selectNodeContents(pre);
      const sel = window.getSelection();
      sel?.removeAllRanges();
      sel?.addRange(range);
      try {
        if (document.execCommand('copy')) {
          done();
          return;
        }
      } catch {
        // fall through: the text stays selected
      }
      button.textContent = 'Selected: press Ctrl+C';
    };
    if (navigator.clipboard?.writeText) {
      navigator.clipboard.writeText(pre.textContent || '').then(done, select);
    } else {
      select();
    }
  });
  return button;
}

function hintNode(hint: IHint): HTMLElement {
  const li = h('li', {}, hint.text);
  if (hint.cell) {
    const pre = h('pre', {}, hint.cell);
    li.append(
      h(
        'details',
        { class: 'jp-ready-cell' },
        h('summary', {}, 'Re-run with this setting: a ready cell'),
        pre,
        copyButton(pre),
        ' ',
        h(
          'span',
          { class: 'jp-perf-muted' },
          'paste it into a new cell and run it: the re-run is compared with this run automatically'
        )
      )
    );
  }
  return li;
}

const JOB_COLUMNS: IColumn[] = [
  { key: 'job_id', title: 'job', format: 'int' },
  { key: 'description', title: 'description', format: 'text' },
  {
    key: 'call_site',
    title: 'call site',
    format: (v, row) => callSite(v, row.call_site_text),
    help: "where the code called the action: the measured cell's line (its text on hover), else Spark's job name"
  },
  { key: 'status', title: 'status', format: 'text' },
  {
    key: 'duration_ms',
    title: 'duration',
    format: 'ms',
    help: 'measured: completion − submission'
  },
  { key: 'stages', title: 'stages ran', format: 'int' },
  { key: 'skipped', title: 'stages skipped', format: 'int' },
  { key: 'attempts', title: 'task attempts that ran', format: 'int' }
];

function warnings(messages: string[]): HTMLElement[] {
  return messages.map(m => h('div', { class: 'jp-perf-warn' }, `⚠ ${m}`));
}

async function barSection(
  ctx: ITabContext,
  d: ISummaryData,
  root: HTMLElement
): Promise<void> {
  if (!d.breakdown.length) {
    return;
  }
  root.append(
    h(
      'div',
      {},
      h('b', {}, 'Where the task time went'),
      ' ',
      h(
        'span',
        { class: 'jp-perf-muted' },
        swatch(d.legend.measured, false),
        'solid: measured by Spark · ',
        swatch(d.legend.estimated, true),
        'hatched, lighter: estimated (what Spark leaves unexplained, attributed by rule)'
      )
    )
  );
  const chart = h('div', { class: 'jp-perf-breakdown' });
  root.append(chart, breakdownLegend(d.breakdown));
  await breakdownBar(ctx, d.breakdown, chart);
}

export const summaryTab: ITab = {
  key: 'summary',
  title: 'Summary',
  async render(el, ctx) {
    addStyles('summary', CSS, el.ownerDocument);
    const d = ctx.data.tabs.summary as ISummaryData;
    const root = h('div', { class: 'jp-perf-summary' });
    el.append(root);
    if (d.headline) {
      root.append(
        h(
          'div',
          { class: 'jp-perf-big jp-perf-headline', title: d.verdict },
          d.headline
        )
      );
      if (d.bullets && d.bullets.length) {
        root.append(
          h(
            'ul',
            { class: 'jp-perf-verdict-bullets' },
            ...d.bullets.map(b => h('li', {}, b))
          )
        );
      }
    } else if (d.verdict) {
      root.append(h('div', { class: 'jp-perf-big' }, d.verdict));
    }
    if (d.hints && d.hints.length) {
      root.append(
        h('ul', { class: 'jp-perf-hints' }, ...d.hints.map(hintNode))
      );
    }
    root.append(...warnings(d.warnings || []));
    const bar = barSection(ctx, d, root);
    root.append(keyNumbers(d.key_numbers || []));
    if (d.jobs && d.jobs.length) {
      root.append(
        h(
          'div',
          { class: 'jp-perf-section' },
          'Jobs ',
          h(
            'span',
            { class: 'jp-perf-muted' },
            'a stage that several jobs share is counted in the first job that ran it; the others skipped it.'
          )
        ),
        table(d.jobs, JOB_COLUMNS, { view: 'jobs' }).el
      );
    }
    if (d.basic && d.stages && d.stages.length) {
      const columns: IColumn[] = (d.stage_columns || []).map(c => ({
        key: c.key,
        title: c.title,
        format: c.format as IColumn['format']
      }));
      root.append(
        h('div', { class: 'jp-perf-section' }, 'Stages'),
        table(d.stages, columns, { view: 'stages-basic' }).el
      );
    }
    if (d.source) {
      root.append(
        h('div', { class: 'jp-perf-section' }, 'Cell'),
        h('pre', { class: 'jp-perf-source' }, d.source)
      );
    }
    await bar;
  }
};
