/**
 * "Go to Cell": which notebook and which cell produced a run. Pure functions
 * of cell sources and ids; commands.ts applies them to the open notebook.
 */

import { IRunDetail, IRunRow } from './types';

/** The cell body as the magic received it: without a leading `%%perfmeasure ...` line. */
export function cellBody(source: string): string {
  const text = source.replace(/\r\n?/g, '\n');
  const lines = text.split('\n');
  if (lines.length && /^\s*%%perfmeasure\b/.test(lines[0])) {
    return lines.slice(1).join('\n');
  }
  return text;
}

function normalise(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map(l => l.replace(/\s+$/, ''))
    .join('\n')
    .trim();
}

/**
 * Index of the cell that ran `runSource`, or -1. Runs store the cell body (the
 * text under `%%perfmeasure`): a cell matches when its body equals it, ignoring
 * trailing whitespace. Cells that start with `%%perfmeasure` win over others;
 * among equals the first wins (`ambiguous` says so).
 */
export function findCell(
  cellSources: ReadonlyArray<string>,
  runSource: string
): { index: number; ambiguous: boolean } {
  const wanted = normalise(runSource);
  if (!wanted) {
    return { index: -1, ambiguous: false };
  }
  const measured: number[] = [];
  const plain: number[] = [];
  cellSources.forEach((src, i) => {
    const isMeasured = /^\s*%%perfmeasure\b/.test(src);
    if (normalise(cellBody(src)) === wanted) {
      (isMeasured ? measured : plain).push(i);
    }
  });
  const hits = measured.length ? measured : plain;
  return { index: hits.length ? hits[0] : -1, ambiguous: hits.length > 1 };
}

/** A notebook cell as "Go to Cell" sees it: its model id and its source. */
export interface ICellRef {
  id: string;
  source: string;
}

/**
 * The cell that produced a run: the cell whose id is the run's `cell_id` (the
 * id JupyterLab sent with the execute request; it survives edits and moves),
 * else the source match of `findCell` (runs without an id, e.g. from another
 * front end, or a cell deleted and pasted back). `by` says which matched.
 */
export function locateCell(
  cells: ReadonlyArray<ICellRef>,
  run: Pick<IRunDetail, 'source'> & { cell_id?: string | null }
): { index: number; ambiguous: boolean; by: 'id' | 'source' | null } {
  if (run.cell_id) {
    const index = cells.findIndex(c => c.id === run.cell_id);
    if (index >= 0) {
      return { index, ambiguous: false, by: 'id' };
    }
  }
  const { index, ambiguous } = findCell(
    cells.map(c => c.source),
    run.source || ''
  );
  return { index, ambiguous, by: index >= 0 ? 'source' : null };
}

/** Does a notebook's path (as the contents API names it) denote the run's notebook? */
export function sameNotebook(
  openPath: string,
  row: Pick<IRunRow, 'notebook' | 'notebook_path'>
): boolean {
  const clean = (p: string) => p.replace(/\\/g, '/').replace(/^\/+/, '');
  const open = clean(openPath);
  if (row.notebook_path) {
    return clean(row.notebook_path) === open;
  }
  const nb = clean(row.notebook || '');
  return !!nb && !!open && (nb === open || nb.endsWith('/' + open));
}
