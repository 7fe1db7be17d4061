/**
 * The comparison of two runs (issue J), drawn by the one renderer (issue Q):
 * the MIME renderer in JupyterLab (mime.ts, `application/vnd.jupyter-perf.
 * compare+json`), and standalone pages (standalone.ts: the sidebar's compare
 * tab, `jp.compare_html`, `jupyter-perf compare --html`, the server's export).
 *
 * Input: analysis/compare.py's `summary()` and the breakdown components
 * (analysis/components.py's list, carried in the payload). Top first: the
 * change in one sentence; its split into parts that add up to the measured
 * change (the residual shown); what A's report predicted for B beside what B
 * measured; the setup and the settings that differ; operators and stages
 * matched by shape; data volume, stragglers and skew; how it was compared.
 * Every user string goes in as text (dom.ts `h`), never as markup.
 */
import {
  UNKNOWN,
  formatBytes,
  formatChange,
  formatCount,
  formatDuration,
  pyFixed
} from '../format';
import constants from '../constants.json';
import { Child, h } from './dom';
import { addCompareStyles } from './style';

/** The vendor MIME type of a comparison (shared with Python: constants.json). */
export const COMPARE_MIME_TYPE: string = constants.compare_mime_type;

export const OPERATOR_ROWS = 40;
export const STAGE_ROWS = 60;
export const DESCRIPTION_CHARS = 120;

/** One part of the change's split, as compare.py `split_parts` writes it. */
export interface ISplitPart {
  label: string;
  ms: number;
  color: string;
  estimated: boolean;
  kind: string;
}

/** The compare MIME payload (compare.py `compare_payload`): the summary, the
 * split's parts and the data-volume rows' words (key, words, unit). */
export interface IComparePayload {
  format: number;
  summary: Record<string, any>;
  split: ISplitPart[];
  volume_labels: [string, string, string][];
}

/** The payload if this renderer can draw it, else a one-line reason. */
export function parseComparePayload(
  data: unknown
): { payload: IComparePayload } | { error: string } {
  const obj = data as Record<string, any> | null;
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
    return { error: 'the comparison payload is not an object' };
  }
  if (obj.format !== 1) {
    return {
      error: `comparison payload format ${String(obj.format)} is not one this extension draws (1); update jupyter-perf`
    };
  }
  const s = obj.summary;
  if (typeof s !== 'object' || s === null || Array.isArray(s)) {
    return { error: 'the comparison payload has no summary' };
  }
  const split = Array.isArray(obj.split) ? obj.split : [];
  const volumeLabels = Array.isArray(obj.volume_labels)
    ? obj.volume_labels
    : [];
  return {
    payload: { format: 1, summary: s, split, volume_labels: volumeLabels }
  };
}

/** `compare.py` `_signed_ms`: "+1.25 s" for more time, "-12 ms" for less. */
export function signedMs(value: number | null | undefined): string {
  if (value === null || value === undefined) {
    return UNKNOWN;
  }
  const text = formatDuration(value);
  return value > 0 && !text.startsWith('-') && !text.startsWith('0 ')
    ? '+' + text
    : text;
}

// A number and its unit that must stay on one line: "−12.84 s" (compare.py's
// `(?<=\d) (?=(?:ms|s|…|%)\b)`; Python's `\d` and `\w` are Unicode-aware, so
// are these classes, and its `\b` after "%" wants a word character next).
const WORD = '[\\p{L}\\p{N}_]';
const UNIT_GAP = new RegExp(
  `(?<=\\p{Nd}) (?=(?:(?:ms|s|min|h|B|KiB|MiB|GiB|TiB)(?!${WORD})|%(?=${WORD})))`,
  'gu'
);

/** Text whose values never wrap mid-value (a no-break space before each unit). */
export function keepValues(text: string): string {
  return text.replace(UNIT_GAP, '\u00a0');
}

