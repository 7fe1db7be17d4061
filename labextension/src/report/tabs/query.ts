/**
 * The Query tab: the SQL plan as a top-down graph (boxes coloured by share of
 * the run's task time, drawn with BokehJS from the layout the kernel computed:
 * jupyter_perf/render/views/query.py) and the operator table. The graph and
 * the table share one selection (the boxes' ColumnDataSource's): a click on a
 * box selects its row and the reverse, and the operator's stages go on the
 * selection bus so Timeline, Stages and Stragglers highlight them. Every user
 * string (operator labels, descriptions, scanned paths) is text: canvas text,
 * hover fields without `{safe}`, DOM text nodes.
 */
import {
  formatBytes,
  formatCount,
  formatDuration,
  pyFixed
} from '../../format';
import { showModel } from '../bokeh';
import { h, uiLink } from '../dom';
import { addStyles } from '../style';
import { IColumn, table } from '../table';
import { taskData } from '../tasks';
import { ITab, ITabContext, Selection } from '../types';

/** One operator as views/query.py sends it. */
export interface IOperatorRow {
  key: string;
  execution_id: number;
  node_id: number;
  label: string;
  full_label: string;
  name: string;
  description: string;
  share: number;
  task_time_ms: number;
  kind: string;
  rows_out: number | null;
  input_bytes: number | null;
  spill_bytes: number | null;
  peak_memory_bytes: number | null;
  skew_ratio: number | null;
  python_udf_ms: number | null;
  driver_ms: number | null;
  skew: boolean;
  stages: string;
  stage_list: number[];
  stage_codes: number[];
  x: number;
  y: number;
  w: number;
  color: string;
  text_color: string;
}

export interface IQueryData {
  note: string;
  operators: IOperatorRow[];
  edges: [number, number][];
  executions: {
    execution_id: number;
    description: string;
    operators: number;
  }[];
  palette: string[];
  no_time: string;
  top_share: number;
  box_h: number;
  python_label: string;
}

const CSS = `
.jp-perf-query .jp-perf-query-plan { margin: 4px 0 8px 0; overflow: auto; max-height: 720px; }
.jp-perf-query .jp-perf-query-info { margin: 4px 0; }
.jp-perf-query .jp-perf-query-execs { margin: 2px 0; padding-left: 18px; }
.jp-perf-query .jp-perf-query-execs li { overflow-wrap: anywhere; }
`;

const UNKNOWN_TEXT = '–';
/** px: the largest plan drawn at one pixel per layout unit (canvas limits). */
const MAX_FRAME = 12000;
const TOOLBAR_W = 30; // px: the toolbar, left of the plan
const LEGEND_H = 67; // px: the colour legend, above it

function opt(v: number | null, f: (x: number) => string): string {
  return v === null || v === undefined ? UNKNOWN_TEXT : f(v);
}

/** What the hover says about the time of an operator (today's `time` column). */
export function timeText(r: IOperatorRow): string {
  if (r.task_time_ms > 0) {
    return `${formatDuration(r.task_time_ms)} (${r.kind})`;
  }
  if (r.driver_ms !== null && r.driver_ms > 0) {
    return `driver ${formatDuration(r.driver_ms)}`;
  }
  return 'no task time';
}

/** The box's two lines: the label, then share and task time (when it has any). */
export function boxText(r: IOperatorRow): string {
  return r.task_time_ms > 0
    ? `${r.label}\n${pyFixed(100 * r.share, 0)}% · ${formatDuration(r.task_time_ms)}`
    : r.label;
}

function skewText(r: IOperatorRow): string {
  if (r.skew_ratio === null || r.skew_ratio === undefined) {
    return UNKNOWN_TEXT;
  }
  return (
    `max task ${pyFixed(r.skew_ratio, 1)}× its stage's median` +
    (r.skew ? ' (data skew: bytes per task)' : '')
  );
}

