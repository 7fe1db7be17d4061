/**
 * The report in a notebook output: a MIME renderer (JupyterLab's way, as
 * plotly, vega and Bokeh's own extension do) for
 * `application/vnd.jupyter-perf.report+json` (docs/report.md).
 *
 * The output carries the report's data (format 2: render/views/ in Python),
 * drawn here by the one renderer (report/render.ts) with BokehJS, which comes
 * once per page from the server extension (bokehjs.ts). Notebooks saved with
 * format 1 (a Bokeh document built by the kernel, `bokeh.embed.json_item`)
 * still render: that item is embedded as it is.
 * The renderer is not `safe`: JupyterLab uses it for trusted outputs only, and
 * shows an untrusted notebook's static `text/html` fallback instead. The report
 * is drawn into the output itself (no iframe), so it is as tall as its content;
 * the Bokeh views are removed when the output is cleared or drawn again.
 *
 * A comparison of two runs (`jp.compare(a, b)` as a cell's value,
 * `application/vnd.jupyter-perf.compare+json`: docs/compare.md) is drawn by
 * the same renderer's report/compare.ts, as DOM built from text only.
 */

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';

import { PromiseDelegate } from '@lumino/coreutils';

import { Message } from '@lumino/messaging';

import { Widget } from '@lumino/widgets';

import {
  IBokeh,
  IBokehViewManager,
  loadBokeh,
  loadServerBokeh
} from './bokehjs';

import {
  IDataPayload,
  RENDERER_BOKEH_BUNDLES,
  REPORT_MIME_TYPE,
  decodeItem,
  parseReportPayload
} from './reportpayload';

import {
  COMPARE_MIME_TYPE,
  parseComparePayload,
  renderComparison
} from './report/compare';

import { decodeData } from './report/decode';

import { IReportHandle, renderReport } from './report/render';

const OUTPUT_CLASS = 'jp-perf-report-output';

export class ReportRenderer extends Widget implements IRenderMime.IRenderer {
  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this._mimeType = options.mimeType;
    this.addClass(OUTPUT_CLASS);
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const generation = ++this._generation;
    this._removeViews();
    const parsed = parseReportPayload(model.data[this._mimeType]);
    if ('error' in parsed) {
      this._showProblem(parsed.error, model);
      return;
    }
    const { payload } = parsed;
    this.node.dataset.runId = payload.run_id;
    this.node.setAttribute(
      'aria-label',
      `jupyter-perf report: ${payload.title}`
    );
    const status = document.createElement('div');
    status.className = 'jp-perf-report-output-status';
    status.textContent = 'Loading the report…';
    this.node.replaceChildren(status);
    if (payload.kind === 'data') {
      await this._renderData(payload, generation, model);
      return;
    }
    let bokeh: IBokeh;
    let views: IBokehViewManager;
    try {
      const [lib, item] = await Promise.all([
        loadBokeh(payload.bokeh_version),
        decodeItem(payload)
      ]);
      bokeh = lib;
      // BokehJS draws only into an element under <body>
      await this._attached.promise;
      if (generation !== this._generation) {
        return;
      }
      const target = document.createElement('div');
      target.className = 'jp-perf-report-root';
      this.node.replaceChildren(target);
      views = await bokeh.embed.embed_item(item, target);
    } catch (reason) {
      if (generation === this._generation) {
        const message =
          reason instanceof Error ? reason.message : String(reason);
        this._showProblem(message, model);
      }
      return;
    }
    if (generation !== this._generation) {
      // cleared or drawn again while BokehJS was busy: drop what it built
      removeViews(bokeh, views);
      return;
    }
    this._bokeh = bokeh;
    this._views = views;
  }

  /** Format 2: the report data, drawn by the one renderer (report/render.ts). */
  private async _renderData(
    payload: IDataPayload,
    generation: number,
    model: IRenderMime.IMimeModel
  ): Promise<void> {
    try {
      const [bokeh, data] = await Promise.all([
        loadServerBokeh(
          payload.bokeh_version,
          undefined,
          RENDERER_BOKEH_BUNDLES
        ),
        decodeData(payload.data)
      ]);
      await this._attached.promise;
      if (generation !== this._generation) {
        return;
      }
      const target = document.createElement('div');
      target.className = 'jp-perf-report-root';
      this.node.replaceChildren(target);
      this._report = renderReport(target, data, bokeh);
    } catch (reason) {
      if (generation === this._generation) {
        const message =
          reason instanceof Error ? reason.message : String(reason);
        this._showProblem(message, model);
      }
    }
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._generation++;
    this._removeViews();
    super.dispose();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this._attached.resolve();
  }

  private _removeViews(): void {
    this._report?.dispose();
    this._report = null;
    if (this._bokeh && this._views) {
      removeViews(this._bokeh, this._views);
    }
    this._bokeh = null;
    this._views = null;
  }

  /** One line saying why, then the output's plain-text summary. */
  private _showProblem(reason: string, model: IRenderMime.IMimeModel): void {
    const line = document.createElement('div');
    line.className = 'jp-perf-report-output-problem';
    line.textContent = `The interactive jupyter-perf report cannot be shown: ${reason}`;
    const nodes: HTMLElement[] = [line];
    const plain = model.data['text/plain'];
    if (typeof plain === 'string' && plain) {
      const pre = document.createElement('pre');
      pre.textContent = plain;
      nodes.push(pre);
    }
    this.node.replaceChildren(...nodes);
  }

  private _mimeType: string;
  private _generation = 0;
  private _attached = new PromiseDelegate<void>();
  private _bokeh: IBokeh | null = null;
  private _views: IBokehViewManager | null = null;
  private _report: IReportHandle | null = null;
}

