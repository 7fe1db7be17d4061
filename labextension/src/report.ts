import { MainAreaWidget, ToolbarButton } from '@jupyterlab/apputils';

import { downloadIcon, refreshIcon } from '@jupyterlab/ui-components';

import { Widget } from '@lumino/widgets';

import { RunsAPI } from './api';

import { sparkRunsIcon } from './panel';

/**
 * Where a view's HTML comes from, and what to call it in its status line: a run's
 * report by default, a comparison of two runs for compare.ts.
 */
export interface IHtmlSource {
  load(refresh: boolean): Promise<string>;
  /** e.g. "the report of run X" */
  what: string;
}

/**
 * A run's report inside a main-area tab.
 *
 * The HTML is fetched with the user's credentials (ServerConnection) and put
 * into `iframe.srcdoc`; the iframe is sandboxed with `allow-scripts` only, so
 * the report's scripts run in an opaque origin: they cannot read JupyterLab's
 * cookies or token, nor call the Jupyter server. No unauthenticated URL exists.
 */
export class ReportView extends Widget {
  constructor(
    readonly runId: string,
    private _api: RunsAPI,
    source?: IHtmlSource
  ) {
    super();
    this._source = source ?? {
      load: refresh => this._api.report(this.runId, refresh),
      what: `the report of run ${runId}`
    };
    this.addClass('jp-perf-report');
    this._status = document.createElement('div');
    this._status.className = 'jp-perf-report-status';
    this._frame = document.createElement('iframe');
    this._frame.className = 'jp-perf-report-frame';
    this._frame.setAttribute('sandbox', 'allow-scripts');
    this._frame.setAttribute('referrerpolicy', 'no-referrer');
    this._frame.title = `jupyter-perf ${this._source.what.replace(/^the /, '')}`;
    this.node.append(this._status, this._frame);
  }

  /** (Re)load the report; `refresh` asks the server to render it again. */
  async load(refresh = false): Promise<void> {
    this._status.textContent = `Loading ${this._source.what}…`;
    this._status.hidden = false;
    this._frame.hidden = true;
    try {
      const html = await this._source.load(refresh);
      if (this.isDisposed) {
        return;
      }
      this._frame.srcdoc = html;
      this._frame.hidden = false;
      this._status.hidden = true;
      this._loaded = true;
    } catch (reason) {
      const message = reason instanceof Error ? reason.message : String(reason);
      this._status.textContent = `Could not load ${this._source.what}: ${message}`;
      this._status.classList.add('jp-perf-error');
    }
  }

  get loaded(): boolean {
    return this._loaded;
  }

  /** The run's label as the tab shows it (saved with the layout). */
  runTitle = '';

  private _source: IHtmlSource;
  private _status: HTMLElement;
  private _frame: HTMLIFrameElement;
  private _loaded = false;
}

/** The tab's label (cut at 40 characters; the caption has it whole). */
export function setReportTitle(
  widget: MainAreaWidget<ReportView>,
  runId: string,
  title: string
): void {
  widget.content.runTitle = title;
  widget.title.label = title.length > 40 ? title.slice(0, 39) + '…' : title;
  widget.title.caption = `Spark run ${runId}: ${title}`;
}

/** A report-like view (a run's report, a comparison) in a closable main-area tab, loading. */
export function viewWidget<T extends ReportView>(
  content: T,
  id: string
): MainAreaWidget<T> {
  const widget = new MainAreaWidget({ content });
  widget.id = id;
  widget.addClass('jp-perf-report-panel');
  widget.title.icon = sparkRunsIcon;
  widget.title.closable = true;
  void content.load();
  return widget;
}

/** The tab's toolbar: Export HTML (into the Jupyter root) and load again. */
export function addViewButtons(
  widget: MainAreaWidget<ReportView>,
  options: { what: string; onExport: () => void; reloadTooltip: string }
): void {
  widget.toolbar.addItem(
    'export',
    new ToolbarButton({
      icon: downloadIcon,
      label: 'Export HTML',
      tooltip: `Write this ${options.what} as a standalone HTML file into the Jupyter root`,
      onClick: options.onExport
    })
  );
  widget.toolbar.addItem(
    'reload',
    new ToolbarButton({
      icon: refreshIcon,
      tooltip: options.reloadTooltip,
      onClick: () => void widget.content.load(true)
    })
  );
}

export function createReportWidget(
  runId: string,
  title: string,
  api: RunsAPI
): MainAreaWidget<ReportView> {
  const widget = viewWidget(
    new ReportView(runId, api),
    `jupyter-perf-report-${runId}`
  );
  setReportTitle(widget, runId, title);
  return widget;
}
