/**
 * The report's data (payload format 2, docs/report.md "The data payload") and the
 * contract every tab keeps. The kernel sends data, never drawing: each tab's
 * part is built by `jupyter_perf/render/views/<tab>.py` and drawn by
 * `tabs/<tab>.ts` from it, with BokehJS for charts and plain DOM for text and
 * tables (every user string goes in as text, never as markup).
 */

/** A column of numbers as the kernel sends it: base64 of a little-endian typed array. */
export interface IEncodedArray {
  dtype:
    | 'float64'
    | 'float32'
    | 'int32'
    | 'uint32'
    | 'int16'
    | 'uint16'
    | 'int8'
    | 'uint8';
  b64: string;
}

export type NumberArray =
  | Float64Array
  | Float32Array
  | Int32Array
  | Uint32Array
  | Int16Array
  | Uint16Array
  | Int8Array
  | Uint8Array;

/** The header every view shares. */
export interface IReportHeader {
  title: string;
  run_id: string;
  kind: string;
  status: string; // "ok" or what went wrong
  error: string;
  wall_ms: number;
  model_error: number;
  /** The live Spark UI's base URL (ends without "/"), or null when not reachable. */
  spark_ui: string | null;
  app_id: string;
}

/**
 * The decoded payload: the header, each tab's part (its own shape, typed by
 * its module), and the per-task arrays (`tasks`: name -> array, decoded
 * once; `tasks_meta`: what render/payload.py's `build` returns as meta).
 */
export interface IReportData {
  format: number;
  run_id: string;
  header: IReportHeader;
  /** A fallback report (the analysis failed): the reason; tabs are then absent. */
  problem?: string;
  tabs: Record<string, any>;
  tasks: Record<string, NumberArray>;
  tasks_meta: Record<string, any>;
}

/** What one tab selects that others show (the query graph's operator, a straggler). */
export type Selection =
  | { kind: 'operator'; key: string; stageCodes: number[] }
  | { kind: 'task'; pos: number }
  | { kind: 'none' };

export interface ISelectionBus {
  select(selection: Selection, source: string): void;
  subscribe(listener: (s: Selection, source: string) => void): () => void;
  current(): Selection;
}

/** The BokehJS global of one version, with its widgets and tables plugins. */
export interface IBokehApi {
  version: string;
  Plotting: any;
  Models?: any;
  Widgets?: any;
  Tables?: any;
  documents: any[];
  embed: { embed_item(item: unknown, target: HTMLElement): Promise<any> };
}

/** What a tab's `render` gets. */
export interface ITabContext {
  data: IReportData;
  bokeh: IBokehApi;
  bus: ISelectionBus;
  /** Called by the tab for anything it must undo when the report goes away. */
  onDispose(cleanup: () => void): void;
}

/**
 * One tab: drawn into `el` the first time it is shown (tabs are lazy), kept
 * (hidden) afterwards. `render` may return a promise (BokehJS draws
 * asynchronously); the report is "ready" once the shown tab's promise settles.
 */
export interface ITab {
  key: string;
  title: string;
  render(el: HTMLElement, ctx: ITabContext): void | Promise<void>;
}