/** Remove a report's views (their DOM and signals) and forget its documents. */
function removeViews(bokeh: IBokeh, views: IBokehViewManager): void {
  const documents = new Set(views.roots.map(view => view.model.document));
  views.clear();
  for (const doc of documents) {
    const i = bokeh.documents.indexOf(doc);
    if (i >= 0) {
      bokeh.documents.splice(i, 1);
    }
  }
}

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: false,
  mimeTypes: [REPORT_MIME_TYPE],
  // ahead of text/html (50), so a trusted output shows the interactive report
  defaultRank: 0,
  createRenderer: options => new ReportRenderer(options)
};

const extension: IRenderMime.IExtension = {
  id: 'jupyter-perf:report-renderer',
  description: 'Renders jupyter-perf reports in notebook outputs.',
  rendererFactory,
  rank: 0,
  dataType: 'json'
};

/** A comparison of two runs in a notebook output (report/compare.ts). */
export class CompareRenderer extends Widget implements IRenderMime.IRenderer {
  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this._mimeType = options.mimeType;
    this.addClass('jp-perf-compare-output');
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const parsed = parseComparePayload(model.data[this._mimeType]);
    if ('error' in parsed) {
      const line = document.createElement('div');
      line.className = 'jp-perf-report-output-problem';
      line.textContent = `The jupyter-perf comparison cannot be shown: ${parsed.error}`;
      const nodes: HTMLElement[] = [line];
      const plain = model.data['text/plain'];
      if (typeof plain === 'string' && plain) {
        const pre = document.createElement('pre');
        pre.textContent = plain;
        nodes.push(pre);
      }
      this.node.replaceChildren(...nodes);
      return Promise.resolve();
    }
    const summary = parsed.payload.summary;
    this.node.setAttribute(
      'aria-label',
      `jupyter-perf comparison: ${String(summary.a)} → ${String(summary.b)}`
    );
    renderComparison(this.node, parsed.payload);
    return Promise.resolve();
  }

  private _mimeType: string;
}

export const compareRendererFactory: IRenderMime.IRendererFactory = {
  // text only (every user string is textContent), no script, no network
  safe: true,
  mimeTypes: [COMPARE_MIME_TYPE],
  defaultRank: 0,
  createRenderer: options => new CompareRenderer(options)
};

const compareExtension: IRenderMime.IExtension = {
  id: 'jupyter-perf:compare-renderer',
  description:
    'Renders jupyter-perf comparisons of two runs in notebook outputs.',
  rendererFactory: compareRendererFactory,
  rank: 0,
  dataType: 'json'
};

export default [extension, compareExtension];
