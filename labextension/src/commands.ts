import { JupyterFrontEnd } from '@jupyterlab/application';

import {
  Dialog,
  MainAreaWidget,
  Notification,
  WidgetTracker,
  showDialog
} from '@jupyterlab/apputils';

import { Widget } from '@lumino/widgets';

import { RunsAPI } from './api';

import { locateCell, sameNotebook } from './cells';

import { RUN_ITEM_CLASS, SparkRunsPanel } from './panel';

import {
  ReportView,
  addViewButtons,
  createReportWidget,
  setReportTitle
} from './report';

import { runTitle } from './row';

import { IRunDetail } from './types';

export namespace CommandIDs {
  export const openReport = 'jupyter-perf:open-report';
  export const exportReport = 'jupyter-perf:export-report';
  export const goToCell = 'jupyter-perf:go-to-cell';
  export const deleteRun = 'jupyter-perf:delete-run';
  export const refresh = 'jupyter-perf:refresh';
  export const showRuns = 'jupyter-perf:show-runs';
}

/** The part of a NotebookPanel "Go to cell" needs (no @jupyterlab/notebook import). */
interface INotebookLike extends Widget {
  context: { path: string; ready: Promise<void> };
  content: {
    widgets: ReadonlyArray<{
      model: { id: string; sharedModel: { getSource(): string } };
      node: HTMLElement;
    }>;
    activeCellIndex: number;
    scrollToItem?: (index: number, align?: string) => Promise<void>;
  };
}

function isNotebook(widget: Widget): widget is INotebookLike {
  const w = widget as any;
  return (
    typeof w?.context?.path === 'string' &&
    w.context.path.endsWith('.ipynb') &&
    Array.isArray(w?.content?.widgets)
  );
}

function errorText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}

export interface ICommandContext {
  app: JupyterFrontEnd;
  api: RunsAPI;
  panel: SparkRunsPanel;
  tracker: WidgetTracker<MainAreaWidget<ReportView>>;
}

/**
 * The run a command acts on: its `runId` argument, else the run under the
 * context menu / selected in the sidebar, else the report tab in focus, else
 * the newest run listed.
 */
function targetRun(ctx: ICommandContext, args: any): string | null {
  if (typeof args?.runId === 'string' && args.runId) {
    return args.runId;
  }
  const hit = ctx.app.contextMenuHitTest(node =>
    node.classList.contains(RUN_ITEM_CLASS)
  );
  if (hit?.dataset.runId) {
    return hit.dataset.runId;
  }
  const current = ctx.tracker.currentWidget;
  if (current && ctx.app.shell.currentWidget === current) {
    return current.content.runId;
  }
  if (ctx.panel.selectedRunId) {
    return ctx.panel.selectedRunId;
  }
  return ctx.panel.model.state.rows[0]?.run_id ?? null;
}

/** The arguments of the commands that act on one run (`describedBy`). */
const RUN_ARGS = {
  type: 'object' as const,
  properties: {
    runId: {
      type: 'string',
      description:
        'The run id; by default the run under the context menu, selected in ' +
        'the sidebar, in the report tab in focus, or the newest run.'
    }
  }
};

const OPEN_ARGS = {
  ...RUN_ARGS,
  properties: {
    ...RUN_ARGS.properties,
    title: {
      type: 'string',
      description:
        "The tab's label (a restored tab passes the one it had); by default " +
        "the run's label, else the first line of its cell"
    }
  }
};

const NO_ARGS = { args: { type: 'object' as const, properties: {} } };

