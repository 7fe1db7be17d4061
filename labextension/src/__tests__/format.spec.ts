import { formatDuration, formatRelativeTime, pageLabel } from '../format';

import { NOW } from './fixtures';

describe('formatDuration', () => {
  it.each([
    [0, '0 ms'],
    [850.4, '850 ms'],
    [999.6, '1000 ms'],
    [1000, '1.0 s'],
    [4213, '4.2 s'],
    [12_400, '12 s'],
    [59_499, '59 s'],
    [185_000, '3 min 05 s'],
    [3_725_000, '1 h 02 min']
  ])('%p ms -> %p', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('says unknown for missing or bad numbers', () => {
    expect(formatDuration(null)).toBe('—');
    expect(formatDuration(undefined)).toBe('—');
    expect(formatDuration(NaN)).toBe('—');
    expect(formatDuration(-5)).toBe('—');
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
