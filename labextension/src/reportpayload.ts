/**
 * The report in a notebook output (docs/report.md, "In the notebook"): the
 * payload under `application/vnd.jupyter-perf.report+json`, checked before
 * anything is drawn, and where BokehJS comes from. Pure: no DOM, no JupyterLab.
 */

import constants from './constants.json';

// The values below are shared with Python, typed once in constants.json.

/** The vendor MIME type of the compact report payload. */
export const REPORT_MIME_TYPE: string = constants.report_mime_type;

/** The payload format of a format 1 report: a Bokeh document built by the kernel. */
export const REPORT_FORMAT: number = constants.report_format;

/**
 * The payload format of the report's data (render/views/ in Python), drawn by
 * the renderer of labextension/src/report/.
 */
export const REPORT_DATA_FORMAT: number = constants.report_data_format;

/**
 * How format 2's `data` is encoded: base 85 of the gzip of the report data's
 * binary container (a JSON header, then the per-task arrays: report/decode.ts).
 */
export const REPORT_DATA_ENCODING: string = constants.report_data_encoding;

/** The BokehJS bundles that renderer draws with: the core and its Plotting API. */
export const RENDERER_BOKEH_BUNDLES: readonly string[] =
  constants.renderer_bokeh_bundles;

/** The route of the server extension that serves BokehJS (jupyter_perf/server/static.py). */
export const BOKEH_NAMESPACE: string = constants.bokeh_namespace;

/**
 * The BokehJS bundles a format 1 report (a kernel-built Bokeh document) needs,
 * in load order: the core, then the widgets and tables plugins.
 */
export const BOKEH_BUNDLES: readonly string[] = constants.bokeh_bundles;

/** `bokeh.embed.json_item(root)`: a document and the root to draw. */
export interface IBokehItem {
  target_id: string | null;
  root_id: string;
  doc: Record<string, unknown>;
  version?: string;
}

/**
 * The encoding of `item` that notebooks store: base64 of the gzip of the
 * compact JSON text (an `.ipynb` keeps outputs as indented JSON, where a
 * nested Bokeh document takes ~15x its gzip size).
 */
export const ITEM_ENCODING: string = constants.item_encoding;

/**
 * `{"format": 1, "run_id", "title", "bokeh_version", "item_encoding"?, "item"}`:
 * `item` is the `json_item` object, or (with `item_encoding`) its encoded text.
 */
export interface IReportPayload {
  kind: 'item';
  format: number;
  run_id: string;
  title: string;
  bokeh_version: string;
  item_encoding: string | null;
  item: IBokehItem | string;
}

/**
 * `{"format": 2, "run_id", "title", "bokeh_version", "encoding", "data"}`:
 * `data` is the report data (docs/report.md), encoded as REPORT_DATA_ENCODING says.
 */
