/**
 * How one run reads in the sidebar: its title, second line, tooltip, badge and
 * status. Pure functions of a `GET runs` row; the panel writes them as text.
 */

import { formatDuration, formatRelativeTime } from './format';

import { IRunRow } from './types';

/** The row's title: its label, else the first line of the cell, else the run id. */
export function runTitle(
  row: Pick<IRunRow, 'label' | 'first_line' | 'run_id'>
): string {
  const label = (row.label || '').trim();
  if (label) {
    return label;
  }
  const first = (row.first_line || '').trim();
  return first || row.run_id;
}

/** The notebook's file name ("etl.ipynb"), or '' when the run has none. */
export function notebookName(
  row: Pick<IRunRow, 'notebook' | 'notebook_path'>
): string {
  const path = row.notebook_path || row.notebook || '';
  const parts = path.split(/[\\/]/).filter(p => p);
  return parts.length ? parts[parts.length - 1] : '';
}

export type BadgeKind =
  | 'cpu'
  | 'gc'
  | 'shuffle'
  | 'io'
  | 'driver'
  | 'overhead'
  | 'wait'
  | 'none'
  | 'other';

export interface IBadge {
  text: string;
  kind: BadgeKind;
}

/**
 * The verdict badge: the verdict's head, before the first ':' ("CPU-bound",
 * "I/O-bound (estimated)", "Driver-bound"), or null when there is no verdict.
 */
export function verdictBadge(
  verdict: string | null | undefined
): IBadge | null {
  const text = (verdict || '').trim();
  if (!text) {
    return null;
  }
  const colon = text.indexOf(':');
  let head =
    colon > 0 && colon <= 40 ? text.slice(0, colon) : text.split(/\s+/)[0];
  if (/^no spark tasks ran/i.test(text)) {
    head = 'No tasks';
  }
  head = head.replace(/[.;,]+$/, '');
  if (head.length > 28) {
    head = head.slice(0, 27) + '…';
  }
  const lower = head.toLowerCase();
  const kind: BadgeKind = lower.startsWith('cpu')
    ? 'cpu'
    : lower.startsWith('gc')
      ? 'gc'
      : lower.startsWith('shuffle')
        ? 'shuffle'
        : lower.startsWith('i/o') || lower.startsWith('io')
          ? 'io'
          : lower.startsWith('driver')
            ? 'driver'
            : lower.startsWith('overhead')
              ? 'overhead'
              : lower.startsWith('waiting')
                ? 'wait'
                : lower.startsWith('no tasks')
                  ? 'none'
                  : 'other';
  return { text: head, kind };
}

/** The status as shown: '' for ok (the usual case needs no noise). */
export function statusText(status: string | null | undefined): string {
  switch (status) {
    case 'ok':
    case '':
    case null:
    case undefined:
      return '';
    case 'no-jobs':
      return 'no Spark jobs';
    default:
      return status;
  }
}

/** Text of one row's second line: "etl.ipynb · 4.2 s · 5 min ago". */
export function runSubtitle(row: IRunRow, nowMs: number): string {
  return [
    notebookName(row),
    formatDuration(row.wall_ms),
    formatRelativeTime(row.created_ms, nowMs)
  ]
    .filter(s => s)
    .join(' · ');
}

/** The row's tooltip: everything, as plain text. */
export function runTooltip(row: IRunRow): string {
  const lines = [
    runTitle(row),
    `run ${row.run_id}` + (row.app_id ? ` · ${row.app_id}` : ''),
    row.notebook_path || row.notebook || '',
    `${row.num_jobs ?? 0} jobs · ${row.num_stages ?? 0} stages · ${row.num_tasks ?? 0} task attempts`,
    row.verdict || ''
  ];
  return lines.filter(s => s).join('\n');
}
