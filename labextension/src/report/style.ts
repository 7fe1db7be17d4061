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

/**
 * The comparison of two runs (report/compare.ts), scoped to `.jp-perf-cmp`;
 * `color: inherit` so it reads on a dark JupyterLab theme too.
 */
export const COMPARE_CSS = `
.jp-perf-cmp { font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif; font-size:13px;
  line-height:1.45; color:inherit; max-width:1100px }
.jp-perf-cmp h2 { font-size:15px; margin:14px 0 4px }
.jp-perf-cmp .jp-cmp-head { font-size:15px }
.jp-perf-cmp .jp-cmp-sentence { font-size:17px; font-weight:600; margin:6px 0 }
.jp-perf-cmp .muted { opacity:.7; font-size:11px }
.jp-perf-cmp table { border-collapse:collapse; margin:2px 0 6px }
.jp-perf-cmp td, .jp-perf-cmp th { padding:2px 10px 2px 0; text-align:left; vertical-align:top }
.jp-perf-cmp th { font-weight:600; border-bottom:1px solid rgba(128,128,128,.5) }
.jp-perf-cmp td.num, .jp-perf-cmp th.num { text-align:right; font-variant-numeric:tabular-nums;
  white-space:nowrap }
.jp-perf-cmp .nw { white-space:nowrap }
.jp-perf-cmp tr.total td { border-top:1px solid rgba(128,128,128,.5); font-weight:600 }
.jp-perf-cmp .bar { display:inline-block; height:10px; vertical-align:middle }
.jp-perf-cmp .bar.est { opacity:.55; background-image:repeating-linear-gradient(45deg,
  transparent 0 3px, rgba(255,255,255,.6) 3px 5px) }
.jp-perf-cmp .track { display:inline-block; width:220px; position:relative; height:10px }
.jp-perf-cmp .track .mid { position:absolute; left:110px; top:-2px; height:14px;
  border-left:1px solid rgba(128,128,128,.7) }
.jp-perf-cmp .slower { color:#b03a2e } .jp-perf-cmp .faster { color:#1e7b34 }
.jp-perf-cmp .warn { color:#8a4b00 }
.jp-perf-cmp code { font-size:12px }
`;

export function addCompareStyles(doc: Document = document): void {
  addStyles('compare', COMPARE_CSS, doc);
}
