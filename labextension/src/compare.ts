import { ILayoutRestorer, JupyterFrontEnd } from '@jupyterlab/application';

import {
  ICommandPalette,
  MainAreaWidget,
  Notification,
  WidgetTracker
} from '@jupyterlab/apputils';

import { RunsAPI } from './api';

import { picked } from './compareselect';

import { RUN_ITEM_CLASS, SparkRunsPanel } from './panel';

import { ReportView, addViewButtons, viewWidget } from './report';

/**
 * Compare two runs (issue J): the sidebar's two-run selection opens the
 * server's standalone comparison page (GET compare/{a}/{b}: the report
 * renderer's bundle and the comparison's payload, drawn by
 * report/compare.ts as every surface draws it) in a tab like a report — a
 * sandboxed iframe fed through `srcdoc`, scripts allowed, no origin — with an
 * Export button that writes the same page into the Jupyter root
 * (POST compare/{a}/{b}/export).
 */
export namespace CompareCommandIDs {
  export const compare = 'jupyter-perf:compare-runs';
  export const select = 'jupyter-perf:select-for-comparison';
  export const exportComparison = 'jupyter-perf:export-comparison';
}

/** The content of a comparison tab: a ReportView whose HTML is the comparison. */
export class CompareView extends ReportView {
  constructor(
    readonly a: string,
    readonly b: string,
    api: RunsAPI
  ) {
    super(`${a}_vs_${b}`, api, {
      load: () => api.compare(a, b),
      what: `the comparison of runs ${a} and ${b}`
    });
    this.addClass('jp-perf-compare');
  }
}

export function createCompareWidget(
  a: string,
  b: string,
  api: RunsAPI
): MainAreaWidget<CompareView> {
  const widget = viewWidget(
    new CompareView(a, b, api),
    `jupyter-perf-compare-${a}-${b}`
  );
  widget.title.label = 'Compare runs';
  widget.title.caption = `Spark runs compared: A ${a} → B ${b}`;
  return widget;
}

function pairArgs(args: any, panel: SparkRunsPanel): [string, string] | null {
  if (typeof args?.a === 'string' && typeof args?.b === 'string') {
    return [args.a, args.b];
  }
  const pair = panel.comparison.pair();
  return pair ? [pair.a.runId, pair.b.runId] : null;
}

const PAIR_ARGS = {
  args: {
    type: 'object' as const,
    properties: {
      a: { type: 'string', description: 'run id of A (the run compared with)' },
      b: { type: 'string', description: 'run id of B' }
    }
  }
};

export function registerCompare(ctx: {
  app: JupyterFrontEnd;
  api: RunsAPI;
  panel: SparkRunsPanel;
  restorer: ILayoutRestorer | null;
  palette: ICommandPalette | null;
}): WidgetTracker<MainAreaWidget<CompareView>> {
  const { app, api, panel, restorer, palette } = ctx;
  const { commands, shell } = app;
  const tracker = new WidgetTracker<MainAreaWidget<CompareView>>({
    namespace: 'jupyter-perf-compare'
  });

  commands.addCommand(CompareCommandIDs.compare, {
    label: 'Compare Two Spark Runs',
    caption:
      'Compare the two runs selected in the sidebar (Ctrl+click two runs)',
    describedBy: PAIR_ARGS,
    isEnabled: args => pairArgs(args, panel) !== null,
    execute: async args => {
      const pair = pairArgs(args, panel);
      if (!pair) {
        Notification.info(
          'Select two runs to compare: Ctrl+click them in the Spark runs sidebar.',
          { autoClose: 5000 }
        );
        return;
      }
      const [a, b] = pair;
      const existing = tracker.find(
        w => w.content.a === a && w.content.b === b
      );
      if (existing) {
        shell.activateById(existing.id);
        return existing;
      }
      const widget = createCompareWidget(a, b, api);
      addViewButtons(widget, {
        what: 'comparison',
        onExport: () =>
          void commands.execute(CompareCommandIDs.exportComparison, { a, b }),
        reloadTooltip:
          'Compare again (runs stored since then count in the noise)'
      });
      void tracker.add(widget);
      shell.add(widget, 'main');
      shell.activateById(widget.id);
      return widget;
    }
  });

  commands.addCommand(CompareCommandIDs.exportComparison, {
    label: 'Export Comparison as HTML',
    caption:
      'Write the standalone comparison of two runs (works offline) into the Jupyter root',
    describedBy: PAIR_ARGS,
    execute: async args => {
      const pair = pairArgs(args, panel);
      if (!pair) {
        return;
      }
      try {
        const result = await api.exportComparison(pair[0], pair[1]);
        Notification.success(`Comparison exported to ${result.path}`, {
          autoClose: 8000
        });
        return result;
      } catch (reason) {
        const message =
          reason instanceof Error ? reason.message : String(reason);
        Notification.error(`Export failed: ${message}`, { autoClose: false });
      }
    }
  });

  commands.addCommand(CompareCommandIDs.select, {
    label: 'Select for Comparison',
    caption: 'Pick this run as one of the two runs to compare',
    describedBy: {
      args: {
        type: 'object' as const,
        properties: { runId: { type: 'string', description: 'the run id' } }
      }
    },
    execute: args => {
      const hit = app.contextMenuHitTest(node =>
        node.classList.contains(RUN_ITEM_CLASS)
      );
      const runId =
        typeof args?.runId === 'string' ? args.runId : hit?.dataset.runId;
      const row = runId ? panel.findRun(runId) : undefined;
      if (row) {
        panel.toggleComparison(picked(row));
      }
    }
  });

  app.contextMenu.addItem({
    command: CompareCommandIDs.select,
    selector: `.${RUN_ITEM_CLASS}`,
    rank: 4
  });
  if (palette) {
    palette.addItem({
      command: CompareCommandIDs.compare,
      category: 'Spark Runs'
    });
  }
  if (restorer) {
    void restorer.restore(tracker, {
      command: CompareCommandIDs.compare,
      args: widget => ({ a: widget.content.a, b: widget.content.b }),
      name: widget => `${widget.content.a}_vs_${widget.content.b}`
    });
  }
  return tracker;
}
