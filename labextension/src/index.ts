import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';

import {
  ICommandPalette,
  MainAreaWidget,
  Notification,
  WidgetTracker
} from '@jupyterlab/apputils';

import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { RunsAPI } from './api';

// The sidebar and its commands are created in activate(): load them with the plugin.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { CommandIDs, registerCommands } from './commands';

// eslint-disable-next-line jupyter/prefer-lazy-imports
import { CompareCommandIDs, registerCompare } from './compare';

// eslint-disable-next-line jupyter/prefer-lazy-imports
import { SparkRunsPanel } from './panel';

import { ReportView } from './report';

import { readSettings } from './settings';

import { FRONTEND_VERSION, versionMismatch } from './version';

/**
 * The plugin id; the settings (schema/plugin.json) and the sidebar's restore
 * state hang off it.
 */
const PLUGIN_ID = 'jupyter-perf:plugin';

const PALETTE_CATEGORY = 'Spark Runs';

/**
 * The "Spark runs" sidebar, report tabs, and the export / go-to-cell commands.
 */
const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description:
    'A Jupyter-native profiler for Apache Spark: recent runs, their reports, export.',
  autoStart: true,
  optional: [ISettingRegistry, ICommandPalette, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    settingRegistry: ISettingRegistry | null,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null
  ) => {
    const api = new RunsAPI(app.serviceManager.serverSettings);
    const panel = new SparkRunsPanel({
      api,
      onOpen: runId =>
        void app.commands.execute(CommandIDs.openReport, { runId }),
      onCompare: (a, b) =>
        void app.commands.execute(CompareCommandIDs.compare, { a, b })
    });
    app.shell.add(panel, 'left', { rank: 900 });

    const tracker = new WidgetTracker<MainAreaWidget<ReportView>>({
      namespace: 'jupyter-perf-report'
    });
    registerCommands({ app, api, panel, tracker });
    registerCompare({ app, api, panel, restorer, palette }); // issue J: compare.ts

    if (palette) {
      for (const command of [
        CommandIDs.exportReport,
        CommandIDs.openReport,
        CommandIDs.goToCell,
        CommandIDs.refresh,
        CommandIDs.showRuns
      ]) {
        palette.addItem({ command, category: PALETTE_CATEGORY });
      }
    }

    if (restorer) {
      restorer.add(panel, 'jupyter-perf-sidebar');
      // the tab's label is saved with the layout, so a reload restores it as it was
      void restorer.restore(tracker, {
        command: CommandIDs.openReport,
        args: widget => ({
          runId: widget.content.runId,
          title: widget.content.runTitle
        }),
        name: widget => widget.content.runId
      });
    }

    if (settingRegistry) {
      settingRegistry
        .load(PLUGIN_ID)
        .then(settings => {
          const apply = () => panel.configure(readSettings(settings.composite));
          apply();
          settings.changed.connect(apply);
        })
        .catch(reason => {
          console.error('jupyter-perf: could not load its settings.', reason);
          panel.configure(readSettings(null));
        });
    } else {
      panel.configure(readSettings(null));
    }

    // The frontend and the server extension come from one wheel; if they differ
    // (upgraded without restarting, or a stale dev build), say so once.
    api
      .version()
      .then(data => {
        const warning = versionMismatch(FRONTEND_VERSION, data.version);
        if (warning) {
          console.warn(warning);
          panel.setNotice(warning);
          Notification.warning(warning, { autoClose: 10000 });
        } else {
          console.log(`jupyter-perf ${FRONTEND_VERSION} is activated.`);
        }
      })
      .catch(reason => {
        const warning = versionMismatch(FRONTEND_VERSION, null) as string;
        console.error(`${warning}\n${reason}`);
        panel.setNotice(warning);
      });
  }
};

export default plugin;
