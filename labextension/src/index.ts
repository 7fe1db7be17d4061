import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';

import { LabIcon } from '@jupyterlab/ui-components';

import { Widget } from '@lumino/widgets';

import { requestAPI } from './request';

/**
 * The plugin id; settings and the sidebar's restore state hang off it.
 */
const PLUGIN_ID = 'jupyter-perf:plugin';

/**
 * The sidebar icon: a small bar chart.
 */
const sparkRunsIcon = new LabIcon({
  name: 'jupyter-perf:spark-runs',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<g class="jp-icon3" fill="#616161">' +
    '<rect x="3" y="12" width="4" height="9"/>' +
    '<rect x="10" y="6" width="4" height="15"/>' +
    '<rect x="17" y="3" width="4" height="18"/>' +
    '</g></svg>'
});

/**
 * A placeholder "Spark runs" panel. Issue D replaces its body with the list of
 * recent runs; for now it only shows how to produce one.
 */
class SparkRunsPanel extends Widget {
  constructor() {
    super();
    this.id = 'jupyter-perf-sidebar';
    this.addClass('jp-perf-sidebar');
    this.title.icon = sparkRunsIcon;
    this.title.caption = 'Spark runs';

    const header = document.createElement('div');
    header.className = 'jp-perf-sidebar-header';
    header.textContent = 'Spark runs';

    const empty = document.createElement('div');
    empty.className = 'jp-perf-empty';
    empty.innerHTML =
      '<p>No Spark runs yet.</p>' +
      '<p>In a notebook, load the extension once:</p>' +
      '<pre><code>%load_ext jupyter_perf</code></pre>' +
      '<p>then put <code>%%perfmeasure</code> on the first line of a cell ' +
      'that runs Spark:</p>' +
      '<pre><code>%%perfmeasure\ndf.groupBy("key").count().collect()</code></pre>' +
      '<p>The report appears under the cell, and the run will be listed here.</p>';

    this.node.appendChild(header);
    this.node.appendChild(empty);
  }
}

/**
 * Initialization data for the jupyter-perf extension.
 */
const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'A Jupyter-native profiler for Apache Spark.',
  autoStart: true,
  activate: (app: JupyterFrontEnd) => {
    console.log('JupyterLab extension jupyter-perf is activated!');

    const panel = new SparkRunsPanel();
    app.shell.add(panel, 'left', { rank: 900 });

    requestAPI<{ version: string }>(
      'version',
      app.serviceManager.serverSettings
    )
      .then(data => {
        console.log(`jupyter-perf server extension ${data.version}`);
      })
      .catch(reason => {
        console.error(
          `The jupyter_perf server extension appears to be missing.\n${reason}`
        );
      });
  }
};

export default plugin;
