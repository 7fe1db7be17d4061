/**
 * The sidebar's state and formatting: pure TypeScript, no DOM and no JupyterLab
 * imports, so jest tests it directly (labextension/src/__tests__/model.spec.ts).
 *
 * Everything shown comes from the server (GET /jupyter-perf/api/runs), so the
 * sidebar is right again after a kernel restart or a browser reload.
 */

/** One row of `GET runs` (docs/rest-api.md). */
export interface IRunRow {
  run_id: string;
  created_ms: number;
  kind: string;
  label: string | null;
  first_line: string | null;
  notebook: string | null;
  notebook_path: string | null;
  status: string;
  wall_ms: number | null;
  app_id: string | null;
  num_jobs: number | null;
  num_stages: number | null;
  num_tasks: number | null;
  verdict: string | null;
}

/** `GET runs` */
export interface IRunsPage {
  runs: IRunRow[];
  total: number;
  offset: number;
  limit: number;
}

/** `GET runs/{id}` (the fields the frontend uses). */
export interface IRunDetail extends IRunRow {
  source: string;
  /** JupyterLab's id of the cell that ran (null when no front end sent one). */
  cell_id?: string | null;
  error: string;
  warnings: string[];
  start_ms: number;
  end_ms: number;
}

/** `POST runs/{id}/export` */
export interface IExportResult {
  run_id: string;
  path: string;
  bytes: number;
}

export const DEFAULT_REFRESH_SECONDS = 3;
export const DEFAULT_MAX_RUNS = 50;
export const MAX_PAGE_SIZE = 500;

/** The settings as the schema (schema/plugin.json) defines them, clamped to sane values. */
export interface ISidebarSettings {
  refreshInterval: number; // seconds; 0 turns polling off
  maxRuns: number; // rows per page
}

export function readSettings(
  raw: Partial<Record<string, unknown>> | null | undefined
): ISidebarSettings {
  const num = (v: unknown, d: number) =>
    typeof v === 'number' && Number.isFinite(v) ? v : d;
  const refresh = Math.max(
    0,
    num(raw?.refreshInterval, DEFAULT_REFRESH_SECONDS)
  );
  const maxRuns = Math.round(num(raw?.maxRuns, DEFAULT_MAX_RUNS));
  return {
    refreshInterval: refresh > 0 ? Math.max(0.5, refresh) : 0,
    maxRuns: Math.min(MAX_PAGE_SIZE, Math.max(1, maxRuns))
  };
}

// -- formatting ------------------------------------------------------------------------

/** "850 ms", "4.2 s", "12 s", "3 min 05 s", "1 h 02 min"; "—" when unknown. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) {
    return '—';
  }
  if (ms < 1000) {
    return `${Math.round(ms)} ms`;
  }
  const s = ms / 1000;
  if (s < 10) {
    return `${s.toFixed(1)} s`;
  }
  if (s < 60) {
    return `${Math.round(s)} s`;
  }
  const totalSeconds = Math.round(s);
  const h = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  const sec = totalSeconds % 60;
  if (h > 0) {
    return `${h} h ${String(m).padStart(2, '0')} min`;
  }
  return `${m} min ${String(sec).padStart(2, '0')} s`;
}

/** "just now", "42 s ago", "5 min ago", "3 h ago", then the date. */
export function formatRelativeTime(
  epochMs: number | null | undefined,
  nowMs: number
): string {
  if (epochMs === null || epochMs === undefined || !Number.isFinite(epochMs)) {
    return '';
  }
  const ago = Math.max(0, nowMs - epochMs) / 1000;
  if (ago < 5) {
    return 'just now';
  }
  if (ago < 60) {
    return `${Math.floor(ago)} s ago`;
  }
  if (ago < 3600) {
    return `${Math.floor(ago / 60)} min ago`;
  }
  if (ago < 24 * 3600) {
    return `${Math.floor(ago / 3600)} h ago`;
  }
  return formatTimestamp(epochMs);
}

