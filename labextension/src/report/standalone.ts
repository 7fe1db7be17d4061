/**
 * The renderer as one plain script (labextension/bundle-report.js builds it
 * into jupyter_perf/render/static/report-renderer.js) for pages without
 * JupyterLab: the standalone export and nbconvert's HTML. BokehJS is on the
 * page already (inlined). Each report is a `<script type=
 * "application/vnd.jupyter-perf.report+json">` holding the MIME payload,
 * drawn into the element right before it. A comparison of two runs is a
 * `<script type="application/vnd.jupyter-perf.compare+json">` the same way
 * (report/compare.ts; it needs no BokehJS).
 */
import {
  COMPARE_MIME_TYPE,
  parseComparePayload,
  renderComparison
} from './compare';
import { decodeData } from './decode';
import { renderReport } from './render';
import { IBokehApi } from './types';
import { REPORT_MIME_TYPE } from '../reportpayload';

/** The one line a page shows where a report or comparison cannot be drawn. */
function showProblem(target: HTMLElement, what: string, reason: unknown): void {
  const line = document.createElement('div');
  line.className = 'jp-perf-warn';
  line.textContent = `The jupyter-perf ${what} cannot be shown: ${
    reason instanceof Error ? reason.message : String(reason)
  }`;
  target.replaceChildren(line);
  target.dataset.jpError = line.textContent;
}

async function drawOne(script: HTMLScriptElement): Promise<void> {
  const target = script.previousElementSibling as HTMLElement | null;
  if (!target || script.dataset.jpDrawn) {
    return;
  }
  script.dataset.jpDrawn = '1';
  try {
    const payload = JSON.parse(script.textContent || '{}');
    const bokeh: IBokehApi | undefined = (window as any).Bokeh;
    if (!bokeh?.Plotting) {
      throw new Error('BokehJS is not on this page');
    }
    const data = await decodeData(payload.data);
    renderReport(target, data, bokeh);
  } catch (reason) {
    showProblem(target, 'report', reason);
  }
}

/** A comparison: drawn into the element right before its payload. */
function drawComparison(script: HTMLScriptElement): Promise<void> {
  const target = script.previousElementSibling as HTMLElement | null;
  if (!target || script.dataset.jpDrawn) {
    return Promise.resolve();
  }
  script.dataset.jpDrawn = '1';
  try {
    const parsed = parseComparePayload(JSON.parse(script.textContent || '{}'));
    if ('error' in parsed) {
      throw new Error(parsed.error);
    }
    renderComparison(target, parsed.payload);
  } catch (reason) {
    showProblem(target, 'comparison', reason);
  }
  return Promise.resolve();
}

export function drawAll(doc: Document = document): Promise<void[]> {
  const scripts = Array.from(
    doc.querySelectorAll<HTMLScriptElement>(
      `script[type="${REPORT_MIME_TYPE}"]`
    )
  );
  const comparisons = Array.from(
    doc.querySelectorAll<HTMLScriptElement>(
      `script[type="${COMPARE_MIME_TYPE}"]`
    )
  );
  return Promise.all([
    ...scripts.map(drawOne),
    ...comparisons.map(drawComparison)
  ]);
}

(window as any).JupyterPerfReport = {
  drawAll,
  renderReport,
  renderComparison,
  decodeData
};
if (document.readyState === 'loading') {
  document.addEventListener('DOMContentLoaded', () => void drawAll());
} else {
  void drawAll();
}
