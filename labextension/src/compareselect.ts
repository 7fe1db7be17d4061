/**
 * The two runs picked in the sidebar for a comparison (issue J), as state: no DOM.
 *
 * Ctrl/Cmd/Shift+click (or "Select for Comparison" in a row's context menu)
 * toggles a run; at most two are kept (a third replaces the one picked
 * first). The older run (by creation time) is A, the newer B, whatever order
 * they were picked in: a comparison reads "what changed since".
 */

import { runTitle } from './row';

import { IRunRow } from './types';

/** What the bar shows of a picked run, kept when the row pages out of view. */
export interface IPickedRun {
  runId: string;
  createdMs: number;
  title: string;
}

export function picked(
  row: Pick<IRunRow, 'run_id' | 'created_ms' | 'label' | 'first_line'>
): IPickedRun {
  return {
    runId: row.run_id,
    createdMs: row.created_ms,
    title: runTitle(row)
  };
}

export class CompareSelection {
  /** The picked runs, in the order they were picked. */
  get runs(): ReadonlyArray<IPickedRun> {
    return this._runs;
  }

  has(runId: string): boolean {
    return this._runs.some(r => r.runId === runId);
  }

  /** Pick or unpick a run; returns whether it is picked now. */
  toggle(run: IPickedRun): boolean {
    if (this.has(run.runId)) {
      this._runs = this._runs.filter(r => r.runId !== run.runId);
      return false;
    }
    this._runs = [...this._runs, run].slice(-2);
    return true;
  }

  clear(): void {
    this._runs = [];
  }

  /** A (older) and B (newer) once two runs are picked, else null. */
  pair(): { a: IPickedRun; b: IPickedRun } | null {
    if (this._runs.length < 2) {
      return null;
    }
    const [x, y] = [...this._runs].sort(
      (p, q) => p.createdMs - q.createdMs || p.runId.localeCompare(q.runId)
    );
    return { a: x, b: y };
  }

  /** The bar's text: what is picked and what to do next; '' when nothing is. */
  describe(): string {
    const pair = this.pair();
    if (pair) {
      return `Compare A: ${pair.a.title} → B: ${pair.b.title}`;
    }
    if (this._runs.length === 1) {
      return `A: ${this._runs[0].title}. Ctrl+click a second run to compare.`;
    }
    return '';
  }

  private _runs: IPickedRun[] = [];
}
