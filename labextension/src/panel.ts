import { Message } from '@lumino/messaging';

import { IPoll, Poll } from '@lumino/polling';

import { Widget } from '@lumino/widgets';

import { LabIcon, refreshIcon } from '@jupyterlab/ui-components';

import { RunsAPI } from './api';

import { CompareSelection, IPickedRun, picked } from './compareselect';

import { pageLabel } from './format';

import {
  operatorLine,
  runMeta,
  runTitle,
  runTooltip,
  sparkline,
  sparklineElement,
  statusText,
  verdictBadge
} from './row';

import { RunsListModel } from './runlist';

import {
  DEFAULT_MAX_RUNS,
  DEFAULT_REFRESH_SECONDS,
  ISidebarSettings
} from './settings';

import { IRunRow, ITopOperator } from './types';

/** The CSS class the item context menu is attached to. */
export const RUN_ITEM_CLASS = 'jp-perf-run-item';

/** The sidebar icon: a small bar chart. */
export const sparkRunsIcon = new LabIcon({
  name: 'jupyter-perf:spark-runs',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<g class="jp-icon3" fill="#616161">' +
    '<rect x="3" y="12" width="4" height="9"/>' +
    '<rect x="10" y="6" width="4" height="15"/>' +
    '<rect x="17" y="3" width="4" height="18"/>' +
    '</g></svg>'
});

/** Create an element with a class and (always plain) text. */
function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/**
 * The "Spark runs" sidebar.
 *
 * It shows one page of runs (at most `maxRuns` rows, so thousands of runs never
 * become thousands of DOM nodes; older runs are one click away) and re-fetches
 * only that page every `refreshInterval` seconds while the panel and the
 * browser tab are visible. A `Poll` (@lumino/polling) keeps the schedule: it
 * stands by while the panel or the browser tab is hidden and backs off while
 * the server does not answer. A poll that changed nothing touches only the
 * "5 min ago" texts. All run data is written with textContent, never as HTML.
 */
