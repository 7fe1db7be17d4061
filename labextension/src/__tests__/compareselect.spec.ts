import { CompareSelection, picked } from '../compareselect';

import { NOW, row } from './fixtures';

const older = picked(
  row({ run_id: 'r-old', created_ms: NOW - 60_000, label: 'before' })
);
const newer = picked(row({ run_id: 'r-new', created_ms: NOW, label: '' }));
const third = picked(
  row({ run_id: 'r-3', created_ms: NOW - 1000, label: 'third' })
);

describe('CompareSelection', () => {
  it('keeps the title a row shows', () => {
    expect(older.title).toBe('before');
    expect(newer.title).toBe("df.groupBy('k').count().collect()");
  });

  it('orders the pair by creation time, not by the order of picking', () => {
    const s = new CompareSelection();
    expect(s.pair()).toBeNull();
    expect(s.toggle(newer)).toBe(true);
    expect(s.describe()).toBe(
      `A: ${newer.title}. Ctrl+click a second run to compare.`
    );
    s.toggle(older);
    expect(s.pair()).toEqual({ a: older, b: newer });
    expect(s.describe()).toBe(`Compare A: before → B: ${newer.title}`);
  });

  it('toggles a run off and keeps at most two', () => {
    const s = new CompareSelection();
    s.toggle(older);
    expect(s.toggle(older)).toBe(false);
    expect(s.has('r-old')).toBe(false);
    expect(s.describe()).toBe('');
    s.toggle(older);
    s.toggle(newer);
    s.toggle(third); // replaces the one picked first
    expect(s.runs.map(r => r.runId)).toEqual(['r-new', 'r-3']);
    expect(s.pair()).toEqual({ a: third, b: newer });
    s.clear();
    expect(s.runs).toEqual([]);
  });
});
