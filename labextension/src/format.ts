/**
 * Durations, times and counts as the sidebar writes them. Pure functions: no
 * DOM, no JupyterLab.
 */

/** "850 ms", "4.2 s", "12 s", "3 min 05 s", "1 h 02 min"; "—" when unknown. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) {
    return '—';
  }
  if (ms < 1000) {
    return `${Math.round(ms)} ms`;
  }
  const s = ms / 1000;
  if (s < 10) {
    return `${s.toFixed(1)} s`;
  }
  if (s < 60) {
    return `${Math.round(s)} s`;
  }
  const totalSeconds = Math.round(s);
  const h = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  const sec = totalSeconds % 60;
  if (h > 0) {
    return `${h} h ${String(m).padStart(2, '0')} min`;
  }
  return `${m} min ${String(sec).padStart(2, '0')} s`;
}

/** "just now", "42 s ago", "5 min ago", "3 h ago", then the date. */
export function formatRelativeTime(
  epochMs: number | null | undefined,
  nowMs: number
): string {
  if (epochMs === null || epochMs === undefined || !Number.isFinite(epochMs)) {
    return '';
  }
  const ago = Math.max(0, nowMs - epochMs) / 1000;
  if (ago < 5) {
    return 'just now';
  }
  if (ago < 60) {
    return `${Math.floor(ago)} s ago`;
  }
  if (ago < 3600) {
    return `${Math.floor(ago / 60)} min ago`;
  }
  if (ago < 24 * 3600) {
    return `${Math.floor(ago / 3600)} h ago`;
  }
  return formatTimestamp(epochMs);
}

/** "2026-11-22 02:01" in local time. */
export function formatTimestamp(epochMs: number): string {
  const d = new Date(epochMs);
  const p = (n: number) => String(n).padStart(2, '0');
  return (
    `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
    `${p(d.getHours())}:${p(d.getMinutes())}`
  );
}

/** "1–50 of 1,234"; "No runs" when empty. */
export function pageLabel(
  offset: number,
  shown: number,
  total: number
): string {
  const n = (v: number) => v.toLocaleString('en-US');
  if (total <= 0 || shown <= 0) {
    return total > 0 ? `0 of ${n(total)}` : 'No runs';
  }
  return `${n(offset + 1)}–${n(offset + shown)} of ${n(total)}`;
}
