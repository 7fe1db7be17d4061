/**
 * The report's styles, injected once per document (JupyterLab page or
 * standalone file alike). Each tab adds its own rules with `addStyles`.
 */

const BASE = `
.jp-perf { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif;
  font-size: 13px; line-height: 1.45; color: #222; }
.jp-perf .jp-perf-muted { color: #666; font-size: 11px; }
.jp-perf .jp-perf-est { color: #8a6d00; }
.jp-perf .jp-perf-warn { color: #8a4b00; background: #fff6e5; padding: 4px 8px;
  border-radius: 3px; margin: 2px 0; }
.jp-perf .jp-perf-err { color: #a00; }
.jp-perf .jp-perf-big { font-size: 18px; font-weight: 600; }
.jp-perf pre { background: #f6f6f6; padding: 6px; white-space: pre-wrap;
  overflow-wrap: anywhere; }
.jp-perf-header .jp-perf-title { font-size: 15px; }
.jp-perf-tabbar { display: flex; flex-wrap: wrap; gap: 2px; border-bottom: 1px solid #ccc;
  margin: 6px 0; }
.jp-perf-tabbar button { border: 1px solid #ccc; border-bottom: none; background: #f4f4f4;
  padding: 4px 12px; cursor: pointer; font: inherit; border-radius: 3px 3px 0 0; }
.jp-perf-tabbar button[aria-selected='true'] { background: #fff; font-weight: 600;
  position: relative; top: 1px; }
.jp-perf-panel[hidden] { display: none; }
.jp-perf .jp-perf-table-wrap {
  overflow-x: auto;
}
.jp-perf table.jp-perf-table { border-collapse: collapse; font-size: 12px; }
.jp-perf table.jp-perf-table th, .jp-perf table.jp-perf-table td { padding: 2px 8px;
  border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }
.jp-perf table.jp-perf-table td.jp-perf-num, .jp-perf table.jp-perf-table th.jp-perf-num {
  text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.jp-perf table.jp-perf-table th:first-child,
.jp-perf table.jp-perf-table td:first-child {
  position: sticky;
  left: 0;
  background: #fff;
  z-index: 1;
}
.jp-perf table.jp-perf-table tr.jp-perf-selected td { background: #fff3b0; }
.jp-perf table.jp-perf-kv td { padding: 1px 10px 1px 0; vertical-align: top; }
`;

const added = new Set<string>();

/** Add `css` to the document once per `key`. */
export function addStyles(
  key: string,
  css: string,
  doc: Document = document
): void {
  const id = `jp-perf-style-${key}`;
  if (added.has(id) && doc.getElementById(id)) {
    return;
  }
  if (!doc.getElementById(id)) {
    const style = doc.createElement('style');
    style.id = id;
    style.textContent = css;
    doc.head.appendChild(style);
  }
  added.add(id);
}

export function addBaseStyles(doc: Document = document): void {
  addStyles('base', BASE, doc);
}
