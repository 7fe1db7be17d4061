/**
 * The one formatter of the browser side: durations, bytes, changes, counts,
 * times and HTML escaping. Pure functions: no DOM, no JupyterLab. Durations,
 * bytes, changes and counts are `jupyter_perf/fmt.py`'s, to the character (the
 * shared vectors in tests/render/ pin them together).
 *
 * The sidebar and the report's renderer (labextension/src/report/, also
 * bundled for standalone pages) import this module.
 */

/** What `jupyter_perf/fmt.py` writes for an unknown value. */
export const UNKNOWN = '–';

/** `fmt.BYTE_UNITS`: binary units, never "1024.0 KiB". */
export const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/**
 * `x` with `digits` decimals as Python's `format(x, ".{digits}f")` writes it:
 * the exact binary value correctly rounded, exact ties to even. `toFixed`
 * rounds the exact value correctly as well; only exact ties differ (it rounds
 * them up), so those are decided here from the exact decimal expansion.
 */
export function pyFixed(x: number, digits: number): string {
  if (!Number.isFinite(x) || Math.abs(x) >= 1e21) {
    return x.toFixed(digits);
  }
  if (Object.is(x, -0)) {
    return '-' + (0).toFixed(digits); // Python keeps the sign of -0.0
  }
  const a = Math.abs(x);
  // An exact tie scaled by 10**digits is n + 0.5 exactly, and below 2**52 the
  // product is exact too: a value whose scaled fraction is not near a half is
  // no tie, and toFixed is right (the fast path of almost every call).
  const y = a * Math.pow(10, digits);
  if (y < 1e15 && Math.abs(y - Math.floor(y) - 0.5) > 1e-7) {
    return x.toFixed(digits);
  }
  const fixed = x.toFixed(digits);
  // up to 100 decimals is exact for every double that can be a tie at `digits`
  const exact = a.toFixed(100);
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

/**
 * Python's `round(x)` of a float (and numpy's `np.round`): the nearest
 * integer, exact ties to even.
 */
export function pyRound(x: number): number {
  return Number(pyFixed(x, 0));
}

function signed(negative: boolean, text: string, zero: boolean): string {
  return negative && !zero ? '-' + text : text;
}

function finite(v: number | null | undefined): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/** What fmt.py writes for no finite number: "–" when unknown (null, NaN), "∞", "-∞". */
function nonFinite(v: number | null | undefined): string {
  if (v === null || v === undefined || Number.isNaN(v)) {
    return UNKNOWN;
  }
  return v < 0 ? '-∞' : '∞';
}

/**
 * Milliseconds exactly as `jupyter_perf/fmt.py` `ms()` writes them: "12 ms",
 * "1.25 s", "3 min 05 s", "2 h 07 min"; "–" when unknown. A value is rounded
 * to the unit it is shown in before the unit is chosen (never "1000 ms" or
 * "1 min 60 s").
 */
export function formatDuration(ms: number | null | undefined): string {
  if (!finite(ms)) {
    return nonFinite(ms);
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

/**
 * Bytes exactly as `jupyter_perf/fmt.py` `nbytes()` writes them: "512 B",
 * "1.5 KiB", "10.7 MiB" (rounded before the unit is chosen: never "1024 B").
 */
export function formatBytes(bytes: number | null | undefined): string {
  if (!finite(bytes)) {
    return nonFinite(bytes);
  }
  const a = Math.abs(bytes);
  const whole = pyRound(a);
  if (whole < 1024) {
    return signed(bytes < 0, `${whole} B`, whole === 0);
  }
  let x = a;
  const last = BYTE_UNITS.length - 1;
  for (let u = 1; u <= last; u++) {
    x /= 1024;
    const text = pyFixed(x, 1);
    if (Number(text) < 1024 || u === last) {
      return signed(bytes < 0, `${text} ${BYTE_UNITS[u]}`, false);
    }
  }
  return UNKNOWN; // not reached
}

/** `fmt.change`: the signed percentage change from `old` to `now`, "-10.0%". */
export function formatChange(now: number, old: number): string {
  if (!old) {
    return UNKNOWN;
  }
  const p = (100.0 * (now - old)) / old;
  const s = pyFixed(p, 1);
  return (p >= 0 && !s.startsWith('-') ? '+' : '') + s + '%';
}

/**
 * `fmt.count`: "1 job", "1,234 task attempts"; the number alone without a
 * noun; "–" when unknown (no noun then). The noun takes an "s" unless the
 * count is 1.
 */
export function formatCount(n: number | null | undefined, noun = ''): string {
  if (!finite(n)) {
    return nonFinite(n);
  }
  const text = pyRound(n).toLocaleString('en-US');
  return noun ? `${text} ${noun}${n === 1 ? '' : 's'}` : text;
}

/** `fmt.esc`: a user string made safe to put into HTML markup. */
export function escapeHtml(text: unknown): string {
  return String(text ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#x27;');
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
  const n = formatCount;
  if (total <= 0 || shown <= 0) {
    return total > 0 ? `0 of ${n(total)}` : 'No runs';
  }
  return `${n(offset + 1)}–${n(offset + shown)} of ${n(total)}`;
}