/** Python's `str()` of a JSON value, as the comparison shows settings. */
function str(v: unknown): string {
  if (v === null || v === undefined) {
    return '';
  }
  if (typeof v === 'boolean') {
    return v ? 'True' : 'False';
  }
  return String(v);
}

/** Python's `f"{x:+.1%}"`. */
function signedPct(x: number): string {
  const text = pyFixed(x * 100, 1);
  return (text.startsWith('-') ? '' : '+') + text + '%';
}

function cls(delta: number | null | undefined): string {
  if (!delta) {
    return '';
  }
  return delta > 0 ? 'slower' : 'faster';
}

function changeSpan(value: number | null | undefined): HTMLElement {
  return h('span', { class: cls(value) || undefined }, signedMs(value));
}

function muted(...children: Child[]): HTMLElement {
  return h('div', { class: 'muted' }, ...children);
}

/** A bar from the middle of a track: right for more time, left for less. */
function bar(
  value: number,
  scale: number,
  color: string,
  estimated = false
): HTMLElement {
  const width = scale <= 0 ? 0 : Math.min(110, (110 * Math.abs(value)) / scale);
  const left = value >= 0 ? 110 : 110 - width;
  const b = h('span', { class: estimated ? 'bar est' : 'bar' });
  b.style.position = 'absolute';
  b.style.left = `${pyFixed(left, 1)}px`;
  b.style.width = `${pyFixed(width, 1)}px`;
  b.style.backgroundColor = color;
  return h('span', { class: 'track' }, h('span', { class: 'mid' }), b);
}

type Cell = Child | Child[];

function table(
  headers: [string, boolean][],
  rows: Cell[][],
  rowClasses?: string[]
): HTMLTableElement {
  const cells = (row: Cell[], tag: 'th' | 'td') =>
    row.map((c, k) =>
      h(
        tag,
        { class: headers[k][1] ? 'num' : undefined },
        ...(Array.isArray(c) ? c : [c])
      )
    );
  return h(
    'table',
    {},
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...cells(
          headers.map(([title]) => title),
          'th'
        )
      )
    ),
    h(
      'tbody',
      {},
      ...rows.map((row, i) =>
        h('tr', { class: rowClasses?.[i] || undefined }, ...cells(row, 'td'))
      )
    )
  );
}

function split(s: Record<string, any>, parts: ISplitPart[]): HTMLElement[] {
  const comps = s.components || {};
  const scale = Math.max(
    ...parts.map(p => Math.abs(p.ms)),
    Math.abs(s.wall_delta_ms),
    1e-9
  );
  const rows: Cell[][] = parts.map(p => [
    p.label,
    h('span', { class: 'muted' }, p.kind),
    changeSpan(p.ms),
    bar(p.ms, scale, p.color, p.estimated)
  ]);
  const classes = parts.map(() => '');
  let sum = 0;
  for (const v of Object.values(comps)) {
    sum += v as number;
  }
  const total = s.driver_ms + sum + s.parallelism_ms + s.residual_ms;
  const totalCell = changeSpan(total);
  totalCell.dataset.key = 'sum_of_parts_ms';
  totalCell.dataset.value = String(total);
  rows.push([
    'sum of the parts = measured change',
    '',
    totalCell,
    bar(s.wall_delta_ms, scale, '#222')
  ]);
  classes.push('total');
  const par = s.parallelism || {};
  const task = s.task_time_ms || {};
  return [
    h('h2', {}, 'Where the change comes from'),
    table(
      [
        ['part', false],
        ['', false],
        ['change', true],
        ['', false]
      ],
      rows,
      classes
    ),
    muted(
      `Task time ${formatDuration(task.a)} → ${formatDuration(task.b)}; ` +
        `tasks ran ${pyFixed(par.a, 2)} → ${pyFixed(par.b, 2)} at once on ` +
        "average. A component's part is its change of task time at A's " +
        'parallelism; hatched parts are estimated (what Spark leaves ' +
        'unexplained, attributed by rule).'
    )
  ];
}

