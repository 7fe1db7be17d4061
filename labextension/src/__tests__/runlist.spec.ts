import { RunsListModel, lastPageOffset } from '../runlist';

import { page } from './fixtures';

/** Ask the model for its next request and answer it with `answer`. */
function answer(m: RunsListModel, answer: ReturnType<typeof page>): boolean {
  return m.receive(answer, m.request());
}

describe('lastPageOffset', () => {
  it('finds the last page', () => {
    expect(lastPageOffset(0, 50)).toBe(0);
    expect(lastPageOffset(50, 50)).toBe(0);
    expect(lastPageOffset(51, 50)).toBe(50);
    expect(lastPageOffset(1234, 50)).toBe(1200);
  });
});

describe('RunsListModel', () => {
  it('starts empty and not loaded', () => {
    const m = new RunsListModel(50);
    expect(m.state.loaded).toBe(false);
    expect(m.request()).toMatchObject({ limit: 50, offset: 0, q: '' });
  });

  it('numbers its requests', () => {
    const m = new RunsListModel(50);
    const a = m.request();
    const b = m.request();
    expect(b.seq).toBeGreaterThan(a.seq);
  });

  it('reports a change only when what is shown changed', () => {
    const m = new RunsListModel(50);
    expect(answer(m, page(['b', 'a'], 2))).toBe(true);
    expect(m.state.loaded).toBe(true);
    expect(answer(m, page(['b', 'a'], 2))).toBe(false); // a quiet poll
    expect(answer(m, page(['c', 'b', 'a'], 3))).toBe(true); // a new run arrived
    expect(m.state.rows.map(r => r.run_id)).toEqual(['c', 'b', 'a']);
  });

  it('notices a status or verdict change of the same run', () => {
    const m = new RunsListModel(50);
    answer(m, page(['a'], 1));
    const changed = page(['a'], 1);
    changed.runs[0].verdict = 'GC-bound: 50%';
    expect(answer(m, changed)).toBe(true);
  });

  it("notices a run's sparkline changing (its flag, or more runs of its cell)", () => {
    const m = new RunsListModel(50);
    const line = (regression: boolean[]) => ({
      run_id: regression.map((_, i) => `r${i}`),
      wall_ms: regression.map(() => 1000),
      cold: regression.map(() => false),
      regression,
      improvement: regression.map(() => false),
      change_point: regression.map(() => false)
    });
    const first = page(['a'], 1);
    first.runs[0].series = line([false, false]);
    expect(answer(m, first)).toBe(true);
    const same = page(['a'], 1);
    same.runs[0].series = line([false, false]);
    expect(answer(m, same)).toBe(false); // a quiet poll
    const flagged = page(['a'], 1);
    flagged.runs[0].series = line([false, true]);
    expect(answer(m, flagged)).toBe(true);
    expect(m.state.rows[0].series?.regression).toEqual([false, true]);
    const none = page(['a'], 1);
    none.runs[0].series = null;
    expect(answer(m, none)).toBe(true);
  });

  it('pages through thousands of runs one page at a time', () => {
    const m = new RunsListModel(50);
    const ids = (offset: number) =>
      Array.from({ length: 50 }, (_, i) => `r${offset + i}`);
    answer(m, page(ids(0), 5000));
    expect(m.hasNewer).toBe(false);
    expect(m.hasOlder).toBe(true);
    expect(m.older()).toBe(true);
    expect(m.request()).toMatchObject({ limit: 50, offset: 50, q: '' });
    answer(m, page(ids(50), 5000, 50));
    expect(m.state.rows).toHaveLength(50);
    expect(m.newer()).toBe(true);
    expect(m.request().offset).toBe(0);
    expect(m.newer()).toBe(false);
  });

  it('does not page past the end', () => {
    const m = new RunsListModel(2);
    answer(m, page(['b', 'a'], 2));
    expect(m.hasOlder).toBe(false);
    expect(m.older()).toBe(false);
  });

  it('steps back when its page vanished (runs deleted elsewhere)', () => {
    const m = new RunsListModel(10);
    answer(
      m,
      page(
        Array.from({ length: 10 }, (_, i) => `x${i}`),
        25
      )
    );
    m.older();
    m.older();
    expect(m.request().offset).toBe(20);
    expect(answer(m, page([], 12, 20, 10))).toBe(true);
    expect(m.request().offset).toBe(10);
  });

  it('resets to the first page on a new search, and drops stale answers', () => {
    const m = new RunsListModel(10);
    answer(m, page(['a'], 30));
    const before = m.request();
    m.older();
    expect(m.setQuery('  daily ')).toBe(true);
    expect(m.request()).toMatchObject({ limit: 10, offset: 0, q: 'daily' });
    expect(m.setQuery('daily')).toBe(false);
    // the answer to the request sent before the search arrives late: dropped
    expect(m.receive(page(['stale'], 1), before)).toBe(false);
    expect(m.state.rows.map(r => r.run_id)).toEqual(['a']);
    expect(answer(m, page(['d'], 1))).toBe(true);
    expect(m.state.rows.map(r => r.run_id)).toEqual(['d']);
  });

  it('asks for the regressed runs from the first page, and drops answers to the full list', () => {
    const m = new RunsListModel(10);
    answer(m, page(['a', 'b'], 30));
    const full = m.request(); // the same page and search: only the filter differs
    expect(full.regressed).toBe(false);
    expect(m.setRegressed(true)).toBe(true);
    expect(m.setRegressed(true)).toBe(false);
    expect(m.request()).toMatchObject({ offset: 0, regressed: true, q: '' });
    // the full list's answer arrives after the filter was turned on: dropped
    expect(m.receive(page(['a', 'b'], 30), full)).toBe(false);
    expect(answer(m, page(['b'], 1))).toBe(true);
    expect(m.state.rows.map(r => r.run_id)).toEqual(['b']);
    expect(m.setRegressed(false)).toBe(true);
    expect(m.request().regressed).toBe(false);
  });

  it('drops the answer to a page the user has left', () => {
    const m = new RunsListModel(10);
    answer(m, page(['a'], 30));
    const first = m.request();
    m.older(); // the user clicks "Older" before the first page came back
    expect(m.receive(page(['a'], 30), first)).toBe(false);
    expect(m.state.offset).toBe(10);
  });

  it('keeps the newest answer when two requests overlap', () => {
    const m = new RunsListModel(10);
    const early = m.request();
    const late = m.request();
    expect(m.receive(page(['new', 'a'], 2), late)).toBe(true);
    // the earlier request's answer arrives last: it must not replace the newer one
    expect(m.receive(page(['a'], 1), early)).toBe(false);
    expect(m.state.rows.map(r => r.run_id)).toEqual(['new', 'a']);
  });

  it('keeps the rows on an error and clears it on the next answer', () => {
    const m = new RunsListModel(10);
    answer(m, page(['a'], 1));
    expect(m.fail('Could not load runs: 500')).toBe(true);
    expect(m.fail('Could not load runs: 500')).toBe(false);
    expect(m.state.rows).toHaveLength(1);
    expect(answer(m, page(['a'], 1))).toBe(true);
    expect(m.state.error).toBeNull();
  });

  it('ignores the failure of a request that is no longer current', () => {
    const m = new RunsListModel(10);
    const old = m.request();
    m.setQuery('daily');
    expect(m.fail('Could not load runs: 500', old)).toBe(false);
    expect(m.state.error).toBeNull();
  });

  it('clamps the page size and restarts at the first page when it changes', () => {
    const m = new RunsListModel(10_000);
    expect(m.request().limit).toBe(500);
    answer(m, page(['a'], 2000));
    m.older();
    expect(m.setLimit(20)).toBe(true);
    expect(m.request()).toMatchObject({ limit: 20, offset: 0, q: '' });
    expect(m.setLimit(20)).toBe(false);
  });

  it('finds listed runs', () => {
    const m = new RunsListModel(10);
    answer(m, page(['a', 'b'], 2));
    expect(m.find('b')?.run_id).toBe('b');
    expect(m.find('zzz')).toBeUndefined();
  });
});
