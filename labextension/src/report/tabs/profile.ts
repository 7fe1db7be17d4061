/**
 * The Profile tab (issue P): the window's on-CPU stack samples of Spark's task
 * threads as an icicle flame graph (BokehJS rectangles, root on top, one
 * colour per plan operator the samples were attributed to), filters by stage,
 * operator and executor that redraw it and the hot functions from the chosen
 * samples, a search that marks the frames whose name matches and counts their
 * samples (../profilefilter.ts), the operators' sampled split, the hot
 * functions, and the collapsed stacks as a download (flamegraph.pl,
 * speedscope). Shown only when the run has a profile. Data:
 * jupyter_perf/render/views/profile.py.
 */
import { formatCount, formatDuration } from '../../format';
import { showModel } from '../bokeh';
import { h } from '../dom';
import { addStyles } from '../style';
import { IColumn, rowsOf, table } from '../table';
import { ITab, ITabContext, Selection } from '../types';
import {
  IFlameLayout,
  IFlameTree,
  IHotCells,
  IProfileFilter,
  IProfileGroups,
  NO_FILTER,
  executorLabel,
  filterChoices,
  groupsFor,
  hotRows,
  isFiltered,
  layoutFlame,
  searchFlame
} from '../profilefilter';

export interface IProfileData {
  summary: {
    method: string;
    /** what one sample is, in the collector's words (absent in older payloads) */
    sample?: string;
    /** why thread dumps sampled the window instead of async-profiler ('' if they did not) */
    fallback?: string;
    interval_ms: number;
    note: string;
    samples: number;
    other_jvm_samples: number;
    sampled_cpu_ms: number;
    spark_cpu_ms: number;
    sampled_to_spark: number | null;
    kinds: Record<string, number>;
  };
  /** the Python UDF workers' samples (py-spy); absent or null without them */
  python?: {
    method?: string;
    sample?: string;
    samples?: number;
    sampled_cpu_ms?: number;
    note?: string;
  } | null;
  operators: Record<string, any>[];
  /** the samples' groups (operator x executor); older payloads have none */
  groups?: IProfileGroups;
  flame: IFlameTree;
  min_share: number;
  hot: Record<string, any[]>;
  hot_cells?: IHotCells;
  hot_total: number;
  max_hot: number;
  collapsed: string;
  collapsed_truncated: boolean;
  file_name: string;
}

const CSS = `
.jp-perf-profile .jp-perf-profile-tools { margin: 6px 0; display: flex; gap: 12px;
  align-items: center; flex-wrap: wrap; }
.jp-perf-profile .jp-perf-table-wrap { overflow-x: auto; }
.jp-perf-profile table.jp-perf-table { width: max-content; }
.jp-perf-profile h4 { margin: 10px 0 4px; }
`;

// One colour per operator (the first ones the widest), gray for frames with none.
const PALETTE = [
  '#e45756',
  '#4c78a8',
  '#f58518',
  '#54a24b',
  '#b279a2',
  '#eeca3b',
  '#72b7b2',
  '#ff9da6',
  '#9d755d',
  '#bab0ac'
];
const NONE_COLOR = '#c7c7c7';
const MATCH_COLOR = '#d62dd6';
// frames of operators other than the selected ones
const DIM_COLOR = '#ececec';
const ROW_PX = 17;
const CHAR_PX = 6.5;
const ASSUMED_WIDTH_PX = 900;

function colours(d: IProfileData): Map<string, string> {
  const out = new Map<string, string>();
  d.operators.forEach(o => {
    if (o.label !== '(no operator)') {
      out.set(o.label, PALETTE[out.size % PALETTE.length]);
    }
  });
  return out;
}

function intro(d: IProfileData): HTMLElement {
  const s = d.summary;
  const ratio =
    s.sampled_to_spark !== null && s.sampled_to_spark !== undefined
      ? ` (${(100 * s.sampled_to_spark).toFixed(0)}% of Spark's)`
      : '';
  return h(
    'div',
    {},
    h(
      'b',
      {},
      `${formatCount(s.samples, 'sample')} of the task threads, ` +
        `${formatDuration(s.sampled_cpu_ms)} of CPU (sampled)${ratio}`
    ),
    ' ',
    h(
      'span',
      { class: 'jp-perf-muted' },
      `${s.method}${s.sample ? `, ${s.sample}` : ''}. ` +
        `Spark's executor CPU time of the window: ${formatDuration(
          s.spark_cpu_ms
        )} (measured). ` +
        `The JVM's other threads (JIT compilers, GC, Spark's own): ${formatCount(
          s.other_jvm_samples,
          'sample'
        )}, not shown. ` +
        'A sample goes to the plan operator its stack names (the whole-stage-codegen ' +
        'id of the generated code and the Spark classes on it); frames narrower than ' +
        `${(100 * d.min_share).toFixed(1)}% of the samples are left out.` +
        (s.fallback
          ? ` Thread dumps, not async-profiler: ${s.fallback}.`
          : '') +
        (s.note ? ` ${s.note}` : '')
    ),
    pythonLine(d)
  );
}