export function registerCommands(ctx: ICommandContext): void {
  const { app, api, panel, tracker } = ctx;
  const { commands, shell } = app;

  commands.addCommand(CommandIDs.openReport, {
    label: 'Open Spark Run Report',
    caption: 'Open the report of a Spark run in a tab',
    describedBy: { args: OPEN_ARGS },
    execute: async args => {
      const runId = targetRun(ctx, args);
      if (!runId) {
        return;
      }
      const existing = tracker.find(w => w.content.runId === runId);
      if (existing) {
        shell.activateById(existing.id);
        return existing;
      }
      // the label: given (a restored tab), else from the sidebar's row, else
      // fetched (the tab shows the run id until it arrives)
      const row = panel.findRun(runId);
      const given = typeof args?.title === 'string' ? args.title : '';
      const title = given || (row ? runTitle(row) : '');
      const widget = createReportWidget(runId, title || runId, api);
      if (!title) {
        api
          .get(runId)
          .then(run => {
            if (!widget.isDisposed) {
              setReportTitle(widget, runId, runTitle(run));
              void tracker.save(widget);
            }
          })
          .catch(() => undefined); // the report itself says what went wrong
      }
      addViewButtons(widget, {
        what: 'report',
        onExport: () =>
          void commands.execute(CommandIDs.exportReport, { runId }),
        reloadTooltip: 'Render the report again'
      });
      void tracker.add(widget);
      shell.add(widget, 'main');
      shell.activateById(widget.id);
      return widget;
    }
  });

  commands.addCommand(CommandIDs.exportReport, {
    label: 'Export Report as HTML',
    caption:
      'Write the standalone report of a Spark run (works offline) into the Jupyter root',
    describedBy: {
      args: {
        ...RUN_ARGS,
        properties: {
          ...RUN_ARGS.properties,
          path: {
            type: 'string',
            description:
              'Where to write the file, relative to the Jupyter root, ending in .html ' +
              '(default: jupyter-perf-<run id>.html at the root)'
          }
        }
      }
    },
    execute: async args => {
      const runId = targetRun(ctx, args);
      if (!runId) {
        Notification.warning(
          'No Spark run to export yet: run a cell with %%perfmeasure first.',
          { autoClose: 5000 }
        );
        return;
      }
      const path = typeof args?.path === 'string' ? args.path : undefined;
      // One notification once the file is written (updating an in-progress
      // toast races with its lazy creation when the report is cached).
      try {
        const result = await api.export(runId, path);
        const actions = commands.hasCommand('filebrowser:go-to-path')
          ? [
              {
                label: 'Show in file browser',
                callback: () =>
                  void commands.execute('filebrowser:go-to-path', {
                    path: result.path
                  })
              }
            ]
          : [];
        Notification.success(`Report exported to ${result.path}`, {
          autoClose: 8000,
          actions
        });
        return result;
      } catch (reason) {
        Notification.error(`Export failed: ${errorText(reason)}`, {
          autoClose: false
        });
      }
    }
  });

  commands.addCommand(CommandIDs.goToCell, {
    label: 'Go to Cell',
    caption: 'Show the notebook cell that produced this run',
    describedBy: { args: RUN_ARGS },
    execute: async args => {
      const runId = targetRun(ctx, args);
      if (!runId) {
        return;
      }
      let run: IRunDetail;
      try {
        run = await api.get(runId);
      } catch (reason) {
        Notification.error(`Go to cell: ${errorText(reason)}`, {
          autoClose: 5000
        });
        return;
      }
      if (!run.notebook && !run.notebook_path) {
        Notification.info(
          `Run ${runId} was not measured in a notebook (${run.kind}).`,
          { autoClose: 5000 }
        );
        return;
      }
      let notebook: INotebookLike | null = null;
      for (const w of shell.widgets('main')) {
        if (isNotebook(w) && sameNotebook(w.context.path, run)) {
          notebook = w;
          break;
        }
      }
      if (!notebook && run.notebook_path) {
        const opened = await commands.execute('docmanager:open', {
          path: run.notebook_path
        });
        if (opened && isNotebook(opened)) {
          notebook = opened;
        }
      }
      if (!notebook) {
        Notification.warning(
          `The notebook of run ${runId} (${run.notebook}) is not open and is not ` +
            'under the Jupyter root; open it, then try again.',
          { autoClose: 8000 }
        );
        return;
      }
      await notebook.context.ready;
      shell.activateById(notebook.id);
      const cells = notebook.content.widgets.map(c => ({
        id: c.model.id,
        source: c.model.sharedModel.getSource()
      }));
      const { index, ambiguous } = locateCell(cells, run);
      if (index < 0) {
        Notification.warning(
          'No cell of this notebook has the code of this run any more ' +
            '(it was edited or deleted).',
          { autoClose: 6000 }
        );
        return;
      }
      notebook.content.activeCellIndex = index;
      if (notebook.content.scrollToItem) {
        await notebook.content.scrollToItem(index, 'center');
      } else {
        notebook.content.widgets[index].node.scrollIntoView({
          block: 'center'
        });
      }
      if (ambiguous) {
        Notification.info('Several cells have this code; showing the first.', {
          autoClose: 5000
        });
      }
      return index;
    }
  });

  commands.addCommand(CommandIDs.deleteRun, {
    label: 'Delete Run',
    caption: 'Delete this run and its report from the run store',
    describedBy: { args: RUN_ARGS },
    execute: async args => {
      const runId = targetRun(ctx, args);
      if (!runId) {
        return;
      }
      const row = panel.findRun(runId);
      const answer = await showDialog({
        title: 'Delete Spark run?',
        body: `Delete run ${runId}${row ? ` (“${runTitle(row)}”)` : ''} and its report? This cannot be undone.`,
        buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Delete' })]
      });
      if (!answer.button.accept) {
        return;
      }
      try {
        await api.delete(runId);
        tracker.find(w => w.content.runId === runId)?.dispose();
      } catch (reason) {
        Notification.error(`Delete failed: ${errorText(reason)}`, {
          autoClose: 6000
        });
      }
      await panel.refresh();
    }
  });

  commands.addCommand(CommandIDs.refresh, {
    label: 'Refresh Spark Runs',
    describedBy: NO_ARGS,
    execute: () => panel.refresh()
  });

  commands.addCommand(CommandIDs.showRuns, {
    label: 'Show Spark Runs',
    describedBy: NO_ARGS,
    execute: () => {
      shell.activateById(panel.id);
    }
  });

  app.contextMenu.addItem({
    command: CommandIDs.openReport,
    selector: `.${RUN_ITEM_CLASS}`,
    rank: 1
  });
  app.contextMenu.addItem({
    command: CommandIDs.exportReport,
    selector: `.${RUN_ITEM_CLASS}`,
    rank: 2
  });
  app.contextMenu.addItem({
    command: CommandIDs.goToCell,
    selector: `.${RUN_ITEM_CLASS}`,
    rank: 3
  });
  app.contextMenu.addItem({
    command: CommandIDs.deleteRun,
    selector: `.${RUN_ITEM_CLASS}`,
    rank: 10
  });
}
