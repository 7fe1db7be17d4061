/// <reference types="node" />

import {
  UNKNOWN,
  escapeHtml,
  formatBytes,
  formatChange,
  formatCount,
  formatDuration,
  formatRelativeTime,
  pageLabel,
  pyFixed,
  pyRound
} from '../format';

import fmtVectors from '../../../tests/render/fmt_vectors.json';
import textVectors from '../../../tests/render/text_vectors.json';

import { NOW } from './fixtures';

/**
 * jupyter_perf/fmt.py's own strings for these inputs, written by
 * tests/render/fmt_vectors.py (the render side checks the same file).
 */
const VECTORS = fmtVectors as unknown as {
  ms: [number | null, string][];
  bytes: [number | null, string][];
};

/** jupyter_perf/fmt.py's count() for these inputs (tests/render/text_vectors.json). */
const COUNTS = textVectors.count as [number | null, string, string][];

/** The vectors `port` writes otherwise than fmt.py: [input, fmt's, port's]. */
function mismatches(
  vectors: [number | null, string][],
  port: (v: number | null) => string
): [number | null, string, string][] {
  return vectors
    .map(([v, text]): [number | null, string, string] => [v, text, port(v)])
    .filter(([, text, got]) => got !== text);
}

describe('formatDuration', () => {
  it('writes every shared test vector exactly as jupyter_perf/fmt.py ms()', () => {
    expect(VECTORS.ms.length).toBeGreaterThan(100);
    expect(mismatches(VECTORS.ms, formatDuration)).toEqual([]);
  });

  it.each([
    [0, '0 ms'],
    [850.4, '850 ms'],
    [999.6, '1.00 s'], // rounded into the next unit: never "1000 ms"
    [4213, '4.21 s'],
    [59_999.9, '1 min 00 s'], // never "60.00 s"
    [185_000, '3 min 05 s'],
    [3_725_000, '1 h 02 min']
  ])('%p ms -> %p', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('says unknown for missing numbers, as fmt.py does', () => {
    expect(formatDuration(null)).toBe(UNKNOWN);
    expect(formatDuration(undefined)).toBe(UNKNOWN);
    expect(formatDuration(NaN)).toBe(UNKNOWN);
    expect(formatDuration(Infinity)).toBe('∞');
  });
});

describe('formatBytes', () => {
  it('writes every shared test vector exactly as jupyter_perf/fmt.py nbytes()', () => {
    expect(VECTORS.bytes.length).toBeGreaterThan(100);
    expect(mismatches(VECTORS.bytes, formatBytes)).toEqual([]);
  });

  it.each([
    [1023.5, '1.0 KiB'], // never "1024 B"
    [1024 ** 2 - 51, '1.0 MiB'], // never "1024.0 KiB"
    [10.7 * 2 ** 20, '10.7 MiB'],
    [-1536, '-1.5 KiB']
  ])('%p bytes -> %p', (b, text) => {
    expect(formatBytes(b)).toBe(text);
  });
});

describe('formatChange, formatCount and escapeHtml', () => {
  it('write changes as jupyter_perf/fmt.py change()', () => {
    expect(formatChange(90, 100)).toBe('-10.0%');
    expect(formatChange(100, 100)).toBe('+0.0%');
    expect(formatChange(1, 0)).toBe(UNKNOWN);
  });

  it('write every shared count vector as jupyter_perf/fmt.py count()', () => {
    expect(COUNTS.length).toBeGreaterThan(10);
    for (const noun of new Set(COUNTS.map(([, noun]) => noun))) {
      const mine = COUNTS.filter(c => c[1] === noun).map(
        ([n, , text]): [number | null, string] => [n, text]
      );
      expect(mismatches(mine, n => formatCount(n, noun))).toEqual([]);
    }
  });

  it('escape markup as jupyter_perf/fmt.py esc()', () => {
    expect(escapeHtml("<img src=x onerror='a'>")).toBe(
      '&lt;img src=x onerror=&#x27;a&#x27;&gt;'
    );
    expect(escapeHtml('"a" & b')).toBe('&quot;a&quot; &amp; b');
    expect(escapeHtml(null)).toBe('');
  });
});

describe('pyFixed and pyRound', () => {
  it('round exact ties to even, as Python does', () => {
    expect(pyFixed(1.125, 2)).toBe('1.12'); // toFixed says 1.13
    expect(pyFixed(1.375, 2)).toBe('1.38');
    expect(pyFixed(-2.5, 0)).toBe('-2');
    expect(pyRound(0.5)).toBe(0);
    expect(pyRound(1.5)).toBe(2);
    expect(pyRound(2.5)).toBe(2);
  });

  it('round the exact binary value where it is no tie', () => {
    expect(pyFixed(1.005, 2)).toBe('1.00'); // 1.005 is 1.00499999… in binary
    expect(pyFixed(0.6, 0)).toBe('1');
    expect(pyFixed(59_994.9 / 1000, 2)).toBe('59.99');
  });

  it('keep the sign of negative zero, as Python does', () => {
    expect(pyFixed(-0, 1)).toBe('-0.0');
    expect(pyFixed(-0.001, 2)).toBe('-0.00');
    expect(pyFixed(-0.125, 2)).toBe('-0.12');
  });
});

describe('formatRelativeTime', () => {
  it('counts up from just now', () => {
    expect(formatRelativeTime(NOW - 1000, NOW)).toBe('just now');
    expect(formatRelativeTime(NOW + 5000, NOW)).toBe('just now'); // clock skew
    expect(formatRelativeTime(NOW - 42_000, NOW)).toBe('42 s ago');
    expect(formatRelativeTime(NOW - 5 * 60_000, NOW)).toBe('5 min ago');
    expect(formatRelativeTime(NOW - 3 * 3600_000, NOW)).toBe('3 h ago');
  });

  it('shows the date after a day', () => {
    expect(formatRelativeTime(NOW - 3 * 86400_000, NOW)).toMatch(
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/
    );
    expect(formatRelativeTime(null, NOW)).toBe('');
  });
});

describe('pageLabel', () => {
  it('labels pages', () => {
    expect(pageLabel(0, 50, 1234)).toBe('1–50 of 1,234');
    expect(pageLabel(1200, 34, 1234)).toBe('1,201–1,234 of 1,234');
    expect(pageLabel(0, 0, 0)).toBe('No runs');
  });
});