/** The Python workers' samples, counted apart from the task threads' ('' without). */
function pythonLine(d: IProfileData): HTMLElement | string {
  const p = d.python;
  if (!p) {
    return '';
  }
  const text = p.samples
    ? `Python UDF workers: ${formatCount(p.samples, 'sample')}, ` +
      `${formatDuration(p.sampled_cpu_ms ?? 0)} of CPU (sampled; ${p.method ?? 'py-spy'}` +
      `${p.sample ? `: ${p.sample}` : ''}), in the flame graph under [Python worker].` +
      (p.note ? ` ${p.note}` : '')
    : `Python UDF workers: no samples${p.note ? ` (${p.note})` : ''}.`;
  return h(
    'div',
    {
      class: 'jp-perf-muted jp-perf-profile-python',
      'data-view': 'profile-python'
    },
    text
  );
}

function download(d: IProfileData): HTMLElement {
  const link = h(
    'a',
    { href: '#', class: 'jp-perf-profile-download' },
    'Download the collapsed stacks'
  );
  link.addEventListener('click', ev => {
    ev.preventDefault();
    const blob = new Blob([d.collapsed], { type: 'text/plain' });
    const url = URL.createObjectURL(blob);
    const a = h('a', { href: url, download: d.file_name });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  });
  return h(
    'span',
    {},
    link,
    h(
      'span',
      { class: 'jp-perf-muted' },
      ' (flamegraph.pl, speedscope' +
        (d.collapsed_truncated ? '; the heaviest stacks only' : '') +
        ')'
    )
  );
}

function label(name: string, n: number, total: number): string {
  const chars = Math.floor(((n / total) * ASSUMED_WIDTH_PX) / CHAR_PX);
  if (chars < 4) {
    return '';
  }
  const short = name.length > chars ? name.slice(0, chars - 1) + '…' : name;
  return short;
}

/** The data source's columns for a layout of the flame (colours by frame). */
function flameColumns(
  d: IProfileData,
  at: IFlameLayout,
  colour: string[]
): Record<string, any[]> {
  const f = d.flame;
  const total = at.total || 1;
  return {
    left: at.start,
    right: at.start.map((s, r) => s + at.n[r]),
    top: at.depth.map(x => -x),
    bottom: at.depth.map(x => -x - 0.95),
    mid: at.depth.map(x => -x - 0.5),
    name: at.node.map(i => f.name[i]),
    operator: at.node.map(i => f.operator[i]),
    samples: at.n,
    own: at.own,
    share: at.n.map(n => `${((100 * n) / total).toFixed(1)}%`),
    text: at.node.map((i, r) => label(f.name[i], at.n[r], total)),
    color: at.node.map(i => colour[i])
  };
}

/** The icicle: a BokehJS figure (not yet shown) and its data source. */
export function flameFigure(
  ctx: ITabContext,
  d: IProfileData
): { fig: any; source: any; base: string[] } {
  const B: any = ctx.bokeh;
  const f = d.flame;
  const at = layoutFlame(f, null);
  const total = at.total || 1;
  const byOp = colours(d);
  const base = f.operator.map((o, i) =>
    i === 0 ? NONE_COLOR : (byOp.get(o) ?? NONE_COLOR)
  );
  const depth = f.depth.length ? Math.max(...f.depth) + 1 : 1;
  const source = new B.ColumnDataSource({
    name: 'jp-profile-flame',
    data: flameColumns(d, at, base)
  });
  const fig = B.Plotting.figure({
    height: Math.min(1400, 60 + depth * ROW_PX),
    sizing_mode: 'stretch_width',
    x_range: new B.Range1d({ start: 0, end: total }),
    y_range: new B.Range1d({ start: -depth, end: 0 }),
    tools: 'xpan,xwheel_zoom,box_zoom,reset,save',
    toolbar_location: 'above',
    name: 'jp-profile-flame'
  });
  fig.xaxis.visible = false;
  fig.yaxis.visible = false;
  fig.xgrid.visible = false;
  fig.ygrid.visible = false;
  const rects = fig.quad({
    left: { field: 'left' },
    right: { field: 'right' },
    top: { field: 'top' },
    bottom: { field: 'bottom' },
    fill_color: { field: 'color' },
    line_color: '#ffffff',
    line_width: 0.5,
    source
  });
  fig.text({
    x: { field: 'left' },
    y: { field: 'mid' },
    text: { field: 'text' },
    text_font_size: '10px',
    text_baseline: 'middle',
    x_offset: 2,
    source
  });
  fig.add_tools(
    new B.HoverTool({
      renderers: [rects],
      tooltips: [
        ['function', '@name'],
        ['samples (sampled)', '@samples (@share)'],
        ['self samples', '@own'],
        ['operator', '@operator']
      ]
    })
  );
  return { fig, source, base };
}

