/**
 * The Memory tab (data: jupyter_perf/render/views/memory.py): per executor,
 * memory over the run (Spark's running peaks labelled as such, storage memory
 * as its current value), the limits (JVM heap -Xmx, unified pool) as dashed
 * lines, and every task attempt that spilled as a marker at its finish; a
 * table of per-executor peaks, limits and spills. One executor's chart at a
 * time (a plain `<select>` switches it); the chart keeps a modest height.
 * Above them, this window's memory (`window`): the sizing answer, limits
 * approached, and the peaks this window reached per executor (JVM and Python,
 * the stage and operator that set them) and per stage attempt.
 */
import { formatBytes, formatCount, pyFixed } from '../../format';
import { removeViews } from '../bokeh';
import { h } from '../dom';
import { addStyles } from '../style';
import { IColumn, table } from '../table';
import { ITab, ITabContext } from '../types';

export interface ISeriesDef {
  col: string;
  label: string;
  color: string;
  kind: string; // "running peak" | "current"
}

export interface ILimit {
  col: string;
  label: string;
  color: string;
  bytes: number;
}

export interface IExecutorMemory {
  id: string;
  t: (number | null)[];
  limits: ILimit[];
  spills: {
    t: number[];
    task_id: number[];
    stage_id: number[];
    memory: number[];
    disk: number[];
  };
  [col: string]: any;
}

export interface IMemoryColumn {
  key: string;
  title: string;
  format: string;
  help: string;
}

/** This window's memory (data: views/memory.py `_window`, analysis/memory.py). */
export interface IWindowMemory {
  error?: string;
  columns: IMemoryColumn[];
  table: Record<string, any>[];
  stage_columns: IMemoryColumn[];
  stages: Record<string, any>[];
  stages_total: number;
  sizing: {
    text: string;
    setting: string | null;
    value: string | null;
    kind: string;
  }[];
  sizing_line: string;
  /** Executors the window lost to memory, one line each (absent in older payloads). */
  lost?: string[];
  flags: string[];
  labels: Record<string, string>;
  near_limit: number;
}

export interface IMemoryData {
  window?: IWindowMemory;
  series: ISeriesDef[];
  spill: { label: string; color: string };
  span_s: number;
  samples: number;
  spilled_attempts: number;
  spills_shown: number;
  columns: { key: string; title: string; format: string; help: string }[];
  table: Record<string, any>[];
  executors: IExecutorMemory[];
  first?: string;
}

const MIB = 1024 * 1024;

const CSS = `
.jp-perf-memory > * { margin: 4px 0; }
.jp-perf-memory select { font: inherit; max-width: 100%; }
.jp-perf-memory .jp-perf-table-wrap { overflow-x: auto; }
.jp-perf-memory table.jp-perf-table td { overflow-wrap: anywhere; }
`;

function values(arr: (number | null)[] | null | undefined): number[] {
  return (arr || []).map(v => (v === null || v === undefined ? NaN : v));
}

function hasFinite(arr: number[]): boolean {
  return arr.some(v => Number.isFinite(v));
}

/** Whether an executor has anything to draw: a series, a limit or a spill. */
export function drawable(d: IMemoryData, e: IExecutorMemory): boolean {
  return (
    d.series.some(s => hasFinite(values(e[s.col]))) ||
    e.limits.length > 0 ||
    e.spills.t.length > 0
  );
}

/** The y-axis top (MiB) over every executor, so switching keeps the scale. */
function yMax(d: IMemoryData): number {
  let top = 1;
  for (const e of d.executors) {
    for (const s of d.series) {
      for (const v of values(e[s.col])) {
        if (Number.isFinite(v)) {
          top = Math.max(top, v / MIB);
        }
      }
    }
    for (const lim of e.limits) {
      top = Math.max(top, lim.bytes / MIB);
    }
  }
  return top;
}