function predictions(s: Record<string, any>): HTMLElement[] {
  const preds: Record<string, any>[] = s.predicted_vs_measured || [];
  if (!preds.length) {
    return [];
  }
  const rows: Cell[][] = preds.map(p => {
    let said: string;
    if (p.predicted_ms !== null && p.predicted_ms !== undefined) {
      said = formatDuration(p.predicted_ms);
    } else if (p.exact === false) {
      const advised = p.advised_predicted_ms;
      said =
        'nothing for this value' +
        (advised !== null && advised !== undefined
          ? ` (${formatDuration(advised)} for ${str(p.advised_value)})`
          : '');
    } else {
      said = 'not simulated';
    }
    return [
      str(p.what),
      said,
      formatDuration(p.measured_ms),
      p.signed_error !== null && p.signed_error !== undefined
        ? signedPct(p.signed_error)
        : UNKNOWN
    ];
  });
  return [
    h('h2', {}, 'Predicted vs measured'),
    muted(
      "What A's report predicted for B's change, beside what B measured " +
        '(error = (predicted − measured) / measured; every comparison with a ' +
        'prediction is kept: ',
      h('code', {}, 'jupyter-perf accuracy'),
      ')'
    ),
    table(
      [
        ['B changed', false],
        ['A predicted', true],
        ['B measured', true],
        ['error', true]
      ],
      rows
    )
  ];
}

function config(s: Record<string, any>): HTMLElement[] {
  const setup: Record<string, [unknown, unknown]> = s.setup || {};
  const rows: Cell[][] = Object.entries(setup).map(([k, v]) => [
    k,
    str(v[0]),
    str(v[1]),
    v[0] !== v[1] ? 'changed' : ''
  ]);
  const diff = Object.entries(
    (s.config_diff || {}) as Record<string, [unknown, unknown]>
  ).filter(([k]) => !(k in setup));
  const out: HTMLElement[] = [
    h('h2', {}, 'Setup and settings'),
    table(
      [
        ['', false],
        ['A', false],
        ['B', false],
        ['', false]
      ],
      rows
    )
  ];
  if (diff.length) {
    const notSet = (v: unknown) =>
      v === null || v === undefined ? '(not set)' : str(v);
    out.push(
      table(
        [
          ['setting that differs', false],
          ['A', false],
          ['B', false]
        ],
        diff.map(([k, [a, b]]) => [h('code', {}, k), notSet(a), notSet(b)])
      )
    );
  } else {
    out.push(muted('No Spark setting differs (secrets redacted).'));
  }
  return out;
}

function msTriplet(d: Record<string, any>): Cell[] {
  const side = (v: unknown) =>
    v !== null && v !== undefined ? formatDuration(v as number) : '–';
  return [side(d.a), side(d.b), changeSpan(d.delta)];
}

/** `compare.py` `_short`: at most DESCRIPTION_CHARS characters (code points). */
export function short(text: unknown): string {
  const desc = Array.from(text ? str(text) : '');
  return desc.length <= DESCRIPTION_CHARS
    ? desc.join('')
    : desc.slice(0, DESCRIPTION_CHARS - 1).join('') + '…';
}

/** The operator's description; both sides' when a matched pair differs. */
function descriptions(r: Record<string, any>): Child[] {
  const a = r.a_description;
  const b = r.b_description;
  if (a !== null && a !== undefined && b !== null && b !== undefined) {
    if (str(a) !== str(b)) {
      return [
        h('span', { class: 'muted' }, `A: ${short(a)}`),
        h('br'),
        h('span', { class: 'muted' }, `B: ${short(b)}`)
      ];
    }
  }
  return [h('span', { class: 'muted' }, short(r.description))];
}

