/**
 * The sidebar's list of runs as state: which page is asked for, what came
 * back, whether what is shown changed. No DOM, no timers: the panel polls
 * (through @lumino/polling) and renders; this decides.
 *
 * Everything shown comes from the server (GET /jupyter-perf/api/runs), so the
 * sidebar is right again after a kernel restart or a browser reload.
 */

import { clampPageSize, DEFAULT_MAX_RUNS } from './settings';

import { IRunRow, IRunsPage } from './types';

export interface IListState {
  rows: IRunRow[];
  total: number;
  offset: number;
  limit: number;
  query: string;
  /** only the regressed cells' latest runs (the server's `regressed=1`) */
  regressed: boolean;
  loading: boolean;
  error: string | null;
  /** true once the first answer arrived: until then, do not show the empty state */
  loaded: boolean;
}

/**
 * One `GET runs` the panel sent: its query parameters and a sequence number,
 * so an answer that arrives after a newer one (or after the user paged or
 * searched) is dropped.
 */
export interface IListRequest {
  limit: number;
  offset: number;
  q: string;
  regressed: boolean;
  seq: number;
}

/** A fingerprint of what is on screen, so a poll that changed nothing re-renders nothing. */
export function pageSignature(page: IRunsPage): string {
  return JSON.stringify([
    page.total,
    page.offset,
    page.runs.map(r => [
      r.run_id,
      r.status,
      r.verdict,
      r.verdict_headline,
      r.top_operator,
      r.label,
      r.wall_ms,
      // the sparkline: the cell's runs up to this one and the newest's flag
      r.series ? [r.series.run_id.length, r.series.regression.join()] : null
    ])
  ]);
}

/** The offset of the last page of `total` rows. */
export function lastPageOffset(total: number, limit: number): number {
  if (total <= 0) {
    return 0;
  }
  return Math.floor((total - 1) / limit) * limit;
}

export class RunsListModel {
  constructor(limit = DEFAULT_MAX_RUNS) {
    this._state = {
      rows: [],
      total: 0,
      offset: 0,
      limit: clampPageSize(limit),
      query: '',
      regressed: false,
      loading: false,
      error: null,
      loaded: false
    };
  }

  get state(): Readonly<IListState> {
    return this._state;
  }

  /** The next `GET runs` to send (each call numbers a new request). */
  request(): IListRequest {
    return {
      limit: this._state.limit,
      offset: this._state.offset,
      q: this._state.query,
      regressed: this._state.regressed,
      seq: ++this._issued
    };
  }

  /**
   * Record the answer to `request`; true if what is shown changed. Answers to
   * a page or search the user has left, or older than one already shown, are
   * dropped (false).
   */
  receive(page: IRunsPage, request: IListRequest): boolean {
    if (!this._current(request)) {
      return false;
    }
    this._answered = request.seq;
    const before = this._signature;
    const wasError = this._state.error !== null;
    const wasLoaded = this._state.loaded;
    // The page we were on vanished (runs deleted): step back to the last page.
    if (page.runs.length === 0 && page.total > 0 && this._state.offset > 0) {
      this._state = {
        ...this._state,
        offset: lastPageOffset(page.total, this._state.limit),
        total: page.total,
        loading: false
      };
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

  /** Record a failed request; true if the message shown changed. */
  fail(message: string, request?: IListRequest): boolean {
    if (request && !this._current(request)) {
      return false;
    }
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

  /** Show only the regressed cells' latest runs (or every run); true if it changed. */
  setRegressed(on: boolean): boolean {
    if (on === this._state.regressed) {
      return false;
    }
    this._state = { ...this._state, regressed: on, offset: 0 };
    return true;
  }

  setLimit(limit: number): boolean {
    const l = clampPageSize(limit);
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

  /** Does `request` still ask for what the state wants, and is it not stale? */
  private _current(request: IListRequest): boolean {
    const s = this._state;
    return (
      request.q === s.query &&
      request.regressed === s.regressed &&
      request.offset === s.offset &&
      request.limit === s.limit &&
      request.seq > this._answered
    );
  }

  private _state: IListState;
  private _signature = '';
  private _issued = 0;
  private _answered = 0;
}