/** The legend's geometry (px), set on the figure's legend in `executorFigure`. */
export const LEGEND = { margin: 10, padding: 4, row: 15, spacing: 0 };

/**
 * The y-axis end (MiB) that keeps the legend (top left, `items` rows) above
 * every line and limit: the legend's height in px (`LEGEND`) out of the plot
 * frame's (the figure's `height` less at most 110 px of toolbar and axis) is
 * the share of the y range left free at the top.
 */
export function yEnd(top: number, items: number, height: number): number {
  const frame = Math.max(height - 110, 100);
  const px =
    LEGEND.margin +
    2 * LEGEND.padding +
    items * LEGEND.row +
    Math.max(items - 1, 0) * LEGEND.spacing;
  const share = Math.min(0.7, px / frame);
  return (top * 1.05) / (1 - share);
}

function columnsOf(cols: IMemoryColumn[]): IColumn[] {
  return cols.map(c => ({
    key: c.key,
    title: c.title,
    format: c.format as IColumn['format'],
    help: c.help || undefined
  }));
}

/** This window's memory: the sizing answer, flags, per executor and per stage. */
export function windowSection(
  w: IWindowMemory | undefined
): HTMLElement | null {
  if (!w) {
    return null;
  }
  const root = h('div', { class: 'jp-perf-memory-window' });
  root.dataset.view = 'memory-window';
  if (w.error) {
    const warn = h('div', { class: 'jp-perf-warn' }, `⚠ ${w.error}`);
    warn.dataset.view = 'memory-window-error';
    root.append(warn);
    return root;
  }
  for (const line of w.lost ?? []) {
    const lost = h('div', { class: 'jp-perf-warn' }, `⚠ ${line}`);
    lost.dataset.view = 'memory-lost';
    root.append(lost);
  }
  const sizing = h('div', { class: 'jp-perf-memory-sizing' });
  sizing.dataset.view = 'memory-sizing';
  sizing.append(h('b', {}, 'Sizing: '));
  if (w.sizing.length) {
    const list = h('ul', {});
    for (const s of w.sizing) {
      const item = h('li', {});
      item.dataset.kind = s.kind;
      if (s.setting) {
        item.append(h('code', {}, `${s.setting}=${s.value ?? ''}`), ' ');
      }
      item.append(
        `${s.text} `,
        h('span', { class: 'jp-perf-muted' }, `(${s.kind})`)
      );
      list.append(item);
    }
    sizing.append(list);
  } else {
    sizing.append(w.sizing_line || 'no answer');
  }
  root.append(sizing);
  if (w.flags.length) {
    const flags = h(
      'div',
      { class: 'jp-perf-warn' },
      '⚠ ' + w.flags.join('; ')
    );
    flags.dataset.view = 'memory-flags';
    root.append(flags);
  }
  if (w.table.length) {
    const how = Object.entries(w.labels)
      .filter(([k]) => w.table.some(r => r.basis === k))
      .map(([k, v]) => `${k} = ${v}`)
      .join('; ');
    root.append(
      h(
        'div',
        {},
        h('b', {}, 'This window, per executor'),
        ' ',
        h(
          'span',
          { class: 'jp-perf-muted' },
          "Spark's executor peaks never go down, so these are the peaks this window " +
            `reached (how: ${how}).`
        )
      ),
      table(w.table, columnsOf(w.columns), { view: 'memory-window-executors' })
        .el
    );
  }
  if (w.stages.length) {
    const more =
      w.stages_total > w.stages.length
        ? ` (${formatCount(w.stages.length)} of ${formatCount(w.stages_total)} rows, highest heap first)`
        : '';
    root.append(
      h(
        'div',
        {},
        h('b', {}, 'Per stage and executor'),
        ' ',
        h(
          'span',
          { class: 'jp-perf-muted' },
          "measured: Spark's per-stage executor peaks (JVM and Python)" +
            more +
            '.'
        )
      ),
      table(w.stages, columnsOf(w.stage_columns), {
        view: 'memory-stages',
        maxHeight: 320
      }).el
    );
  }
  return root;
}

