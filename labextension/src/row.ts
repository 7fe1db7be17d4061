/**
 * How one run reads in the sidebar: its title, second line, tooltip, badge and
 * status. Pure functions of a `GET runs` row; the panel writes them as text.
 */

import {
  formatCount,
  formatDuration,
  formatRelativeTime,
  pyFixed
} from './format';

import { IRunRow, ITopOperator } from './types';

/**
 * The run's title, `jupyter_perf/fmt.py` `run_title`'s rule: its label, else the
 * first line of the cell, else the Spark application id, else the run id;
 * each trimmed, the first that is not empty (tests/render/text_vectors.json
 * pins the two together).
 */
export function runTitle(
  row: Pick<IRunRow, 'label' | 'first_line' | 'run_id'> &
    Partial<Pick<IRunRow, 'app_id'>>
): string {
  for (const text of [row.label, row.first_line, row.app_id, row.run_id]) {
    const t = (text ?? '').trim();
    if (t) {
      return t;
    }
  }
  return '';
}

/** The notebook's file name ("etl.ipynb"), or '' when the run has none. */
export function notebookName(
  row: Pick<IRunRow, 'notebook' | 'notebook_path'>
): string {
  const path = row.notebook_path || row.notebook || '';
  const parts = path.split(/[\\/]/).filter(p => p);
  return parts.length ? parts[parts.length - 1] : '';
}

export interface IBadge {
  /** the diagnosis in a few words: the stored verdict headline */
  text: string;
  /** the stored verdict category, safe as a CSS class suffix */
  kind: string;
  /** what a screen reader says, and the hover text: the whole verdict */
  label: string;
}

/**
 * The diagnosis badge: the headline and category the analysis stored with the
 * run (`verdict_headline`, `verdict_category`), never words parsed out of the
 * verdict sentence; null when the run has none (stored before they existed,
 * or the analysis failed): the verdict is still in the row's tooltip.
 */
export function verdictBadge(
  row: Pick<IRunRow, 'verdict' | 'verdict_category' | 'verdict_headline'>
): IBadge | null {
  const text = (row.verdict_headline || '').trim();
  const kind = (row.verdict_category || '')
    .toLowerCase()
    .replace(/[^a-z_]/g, '');
  if (!text || !kind) {
    return null;
  }
  const verdict = (row.verdict || '').trim();
  return {
    text,
    kind,
    label: `Diagnosis: ${text}` + (verdict ? ` (${verdict})` : '')
  };
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

/**
 * The parts of one row's second line, "etl.ipynb · 4.21 s · 5 min ago": the
 * panel lets the notebook name give way when the sidebar is narrow, never the
 * duration or the age. Empty parts are left out.
 */
export function runMeta(
  row: IRunRow,
  nowMs: number
): { notebook: string; duration: string; age: string } {
  return {
    notebook: notebookName(row),
    duration: formatDuration(row.wall_ms),
    age: formatRelativeTime(row.created_ms, nowMs)
  };
}

/** The second line as one string (the parts of `runMeta` joined). */
export function runSubtitle(row: IRunRow, nowMs: number): string {
  const { notebook, duration, age } = runMeta(row, nowMs);
  return [notebook, duration, age].filter(s => s).join(' · ');
}

/**
 * The row's third line: the operator with the most task time, "top:
 * HashAggregate 52% · line 3" (share and line once the run's details are
 * known), and its hover text; null when the run has no top operator.
 */
export function operatorLine(
  row: Pick<IRunRow, 'top_operator'>,
  top?: ITopOperator | null
): { text: string; title: string } | null {
  const name = (top?.label || top?.name || row.top_operator || '').trim();
  if (!name) {
    return null;
  }
  const share =
    typeof top?.share === 'number' && Number.isFinite(top.share)
      ? `${pyFixed(100 * top.share, 0)}%`
      : '';
  const line = top?.line;
  let text = `top: ${name}` + (share ? ` ${share}` : '');
  if (line) {
    text += ` · line ${line.line}`;
  }
  const how = top?.kind ? `, ${top.kind}` : '';
  const title = [
    `Most task time: ${name}` + (share ? ` (${share} of task time${how})` : ''),
    (top?.description || '').trim(),
    line ? `line ${line.line}: ${line.text}` : ''
  ]
    .filter(s => s)
    .join('\n');
  return { text, title };
}

/** The row's tooltip: everything, as plain text. */
export function runTooltip(row: IRunRow): string {
  const lines = [
    runTitle(row),
    `run ${row.run_id}` + (row.app_id ? ` · ${row.app_id}` : ''),
    row.notebook_path || row.notebook || '',
    [
      formatCount(row.num_jobs ?? 0, 'job'),
      formatCount(row.num_stages ?? 0, 'stage'),
      formatCount(row.num_tasks ?? 0, 'task attempt')
    ].join(' · '),
    row.verdict || ''
  ];
  return lines.filter(s => s).join('\n');
}