export interface IDataPayload {
  kind: 'data';
  format: number;
  run_id: string;
  title: string;
  bokeh_version: string;
  data: string;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A Bokeh version as Bokeh writes it ("3.9.2", "3.10.0.dev3", "3.4.0rc1"). */
export const VERSION = /^[0-9]+(\.[0-9A-Za-z]+)+([+-][0-9A-Za-z.]+)?$/;

/**
 * The payload if it is one this renderer can draw, else a one-line reason
 * that says what to do.
 */
export function parseReportPayload(
  data: unknown
): { payload: IReportPayload | IDataPayload } | { error: string } {
  if (!isObject(data)) {
    return { error: 'the report data is not a JSON object' };
  }
  const format = data.format;
  if (typeof format !== 'number') {
    return { error: 'the report data has no format number' };
  }
  const newest = Math.max(REPORT_FORMAT, REPORT_DATA_FORMAT);
  if (format > newest) {
    return {
      error:
        `the report was written by a newer jupyter-perf (format ${format}); ` +
        'upgrade jupyter-perf where JupyterLab runs and reload the page'
    };
  }
  if (format !== REPORT_FORMAT && format !== REPORT_DATA_FORMAT) {
    return { error: `unknown report format ${format}` };
  }
  const version = data.bokeh_version;
  if (typeof version !== 'string' || !VERSION.test(version)) {
    return { error: 'the report data names no valid Bokeh version' };
  }
  if (typeof data.run_id !== 'string' || !data.run_id) {
    return { error: 'the report data has no run id' };
  }
  if (format === REPORT_DATA_FORMAT) {
    if (data.encoding !== REPORT_DATA_ENCODING) {
      return {
        error:
          `the report's data is encoded as ${JSON.stringify(data.encoding)}, which this ` +
          'renderer does not read; upgrade jupyter-perf where JupyterLab runs'
      };
    }
    if (typeof data.data !== 'string' || !data.data) {
      return { error: 'the report payload holds no data' };
    }
    return {
      payload: {
        kind: 'data',
        format,
        run_id: data.run_id,
        title: typeof data.title === 'string' ? data.title : '',
        bokeh_version: version,
        data: data.data
      }
    };
  }
  const item = data.item;
  const encoding = data.item_encoding ?? null;
  if (encoding !== null && encoding !== ITEM_ENCODING) {
    return {
      error:
        `the report's item is encoded as ${JSON.stringify(encoding)}, which this ` +
        'renderer does not read; upgrade jupyter-perf where JupyterLab runs'
    };
  }
  const plain =
    encoding === null &&
    isObject(item) &&
    typeof item.root_id === 'string' &&
    isObject(item.doc);
  const encoded =
    encoding === ITEM_ENCODING && typeof item === 'string' && !!item;
  if (!plain && !encoded) {
    return { error: 'the report data holds no Bokeh item' };
  }
  return {
    payload: {
      kind: 'item',
      format,
      run_id: data.run_id,
      title: typeof data.title === 'string' ? data.title : '',
      bokeh_version: version,
      item_encoding: encoding as string | null,
      item: item as unknown as IBokehItem | string
    }
  };
}

/**
 * The `json_item` of a payload: as it is, or decoded (base64, then gunzip with
 * the browser's DecompressionStream, then JSON). Rejects with one line.
 */
export async function decodeItem(payload: IReportPayload): Promise<IBokehItem> {
  if (typeof payload.item !== 'string') {
    return payload.item;
  }
  let text: string;
  try {
    const binary = atob(payload.item);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) {
      bytes[i] = binary.charCodeAt(i);
    }
    const stream = new Blob([bytes])
      .stream()
      .pipeThrough(new DecompressionStream('gzip'));
    text = await new Response(stream).text();
  } catch (reason) {
    throw new Error(`the report's item could not be decompressed (${reason})`);
  }
  let item: unknown;
  try {
    item = JSON.parse(text);
  } catch {
    throw new Error("the report's item is not JSON");
  }
  if (
    !isObject(item) ||
    typeof item.root_id !== 'string' ||
    !isObject(item.doc)
  ) {
    throw new Error('the report data holds no Bokeh item');
  }
  return item as unknown as IBokehItem;
}

/** The URL of one BokehJS bundle of `version` under the server's base URL. */
export function bokehBundleUrl(
  baseUrl: string,
  version: string,
  bundle: string
): string {
  const base = baseUrl.endsWith('/') ? baseUrl : baseUrl + '/';
  return `${base}${BOKEH_NAMESPACE}/${encodeURIComponent(version)}/${bundle}.min.js`;
}

/** The `error` of a JSON error body (the server extension's shape), else null. */
/** The Bokeh version a static route's error body says the server has (null: none valid). */
export function serverVersionOf(body: string): string | null {
  try {
    const data = JSON.parse(body);
    const version = isObject(data) ? data.bokeh_version : null;
    return typeof version === 'string' && VERSION.test(version)
      ? version
      : null;
  } catch {
    return null;
  }
}

export function errorOf(body: string): string | null {
  try {
    const data = JSON.parse(body);
    return isObject(data) && typeof data.error === 'string' && data.error
      ? data.error
      : null;
  } catch {
    return null;
  }
}
