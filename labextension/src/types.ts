/**
 * The shapes of the server extension's REST answers (docs/rest-api.md), as the
 * frontend reads them. Types only: no code.
 */

/** One row of `GET runs`. */
export interface IRunRow {
  run_id: string;
  created_ms: number;
  kind: string;
  label: string | null;
  first_line: string | null;
  notebook: string | null;
  notebook_path: string | null;
  status: string;
  wall_ms: number | null;
  app_id: string | null;
  num_jobs: number | null;
  num_stages: number | null;
  num_tasks: number | null;
  verdict: string | null;
  /**
   * The bottleneck kind the analysis stored with the run: cpu | gc | shuffle |
   * io | overhead | other_wait | core_wait | driver | python | skew | scan | memory | none, or
   * oom when the run lost an executor to memory (analysis/verdict.py); null for runs stored
   * before it was computed or whose analysis failed.
   */
  verdict_category?: string | null;
  /** The diagnosis in a few words ("CPU-bound", "Driver-bound"); null as above. */
  verdict_headline?: string | null;
  /** The name of the SQL operator with the most task time; null without SQL. */
  top_operator?: string | null;
  /**
   * The run's cell's wall times up to this run (oldest first, this run last)
   * and the noise rule's flags (service/history.py `sparklines`); null when
   * the store holds no earlier run of the cell.
   */
  series?: IRunSeries | null;
}

/** `series` of a `GET runs` row: one entry per run of the cell, this run last. */
export interface IRunSeries {
  run_id: string[];
  wall_ms: number[];
  cold: boolean[];
  regression: boolean[];
  improvement: boolean[];
  change_point: boolean[];
}

/** `summary.top_operator` of `GET runs/{id}`: the analysis' most expensive operator. */
export interface ITopOperator {
  name: string;
  /** the name with what the user wrote: "HashAggregate by l_orderkey" */
  label?: string | null;
  description?: string | null;
  /** share of the window's task time, 0 … 1 */
  share?: number | null;
  /** "measured" or "estimated" (how its time was attributed) */
  kind?: string | null;
  /** the line of the measured cell Spark's call site points to, when known */
  line?: { line: number; text: string } | null;
}

/** `GET runs` */
export interface IRunsPage {
  runs: IRunRow[];
  total: number;
  offset: number;
  limit: number;
}

/** `GET runs/{id}` (the fields the frontend uses). */
export interface IRunDetail extends IRunRow {
  source: string;
  /** JupyterLab's id of the cell that ran (null when no front end sent one). */
  cell_id?: string | null;
  error: string;
  warnings: string[];
  start_ms: number;
  end_ms: number;
  /** the analysis summary (DESIGN.md); null when the analysis failed */
  summary?: { top_operator?: ITopOperator | null } | null;
}

/** `POST runs/{id}/export` */
export interface IExportResult {
  run_id: string;
  path: string;
  bytes: number;
}

/** `POST compare/{a}/{b}/export` */
export interface ICompareExportResult {
  a: string;
  b: string;
  path: string;
  bytes: number;
}
