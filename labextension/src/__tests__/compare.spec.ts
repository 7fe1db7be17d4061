/**
 * The comparison's pure helpers (report/compare.ts): the values render/compare.py
 * wrote for the same inputs (its `_keep` and `_signed_ms`, printed by Python).
 */
import {
  COMPARE_MIME_TYPE,
  keepValues,
  parseComparePayload,
  short,
  signedMs
} from '../report/compare';

import constants from '../constants.json';

describe('keepValues', () => {
  it('keeps each value with its unit, as compare.py _keep did', () => {
    const cases: [string, string][] = [
      [
        'B took 1.25 s (-12.84 s) than A: 3 min 05 s, +4 %; 5 KiB read',
        'B took 1.25\u00a0s (-12.84\u00a0s) than A: 3\u00a0min 05\u00a0s, +4 %; 5\u00a0KiB read'
      ],
      ['2 sheep and 3 min', '2 sheep and 3\u00a0min'],
      ['10 ms\u00e9 7 s_x 8 s.', '10 ms\u00e9 7 s_x 8\u00a0s.'],
      ['\u0663 s', '\u0663\u00a0s'],
      ['4 %x', '4\u00a0%x']
    ];
    for (const [text, kept] of cases) {
      expect(keepValues(text)).toBe(kept);
    }
  });
});

describe('signedMs', () => {
  it('writes a change as compare.py _signed_ms did', () => {
    expect(signedMs(null)).toBe('–');
    expect(signedMs(0)).toBe('0 ms');
    expect(signedMs(0.2)).toBe('0 ms');
    expect(signedMs(0.6)).toBe('+1 ms');
    expect(signedMs(-0.6)).toBe('-1 ms');
    expect(signedMs(1250)).toBe('+1.25 s');
    expect(signedMs(-61000)).toBe('-1 min 01 s');
  });
});

describe('short', () => {
  it('cuts a description at 120 characters (code points)', () => {
    expect(short(null)).toBe('');
    expect(short('x'.repeat(120))).toBe('x'.repeat(120));
    expect(short('😀'.repeat(121))).toBe('😀'.repeat(119) + '…');
  });
});

describe('parseComparePayload', () => {
  it('takes format 1 with a summary, else says why not', () => {
    expect(COMPARE_MIME_TYPE).toBe(constants.compare_mime_type);
    const ok = parseComparePayload({ format: 1, summary: { a: 'x' } });
    expect(ok).toEqual({
      payload: { format: 1, summary: { a: 'x' }, split: [], volume_labels: [] }
    });
    expect('error' in parseComparePayload({ format: 2, summary: {} })).toBe(
      true
    );
    expect('error' in parseComparePayload({ format: 1 })).toBe(true);
    expect('error' in parseComparePayload(null)).toBe(true);
  });
});