function hotColumns(): IColumn[] {
  return [
    { key: 'function', title: 'function', format: 'text' },
    {
      key: 'self_samples',
      title: 'self',
      format: 'int',
      help: 'samples with this function at the top of the stack (sampled)'
    },
    {
      key: 'total_samples',
      title: 'total',
      format: 'int',
      help: 'samples with this function anywhere on the stack (sampled)'
    },
    {
      key: 'share',
      title: 'share',
      format: 'pct',
      help: "self samples over all the task threads' samples"
    },
    {
      key: 'operator',
      title: 'operator',
      format: 'text',
      help: 'the plan operator most of its samples were attributed to'
    },
    { key: 'kind', title: 'kind', format: 'text' },
    { key: 'stages', title: 'stages', format: 'text' },
    {
      key: 'executors',
      title: 'executors',
      format: 'text',
      help: 'the executors its self samples were taken on'
    }
  ];
}

function operatorColumns(): IColumn[] {
  return [
    { key: 'label', title: 'operator', format: 'text' },
    { key: 'samples', title: 'samples', format: 'int', help: 'sampled' },
    {
      key: 'sampled_ms',
      title: 'CPU (sampled)',
      format: 'ms',
      help: 'samples × the sampling interval'
    },
    { key: 'share', title: 'share', format: 'pct' },
    { key: 'kinds', title: 'what the stacks show', format: 'text' },
    { key: 'stages', title: 'stages', format: 'text' }
  ];
}

/** The stage, operator and executor filters (selects of the groups' values). */
function filterBar(
  g: IProfileGroups,
  onChange: (f: IProfileFilter) => void
): HTMLElement {
  const c = filterChoices(g);
  const pick = (
    what: string,
    all: string,
    values: string[],
    labels: string[]
  ): HTMLSelectElement => {
    const sel = h('select', { class: `jp-perf-profile-${what}`, title: what });
    sel.append(h('option', { value: '' }, all));
    labels.forEach((text, i) =>
      sel.append(h('option', { value: String(i) }, text))
    );
    sel.dataset.values = JSON.stringify(values);
    return sel;
  };
  const stage = pick(
    'stage',
    'every stage',
    c.stages.map(String),
    c.stages.map(s => `stage ${s}`)
  );
  const op = pick('operator', 'every operator', c.operators, c.operators);
  const ex = pick(
    'executor',
    'every executor',
    c.executors,
    c.executors.map(e => `executor ${executorLabel(e)}`)
  );
  const read = (): IProfileFilter => ({
    stage: stage.value === '' ? null : c.stages[Number(stage.value)],
    operator: op.value === '' ? null : c.operators[Number(op.value)],
    executor: ex.value === '' ? null : c.executors[Number(ex.value)]
  });
  [stage, op, ex].forEach(s =>
    s.addEventListener('change', () => onChange(read()))
  );
  return h(
    'span',
    { class: 'jp-perf-profile-filters' },
    'Filter: ',
    stage,
    ' ',
    op,
    ' ',
    ex
  );
}

