/**
 * Tables of the report: plain DOM (no jQuery, no SlickGrid), sortable by a
 * click on a header, one unit per column (the column's format), numbers right
 * aligned and never shortened. Every cell's text is text.
 *
 * Test hooks (tests compare the numbers a view draws with what the kernel
 * computed, and with today's report: tests/render/golden/): the table has
 * `data-view="<name>"`, each header `data-col="<column key>"`, each numeric
 * cell `data-value="<the raw number>"` (empty for a missing value).
 */
import { formatBytes, formatDuration, UNKNOWN } from '../format';
import { h } from './dom';

export type ColumnFormat =
  | 'text'
  | 'int'
  | 'ms'
  | 'bytes'
  | 'pct'
  | 'float'
  | ((value: any, row: Record<string, any>) => string | Node);

export interface IColumn {
  key: string;
  title: string;
  format: ColumnFormat;
  /** a tooltip for the header: what the column is, measured or estimated */
  help?: string;
}

export interface ITableOptions {
  view: string;
  /** rows shown at most (the caption says how many there are) */
  limit?: number;
  /** sort by this column first (descending for numbers) */
  sortBy?: string;
  /** called with the row's index in `rows` when a row is clicked */
  onSelect?: (index: number) => void;
  maxHeight?: number;
}

const NUMERIC = new Set(['int', 'ms', 'bytes', 'pct', 'float']);

export function formatCell(format: ColumnFormat, value: any): string {
  if (value === null || value === undefined || Number.isNaN(value)) {
    return UNKNOWN;
  }
  switch (format) {
    case 'int':
      return Math.round(value).toLocaleString('en-US');
    case 'ms':
      return formatDuration(value);
    case 'bytes':
      return formatBytes(value);
    case 'pct':
      return `${(100 * value).toFixed(1)}%`;
    case 'float':
      return value.toLocaleString('en-US', {
        minimumFractionDigits: 2,
        maximumFractionDigits: 2
      });
    default:
      return String(value);
  }
}

export interface ITableHandle {
  el: HTMLElement;
  /** Mark rows (indices into `rows`) as selected; scrolls the first into view. */
  select(indices: number[]): void;
}

/** `rows` as a table; `columns` say what each column holds and how it reads. */
export function table(
  rows: Record<string, any>[],
  columns: IColumn[],
  options: ITableOptions
): ITableHandle {
  const limit = options.limit ?? 1000;
  let order = rows.map((_, i) => i);
  let sortKey = options.sortBy ?? null;
  let descending = true;
  const tbl = h('table', { class: 'jp-perf-table' });
  tbl.dataset.view = options.view;
  const head = h('tr');
  for (const col of columns) {
    const numeric = typeof col.format === 'string' && NUMERIC.has(col.format);
    const th = h(
      'th',
      { class: numeric ? 'jp-perf-num' : '', title: col.help },
      col.title
    );
    th.dataset.col = col.key;
    th.style.cursor = 'pointer';
    th.addEventListener('click', () => {
      descending = sortKey === col.key ? !descending : numeric;
      sortKey = col.key;
      sort();
      fill();
    });
    head.append(th);
  }
  const body = h('tbody');
  tbl.append(h('thead', {}, head), body);
  let selected = new Set<number>();

  function sort(): void {
    if (sortKey === null) {
      return;
    }
    const key = sortKey;
    order = rows.map((_, i) => i);
    order.sort((a, b) => {
      const x = rows[a][key],
        y = rows[b][key];
      const c =
        typeof x === 'number' && typeof y === 'number'
          ? x - y
          : String(x ?? '').localeCompare(String(y ?? ''));
      return descending ? -c : c;
    });
  }

  function fill(): void {
    const trs: HTMLElement[] = [];
    for (const i of order.slice(0, limit)) {
      const row = rows[i];
      const tr = h('tr');
      tr.dataset.row = String(i);
      if (selected.has(i)) {
        tr.classList.add('jp-perf-selected');
      }
      for (const col of columns) {
        const value = row[col.key];
        const numeric =
          typeof col.format === 'string' && NUMERIC.has(col.format);
        const shown =
          typeof col.format === 'function'
            ? col.format(value, row)
            : formatCell(col.format, value);
        const td = h('td', { class: numeric ? 'jp-perf-num' : '' }, shown);
        if (numeric) {
          td.dataset.value =
            value === null || value === undefined ? '' : String(value);
        }
        tr.append(td);
      }
      if (options.onSelect) {
        tr.style.cursor = 'pointer';
        tr.addEventListener('click', () => options.onSelect!(i));
      }
      trs.push(tr);
    }
    body.replaceChildren(...trs);
  }

  sort();
  fill();
  const wrap = h('div', { class: 'jp-perf-table-wrap' }, tbl);
  if (options.maxHeight) {
    wrap.style.maxHeight = `${options.maxHeight}px`;
    wrap.style.overflowY = 'auto';
  }
  if (rows.length > limit) {
    wrap.append(
      h(
        'div',
        { class: 'jp-perf-muted' },
        `the first ${limit.toLocaleString('en-US')} of ${rows.length.toLocaleString('en-US')} rows`
      )
    );
  }
  return {
    el: wrap,
    select(indices: number[]): void {
      selected = new Set(indices);
      fill();
      const first = body.querySelector('tr.jp-perf-selected');
      first?.scrollIntoView?.({ block: 'nearest' });
    }
  };
}

/** Columns of row objects (`{col: [values]}`) as a list of row objects. */
export function rowsOf(columns: Record<string, any[]>): Record<string, any>[] {
  const keys = Object.keys(columns);
  const n = keys.length ? columns[keys[0]].length : 0;
  const rows: Record<string, any>[] = [];
  for (let i = 0; i < n; i++) {
    const row: Record<string, any> = {};
    for (const k of keys) {
      row[k] = columns[k][i];
    }
    rows.push(row);
  }
  return rows;
}
