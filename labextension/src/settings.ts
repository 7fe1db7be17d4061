/**
 * The sidebar's settings as the schema (schema/plugin.json) defines them.
 */

export const DEFAULT_REFRESH_SECONDS = 3;
export const DEFAULT_MAX_RUNS = 50;
/** The server's own cap on `GET runs?limit=` (docs/rest-api.md). */
export const MAX_PAGE_SIZE = 500;

export interface ISidebarSettings {
  /** seconds between polls of the visible page; 0 turns polling off */
  refreshInterval: number;
  /** rows per page */
  maxRuns: number;
}

/** The settings, clamped to sane values; defaults for anything missing or malformed. */
export function readSettings(
  raw: Partial<Record<string, unknown>> | null | undefined
): ISidebarSettings {
  const num = (v: unknown, d: number) =>
    typeof v === 'number' && Number.isFinite(v) ? v : d;
  const refresh = Math.max(
    0,
    num(raw?.refreshInterval, DEFAULT_REFRESH_SECONDS)
  );
  const maxRuns = Math.round(num(raw?.maxRuns, DEFAULT_MAX_RUNS));
  return {
    refreshInterval: refresh > 0 ? Math.max(0.5, refresh) : 0,
    maxRuns: clampPageSize(maxRuns)
  };
}

/** A page size the server accepts: 1 … MAX_PAGE_SIZE. */
export function clampPageSize(limit: number): number {
  return Math.min(MAX_PAGE_SIZE, Math.max(1, Math.round(limit)));
}