export const profileTab: ITab = {
  key: 'profile',
  title: 'Profile',
  async render(el, ctx) {
    addStyles('profile', CSS, el.ownerDocument);
    el.classList.add('jp-perf-profile');
    const d = ctx.data.tabs.profile as IProfileData;
    el.append(intro(d));
    if (!d.summary.samples && !d.python?.samples) {
      el.append(
        h('div', {}, 'No task thread was on CPU while the window was sampled.')
      );
      return;
    }
    const search = h('input', {
      type: 'search',
      placeholder: 'search functions (e.g. regex, decompress)',
      size: '36'
    });
    const found = h('span', { class: 'jp-perf-muted jp-perf-profile-found' });
    const groups = d.groups && d.hot_cells && d.flame.cells ? d.groups : null;
    let filter: IProfileFilter = NO_FILTER;
    const tools = h('div', { class: 'jp-perf-profile-tools' });
    el.append(tools);
    const filtered = h('div', {
      class: 'jp-perf-muted jp-perf-profile-filtered'
    });
    const chart = h('div', { class: 'jp-perf-profile-flame' });
    el.append(filtered, chart);
    const { fig, source, base } = flameFigure(ctx, d);
    let layout = layoutFlame(d.flame, null);
    // the frames' colours: the operators' own, dimmed outside a selected operator
    let shown = base.slice();
    const recolor = (): void => {
      const s = searchFlame(d.flame.name, layout, search.value);
      const color = layout.node.map((i, r) =>
        s.hit[r] ? MATCH_COLOR : shown[i]
      );
      source.data = { ...source.data, color };
      found.textContent = search.value.trim()
        ? `${formatCount(s.frames, 'frame')} match: ` +
          `${formatCount(s.samples, 'sample')} (sampled)`
        : '';
      chart.dataset.matches = String(s.frames);
      chart.dataset.matchSamples = String(s.samples);
    };
    search.addEventListener('input', recolor);
    const hotWrap = h('div', { class: 'jp-perf-profile-hot' });
    const drawHot = (): void => {
      const rows =
        groups && isFiltered(filter)
          ? hotRows(
              d.hot_cells as IHotCells,
              groups,
              groupsFor(groups, filter),
              layout.total,
              d.max_hot
            )
          : rowsOf(d.hot);
      hotWrap.replaceChildren(
        table(rows, hotColumns(), {
          view: 'profile-hot',
          limit: d.max_hot,
          maxHeight: 420
        }).el
      );
    };
    const applyFilter = (f: IProfileFilter): void => {
      filter = f;
      const chosen = groups && isFiltered(f) ? groupsFor(groups, f) : null;
      layout = layoutFlame(d.flame, chosen);
      source.data = flameColumns(d, layout, shown);
      fig.x_range.end = layout.total || 1;
      fig.x_range.start = 0;
      chart.dataset.samples = String(layout.total);
      chart.dataset.frames = String(layout.node.length);
      filtered.textContent = chosen
        ? `Filtered: ${formatCount(layout.total, 'sample')} (sampled) of ` +
          `${formatCount(d.summary.samples, 'sample')}.`
        : '';
      recolor();
      drawHot();
    };
    tools.append(search, found);
    if (groups) {
      tools.append(filterBar(groups, applyFilter));
    }
    tools.append(download(d));
    chart.dataset.samples = String(layout.total);
    chart.dataset.frames = String(layout.node.length);
    const focus = h('div', { class: 'jp-perf-muted jp-perf-profile-focus' });
    el.insertBefore(focus, chart);
    const ops = table(d.operators, operatorColumns(), {
      view: 'profile-operators',
      maxHeight: 260,
      onSelect: i => {
        const key = d.operators[i].key as string;
        const sel: Selection = key
          ? { kind: 'operator', key, stageCodes: stageCodesOf(ctx, key) }
          : { kind: 'none' };
        show(sel);
        ctx.bus.select(sel, 'profile');
      }
    });
    // An operator selected here or in another tab (Query): its frames keep their colour,
    // the others are dimmed, and a line says how many samples it has.
    const show = (s: Selection): void => {
      const keys = s.kind === 'operator' ? new Set(s.key.split(',')) : null;
      const rows = keys ? d.operators.filter(o => keys.has(o.key)) : [];
      const labels = new Set(rows.map(o => o.label as string));
      const frames: string[] = d.flame.operator;
      shown = keys
        ? base.map((c, i) => (i === 0 || labels.has(frames[i]) ? c : DIM_COLOR))
        : base.slice();
      ops.select(
        d.operators
          .map((o, i) => (keys?.has(o.key) ? i : -1))
          .filter(i => i >= 0)
      );
      const samples = rows.reduce((n, o) => n + (o.samples as number), 0);
      focus.textContent = !keys
        ? ''
        : rows.length
          ? `Showing ${rows.map(o => o.label).join(', ')}: ` +
            `${formatCount(samples, 'sample')} (sampled); the other operators' frames are dimmed.`
          : 'The selected operator has no samples in this profile.';
      chart.dataset.operator = keys ? [...keys].join(',') : '';
      chart.dataset.shownSamples = String(samples);
      recolor();
    };
    ctx.onDispose(
      ctx.bus.subscribe((s, from) => {
        if (from !== 'profile') {
          show(s);
        }
      })
    );
    drawHot();
    el.append(
      h('h4', {}, 'Operators (sampled)'),
      ops.el,
      h('h4', {}, 'Hot functions'),
      hotWrap
    );
    if (ctx.bus.current().kind === 'operator') {
      show(ctx.bus.current());
    }
    await showModel(ctx, fig, chart);
  }
};

/** The stage codes the Query tab knows for an operator key (none without it). */
function stageCodesOf(ctx: ITabContext, key: string): number[] {
  const q = ctx.data.tabs.query as { operators?: Record<string, any>[] };
  const op = (q?.operators ?? []).find(o => o.key === key);
  return op ? (op.stage_codes as number[]) : [];
}