export class SparkRunsPanel extends Widget {
  constructor(options: {
    api: RunsAPI;
    onOpen: (runId: string) => void;
    onCompare?: (a: string, b: string) => void;
    now?: () => number;
  }) {
    super();
    this._api = options.api;
    this._onOpen = options.onOpen;
    this._onCompare = options.onCompare ?? (() => undefined);
    this._now = options.now ?? (() => Date.now());
    this._model = new RunsListModel(DEFAULT_MAX_RUNS);

    this.id = 'jupyter-perf-sidebar';
    this.addClass('jp-perf-sidebar');
    this.title.icon = sparkRunsIcon;
    this.title.caption = 'Spark runs';

    const header = el('div', 'jp-perf-sidebar-header');
    header.appendChild(el('span', 'jp-perf-sidebar-title', 'Spark runs'));
    const refresh = el('button', 'jp-perf-icon-button jp-perf-refresh');
    refresh.title = 'Refresh the list of runs';
    refresh.setAttribute('aria-label', 'Refresh');
    refreshIcon.element({ container: refresh, tag: 'span' });
    refresh.addEventListener('click', () => void this.refresh());
    header.appendChild(refresh);

    const toolbar = el('div', 'jp-perf-toolbar');
    this._search = el('input', 'jp-perf-search jp-mod-styled');
    this._search.type = 'search';
    this._search.placeholder = 'Filter runs';
    this._search.title = 'Filter by label, code, verdict or run id';
    this._search.setAttribute('aria-label', 'Filter runs');
    this._search.addEventListener('input', () => {
      window.clearTimeout(this._searchTimer);
      this._searchTimer = window.setTimeout(() => {
        if (this._model.setQuery(this._search.value)) {
          void this.refresh();
        }
      }, 250);
    });
    toolbar.appendChild(this._search);
    this._regressed = el(
      'button',
      'jp-perf-regressed-toggle jp-mod-styled',
      'Regressed'
    );
    this._regressed.title =
      "Only each cell's latest run that is slower than its usual band (the noise rule of jp.history)";
    this._regressed.setAttribute('aria-pressed', 'false');
    this._regressed.addEventListener('click', () => {
      const on = !this._model.state.regressed;
      this._regressed.setAttribute('aria-pressed', String(on));
      if (this._model.setRegressed(on)) {
        void this.refresh();
      }
    });
    toolbar.appendChild(this._regressed);

    this._compareBar = this._buildCompareBar();

    this._notice = el('div', 'jp-perf-notice');
    this._notice.hidden = true;
    this._error = el('div', 'jp-perf-error');
    this._error.hidden = true;

    this._list = el('ul', 'jp-perf-run-list');
    this._list.setAttribute('role', 'list');
    this._list.addEventListener('click', this._onListClick);
    this._list.addEventListener('keydown', this._onListKey);
    this._list.addEventListener('contextmenu', this._onListSelect, true);
    this._list.addEventListener('mousedown', this._onListSelect, true);

    this._empty = this._buildEmptyState();
    this._noMatch = el(
      'div',
      'jp-perf-empty jp-perf-no-match',
      'No run matches this filter.'
    );
    this._noRegression = el(
      'div',
      'jp-perf-empty jp-perf-no-regression',
      'No cell regressed: no latest run is beyond the noise of its warm runs.'
    );
    this._noRegression.hidden = true;
    this._noMatch.hidden = true;

    const pager = el('div', 'jp-perf-pager');
    this._newer = el('button', 'jp-perf-page-button jp-mod-styled', '‹ Newer');
    this._newer.addEventListener('click', () => {
      if (this._model.newer()) {
        void this.refresh();
      }
    });
    this._older = el('button', 'jp-perf-page-button jp-mod-styled', 'Older ›');
    this._older.addEventListener('click', () => {
      if (this._model.older()) {
        void this.refresh();
      }
    });
    this._pageLabel = el('span', 'jp-perf-page-label');
    pager.append(this._newer, this._pageLabel, this._older);
    this._pager = pager;

    this.node.append(
      header,
      toolbar,
      this._compareBar,
      this._notice,
      this._error,
      this._list,
      this._empty,
      this._noMatch,
      this._noRegression,
      pager
    );
    this._empty.hidden = true;

    this._poll = new Poll({
      name: 'jupyter-perf:runs',
      auto: false,
      factory: () => this._fetch(),
      frequency: this._frequency(DEFAULT_REFRESH_SECONDS),
      // hidden panel: no requests at all; hidden browser tab: Poll's own check
      standby: () => (this.isDisposed || !this.isVisible ? true : 'when-hidden')
    });
    this._render();
  }

  /** The run the user last pointed at (context menu, keyboard), or null. */
  get selectedRunId(): string | null {
    return this._selected;
  }

  get model(): RunsListModel {
    return this._model;
  }

  /** The runs picked for a comparison (Ctrl/Cmd/Shift+click, or the context menu). */
  get comparison(): CompareSelection {
    return this._comparison;
  }

  /** Pick or unpick a run for the comparison; the rows and the bar follow. */
  toggleComparison(run: IPickedRun): void {
    this._comparison.toggle(run);
    this._showComparison();
  }

  private _showComparison(): void {
    this._list
      .querySelectorAll<HTMLElement>(`.${RUN_ITEM_CLASS}`)
      .forEach(li => {
        li.classList.toggle(
          'jp-perf-compare-picked',
          this._comparison.has(li.dataset.runId ?? '')
        );
      });
    this._renderCompareBar();
  }

  /** A row currently listed, by id. */
  findRun(runId: string): IRunRow | undefined {
    return this._model.find(runId);
  }

  /** Apply the settings (schema/plugin.json). */
  configure(settings: ISidebarSettings): void {
    this._poll.frequency = this._frequency(settings.refreshInterval);
    this._model.setLimit(settings.maxRuns);
    // (re)start: the first poll, a new page size, or polling turned back on
    void this.refresh();
  }