function operators(s: Record<string, any>): HTMLElement[] {
  const ops: Record<string, any>[] = s.operators || [];
  if (!ops.length) {
    return [
      h('h2', {}, 'Operators'),
      muted(
        'No SQL plan in either run (RDD work, or a collector that could not read the plan).'
      )
    ];
  }
  const how = (r: Record<string, any>) =>
    r.matched_by === 'shape'
      ? 'same shape'
      : r.matched_by === 'name'
        ? 'same name'
        : r.b_node === null || r.b_node === undefined
          ? 'only in A'
          : 'only in B';
  const rows: Cell[][] = ops
    .slice(0, OPERATOR_ROWS)
    .map(r => [
      str(r.name),
      descriptions(r),
      how(r),
      ...msTriplet(r.task_time_ms || {}),
      `${formatCount(r.rows_out?.a)} → ${formatCount(r.rows_out?.b)}`
    ]);
  const out = [
    h('h2', {}, 'Operators'),
    muted(
      'Matched by plan shape and operator names, never by ids; largest change of task time first.'
    ),
    table(
      [
        ['operator', false],
        ['', false],
        ['matched', false],
        ['A task time', true],
        ['B task time', true],
        ['change', true],
        ['rows out A → B', true]
      ],
      rows
    )
  ];
  if (ops.length > OPERATOR_ROWS) {
    out.push(
      muted(`${ops.length - OPERATOR_ROWS} more operators changed less.`)
    );
  }
  return out;
}

function ratio(v: number | null | undefined): string {
  return v === null || v === undefined ? '–' : `${pyFixed(v, 1)}×`;
}

function stages(s: Record<string, any>): HTMLElement[] {
  const list: Record<string, any>[] = s.stages || [];
  if (!list.length) {
    return [];
  }
  const rows: Cell[][] = list.slice(0, STAGE_ROWS).map(r => {
    let how: string;
    if (!r.matched) {
      how =
        r.b_stage === null || r.b_stage === undefined
          ? 'only in A'
          : 'only in B';
    } else {
      how = r.same_shape ? 'same shape' : 'changed shape';
    }
    const skew = r.skew || {};
    const none = (v: unknown) => v === null || v === undefined;
    const sk =
      none(skew.a) && none(skew.b)
        ? '–'
        : `${ratio(skew.a)} → ${ratio(skew.b)}`;
    return [
      str(r.name),
      str(r.a_stage || '–'),
      str(r.b_stage || '–'),
      how,
      `${formatCount(r.num_tasks?.a)} → ${formatCount(r.num_tasks?.b)}`,
      ...msTriplet(r.executor_run_time_ms || {}),
      `${formatBytes(r.shuffle_read_bytes?.a)} → ${formatBytes(
        r.shuffle_read_bytes?.b
      )}`,
      sk
    ];
  });
  return [
    h('h2', {}, 'Stages'),
    muted(
      'Stages that ran (skipped ones left out), matched in submission order by their plan operators, else their call site.'
    ),
    table(
      [
        ['stage', false],
        ['A', false],
        ['B', false],
        ['matched', false],
        ['tasks', true],
        ['A run time', true],
        ['B run time', true],
        ['change', true],
        ['shuffle read', true],
        ['longest / median task', true]
      ],
      rows
    )
  ];
}

function isEmpty(d: unknown): boolean {
  return !d || (typeof d === 'object' && Object.keys(d as object).length === 0);
}

function volume(
  s: Record<string, any>,
  labels: [string, string, string][]
): HTMLElement[] {
  const vol = s.volume || {};
  const rows: Cell[][] = [];
  for (const [key, label, unit] of labels) {
    const d = vol[key];
    if (isEmpty(d)) {
      continue;
    }
    const f = unit === 'bytes' ? formatBytes : formatCount;
    const delta: number = d.delta || 0;
    const sign = delta > 0 ? '+' : '';
    rows.push([
      label,
      f(d.a),
      f(d.b),
      `${sign}${f(delta)}` + (d.a ? ` (${formatChange(d.b, d.a)})` : '')
    ]);
  }
  const strag = s.stragglers || {};
  for (const [key, label] of [
    ['stragglers', 'stragglers (slow for their data)'],
    ['data_skew', 'data-skewed tasks (slow because of more data)']
  ]) {
    const d = strag[key];
    if (!isEmpty(d)) {
      rows.push([
        label,
        formatCount(d.a),
        formatCount(d.b),
        `${(d.delta || 0) > 0 ? '+' : ''}${formatCount(d.delta)}`
      ]);
    }
  }
  return [
    h('h2', {}, 'Data volume, stragglers and skew'),
    table(
      [
        ['', false],
        ['A', true],
        ['B', true],
        ['change', true]
      ],
      rows
    )
  ];
}

