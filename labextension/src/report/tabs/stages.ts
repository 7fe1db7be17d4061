/**
 * The Stages tab (port of render/tabs/stages.py): per stage attempt, Spark's
 * REST /stages sums, task-time quantiles over the attempts that ran and the
 * time breakdown (shares of the stage's task time, or ms), then stacked bars of
 * the stages with the most task time. Data: jupyter_perf/render/views/stages.py.
 *
 * Skipped stages (Spark reused their shuffle output; no task ran) are folded
 * behind a checkbox. An operator selected elsewhere (the Query tab) selects
 * its stages' rows, a task attempt (Stragglers, Timeline) its stage's; the
 * panel's `data-selected-stages` lists their ids.
 */
import { formatDuration } from '../../format';
import { componentBars, showModel } from '../bokeh';
import { callSite, h, uiLink } from '../dom';
import { addStyles } from '../style';
import { taskData } from '../tasks';
import { IColumn, ITableHandle, rowsOf, table } from '../table';
import { ITab, ITabContext, Selection } from '../types';

/** One breakdown component as analysis/components.py `as_json()` has it. */
export interface IComponentInfo {
  key: string;
  label: string;
  short: string;
  kind: string; // "measured" | "estimated"
  color: string;
  spark_metric: string;
  in_run: boolean;
}

export interface IStagesData {
  rows: Record<string, any[]>;
  components: IComponentInfo[];
  show_attempt: boolean;
  n_stages: number;
  n_skipped: number;
  n_ran: number;
  bar_rows: number[];
  max_bar_stages: number;
  /** the hatch pattern of an estimated part (render/style.py, shared with the Summary) */
  estimated_hatch: string;
}

const QUANTILES = ['min', 'p25', 'p50', 'p75', 'p95', 'max'];
const TABLE_HEIGHT = 420;

const CSS = `
.jp-perf-stages .jp-perf-table-wrap { overflow-x: auto; }
.jp-perf-stages table.jp-perf-table { width: max-content; }
.jp-perf-stages table.jp-perf-table thead th { position: sticky; top: 0; background: #fff;
  z-index: 2; }
.jp-perf-stages table.jp-perf-table th:first-child,
.jp-perf-stages table.jp-perf-table td:first-child { position: sticky; left: 0;
  background: #fff; z-index: 1; }
.jp-perf-stages table.jp-perf-table thead th:first-child { z-index: 3; }
.jp-perf-stages table.jp-perf-table tr.jp-perf-selected td:first-child { background: #fff3b0; }
.jp-perf-stages .jp-perf-wrap { display: block; min-width: 160px; max-width: 420px;
  white-space: pre-wrap; overflow-wrap: anywhere; }
.jp-perf-stages .jp-perf-controls { margin: 4px 0; }
.jp-perf-stages .jp-perf-controls label { margin-right: 16px; display: inline-block; }
.jp-perf-stages .jp-perf-legend-item { white-space: nowrap; margin-right: 12px;
  display: inline-block; }
.jp-perf-stages .jp-perf-swatch { display: inline-block; width: 11px; height: 11px;
  vertical-align: -1px; margin-right: 3px; box-sizing: border-box; }
`;

/** "stage 5"; the attempt only when Spark retried the stage ("stage 5 (attempt 1)"). */
export function stageLabel(stageId: number, attempt: number): string {
  return `stage ${stageId}` + (attempt > 0 ? ` (attempt ${attempt})` : '');
}

/** The stage id as a link to its Spark UI page (text when there is no UI). */
export function stageLink(
  ui: string | null,
  stageId: number,
  attempt: number
): HTMLElement {
  return uiLink(
    ui,
    `/stages/stage/?id=${stageId}&attempt=${attempt}`,
    String(stageId)
  );
}

/** Text that wraps (call sites, operator lists): never cut off. */
export function wrapped(value: unknown): HTMLElement {
  return h('span', { class: 'jp-perf-wrap' }, String(value ?? ''));
}

/** A legend square: estimated components hatched, as the bars draw them. */
export function swatch(comp: IComponentInfo): HTMLElement {
  const el = h('span', { class: 'jp-perf-swatch' });
  el.style.border = `1px solid ${comp.color}`;
  el.style.background =
    comp.kind === 'estimated'
      ? `repeating-linear-gradient(135deg, ${comp.color} 0 3px, #fff 3px 5px)`
      : comp.color;
  return el;
}

function kindWords(c: IComponentInfo): string {
  return c.kind === 'estimated'
    ? `estimated (${c.spark_metric})`
    : `measured by Spark (${c.spark_metric})`;
}