  /** A one-line notice above the list (e.g. a version mismatch); null hides it. */
  setNotice(message: string | null): void {
    this._notice.textContent = message ?? '';
    this._notice.hidden = !message;
  }

  /**
   * Fetch the visible page now; resolves once it was fetched (or skipped,
   * when the panel is hidden: it fetches when shown).
   */
  async refresh(): Promise<void> {
    if (this.isDisposed) {
      return;
    }
    await this._poll.refresh();
    await this._poll.tick.catch(() => undefined);
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._poll.dispose();
    window.clearTimeout(this._searchTimer);
    super.dispose();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this.refresh();
  }

  // -- internals --------------------------------------------------------------------

  /** One poll: fetch the visible page, render what changed. */
  private async _fetch(): Promise<void> {
    const request = this._model.request();
    let changed: boolean;
    try {
      const page = await this._api.list(request);
      changed = this._model.receive(page, request);
      if (changed && page.runs.length === 0 && page.total > 0) {
        // our page vanished; fetch the last one that exists
        const again = this._model.request();
        changed =
          this._model.receive(await this._api.list(again), again) || changed;
      }
    } catch (reason) {
      const message = reason instanceof Error ? reason.message : String(reason);
      changed = this._model.fail(
        `Could not load runs: ${message}`.split('\n')[0],
        request
      );
      if (changed) {
        this._render();
      }
      throw reason; // the poll backs off while the server does not answer
    }
    if (changed) {
      this._render();
    } else {
      this._refreshTimes();
    }
  }

  /** Poll every `seconds` (0: only when asked), backing off up to a minute on errors. */
  private _frequency(seconds: number): IPoll.Frequency {
    const interval = seconds > 0 ? seconds * 1000 : Poll.NEVER;
    return {
      interval,
      backoff: true,
      max: seconds > 0 ? Math.max(60_000, interval) : Poll.NEVER
    };
  }

  private _render(): void {
    const state = this._model.state;
    this._error.textContent = state.error ?? '';
    this._error.hidden = !state.error;

    const now = this._now();
    const items = state.rows.map(row => this._renderRow(row, now));
    this._list.replaceChildren(...items);
    void this._fetchTops();

    const nothing = state.loaded && state.rows.length === 0 && !state.error;
    this._empty.hidden = !(
      nothing &&
      !state.query &&
      !state.regressed &&
      state.total === 0
    );
    this._noMatch.hidden = !(nothing && !!state.query);
    this._noRegression.hidden = !(nothing && !state.query && state.regressed);
    this._list.hidden = state.rows.length === 0;

    this._pageLabel.textContent = state.loaded
      ? pageLabel(state.offset, state.rows.length, state.total)
      : 'Loading…';
    this._newer.disabled = !this._model.hasNewer;
    this._older.disabled = !this._model.hasOlder;
    this._pager.hidden = !state.loaded || state.total <= state.rows.length;
  }

  private _renderRow(row: IRunRow, now: number): HTMLLIElement {
    const li = el('li', RUN_ITEM_CLASS);
    li.dataset.runId = row.run_id;
    li.tabIndex = 0;
    li.title = runTooltip(row);
    li.setAttribute('role', 'listitem');
    if (row.run_id === this._selected) {
      li.classList.add('jp-mod-selected');
    }
    if (this._comparison.has(row.run_id)) {
      li.classList.add('jp-perf-compare-picked');
    }
    if (row.status && row.status !== 'ok') {
      li.classList.add(`jp-perf-status-${row.status.replace(/[^a-z-]/gi, '')}`);
    }

    const top = el('div', 'jp-perf-run-top');
    top.appendChild(el('span', 'jp-perf-run-title', runTitle(row)));
    const spark = sparkline(row.series);
    if (spark) {
      top.appendChild(sparklineElement(spark, document));
    }
    const badge = verdictBadge(row);
    if (badge) {
      const b = el(
        'span',
        `jp-perf-badge jp-perf-badge-${badge.kind}`,
        badge.text
      );
      b.title = row.verdict || badge.text;
      b.setAttribute('role', 'img');
      b.setAttribute('aria-label', badge.label);
      top.appendChild(b);
    }
    const bottom = el('div', 'jp-perf-run-meta');
    bottom.appendChild(this._renderMeta(row, now));
    const status = statusText(row.status);
    if (status) {
      bottom.appendChild(el('span', 'jp-perf-run-status', status));
    }
    li.append(top, bottom);
    const op = operatorLine(row, this._tops.get(row.run_id));
    if (op) {
      const line = el('div', 'jp-perf-run-operator', op.text);
      line.title = op.title;
      li.appendChild(line);
    }
    return li;
  }

