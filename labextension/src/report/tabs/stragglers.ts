/**
 * The Stragglers tab (port of render/tabs/stragglers.py): one row per
 * straggler or data-skewed task attempt with the causes that explain it.
 * Data: jupyter_perf/render/views/stragglers.py.
 *
 * Clicking a row publishes the attempt (`{kind: 'task', pos}`, its position
 * in the report's per-task arrays) so the Timeline highlights it; the panel's
 * `data-selected-pos` says which. An operator selected elsewhere selects the
 * stragglers of its stages.
 */
import { formatCount, formatDuration, pyFixed } from '../../format';
import { h } from '../dom';
import { addStyles } from '../style';
import { taskData } from '../tasks';
import { IColumn, ITableHandle, rowsOf, table } from '../table';
import { ITab, ITabContext, Selection } from '../types';
import { stageLink, wrapped } from './stages';

export interface IStragglersData {
  rows: Record<string, any[]>;
  n: number;
  n_stragglers: number;
  n_skewed: number;
  max_rows: number;
  threshold: number;
}

const CSS = `
.jp-perf-stragglers .jp-perf-table-wrap { overflow-x: auto; }
.jp-perf-stragglers table.jp-perf-table { width: max-content; }
.jp-perf-stragglers table.jp-perf-table thead th { position: sticky; top: 0;
  background: #fff; z-index: 1; }
.jp-perf-stragglers .jp-perf-selected-info { margin: 4px 0; }
`;

/** `1.5` as Python's `:g` writes it. */
function g(x: number): string {
  return String(Number(x.toPrecision(6)));
}

function columns(ui: string | null): IColumn[] {
  return [
    {
      key: 'stage_id',
      title: 'stage',
      format: (v, row) => stageLink(ui, v, row.stage_attempt),
      help: ui ? 'stage id (opens the stage in the Spark UI)' : 'stage id'
    },
    { key: 'task_id', title: 'task', format: 'int', help: 'task id' },
    {
      key: 'index',
      title: 'index',
      format: 'int',
      help: "the task's index in its stage"
    },
    { key: 'attempt', title: 'attempt', format: 'int' },
    { key: 'executor_id', title: 'executor', format: 'text' },
    { key: 'host', title: 'host', format: 'text' },
    { key: 'kind', title: 'kind', format: 'text' },
    {
      key: 'duration_ms',
      title: 'duration',
      format: 'ms',
      help: 'finish − launch (measured)'
    },
    {
      key: 'stage_median_ms',
      title: 'stage median',
      format: 'ms',
      help: "the median duration of the stage's task attempts"
    },
    {
      key: 'rate_ratio',
      title: 'rate / median',
      format: 'float',
      help: "inverse progress rate (duration per byte of input + shuffle read) over the stage's median"
    },
    {
      key: 'duration_ratio',
      title: 'duration / median',
      format: 'float',
      help: "duration over the stage's median duration"
    },
    {
      key: 'bytes_read',
      title: 'input + shuffle read',
      format: 'bytes'
    },
    {
      key: 'causes',
      title: 'causes (each alone explains it)',
      format: v => wrapped(v),
      help:
        'a cause explains the straggler when it would not be one had that cause taken no ' +
        'time in any task of the stage (estimated causes say so)'
    },
    { key: 'data_skew', title: 'data skew', format: 'text' }
  ];
}

function intro(d: IStragglersData): HTMLElement {
  if (!d.n) {
    return h('div', {}, h('b', {}, 'No stragglers and no data-skewed tasks.'));
  }
  const t = g(d.threshold);
  const more =
    d.n > d.max_rows
      ? ` Showing the ${d.max_rows.toLocaleString('en-US')} with the largest excess over ` +
        `their stage median (of ${d.n.toLocaleString('en-US')}).`
      : '';
  return h(
    'div',
    {},
    h(
      'b',
      {},
      `${formatCount(d.n_stragglers, 'straggler')}, ` +
        `${formatCount(d.n_skewed, 'data-skewed task')}`
    ),
    ' ',
    h(
      'span',
      { class: 'jp-perf-muted' },
      "A straggler's progress rate (duration per byte read) is more than " +
        `${t}× its stage's median; a cause explains it when the task would not be a ` +
        'straggler had that cause taken no time in any task of the stage. ',
      h('i', {}, 'Data skew'),
      ": slower than its stage's median task because it had more data (input + shuffle " +
        'read). Click a row to highlight the attempt on the Timeline tab; click a header ' +
        `to sort.${more}`
    )
  );
}