function columns(d: IStagesData, ui: string | null, inMs: boolean): IColumn[] {
  const cols: IColumn[] = [
    {
      key: 'stage_id',
      title: 'stage',
      format: (v, row) => stageLink(ui, v, row.attempt),
      help: ui ? 'stage id (opens the stage in the Spark UI)' : 'stage id'
    }
  ];
  if (d.show_attempt) {
    cols.push({
      key: 'attempt',
      title: 'attempt',
      format: 'int',
      help: 'stage attempt (Spark retried the stage)'
    });
  }
  cols.push({ key: 'status', title: 'status', format: 'text' });
  if (d.rows.operators.some(x => !!x)) {
    // (no SQL plan, e.g. RDD work: no column of blanks)
    cols.push({
      key: 'operators',
      title: 'operators (input → output)',
      format: v => wrapped(v),
      help: "the SQL plan's operators that ran in the stage"
    });
  }
  cols.push(
    {
      key: 'call_site',
      title: 'call site',
      format: (v, row) => callSite(v, row.call_site_text),
      help: "where the code called the action: the measured cell's line (its text on hover), else Spark's stage name"
    },
    {
      key: 'task_attempts',
      title: 'attempts that ran',
      format: 'int',
      help: 'task attempts that ran (failed, killed and speculative included)'
    },
    { key: 'failed_tasks', title: 'failed', format: 'int' },
    {
      key: 'task_time_ms',
      title: 'task time',
      format: 'ms',
      help: "the sum of the stage's task attempts' durations (every component below)"
    }
  );
  for (const q of QUANTILES) {
    cols.push({
      key: q,
      title: q,
      format: 'ms',
      help: `${q} of the task attempts' durations (finish − launch)`
    });
  }
  const around = d.components.filter(c => !c.in_run);
  for (const c of d.components.filter(c => c.in_run)) {
    cols.push({
      key: inMs ? `bd_${c.key}` : `share_${c.key}`,
      title: c.short,
      format: inMs ? 'ms' : 'pct',
      help:
        `${c.label}: ${inMs ? 'time' : "share of the stage's task time"}, ` +
        kindWords(c)
    });
  }
  cols.push(
    {
      key: inMs ? 'bd_overhead' : 'share_overhead',
      title: 'overhead',
      format: inMs ? 'ms' : 'pct',
      help:
        `${inMs ? 'time' : "share of the stage's task time"} around the run: ` +
        around.map(c => `${c.label} (${c.kind})`).join(', ')
    },
    { key: 'input_bytes', title: 'input', format: 'bytes' },
    { key: 'shuffle_read_bytes', title: 'shuffle read', format: 'bytes' },
    { key: 'shuffle_write_bytes', title: 'shuffle write', format: 'bytes' },
    { key: 'output_bytes', title: 'output', format: 'bytes' },
    { key: 'memory_spilled_bytes', title: 'spill (memory)', format: 'bytes' },
    { key: 'disk_spilled_bytes', title: 'spill (disk)', format: 'bytes' }
  );
  return cols;
}

function intro(d: IStagesData): HTMLElement {
  const inRun = d.components.filter(c => c.in_run);
  const measured = inRun.filter(c => c.kind !== 'estimated').map(c => c.short);
  const estimated = inRun.filter(c => c.kind === 'estimated').map(c => c.short);
  const around = d.components.filter(c => !c.in_run).map(c => c.label);
  const folded = d.n_skipped
    ? ` ${d.n_skipped} skipped stage${d.n_skipped === 1 ? ' is' : 's are'} folded below the table.`
    : '';
  return h(
    'div',
    {},
    h('b', {}, 'Stages'),
    ' ',
    h(
      'span',
      { class: 'jp-perf-muted' },
      `${d.n_ran} stage${d.n_ran === 1 ? '' : 's'} ran.${folded} Task-time quantiles over ` +
        'the attempts that ran (finish − launch); breakdown shares of each stage’s task ' +
        `time — ${measured.join(', ')} measured by Spark, ${estimated.join(', ')} ` +
        `estimated; overhead = ${around.join(', ')}; sums equal Spark's REST /stages. ` +
        'Hover a header for what it holds, click it to sort; scroll sideways for more ' +
        'columns (the stage stays in view).'
    )
  );
}