/** The figure's data source: one row per operator, every hover field as text. */
function sourceData(q: IQueryData): Record<string, any[]> {
  const ops = q.operators;
  const col = <T>(f: (r: IOperatorRow) => T): T[] => ops.map(f);
  return {
    x: col(r => r.x),
    y: col(r => -r.y), // Bokeh's y grows upwards; the layout's downwards
    w: col(r => r.w),
    color: col(r => r.color),
    text_color: col(r => r.text_color),
    text: col(boxText),
    key: col(r => r.key),
    full_label: col(r => r.full_label),
    description: col(r => r.description),
    time: col(timeText),
    share_text: col(r =>
      r.task_time_ms > 0 ? `${pyFixed(100 * r.share, 1)}%` : UNKNOWN_TEXT
    ),
    rows_text: col(r => opt(r.rows_out, v => formatCount(v))),
    input_text: col(r => opt(r.input_bytes, formatBytes)),
    spill_text: col(r => opt(r.spill_bytes, formatBytes)),
    peak_text: col(r => opt(r.peak_memory_bytes, formatBytes)),
    skew_text: col(skewText),
    python_text: col(r =>
      opt(r.python_udf_ms, v => `${formatDuration(v)} (measured)`)
    ),
    stages: col(r => r.stages || UNKNOWN_TEXT)
  };
}

function graph(ctx: ITabContext, q: IQueryData, source: any): any {
  const B = ctx.bokeh as any;
  const ops = q.operators;
  const boxH = q.box_h;
  const pad = 16;
  const xs = ops.map(r => r.x);
  const ys = ops.map(r => -r.y);
  const x0 = Math.min(...ops.map(r => r.x - r.w / 2)) - pad;
  const x1 = Math.max(...ops.map(r => r.x + r.w / 2)) + pad;
  const y0 = Math.min(...ys) - boxH / 2 - pad;
  const y1 = Math.max(...ys) + boxH / 2 + pad;
  // One data unit is one pixel (the kernel laid the boxes out in px for the
  // labels' width): the plan keeps its size and its container scrolls, so no
  // label runs out of its box. A plan too big for one canvas is fitted instead.
  const fits = x1 - x0 <= MAX_FRAME && y1 - y0 <= MAX_FRAME;
  const size = fits
    ? {
        frame_width: Math.round(x1 - x0),
        frame_height: Math.round(y1 - y0),
        // the element's own size (Bokeh sizes it by width and height, 600 px
        // by default): the frame, the toolbar on the left, the legend above
        width: Math.round(x1 - x0) + TOOLBAR_W,
        height: Math.round(y1 - y0) + LEGEND_H,
        sizing_mode: 'fixed'
      }
    : { height: 900, sizing_mode: 'stretch_width' };
  const fig = B.Plotting.figure({
    ...size,
    x_range: new B.Range1d({ start: x0, end: x1 }),
    y_range: new B.Range1d({ start: y0, end: y1 }),
    x_axis_type: null,
    y_axis_type: null,
    match_aspect: false,
    tools: 'pan,wheel_zoom,box_zoom,reset,save',
    toolbar_location: 'left',
    output_backend: 'canvas',
    min_border: 0
  });
  fig.grid.visible = false;
  const edges = {
    x0: q.edges.map(([p]) => xs[p]),
    y0: q.edges.map(([p]) => ys[p] - boxH / 2),
    x1: q.edges.map(([, c]) => xs[c]),
    y1: q.edges.map(([, c]) => ys[c] + boxH / 2)
  };
  if (q.edges.length) {
    fig.segment({
      x0: { field: 'x0' },
      y0: { field: 'y0' },
      x1: { field: 'x1' },
      y1: { field: 'y1' },
      source: new B.ColumnDataSource({ data: edges }),
      line_color: '#8899aa',
      line_width: 1.2,
      name: 'jp-plan-edges'
    });
    fig.scatter({
      x: edges.x1,
      y: edges.y1.map(y => y + 3),
      marker: 'triangle',
      angle: Math.PI,
      size: 6,
      color: '#8899aa'
    });
  }
  const boxes = fig.rect({
    x: { field: 'x' },
    y: { field: 'y' },
    width: { field: 'w' },
    height: boxH,
    source,
    fill_color: { field: 'color' },
    line_color: '#555555',
    line_width: 1,
    selection_line_color: '#111111',
    selection_line_width: 3,
    nonselection_fill_alpha: 0.35,
    nonselection_line_alpha: 0.5,
    name: 'jp-plan-boxes'
  });
  fig.text({
    x: { field: 'x' },
    y: { field: 'y' },
    text: { field: 'text' },
    source,
    text_align: 'center',
    text_baseline: 'middle',
    text_font_size: '8pt',
    text_color: { field: 'text_color' },
    text_line_height: 1.1,
    nonselection_text_alpha: 0.8
  });
  fig.add_tools(
    new B.HoverTool({
      renderers: [boxes],
      tooltips: [
        ['operator', '@full_label'],
        ['', '@description'],
        ['task time', '@time'],
        ['share', '@share_text'],
        ['rows out', '@rows_text'],
        ['input', '@input_text'],
        ['spill', '@spill_text'],
        ['peak memory', '@peak_text'],
        ['skew', '@skew_text'],
        [q.python_label, '@python_text'],
        ['stages', '@stages']
      ]
    }),
    new B.TapTool({ renderers: [boxes] })
  );
  fig.add_layout(
    new B.ColorBar({
      color_mapper: new B.LinearColorMapper({
        palette: q.palette,
        low: 0,
        high: q.top_share
      }),
      title: 'share of task time',
      orientation: 'horizontal',
      width: 240,
      height: 10,
      location: 'top_left',
      formatter: new B.NumeralTickFormatter({ format: '0%' })
    }),
    'above'
  );
  return fig;
}