  /**
   * The top operator's share and cell line are in `GET runs/{id}` only: fetch
   * them once per run shown (a run's analysis does not change), one request at
   * a time, and update its row in place.
   */
  private async _fetchTops(): Promise<void> {
    if (this._fetchingTops) {
      return;
    }
    this._fetchingTops = true;
    try {
      for (;;) {
        const row = this._model.state.rows.find(
          r => r.top_operator && !this._tops.has(r.run_id)
        );
        if (!row || this.isDisposed) {
          return;
        }
        let top: ITopOperator | null = null;
        try {
          top = (await this._api.get(row.run_id)).summary?.top_operator ?? null;
        } catch {
          top = null; // the row keeps the name it has
        }
        this._tops.set(row.run_id, top);
        const op = operatorLine(row, top);
        const node = this._list.querySelector<HTMLElement>(
          `.${RUN_ITEM_CLASS}[data-run-id="${CSS.escape(row.run_id)}"] .jp-perf-run-operator`
        );
        if (op && node) {
          node.textContent = op.text;
          node.title = op.title;
        }
      }
    } finally {
      this._fetchingTops = false;
    }
  }

  /**
   * "etl.ipynb · 4.21 s · 5 min ago": the notebook name gives way when the
   * sidebar is narrow (ellipsis); the duration and the age are never cut.
   */
  private _renderMeta(row: IRunRow, now: number): HTMLElement {
    const { notebook, duration, age } = runMeta(row, now);
    const line = el('span', 'jp-perf-run-subtitle');
    if (notebook) {
      line.appendChild(el('span', 'jp-perf-run-notebook', notebook));
    }
    const rest = el('span', 'jp-perf-run-numbers');
    const parts = [
      el('span', 'jp-perf-run-duration', duration),
      el('span', 'jp-perf-run-age', age)
    ].filter(p => p.textContent);
    parts.forEach((part, i) => {
      if (i > 0 || notebook) {
        // a no-break space first: a flex item's leading space would be dropped
        rest.appendChild(el('span', 'jp-perf-run-sep', '\u00a0· '));
      }
      rest.appendChild(part);
    });
    line.appendChild(rest);
    return line;
  }

  /** Only the "5 min ago" texts move between polls that changed nothing. */
  private _refreshTimes(): void {
    const now = this._now();
    this._list
      .querySelectorAll<HTMLElement>(`.${RUN_ITEM_CLASS}`)
      .forEach(li => {
        const row = this._model.find(li.dataset.runId ?? '');
        const age = li.querySelector('.jp-perf-run-age');
        if (row && age) {
          const text = runMeta(row, now).age;
          if (age.textContent !== text) {
            age.textContent = text;
          }
        }
      });
  }

  private _itemOf(target: EventTarget | null): HTMLElement | null {
    const node = target as HTMLElement | null;
    return node?.closest?.(`.${RUN_ITEM_CLASS}`) ?? null;
  }

  private _select(item: HTMLElement | null): void {
    const id = item?.dataset.runId ?? null;
    this._selected = id;
    this._list.querySelectorAll(`.${RUN_ITEM_CLASS}`).forEach(li => {
      li.classList.toggle(
        'jp-mod-selected',
        (li as HTMLElement).dataset.runId === id
      );
    });
  }

  private _onListSelect = (event: Event): void => {
    const item = this._itemOf(event.target);
    if (item) {
      this._select(item);
    }
  };

