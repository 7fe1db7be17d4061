import { readSettings } from '../settings';

describe('readSettings', () => {
  it('uses the defaults', () => {
    expect(readSettings(null)).toEqual({ refreshInterval: 3, maxRuns: 50 });
    expect(readSettings({})).toEqual({ refreshInterval: 3, maxRuns: 50 });
  });

  it('clamps bad values', () => {
    expect(readSettings({ refreshInterval: 0, maxRuns: 10_000 })).toEqual({
      refreshInterval: 0,
      maxRuns: 500
    });
    expect(readSettings({ refreshInterval: 0.1, maxRuns: 0 })).toEqual({
      refreshInterval: 0.5,
      maxRuns: 1
    });
    expect(readSettings({ refreshInterval: 'x', maxRuns: 20.4 })).toEqual({
      refreshInterval: 3,
      maxRuns: 20
    });
  });
});
