/**
 * The one report renderer (issue Q): header, tab bar and the seven tabs, drawn
 * in the browser from the report data. Used by the notebook's MIME renderer
 * (mime.ts), the standalone export and nbconvert's HTML (standalone.ts, built
 * into one script by labextension/bundle-report.js) and the sidebar's report
 * view.
 *
 * Tabs are lazy: only the shown one is drawn; the others when first shown,
 * then kept (hidden, so the report is as tall as the shown tab). The root gets
 * `data-jp-ready="1"` once the first shown tab has been drawn (tests and
 * benchmarks wait for it) and `data-jp-error` with the reason if a tab failed;
 * each tab's panel gets `data-jp-drawn="1"` once drawn (or failed).
 */
import { formatDuration } from '../format';
import { h } from './dom';
import { selectionBus } from './bus';
import { addBaseStyles } from './style';
import { TABS } from './tabs';
import { IBokehApi, IReportData, ITab, ITabContext } from './types';

export interface IReportHandle {
  /** Show one tab by key (e.g. "whatif"); resolves once it is drawn. */
  show(key: string): Promise<void>;
  dispose(): void;
}

export function header(data: IReportData): HTMLElement {
  const hd = data.header;
  const status =
    hd.status && hd.status !== 'ok'
      ? [' — ', h('b', { class: 'jp-perf-err' }, hd.status)]
      : [];
  const ui = hd.spark_ui
    ? [
        ' · ',
        h(
          'a',
          { href: hd.spark_ui, target: '_blank', rel: 'noopener noreferrer' },
          'Spark UI'
        )
      ]
    : [];
  return h(
    'div',
    { class: 'jp-perf-header' },
    h(
      'div',
      { class: 'jp-perf-title' },
      h('b', {}, 'jupyter-perf'),
      ` · ${hd.title}`,
      ...status
    ),
    hd.error ? h('div', { class: 'jp-perf-err' }, hd.error) : null,
    h(
      'div',
      { class: 'jp-perf-muted' },
      `run ${hd.run_id} · ${hd.kind} · ${formatDuration(hd.wall_ms)} wall · ` +
        `model error ${(100 * (hd.model_error || 0)).toFixed(1)}%`,
      ...ui
    )
  );
}

export function renderReport(
  target: HTMLElement,
  data: IReportData,
  bokeh: IBokehApi,
  options: { initialTab?: string; tabs?: ITab[] } = {}
): IReportHandle {
  addBaseStyles(target.ownerDocument);
  const cleanups: (() => void)[] = [];
  const bus = selectionBus();
  const ctx: ITabContext = {
    data,
    bokeh,
    bus,
    onDispose: cleanup => cleanups.push(cleanup)
  };
  const root = h('div', { class: 'jp-perf jp-perf-report' });
  // a test hook: browser tests select through the report's bus, as tabs do
  Object.defineProperty(root, 'jpBus', { value: bus, configurable: true });
  root.dataset.runId = data.run_id;
  root.append(header(data));
  if (data.problem) {
    root.append(h('div', { class: 'jp-perf-warn' }, `⚠ ${data.problem}`));
  }
  const tabs = (options.tabs ?? TABS).filter(t => t.key in data.tabs);
  const bar = h('div', { class: 'jp-perf-tabbar', role: 'tablist' });
  const panels = new Map<string, HTMLElement>();
  const drawn = new Map<string, Promise<void>>();
  const buttons = new Map<string, HTMLButtonElement>();
  for (const tab of tabs) {
    const button = h(
      'button',
      { role: 'tab', 'aria-selected': 'false', type: 'button' },
      tab.title
    );
    button.dataset.tab = tab.key;
    button.addEventListener('click', () => void show(tab.key));
    buttons.set(tab.key, button);
    bar.append(button);
    const panel = h('div', { class: 'jp-perf-panel', role: 'tabpanel' });
    panel.dataset.tab = tab.key;
    panel.hidden = true;
    panels.set(tab.key, panel);
  }
  root.append(bar, ...panels.values());
  target.replaceChildren(root);

  function show(key: string): Promise<void> {
    const tab = tabs.find(t => t.key === key);
    if (!tab) {
      return Promise.reject(new Error(`no tab ${key}`));
    }
    for (const [k, panel] of panels) {
      panel.hidden = k !== key;
      buttons.get(k)!.setAttribute('aria-selected', String(k === key));
    }
    let promise = drawn.get(key);
    if (!promise) {
      const panel = panels.get(key)!;
      promise = (async () => {
        try {
          await tab.render(panel, ctx);
          panel.dataset.jpDrawn = '1';
        } catch (reason) {
          const message =
            reason instanceof Error ? reason.message : String(reason);
          panel.replaceChildren(
            h(
              'div',
              { class: 'jp-perf-warn' },
              `⚠ this tab could not be drawn: ${message}`
            )
          );
          root.dataset.jpError = message;
          panel.dataset.jpDrawn = '1';
          console.error('jupyter-perf:', reason);
        }
      })();
      drawn.set(key, promise);
    }
    return promise;
  }

  const first = tabs.some(t => t.key === options.initialTab)
    ? options.initialTab!
    : tabs[0]?.key;
  if (first) {
    void show(first).then(() => {
      root.dataset.jpReady = '1';
    });
  } else {
    root.dataset.jpReady = '1';
  }
  return {
    show,
    dispose(): void {
      for (const cleanup of cleanups.splice(0)) {
        try {
          cleanup();
        } catch (reason) {
          console.error('jupyter-perf:', reason);
        }
      }
      root.remove();
    }
  };
}