  private _onListClick = (event: MouseEvent): void => {
    const item = this._itemOf(event.target);
    const row = this._model.find(item?.dataset.runId ?? '');
    if (row && (event.ctrlKey || event.metaKey || event.shiftKey)) {
      this.toggleComparison(picked(row)); // picks for a comparison, opens nothing
      return;
    }
    if (item?.dataset.runId) {
      this._select(item);
      this._onOpen(item.dataset.runId);
    }
  };

  private _onListKey = (event: KeyboardEvent): void => {
    const item = this._itemOf(event.target);
    if (!item) {
      return;
    }
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      this._select(item);
      if (item.dataset.runId) {
        this._onOpen(item.dataset.runId);
      }
    } else if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const next = (
        event.key === 'ArrowDown'
          ? item.nextElementSibling
          : item.previousElementSibling
      ) as HTMLElement | null;
      if (next) {
        this._select(next);
        next.focus();
      }
    }
  };

  /** "Compare A: … → B: …  [Compare] [Clear]", shown while runs are picked. */
  private _buildCompareBar(): HTMLElement {
    const bar = el('div', 'jp-perf-compare-bar');
    bar.hidden = true;
    this._compareText = el('span', 'jp-perf-compare-text');
    this._compareButton = el(
      'button',
      'jp-perf-compare-button jp-mod-styled jp-mod-accept',
      'Compare'
    );
    this._compareButton.addEventListener('click', () => {
      const pair = this._comparison.pair();
      if (pair) {
        this._onCompare(pair.a.runId, pair.b.runId);
      }
    });
    const clear = el('button', 'jp-perf-compare-clear jp-mod-styled', 'Clear');
    clear.addEventListener('click', () => {
      this._comparison.clear();
      this._showComparison();
    });
    bar.append(this._compareText, this._compareButton, clear);
    return bar;
  }

  private _renderCompareBar(): void {
    this._compareText.textContent = this._comparison.describe();
    this._compareBar.hidden = this._comparison.runs.length === 0;
    this._compareButton.disabled = this._comparison.pair() === null;
  }

  private _buildEmptyState(): HTMLElement {
    const empty = el('div', 'jp-perf-empty');
    const code = (text: string) => {
      const pre = el('pre', '');
      pre.appendChild(el('code', '', text));
      return pre;
    };
    const p = (...parts: (string | HTMLElement)[]) => {
      const node = el('p', '');
      node.append(...parts);
      return node;
    };
    empty.append(
      p('No Spark runs yet.'),
      p('In a notebook, load the extension once:'),
      code('%load_ext jupyter_perf'),
      p(
        'then put ',
        el('code', '', '%%perfmeasure'),
        ' on the first line of a cell that runs Spark:'
      ),
      code(
        '%%perfmeasure --label "my query"\ndf.groupBy("key").count().collect()'
      ),
      p(
        'The report appears under the cell, and the run is listed here, ' +
          'from every kernel, newest first. Click a run to open its report.'
      )
    );
    return empty;
  }

  private _api: RunsAPI;
  private _onOpen: (runId: string) => void;
  private _onCompare: (a: string, b: string) => void;
  private _comparison = new CompareSelection();
  private _compareBar: HTMLElement;
  private _compareText!: HTMLElement;
  private _compareButton!: HTMLButtonElement;
  private _now: () => number;
  private _model: RunsListModel;
  private _search: HTMLInputElement;
  private _notice: HTMLElement;
  private _error: HTMLElement;
  private _list: HTMLUListElement;
  private _empty: HTMLElement;
  private _noMatch: HTMLElement;
  private _noRegression: HTMLElement;
  private _regressed: HTMLButtonElement;
  private _pager: HTMLElement;
  private _newer: HTMLButtonElement;
  private _older: HTMLButtonElement;
  private _pageLabel: HTMLElement;
  private _selected: string | null = null;
  private _searchTimer = 0;
  private _poll: Poll;
  /** the top operator of each run whose details were fetched (null: it has none) */
  private _tops = new Map<string, ITopOperator | null>();
  private _fetchingTops = false;
}