/** The chart of one executor: a figure built with BokehJS (not yet shown). */
export function executorFigure(
  ctx: ITabContext,
  d: IMemoryData,
  e: IExecutorMemory
): any {
  const B: any = ctx.bokeh;
  const top = yMax(d);
  const x0 = -0.01 * d.span_s;
  const x1 = d.span_s * 1.01 + 1e-3;
  const items =
    d.series.filter(s => hasFinite(values(e[s.col]))).length +
    e.limits.length +
    (e.spills.t.length ? 1 : 0);
  const height = 340;
  const fig = B.Plotting.figure({
    height,
    sizing_mode: 'stretch_width',
    x_range: new B.Range1d({ start: x0, end: x1 }),
    // the legend (top left) sits above every line: it never hides a limit
    y_range: new B.Range1d({ start: 0, end: yEnd(top, items, height) }),
    tools: 'xpan,xwheel_zoom,box_zoom,reset,save',
    toolbar_location: 'above',
    x_axis_label: 'seconds since the window started',
    y_axis_label: 'MiB',
    name: 'jp-memory'
  });
  let legend = false;
  const t = values(e.t);
  for (const s of d.series) {
    const v = values(e[s.col]);
    if (!hasFinite(v)) {
      continue;
    }
    const source = new B.ColumnDataSource({
      name: `jp-memory-${s.col}`,
      data: {
        x: t,
        y: v.map(b => b / MIB),
        bytes: v,
        text: v.map(b => formatBytes(b)),
        t_text: t.map(x => `${pyFixed(x, 2)} s`)
      }
    });
    fig.line({
      x: { field: 'x' },
      y: { field: 'y' },
      source,
      line_color: s.color,
      line_width: 2,
      legend_label: s.label
    });
    const dots = fig.scatter({
      x: { field: 'x' },
      y: { field: 'y' },
      source,
      color: s.color,
      size: 4,
      legend_label: s.label
    });
    fig.add_tools(
      new B.HoverTool({
        renderers: [dots],
        tooltips: [
          ['series', s.label],
          ['t', '@t_text'],
          ['value', '@text']
        ]
      })
    );
    legend = true;
  }
  for (const lim of e.limits) {
    const source = new B.ColumnDataSource({
      name: `jp-memory-limit-${lim.col}`,
      data: {
        x0: [x0],
        x1: [x1],
        y: [lim.bytes / MIB],
        bytes: [lim.bytes],
        text: [formatBytes(lim.bytes)]
      }
    });
    const r = fig.segment({
      x0: { field: 'x0' },
      x1: { field: 'x1' },
      y0: { field: 'y' },
      y1: { field: 'y' },
      source,
      line_color: lim.color,
      line_dash: 'dashed',
      line_width: 2,
      legend_label: lim.label
    });
    fig.add_tools(
      new B.HoverTool({
        renderers: [r],
        tooltips: [
          ['limit', lim.label],
          ['value', '@text']
        ]
      })
    );
    legend = true;
  }
  const sp = e.spills;
  if (sp.t.length) {
    const source = new B.ColumnDataSource({
      name: 'jp-memory-spills',
      data: {
        x: sp.t,
        y: sp.t.map(() => top * 0.02),
        task: sp.task_id.map(
          (id, i) => `${formatCount(id)} (stage ${formatCount(sp.stage_id[i])})`
        ),
        memory: sp.memory,
        disk: sp.disk,
        mem_text: sp.memory.map(b => formatBytes(b)),
        disk_text: sp.disk.map(b => formatBytes(b))
      }
    });
    const r = fig.scatter({
      x: { field: 'x' },
      y: { field: 'y' },
      source,
      marker: 'triangle',
      size: 10,
      color: d.spill.color,
      legend_label: d.spill.label
    });
    fig.add_tools(
      new B.HoverTool({
        renderers: [r],
        tooltips: [
          ['task', '@task'],
          ['memory spilled', '@mem_text'],
          ['disk spilled', '@disk_text']
        ]
      })
    );
    legend = true;
  }
  if (legend) {
    fig.legend.location = 'top_left';
    fig.legend.label_text_font_size = '8pt';
    fig.legend.margin = LEGEND.margin;
    fig.legend.padding = LEGEND.padding;
    fig.legend.spacing = LEGEND.spacing;
    fig.legend.label_height = LEGEND.row;
    fig.legend.glyph_height = LEGEND.row;
    fig.legend.click_policy = 'hide';
  }
  return fig;
}