/** The stacked per-stage breakdown bars (seconds of task time per component). */
async function stageBars(
  ctx: ITabContext,
  d: IStagesData,
  rows: Record<string, any>[],
  el: HTMLElement
): Promise<void> {
  const top = d.bar_rows.map(i => rows[i]);
  if (!top.length) {
    return;
  }
  const B: any = ctx.bokeh;
  const labels = top.map(r => stageLabel(r.stage_id, r.attempt));
  const title =
    d.n_ran <= d.max_bar_stages
      ? 'task time per stage'
      : `task time of the ${d.max_bar_stages} stages with the most (of ${d.n_ran})`;
  const cols: Record<string, any[]> = {
    y: [],
    left: [],
    right: [],
    color: [],
    alpha: [],
    hatch: [],
    comp: [],
    kind: [],
    s: [],
    ops: []
  };
  const left = top.map(() => 0);
  const legend: HTMLElement[] = [];
  for (const c of d.components) {
    const w = top.map(r => (r[`bd_${c.key}`] || 0) / 1000);
    if (!w.some(x => x > 0)) {
      continue;
    }
    const est = c.kind === 'estimated';
    top.forEach((r, i) => {
      cols.y.push(labels[i]);
      cols.left.push(left[i]);
      cols.right.push(left[i] + w[i]);
      cols.color.push(c.color);
      cols.alpha.push(est ? 0.55 : 1.0);
      cols.hatch.push(est ? d.estimated_hatch : ' ');
      cols.comp.push(c.label);
      cols.kind.push(c.kind);
      cols.s.push(formatDuration(w[i] * 1000));
      cols.ops.push(r.operators || '–');
      left[i] += w[i];
    });
    legend.push(
      h('span', { class: 'jp-perf-legend-item' }, swatch(c), c.label)
    );
  }
  const fig = B.Plotting.figure({
    y_range: [...labels].reverse(),
    height: Math.max(120, 70 + 24 * labels.length),
    sizing_mode: 'stretch_width',
    toolbar_location: null,
    title,
    x_axis_label: 'seconds of task time',
    tools: ''
  });
  const source = new B.ColumnDataSource({ data: cols });
  componentBars(B, fig, source, [
    ['stage', '@y'],
    ['operators', '@ops'],
    ['component', '@comp'],
    ['', '@kind'],
    ['time', '@s']
  ]);
  const chart = h('div', { class: 'jp-perf-stage-bars' });
  el.append(
    chart,
    h('div', {}, ...legend),
    h(
      'div',
      { class: 'jp-perf-muted' },
      'Hatched and lighter: estimated (not measured by Spark).'
    )
  );
  await showModel(ctx, fig, chart);
}

export const stagesTab: ITab = {
  key: 'stages',
  title: 'Stages',
  async render(el, ctx) {
    addStyles('stages', CSS, el.ownerDocument);
    el.classList.add('jp-perf-stages');
    const d = ctx.data.tabs.stages as IStagesData;
    const ui = ctx.data.header.spark_ui;
    const all = rowsOf(d.rows);
    all.forEach((r, i) => (r._row = i));
    const stageIds: number[] = ctx.data.tasks_meta?.stage_ids ?? [];
    let showSkipped = false;
    let inMs = false;
    let want = new Set<number>(); // stage ids selected by an operator
    let handle: ITableHandle | null = null;
    const holder = h('div');

    function draw(): void {
      const rows = showSkipped ? all : all.filter(r => !r.skipped);
      handle = table(rows, columns(d, ui, inMs), {
        view: 'stages',
        limit: Math.max(1000, rows.length),
        maxHeight: TABLE_HEIGHT
      });
      for (const c of d.components) {
        if (c.kind === 'estimated') {
          handle.el
            .querySelector(`th[data-col$='_${c.key}']`)
            ?.classList.add('jp-perf-est');
        }
      }
      holder.replaceChildren(handle.el);
      mark(rows);
    }

    function mark(rows = showSkipped ? all : all.filter(r => !r.skipped)) {
      const picked: number[] = [];
      rows.forEach((r, i) => want.has(r.stage_id) && picked.push(i));
      handle?.select(picked);
      el.dataset.selectedStages = [...want].sort((x, y) => x - y).join(',');
    }

    const controls = h('div', { class: 'jp-perf-controls' });
    const msBox = h('input', { type: 'checkbox', name: 'jp-stages-ms' });
    msBox.addEventListener('change', () => {
      inMs = msBox.checked;
      draw();
    });
    controls.append(
      h(
        'label',
        {},
        msBox,
        ' breakdown in time per component (instead of shares of task time)'
      )
    );
    if (d.n_skipped) {
      const box = h('input', { type: 'checkbox', name: 'jp-stages-skipped' });
      box.addEventListener('change', () => {
        showSkipped = box.checked;
        draw();
      });
      const n = d.n_skipped;
      controls.append(
        h(
          'label',
          {},
          box,
          ` show the ${n} skipped stage${n > 1 ? 's' : ''} ` +
            '(Spark reused their output: no task ran)'
        )
      );
    }
    el.append(intro(d), controls, holder);
    draw();

    // an operator: its stages; a task attempt (a straggler, a timeline bar): its stage
    const onSelect = (s: Selection, source: string) => {
      if (source === 'stages') {
        return;
      }
      if (s.kind === 'operator') {
        want = new Set(s.stageCodes.map(c => stageIds[c]));
      } else if (s.kind === 'task') {
        const D = taskData(ctx.data);
        const sid =
          s.pos >= 0 && s.pos < D.n ? stageIds[D.stage[s.pos]] : undefined;
        want = new Set(sid === undefined ? [] : [sid]);
      } else {
        want = new Set<number>();
      }
      mark();
    };
    ctx.onDispose(ctx.bus.subscribe(onSelect));
    if (ctx.bus.current().kind !== 'none') {
      onSelect(ctx.bus.current(), '');
    }
    // test hook: the browser tests publish selections as another tab would
    Object.defineProperty(el, 'jpBus', {
      value: ctx.bus,
      configurable: true
    });

    const bars = h('div');
    el.append(bars);
    await stageBars(ctx, d, all, bars);
  }
};