function columns(q: IQueryData): IColumn[] {
  return [
    { key: 'full_label', title: 'operator', format: 'text' },
    {
      key: 'share',
      title: 'share of task time',
      format: 'pct',
      help: "the operator's part of the run's task time"
    },
    {
      key: 'task_time_ms',
      title: 'task time',
      format: 'ms',
      help: 'measured where Spark splits the time, else estimated (next column)'
    },
    {
      key: 'kind',
      title: 'measured / estimated / sampled',
      format: 'text',
      help: 'how the task time was split: measured by Spark, estimated by a rule, or sampled from CPU stacks (with --profile)'
    },
    { key: 'rows_out', title: 'rows out', format: 'int' },
    { key: 'input_bytes', title: 'input', format: 'bytes' },
    { key: 'spill_bytes', title: 'spill', format: 'bytes' },
    { key: 'peak_memory_bytes', title: 'peak memory', format: 'bytes' },
    {
      key: 'skew_ratio',
      title: 'max / median task',
      format: 'float',
      help: "the operator's longest task over its stage's median task"
    },
    {
      key: 'python_udf_ms',
      title: q.python_label,
      format: 'ms',
      help: "Spark's Python SQL metrics (measured)"
    },
    { key: 'driver_ms', title: 'driver', format: 'ms' },
    { key: 'stages', title: 'stages', format: 'text' },
    { key: 'execution_id', title: 'SQL execution', format: 'int' },
    { key: 'description', title: 'description', format: 'text' }
  ];
}

/** Task attempts of the given stage codes (0 when the report has no tasks). */
function attemptsIn(ctx: ITabContext, codes: Set<number>): number {
  if (!ctx.data.tasks_meta || !ctx.data.tasks_meta.n) {
    return 0;
  }
  const stage = taskData(ctx.data).stage;
  let n = 0;
  for (let i = 0; i < stage.length; i++) {
    if (codes.has(stage[i])) {
      n++;
    }
  }
  return n;
}

function executionList(ctx: ITabContext, q: IQueryData): HTMLElement {
  const ui = ctx.data.header.spark_ui;
  return h(
    'ul',
    { class: 'jp-perf-query-execs jp-perf-muted' },
    ...q.executions.map(e => {
      const li = h(
        'li',
        {},
        uiLink(
          ui,
          `/SQL/execution/?id=${e.execution_id}`,
          `SQL execution ${e.execution_id}`
        ),
        ` — ${formatCount(e.operators, 'operator')}`,
        e.description ? `: ${e.description}` : ''
      );
      li.dataset.execution = String(e.execution_id);
      return li;
    })
  );
}

