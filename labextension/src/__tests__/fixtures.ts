/** Rows and pages shaped like the server's answers, shared by the specs. */

import { IRunRow, IRunsPage } from '../types';

export const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

export function row(overrides: Partial<IRunRow> = {}): IRunRow {
  return {
    run_id: '20261122-115900-abcdef',
    created_ms: NOW - 90_000,
    kind: 'cell',
    label: '',
    first_line: "df.groupBy('k').count().collect()",
    notebook: '/home/me/work/etl.ipynb',
    notebook_path: 'work/etl.ipynb',
    status: 'ok',
    wall_ms: 4213,
    app_id: 'local-1',
    num_jobs: 1,
    num_stages: 2,
    num_tasks: 8,
    verdict:
      'CPU-bound: 71% of task time on CPU; an infinitely fast network would save at most 0%.',
    ...overrides
  };
}

export function page(
  ids: string[],
  total: number,
  offset = 0,
  limit = 50
): IRunsPage {
  return {
    runs: ids.map(run_id => row({ run_id })),
    total,
    offset,
    limit
  };
}