function note(d: IMemoryData): HTMLElement {
  const more =
    d.spills_shown < d.spilled_attempts
      ? ` (the ${formatCount(d.spills_shown)} largest spills are marked)`
      : '';
  return h(
    'span',
    { class: 'jp-perf-muted' },
    "Samples of Spark's /allexecutors every 0.5 s while the window was open: storage " +
      "memory is the current value; JVM heap, execution memory and RSS are Spark's " +
      'running peaks since the executor started (they never go down). Dashed: limits. ' +
      `${formatCount(d.samples, 'sample')}; ${formatCount(d.spilled_attempts, 'task attempt')} ` +
      `spilled (red triangles)${more}.`
  );
}

export const memoryTab: ITab = {
  key: 'memory',
  title: 'Memory',
  async render(el, ctx) {
    addStyles('memory', CSS, el.ownerDocument);
    const d = ctx.data.tabs.memory as IMemoryData;
    const root = h('div', { class: 'jp-perf-memory' });
    el.append(root);
    const win = windowSection(d.window);
    if (win) {
      root.append(win);
    }
    if (!d.executors || !d.executors.length) {
      const none = h(
        'div',
        {},
        h('b', {}, 'No executor memory was collected for this run.')
      );
      none.dataset.view = 'memory-none';
      root.append(none);
      return;
    }
    root.append(h('div', {}, h('b', {}, 'Memory per executor'), ' ', note(d)));
    const columns: IColumn[] = d.columns.map(c => ({
      key: c.key,
      title: c.title,
      format: c.format as IColumn['format'],
      help: c.help || undefined
    }));
    if (d.table.length) {
      root.append(table(d.table, columns, { view: 'memory-executors' }).el);
    }
    if (!d.samples) {
      const warn = h(
        'div',
        { class: 'jp-perf-warn' },
        '⚠ no memory samples were collected (REST API unavailable?)'
      );
      warn.dataset.view = 'memory-no-samples';
      root.append(warn);
    }
    const shown = d.executors.filter(e => drawable(d, e));
    if (!shown.length) {
      return;
    }
    const select = h('select', {});
    select.dataset.view = 'memory-executor';
    for (const e of shown) {
      const option = h('option', { value: e.id }, e.id);
      select.append(option);
    }
    const first = shown.some(e => e.id === d.first) ? d.first! : shown[0].id;
    select.value = first;
    const chart = h('div', { class: 'jp-perf-memory-chart' });
    root.append(h('label', {}, 'Executor ', select), chart);

    const B = ctx.bokeh;
    let views: any[] = [];
    let pending: Promise<void> = Promise.resolve();
    const draw = async (id: string): Promise<void> => {
      const e = shown.find(x => x.id === id) ?? shown[0];
      removeViews(B, views);
      views = [];
      chart.replaceChildren();
      const fig = executorFigure(ctx, d, e);
      const view = await B.Plotting.show(fig, chart);
      views = Array.isArray(view) ? view : [view];
      chart.dataset.executor = e.id;
    };
    ctx.onDispose(() => removeViews(B, views));
    select.addEventListener('change', () => {
      pending = pending.then(() => draw(select.value));
    });
    pending = draw(first);
    await pending;
  }
};