function indicesWhere(
  rows: Record<string, any>[],
  test: (row: Record<string, any>) => boolean
): number[] {
  const out: number[] = [];
  rows.forEach((r, i) => test(r) && out.push(i));
  return out;
}

/** What the info line says of the selected attempt. */
function describe(ctx: ITabContext, row: Record<string, any>): Node[] {
  const pos: number = row.pos;
  if (pos < 0) {
    return [
      document.createTextNode(
        `Task attempt ${row.task_id} (stage ${row.stage_id}, index ${row.index}) is not ` +
          "among the report's task attempts: the Timeline cannot show it."
      )
    ];
  }
  const D = taskData(ctx.data);
  const start = D.start[pos];
  const lane = D.lane[pos];
  const laneName = D.meta.lanes?.[lane];
  return [
    document.createTextNode(
      `Task attempt ${row.task_id} (stage ${row.stage_id}, index ${row.index}, ` +
        `${formatDuration(D.dur[pos])} long, starting at ${pyFixed(start / 1000, 3)} s) ` +
        'is highlighted on the '
    ),
    h('b', {}, 'Timeline'),
    document.createTextNode(
      ` tab${laneName !== undefined ? `, on lane “${laneName}”` : ''}.`
    )
  ];
}

export const stragglersTab: ITab = {
  key: 'stragglers',
  title: 'Stragglers',
  render(el, ctx) {
    addStyles('stragglers', CSS, el.ownerDocument);
    el.classList.add('jp-perf-stragglers');
    const d = ctx.data.tabs.stragglers as IStragglersData;
    el.append(intro(d));
    if (!d.n) {
      return;
    }
    const rows = rowsOf(d.rows);
    const stageIds: number[] = ctx.data.tasks_meta?.stage_ids ?? [];
    const info = h(
      'div',
      { class: 'jp-perf-selected-info' },
      h('span', { class: 'jp-perf-muted' }, 'No row selected.')
    );
    let handle: ITableHandle | null = null;

    function pick(i: number): void {
      const row = rows[i];
      handle?.select([i]);
      el.dataset.selectedPos = String(row.pos);
      info.replaceChildren(...describe(ctx, row));
      if (row.pos >= 0) {
        ctx.bus.select({ kind: 'task', pos: row.pos }, 'stragglers');
      }
    }

    handle = table(rows, columns(ctx.data.header.spark_ui), {
      view: 'stragglers',
      limit: d.max_rows,
      maxHeight: 460,
      onSelect: pick
    });
    el.append(info, handle.el);

    const onSelect = (s: Selection, source: string) => {
      if (source === 'stragglers') {
        return;
      }
      let picked: number[] = [];
      if (s.kind === 'operator') {
        const want = new Set(s.stageCodes.map(c => stageIds[c]));
        picked = indicesWhere(rows, r => want.has(r.stage_id));
      } else if (s.kind === 'task') {
        picked = indicesWhere(rows, r => r.pos === s.pos);
      }
      handle?.select(picked);
      if (s.kind === 'task' && picked.length) {
        el.dataset.selectedPos = String(s.pos);
        info.replaceChildren(...describe(ctx, rows[picked[0]]));
      } else {
        delete el.dataset.selectedPos;
        info.replaceChildren(
          h('span', { class: 'jp-perf-muted' }, 'No row selected.')
        );
      }
    };
    ctx.onDispose(ctx.bus.subscribe(onSelect));
    // a selection made before this tab was first shown (tabs are drawn lazily)
    if (ctx.bus.current().kind !== 'none') {
      onSelect(ctx.bus.current(), '');
    }
    Object.defineProperty(el, 'jpBus', {
      value: ctx.bus,
      configurable: true
    });
  }
};
