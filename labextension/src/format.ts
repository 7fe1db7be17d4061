/**
 * Durations, times and counts as the sidebar writes them. Pure functions: no
 * DOM, no JupyterLab. Durations are `render/fmt.py`'s, to the character.
 */

/** What `render/fmt.py` writes for an unknown value. */
export const UNKNOWN = '–';

/**
 * `x` with `digits` decimals as Python's `format(x, ".{digits}f")` writes it:
 * the exact binary value correctly rounded, exact ties to even. `toFixed`
 * rounds the exact value correctly as well; only exact ties differ (it rounds
 * them up), so those are decided here from the exact decimal expansion.
 */
export function pyFixed(x: number, digits: number): string {
  const fixed = x.toFixed(digits);
  if (!Number.isFinite(x) || Math.abs(x) >= 1e21) {
    return fixed;
  }
  // up to 100 decimals is exact for every double that can be a tie at `digits`
  const exact = Math.abs(x).toFixed(100);
  const point = exact.indexOf('.');
  const rest = exact.slice(point + 1 + digits);
  if (!/^50*$/.test(rest)) {
    return fixed; // not a tie: toFixed is right
  }
  const kept = exact.slice(0, point + 1 + digits).replace(/\.$/, '');
  if (Number(kept[kept.length - 1]) % 2 === 0) {
    return (x < 0 ? '-' : '') + kept; // the tie goes down to the even digit
  }
  return fixed; // toFixed rounded the odd digit up: even
}

/** Python's `round(x)` of a float: nearest integer, exact ties to even. */
export function pyRound(x: number): number {
  return Number(pyFixed(x, 0));
}

function signed(negative: boolean, text: string, zero: boolean): string {
  return negative && !zero ? '-' + text : text;
}

/**
 * Milliseconds exactly as `render/fmt.py` `ms()` writes them: "12 ms",
 * "1.25 s", "3 min 05 s", "2 h 07 min"; "–" when unknown. A value is rounded
 * to the unit it is shown in before the unit is chosen (never "1000 ms" or
 * "1 min 60 s"). tests/render/fmt_vectors.json pins the two together.
 */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || Number.isNaN(ms)) {
    return UNKNOWN;
  }
  if (!Number.isFinite(ms)) {
    return ms < 0 ? '-∞' : '∞';
  }
  const a = Math.abs(ms);
  const whole = pyRound(a);
  if (whole < 1000) {
    return signed(ms < 0, `${whole} ms`, whole === 0);
  }
  const secs = pyFixed(a / 1000, 2);
  if (Number(secs) < 60) {
    return signed(ms < 0, `${secs} s`, false);
  }
  const two = (n: number) => String(n).padStart(2, '0');
  const s = pyRound(a / 1000);
  if (s < 3600) {
    return signed(ms < 0, `${Math.floor(s / 60)} min ${two(s % 60)} s`, false);
  }
  const m = pyRound(a / 60_000);
  return signed(ms < 0, `${Math.floor(m / 60)} h ${two(m % 60)} min`, false);
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
