/**
 * BokehJS, loaded once per page and version from the server extension
 * (`{base_url}jupyter-perf/static/bokeh/<version>/<bundle>.min.js`, the Python
 * `bokeh` package's own files), with the user's credentials.
 *
 * BokehJS keeps every loaded version side by side as `window.Bokeh[version]`,
 * so a page that already has another Bokeh (another extension, an
 * `output_notebook()` cell) keeps it; a version already loaded with its
 * widgets and tables is used as it is.
 */

import { ServerConnection } from '@jupyterlab/services';

import {
  BOKEH_BUNDLES,
  bokehBundleUrl,
  errorOf,
  serverVersionOf
} from './reportpayload';

import { IBokehApi } from './report/types';

/** The part of BokehJS the renderer uses. */
export interface IBokehView {
  model: { document: unknown };
}

export interface IBokehViewManager {
  roots: IBokehView[];
  clear(): void;
}

export interface IBokeh {
  version: string;
  documents: unknown[];
  embed: {
    embed_item(item: unknown, target: HTMLElement): Promise<IBokehViewManager>;
  };
}

const loading = new Map<string, Promise<IBokeh & IBokehApi>>();

/**
 * BokehJS `version` with `bundles` (default: the widgets and tables a format 1
 * report needs); one load per page, version and set of bundles.
 */
export function loadBokeh(
  version: string,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings(),
  bundles: readonly string[] = BOKEH_BUNDLES
): Promise<IBokeh & IBokehApi> {
  return shared(loading, `${version} ${bundles.join(',')}`, () =>
    load(version, settings, bundles)
  );
}

/**
 * The promise `start()` made for `key`, made once and kept in `pending`; a
 * failed one (server down, wrong version) is dropped, to be tried again by the
 * next output.
 */
function shared<T>(
  pending: Map<string, Promise<T>>,
  key: string,
  start: () => Promise<T>
): Promise<T> {
  let promise = pending.get(key);
  if (!promise) {
    promise = start();
    pending.set(key, promise);
    promise.catch(() => pending.delete(key));
  }
  return promise;
}

/** A bundle the server does not serve at that version; it names the one it has. */
class OtherBokeh extends Error {
  constructor(
    message: string,
    readonly serverVersion: string | null
  ) {
    super(message);
  }
}

/**
 * BokehJS for a data payload (format 2): the renderer draws from data, not from
 * the kernel's Bokeh models, so the server's BokehJS does whatever its version.
 * `preferred` (the kernel's, named in the payload) first; when the server has
 * another Bokeh (upgraded since the notebook was saved), the one it names.
 */
export async function loadServerBokeh(
  preferred: string,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings(),
  bundles: readonly string[] = BOKEH_BUNDLES
): Promise<IBokeh & IBokehApi> {
  try {
    return await loadBokeh(preferred, settings, bundles);
  } catch (reason) {
    const other = reason instanceof OtherBokeh ? reason.serverVersion : null;
    if (!other || other === preferred) {
      throw reason;
    }
    return loadBokeh(other, settings, bundles);
  }
}

function loaded(version: string): any {
  return (window as any).Bokeh?.[version];
}

function present(version: string, bundle: string): boolean {
  const bokeh = loaded(version);
  switch (bundle) {
    case 'bokeh':
      return !!bokeh;
    case 'bokeh-widgets':
      return !!bokeh?.Widgets;
    case 'bokeh-tables':
      return !!bokeh?.Tables;
    case 'bokeh-api':
      return !!bokeh?.Plotting;
    default:
      return false;
  }
}

const bundleLoading = new Map<string, Promise<void>>();

/**
 * One bundle of BokehJS `version`, fetched and run once per page: two loads of
 * different bundle sets (a format 2 report's API and a format 1 output's
 * widgets) drawing at once share the core's fetch instead of running it twice.
 */
function loadBundle(
  version: string,
  settings: ServerConnection.ISettings,
  bundle: string
): Promise<void> {
  return shared(bundleLoading, `${version} ${bundle}`, () =>
    fetchBundle(version, settings, bundle)
  );
}

async function load(
  version: string,
  settings: ServerConnection.ISettings,
  bundles: readonly string[]
): Promise<IBokeh & IBokehApi> {
  for (const bundle of bundles) {
    if (!present(version, bundle)) {
      await loadBundle(version, settings, bundle);
    }
  }
  const bokeh = loaded(version);
  if (!bokeh?.embed?.embed_item) {
    throw new Error(
      `BokehJS ${version} did not start (see the browser console)`
    );
  }
  return bokeh as IBokeh & IBokehApi;
}

async function fetchBundle(
  version: string,
  settings: ServerConnection.ISettings,
  bundle: string
): Promise<void> {
  const url = bokehBundleUrl(settings.baseUrl, version, bundle);
  let response: Response;
  try {
    // 'default': the browser's cache may answer (the route's URLs are immutable)
    response = await ServerConnection.makeRequest(
      url,
      { cache: 'default' },
      settings
    );
  } catch (reason) {
    throw new Error(
      `could not reach the Jupyter server for BokehJS: ${reason}`
    );
  }
  const text = await response.text();
  if (!response.ok) {
    throw new OtherBokeh(
      errorOf(text) ??
        `BokehJS ${version} (${bundle}): ${response.status} ${response.statusText}`,
      serverVersionOf(text)
    );
  }
  await runScript(text, url);
}

/** Run a script's text as a classic `<script>` (a blob: URL), resolving once it ran. */
function runScript(text: string, url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const src = URL.createObjectURL(
      new Blob([`${text}\n//# sourceURL=${url}\n`], {
        type: 'text/javascript'
      })
    );
    const script = document.createElement('script');
    script.async = false;
    script.dataset.jupyterPerf = url;
    script.onload = () => {
      URL.revokeObjectURL(src);
      resolve();
    };
    script.onerror = () => {
      URL.revokeObjectURL(src);
      reject(new Error(`the browser refused to run ${url}`));
    };
    script.src = src;
    document.head.appendChild(script);
  });
}