export function renderQuery(el: HTMLElement, ctx: ITabContext): Promise<void> {
  addStyles('query', CSS, el.ownerDocument);
  const q = ctx.data.tabs.query as IQueryData;
  const root = h('div', { class: 'jp-perf-query' });
  el.append(root);
  if (!q || !q.operators || !q.operators.length) {
    root.append(
      h(
        'div',
        {},
        h('b', {}, 'Query'),
        ' ',
        h(
          'span',
          { class: 'jp-perf-muted' },
          q?.note || 'No SQL plan was collected for this run.'
        )
      )
    );
    return Promise.resolve();
  }
  const ops = q.operators;
  const nExec = q.executions.length;
  root.append(
    h(
      'div',
      {},
      h('b', {}, 'Query'),
      ' ',
      h(
        'span',
        { class: 'jp-perf-muted' },
        `${formatCount(ops.length, 'operator')} in ${formatCount(nExec, 'SQL execution')}, ` +
          'data flowing top-down. Colour: share of the run\u2019s task time (measured ' +
          'where Spark splits it, else estimated; docs/operators.md). Grey: no task ' +
          'time (driver-side or structural).' +
          (q.note ? ` ${q.note}` : '')
      )
    ),
    executionList(ctx, q)
  );
  const info = h('div', { class: 'jp-perf-query-info' });
  const plan = h('div', { class: 'jp-perf-query-plan' });
  plan.dataset.view = 'plan';
  root.append(info, plan);

  const B = ctx.bokeh as any;
  const source = new B.ColumnDataSource({ data: sourceData(q) });
  const tbl = table(ops, columns(q), {
    view: 'operators',
    maxHeight: 360,
    onSelect: i => {
      const now: number[] = source.selected.indices;
      source.selected.indices = now.length === 1 && now[0] === i ? [] : [i];
    }
  });
  root.append(tbl.el);

  // One path for every change of the selection (a box tapped, a row clicked,
  // another tab's selection): the source's selected indices.
  let quiet = false;
  const selected = (): number[] =>
    [...(source.selected.indices as number[])].sort((a, b) => a - b);
  const describe = (idx: number[]): void => {
    if (!idx.length) {
      info.replaceChildren(
        h(
          'span',
          { class: 'jp-perf-muted' },
          'Click an operator (a box or a row) to highlight its stages on the ' +
            'Timeline, Stages and Stragglers tabs.'
        )
      );
      return;
    }
    const stages = new Set<number>();
    const codes = new Set<number>();
    for (const i of idx) {
      ops[i].stage_list.forEach(s => stages.add(s));
      ops[i].stage_codes.forEach(c => codes.add(c));
    }
    const n = attemptsIn(ctx, codes);
    const sorted = [...stages].sort((a, b) => a - b);
    info.replaceChildren(
      h('b', {}, idx.map(i => ops[i].full_label).join(', ')),
      sorted.length
        ? ` ran in stage${sorted.length === 1 ? '' : 's'} ${sorted.join(', ')}: ` +
            `its ${formatCount(n, 'task attempt')} ${n === 1 ? 'is' : 'are'} highlighted ` +
            'on the Timeline, its stages selected in Stages and its stragglers in ' +
            'Stragglers.'
        : ' ran in no stage of this window (driver-side or structural).'
    );
  };
  const onChange = (): void => {
    const idx = selected();
    tbl.select(idx);
    describe(idx);
    if (quiet) {
      return;
    }
    const codes = new Set<number>();
    idx.forEach(i => ops[i].stage_codes.forEach(c => codes.add(c)));
    const sel: Selection = idx.length
      ? {
          kind: 'operator',
          key: idx.map(i => ops[i].key).join(','),
          stageCodes: [...codes].sort((a, b) => a - b)
        }
      : { kind: 'none' };
    ctx.bus.select(sel, 'query');
  };
  const signal = source.selected.properties.indices.change;
  signal.connect(onChange);
  ctx.onDispose(() => signal.disconnect(onChange));
  const unsubscribe = ctx.bus.subscribe((s, from) => {
    if (from === 'query') {
      return;
    }
    const keys = s.kind === 'operator' ? new Set(s.key.split(',')) : null;
    const want = keys
      ? ops.map((r, i) => (keys.has(r.key) ? i : -1)).filter(i => i >= 0)
      : [];
    quiet = true;
    try {
      source.selected.indices = want;
    } finally {
      quiet = false;
    }
  });
  ctx.onDispose(unsubscribe);
  describe([]);

  return showModel(ctx, graph(ctx, q, source), plan).then(() => undefined);
}

export const queryTab: ITab = {
  key: 'query',
  title: 'Query',
  render: renderQuery
};