/** "2026-11-22 02:01" in local time. */
export function formatTimestamp(epochMs: number): string {
  const d = new Date(epochMs);
  const p = (n: number) => String(n).padStart(2, '0');
  return (
    `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
    `${p(d.getHours())}:${p(d.getMinutes())}`
  );
}

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

/** "1–50 of 1,234"; "No runs" when empty. */
export function pageLabel(
  offset: number,
  shown: number,
  total: number
): string {
  if (total <= 0 || shown <= 0) {
    return total > 0 ? `0 of ${total.toLocaleString('en-US')}` : 'No runs';
  }
  return `${(offset + 1).toLocaleString('en-US')}–${(offset + shown).toLocaleString('en-US')} of ${total.toLocaleString('en-US')}`;
}

// -- versions --------------------------------------------------------------------------

/** A one-line warning when the frontend and the server extension differ, else null. */
export function versionMismatch(
  frontend: string,
  server: string | null | undefined
): string | null {
  if (!server) {
    return (
      'The jupyter_perf server extension is not answering: ' +
      'run `jupyter server extension list` and restart JupyterLab.'
    );
  }
  if (server.trim() === frontend.trim()) {
    return null;
  }
  return (
    `jupyter-perf: the JupyterLab extension is ${frontend} but the server extension is ` +
    `${server}; reinstall one package version and restart JupyterLab (then reload the page).`
  );
}

// -- go to cell ------------------------------------------------------------------------

/** The cell body as the magic received it: without a leading `%%perfmeasure ...` line. */
export function cellBody(source: string): string {
  const text = source.replace(/\r\n?/g, '\n');
  const lines = text.split('\n');
  if (lines.length && /^\s*%%perfmeasure\b/.test(lines[0])) {
    return lines.slice(1).join('\n');
  }
  return text;
}

function normalise(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map(l => l.replace(/\s+$/, ''))
    .join('\n')
    .trim();
}

/**
 * Index of the cell that ran `runSource`, or -1. Runs store the cell body (the
 * text under `%%perfmeasure`): a cell matches when its body equals it, ignoring
 * trailing whitespace. Cells that start with `%%perfmeasure` win over others;
 * among equals the first wins (`ambiguous` says so).
 */
export function findCell(
  cellSources: ReadonlyArray<string>,
  runSource: string
): { index: number; ambiguous: boolean } {
  const wanted = normalise(runSource);
  if (!wanted) {
    return { index: -1, ambiguous: false };
  }
  const measured: number[] = [];
  const plain: number[] = [];
  cellSources.forEach((src, i) => {
    const isMeasured = /^\s*%%perfmeasure\b/.test(src);
    if (normalise(cellBody(src)) === wanted) {
      (isMeasured ? measured : plain).push(i);
    }
  });
  const hits = measured.length ? measured : plain;
  return { index: hits.length ? hits[0] : -1, ambiguous: hits.length > 1 };
}

/** A notebook cell as "Go to Cell" sees it: its model id and its source. */
export interface ICellRef {
  id: string;
  source: string;
}

/**
 * The cell that produced a run: the cell whose id is the run's `cell_id` (the
 * id JupyterLab sent with the execute request; it survives edits and moves),
 * else the source match of `findCell` (runs without an id, e.g. from another
 * front end, or a cell deleted and pasted back). `by` says which matched.
 */
export function locateCell(
  cells: ReadonlyArray<ICellRef>,
  run: Pick<IRunDetail, 'source'> & { cell_id?: string | null }
): { index: number; ambiguous: boolean; by: 'id' | 'source' | null } {
  if (run.cell_id) {
    const index = cells.findIndex(c => c.id === run.cell_id);
    if (index >= 0) {
      return { index, ambiguous: false, by: 'id' };
    }
  }
  const { index, ambiguous } = findCell(
    cells.map(c => c.source),
    run.source || ''
  );
  return { index, ambiguous, by: index >= 0 ? 'source' : null };
}

/** Does a notebook's path (as the contents API names it) denote the run's notebook? */
export function sameNotebook(
  openPath: string,
  row: Pick<IRunRow, 'notebook' | 'notebook_path'>
): boolean {
  const clean = (p: string) => p.replace(/\\/g, '/').replace(/^\/+/, '');
  const open = clean(openPath);
  if (row.notebook_path) {
    return clean(row.notebook_path) === open;
  }
  const nb = clean(row.notebook || '');
  return !!nb && !!open && (nb === open || nb.endsWith('/' + open));
}

// -- the list's state --------------------------------------------------------------------

export interface IListState {
  rows: IRunRow[];
  total: number;
  offset: number;
  limit: number;
  query: string;
  loading: boolean;
  error: string | null;
  /** true once the first answer arrived: until then, do not show the empty state */
  loaded: boolean;
}

/** A fingerprint of what is on screen, so a poll that changed nothing re-renders nothing. */
export function pageSignature(page: IRunsPage): string {
  return JSON.stringify([
    page.total,
    page.offset,
    page.runs.map(r => [r.run_id, r.status, r.verdict, r.label, r.wall_ms])
  ]);
}

/**
 * The list: which page is asked for, what came back, whether it changed.
 * The panel owns the timers and the DOM; this owns the state.
 */
export class RunsListModel {
  constructor(limit = DEFAULT_MAX_RUNS) {
    this._state = {
      rows: [],
      total: 0,
      offset: 0,
      limit: Math.min(MAX_PAGE_SIZE, Math.max(1, limit)),
      query: '',
      loading: false,
      error: null,
      loaded: false
    };
  }

  get state(): Readonly<IListState> {
    return this._state;
  }

  /** The query string of the next `GET runs`. */
  request(): { limit: number; offset: number; q: string } {
    return {
      limit: this._state.limit,
      offset: this._state.offset,
      q: this._state.query
    };
  }

  /** Record a fetched page; true if what is shown changed. */
  receive(page: IRunsPage, query: string): boolean {
    if (query !== this._state.query) {
      return false; // an answer to an older search: drop it
    }
    const before = this._signature;
    const wasError = this._state.error !== null;
    const wasLoaded = this._state.loaded;
    // The page we were on vanished (runs deleted): step back to the last page.
    if (page.runs.length === 0 && page.total > 0 && this._state.offset > 0) {
      this._state.offset = lastPageOffset(page.total, this._state.limit);
      this._state.total = page.total;
      this._state.loading = false;
      return true;
    }
    this._state = {
      ...this._state,
      rows: page.runs,
      total: page.total,
      offset: page.offset,
      loading: false,
      error: null,
      loaded: true
    };
    this._signature = pageSignature(page);
    return before !== this._signature || wasError || !wasLoaded;
  }

  fail(message: string): boolean {
    const changed = this._state.error !== message;
    this._state = { ...this._state, loading: false, error: message };
    return changed;
  }

  setQuery(query: string): boolean {
    const q = query.trim();
    if (q === this._state.query) {
      return false;
    }
    this._state = { ...this._state, query: q, offset: 0 };
    return true;
  }

  setLimit(limit: number): boolean {
    const l = Math.min(MAX_PAGE_SIZE, Math.max(1, Math.round(limit)));
    if (l === this._state.limit) {
      return false;
    }
    this._state = { ...this._state, limit: l, offset: 0 };
    return true;
  }

  get hasNewer(): boolean {
    return this._state.offset > 0;
  }

  get hasOlder(): boolean {
    return this._state.offset + this._state.rows.length < this._state.total;
  }

  /** Go to older runs; false if there are none. */
  older(): boolean {
    if (!this.hasOlder) {
      return false;
    }
    this._state = {
      ...this._state,
      offset: this._state.offset + this._state.limit
    };
    return true;
  }

  newer(): boolean {
    if (!this.hasNewer) {
      return false;
    }
    this._state = {
      ...this._state,
      offset: Math.max(0, this._state.offset - this._state.limit)
    };
    return true;
  }

  find(runId: string): IRunRow | undefined {
    return this._state.rows.find(r => r.run_id === runId);
  }

  private _state: IListState;
  private _signature = '';
}

export function lastPageOffset(total: number, limit: number): number {
  if (total <= 0) {
    return 0;
  }
  return Math.floor((total - 1) / limit) * limit;
}
