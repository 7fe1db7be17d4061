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

import { IRunRow, IRunSeries, ITopOperator } from './types';

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

/** One dot of a sparkline: where it sits and what the run was. */
export interface ISparkDot {
  cx: number;
  cy: number;
  /** 'regression' | 'improvement' | 'cold' | 'run' */
  kind: string;
  last: boolean;
}

/** A sparkline as numbers (the panel draws it as SVG: `sparklineElement`). */
export interface ISparkline {
  width: number;
  height: number;
  /** the polyline's points, "x,y x,y …" */
  points: string;
  dots: ISparkDot[];
  /** the newest run's dot is red: it is a flagged regression */
  regression: boolean;
  title: string;
}

export const SPARK_WIDTH = 56;
export const SPARK_HEIGHT = 14;

/**
 * The wall-time sparkline of a row's cell (`GET runs` `series`, this run
 * last): one point per run, higher = slower, scaled between the series' least
 * and greatest wall time; dots for flagged runs, and for this run (red when
 * the noise rule flagged it a regression). null without at least two runs.
 */
export function sparkline(
  series: IRunSeries | null | undefined
): ISparkline | null {
  const walls = (series?.wall_ms ?? []).map(Number);
  const n = walls.length;
  if (!series || n < 2 || walls.some(w => !Number.isFinite(w))) {
    return null;
  }
  const pad = 2;
  const lo = Math.min(...walls);
  const hi = Math.max(...walls);
  const w = SPARK_WIDTH - 2 * pad;
  const hgt = SPARK_HEIGHT - 2 * pad;
  const xs = walls.map((_, i) => pad + (w * i) / (n - 1));
  const ys = walls.map(v =>
    hi > lo ? pad + hgt * (1 - (v - lo) / (hi - lo)) : SPARK_HEIGHT / 2
  );
  const r2 = (v: number) => Math.round(v * 100) / 100;
  const kind = (i: number): string =>
    series.regression[i]
      ? 'regression'
      : series.improvement[i]
        ? 'improvement'
        : series.cold[i]
          ? 'cold'
          : 'run';
  const dots: ISparkDot[] = [];
  for (let i = 0; i < n; i++) {
    const last = i === n - 1;
    if (last || kind(i) === 'regression' || kind(i) === 'improvement') {
      dots.push({ cx: r2(xs[i]), cy: r2(ys[i]), kind: kind(i), last });
    }
  }
  const regression = !!series.regression[n - 1];
  const flagged = series.regression.filter(x => x).length;
  const title =
    `wall time of this cell's last ${n} runs (measured): ` +
    `${formatDuration(lo)}–${formatDuration(hi)}; this run ${formatDuration(walls[n - 1])}` +
    (regression
      ? ', a regression (beyond the noise of the warm runs before it)'
      : series.improvement[n - 1]
        ? ', an improvement (beyond the noise of the warm runs before it)'
        : '') +
    (flagged && !regression ? `; ${formatCount(flagged, 'regression')}` : '');
  return {
    width: SPARK_WIDTH,
    height: SPARK_HEIGHT,
    points: xs.map((x, i) => `${r2(x)},${r2(ys[i])}`).join(' '),
    dots,
    regression,
    title
  };
}

const SPARK_COLORS: Record<string, string> = {
  regression: '#d62728',
  improvement: '#2ca02c',
  cold: '#9e9e9e',
  run: '#616161'
};

/** The sparkline as an `<svg>` (numbers only; no user text goes in). */
export function sparklineElement(
  spark: ISparkline,
  doc: Document = document
): SVGSVGElement {
  const NS = 'http://www.w3.org/2000/svg';
  const svg = doc.createElementNS(NS, 'svg');
  svg.setAttribute('class', 'jp-perf-sparkline');
  svg.setAttribute('width', String(spark.width));
  svg.setAttribute('height', String(spark.height));
  svg.setAttribute('viewBox', `0 0 ${spark.width} ${spark.height}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', spark.title);
  svg.dataset.regression = spark.regression ? '1' : '0';
  const title = doc.createElementNS(NS, 'title');
  title.textContent = spark.title;
  const line = doc.createElementNS(NS, 'polyline');
  line.setAttribute('points', spark.points);
  line.setAttribute('fill', 'none');
  line.setAttribute('stroke', '#9e9e9e');
  line.setAttribute('stroke-width', '1');
  svg.append(title, line);
  for (const d of spark.dots) {
    const c = doc.createElementNS(NS, 'circle');
    c.setAttribute('cx', String(d.cx));
    c.setAttribute('cy', String(d.cy));
    c.setAttribute('r', d.last ? '2.2' : '1.6');
    c.setAttribute('fill', SPARK_COLORS[d.kind] ?? SPARK_COLORS.run);
    c.setAttribute('class', `jp-perf-spark-dot jp-perf-spark-${d.kind}`);
    if (d.last) {
      c.dataset.last = '1';
    }
    svg.append(c);
  }
  return svg;
}