function footer(s: Record<string, any>): HTMLElement[] {
  const lines: string[] = (s.notes || []).map(str);
  const me = s.model_error || {};
  lines.push(
    `Replay model error: A ${pyFixed(100 * (me.a || 0), 1)}%, ` +
      `B ${pyFixed(100 * (me.b || 0), 1)}%.`
  );
  if (!s.same_app) {
    const versions = s.spark_versions || ['', ''];
    lines.push(
      `A and B ran in different Spark applications (Spark ${
        str(versions[0]) || '?'
      } and ${str(versions[1]) || '?'}).`
    );
  }
  const warnings = s.warnings || {};
  const warn: [string, unknown][] = [];
  for (const side of ['a', 'b']) {
    for (const w of warnings[side] || []) {
      warn.push([side.toUpperCase(), w]);
    }
  }
  return [
    h('h2', {}, 'How this was compared'),
    ...lines.map(x => muted(x)),
    ...warn.map(([side, w]) =>
      h('div', { class: 'warn' }, `⚠ run ${side}: ${str(w)}`)
    )
  ];
}

function head(s: Record<string, any>): HTMLElement[] {
  const side = (name: 'A' | 'B', title: unknown, run: unknown, wall: number) =>
    h(
      'div',
      {},
      `${name}: `,
      h('b', {}, str(title)),
      ' ',
      h(
        'span',
        { class: 'muted' },
        `run ${str(run)} · `,
        h(
          'span',
          {
            dataset: {
              key: `wall_${name.toLowerCase()}_ms`,
              value: String(wall)
            }
          },
          formatDuration(wall)
        ),
        ' wall'
      )
    );
  const out = [
    h(
      'div',
      { class: 'jp-cmp-head' },
      h('b', {}, 'jupyter-perf'),
      ' · comparison'
    ),
    side('A', s.a_title, s.a, s.wall_a_ms),
    side('B', s.b_title, s.b, s.wall_b_ms),
    h('div', { class: 'jp-cmp-sentence' }, keepValues(str(s.sentence)))
  ];
  const advice = s.advice;
  if (advice) {
    const verdict = str(advice.verdict);
    out.push(
      h(
        'div',
        {
          class:
            'jp-cmp-advice' +
            (/^[A-Za-z0-9_-]+$/.test(verdict)
              ? ` jp-cmp-advice-${verdict}`
              : '')
        },
        h('b', {}, 'Advice:'),
        ' ',
        keepValues(str(advice.words))
      )
    );
  }
  return out;
}

/**
 * Draw the comparison into `target` (its children replaced): the sections
 * in `.jp-perf-cmp`, styles added to the document once.
 */
export function renderComparison(
  target: HTMLElement,
  payload: IComparePayload
): HTMLElement {
  const summary = payload.summary;
  addCompareStyles(target.ownerDocument);
  const root = h(
    'div',
    { class: 'jp-perf-cmp', dataset: { jpCompare: 'drawn' } },
    ...head(summary),
    ...split(summary, payload.split),
    ...predictions(summary),
    ...config(summary),
    ...operators(summary),
    ...stages(summary),
    ...volume(summary, payload.volume_labels),
    ...footer(summary)
  );
  target.replaceChildren(root);
  return root;
}
