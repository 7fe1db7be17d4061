import {
  IRunRow,
  IRunsPage,
  RunsListModel,
  cellBody,
  findCell,
  locateCell,
  formatDuration,
  formatRelativeTime,
  lastPageOffset,
  notebookName,
  pageLabel,
  readSettings,
  runSubtitle,
  runTitle,
  runTooltip,
  sameNotebook,
  statusText,
  verdictBadge,
  versionMismatch
} from '../model';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

function row(overrides: Partial<IRunRow> = {}): IRunRow {
  return {
    run_id: '20261122-115900-abcdef',
    created_ms: NOW - 90_000,
    kind: 'cell',
    label: '',
    first_line: "df.groupBy('k').count().collect()",
    notebook: '/home/me/work/etl.ipynb',
    notebook_path: 'work/etl.ipynb',
    status: 'ok',
    wall_ms: 4213,
    app_id: 'local-1',
    num_jobs: 1,
    num_stages: 2,
    num_tasks: 8,
    verdict:
      'CPU-bound: 71% of task time on CPU; an infinitely fast network would save at most 0%.',
    ...overrides
  };
}

function page(ids: string[], total: number, offset = 0, limit = 50): IRunsPage {
  return {
    runs: ids.map(run_id => row({ run_id })),
    total,
    offset,
    limit
  };
}

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

describe('runTitle and friends', () => {
  it('prefers the label, then the first line, then the id', () => {
    expect(runTitle(row({ label: 'daily aggregate' }))).toBe('daily aggregate');
    expect(runTitle(row({ label: '  ' }))).toBe(
      "df.groupBy('k').count().collect()"
    );
    expect(runTitle(row({ label: null, first_line: '' }))).toBe(
      '20261122-115900-abcdef'
    );
  });

  it('keeps markup as text (the panel sets textContent)', () => {
    const evil = '<img src=x onerror=alert(1)>';
    expect(runTitle(row({ label: evil }))).toBe(evil);
    expect(runTooltip(row({ label: evil }))).toContain(evil);
  });

  it('names the notebook by its file name', () => {
    expect(notebookName(row())).toBe('etl.ipynb');
    expect(notebookName(row({ notebook_path: null }))).toBe('etl.ipynb');
    expect(
      notebookName(row({ notebook_path: null, notebook: 'C:\\nb\\a.ipynb' }))
    ).toBe('a.ipynb');
    expect(notebookName(row({ notebook_path: null, notebook: '' }))).toBe('');
  });

  it('builds the subtitle from notebook, duration and time', () => {
    expect(runSubtitle(row(), NOW)).toBe('etl.ipynb · 4.2 s · 1 min ago');
    expect(runSubtitle(row({ notebook: '', notebook_path: null }), NOW)).toBe(
      '4.2 s · 1 min ago'
    );
  });

  it('puts counts and the verdict in the tooltip', () => {
    const tip = runTooltip(row());
    expect(tip).toContain('1 jobs · 2 stages · 8 task attempts');
    expect(tip).toContain('CPU-bound: 71%');
    expect(tip).toContain('work/etl.ipynb');
  });

  it('shows only unusual statuses', () => {
    expect(statusText('ok')).toBe('');
    expect(statusText('failed')).toBe('failed');
    expect(statusText('interrupted')).toBe('interrupted');
    expect(statusText('no-jobs')).toBe('no Spark jobs');
  });
});

describe('verdictBadge', () => {
  it.each([
    ['CPU-bound: 71% of task time on CPU', 'CPU-bound', 'cpu'],
    ['GC-bound: 40% of task time on JVM garbage collection', 'GC-bound', 'gc'],
    [
      'Shuffle-bound: 55% of task time on shuffle read/write',
      'Shuffle-bound',
      'shuffle'
    ],
    [
      'I/O-bound (estimated): 60% of task time on input/output wait',
      'I/O-bound (estimated)',
      'io'
    ],
    [
      'Driver-bound: no Spark task ran for 80% of the time; ...',
      'Driver-bound',
      'driver'
    ],
    ['Overhead-bound: 30% ...', 'Overhead-bound', 'overhead'],
    ['Waiting: 50% of task time on unexplained wait', 'Waiting', 'wait'],
    ['No Spark tasks ran: all 0.20 s were driver time.', 'No tasks', 'none'],
    ['Something new without a colon.', 'Something', 'other']
  ])('%p -> %p', (verdict, text, kind) => {
    expect(verdictBadge(verdict)).toEqual({ text, kind });
  });

  it('has no badge without a verdict', () => {
    expect(verdictBadge('')).toBeNull();
    expect(verdictBadge(null)).toBeNull();
  });

  it('keeps badges short', () => {
    const badge = verdictBadge('A'.repeat(39) + ': details');
    expect(badge!.text.length).toBeLessThanOrEqual(28);
  });
});

describe('pageLabel', () => {
  it('labels pages', () => {
    expect(pageLabel(0, 50, 1234)).toBe('1–50 of 1,234');
    expect(pageLabel(1200, 34, 1234)).toBe('1,201–1,234 of 1,234');
    expect(pageLabel(0, 0, 0)).toBe('No runs');
  });

  it('finds the last page', () => {
    expect(lastPageOffset(0, 50)).toBe(0);
    expect(lastPageOffset(50, 50)).toBe(0);
    expect(lastPageOffset(51, 50)).toBe(50);
    expect(lastPageOffset(1234, 50)).toBe(1200);
  });
});

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

describe('versionMismatch', () => {
  it('is quiet when the versions agree', () => {
    expect(versionMismatch('0.1.0', '0.1.0')).toBeNull();
  });

  it('names both versions and the fix when they differ', () => {
    const msg = versionMismatch('0.1.0', '0.2.0')!;
    expect(msg).toContain('0.1.0');
    expect(msg).toContain('0.2.0');
    expect(msg).toMatch(/restart JupyterLab/);
    expect(msg).not.toContain('\n');
  });

  it('explains a missing server extension', () => {
    expect(versionMismatch('0.1.0', null)).toMatch(
      /jupyter server extension list/
    );
  });
});

describe('go to cell', () => {
  const body = "df = spark.range(10)\ndf.groupBy('id').count().collect()";

  it('strips the %%perfmeasure line', () => {
    expect(cellBody(`%%perfmeasure --label x\n${body}`)).toBe(body);
    expect(cellBody(body)).toBe(body);
    expect(cellBody('%%perfmeasure\r\nx = 1')).toBe('x = 1');
  });

  it('finds the cell whose body is the run source', () => {
    const cells = [
      '%load_ext jupyter_perf',
      `%%perfmeasure --label other\nspark.range(5).count()`,
      `%%perfmeasure --label ui-test\n${body}\n`
    ];
    expect(findCell(cells, body + '\n')).toEqual({
      index: 2,
      ambiguous: false
    });
  });

  it('ignores trailing whitespace and CRLF', () => {
    const cells = [`%%perfmeasure\r\n${body.replace('\n', '   \r\n')}`];
    expect(findCell(cells, body)).toEqual({ index: 0, ambiguous: false });
  });

  it('prefers measured cells and reports ties', () => {
    const cells = [
      body,
      `%%perfmeasure\n${body}`,
      `%%perfmeasure -o r\n${body}`
    ];
    expect(findCell(cells, body)).toEqual({ index: 1, ambiguous: true });
    expect(findCell([body], body)).toEqual({ index: 0, ambiguous: false });
  });

  it('finds nothing for edited cells or empty sources', () => {
    expect(findCell([`%%perfmeasure\n${body} # edited`], body).index).toBe(-1);
    expect(findCell(['', '%%perfmeasure'], '').index).toBe(-1);
  });

  it('finds the cell by its id first, even after it was edited or moved', () => {
    const cells = [
      { id: 'a1', source: '%load_ext jupyter_perf' },
      { id: 'b2', source: `%%perfmeasure\n${body}` },
      { id: 'c3', source: `%%perfmeasure --label ui\n${body} # edited` }
    ];
    // c3 ran `body`, then was edited: its id still finds it, the source would not
    expect(locateCell(cells, { cell_id: 'c3', source: body })).toEqual({
      index: 2,
      ambiguous: false,
      by: 'id'
    });
    // the id wins over an identical cell elsewhere (no "several cells" tie)
    const twins = [cells[1], { id: 'd4', source: `%%perfmeasure\n${body}` }];
    expect(locateCell(twins, { cell_id: 'd4', source: body })).toEqual({
      index: 1,
      ambiguous: false,
      by: 'id'
    });
  });

  it('falls back to the source when the id is missing or unknown', () => {
    const cells = [
      { id: 'a1', source: '%load_ext jupyter_perf' },
      { id: 'b2', source: `%%perfmeasure\n${body}` }
    ];
    for (const cell_id of [undefined, null, '', 'gone']) {
      expect(locateCell(cells, { cell_id, source: body })).toEqual({
        index: 1,
        ambiguous: false,
        by: 'source'
      });
    }
    expect(
      locateCell(
        [...cells, { id: 'x', source: `%%perfmeasure -o r\n${body}` }],
        {
          source: body
        }
      )
    ).toEqual({ index: 1, ambiguous: true, by: 'source' });
    expect(locateCell(cells, { cell_id: 'gone', source: 'other()' })).toEqual({
      index: -1,
      ambiguous: false,
      by: null
    });
    expect(locateCell([], { cell_id: 'a1', source: '' }).index).toBe(-1);
  });

  it('matches notebooks by contents path, or by the recorded absolute path', () => {
    expect(sameNotebook('work/etl.ipynb', row())).toBe(true);
    expect(sameNotebook('etl.ipynb', row())).toBe(false);
    expect(sameNotebook('work/etl.ipynb', row({ notebook_path: null }))).toBe(
      true
    );
    expect(sameNotebook('etl.ipynb', row({ notebook_path: null }))).toBe(true);
    expect(sameNotebook('l.ipynb', row({ notebook_path: null }))).toBe(false);
    expect(
      sameNotebook('a.ipynb', row({ notebook_path: null, notebook: '' }))
    ).toBe(false);
  });
});

describe('RunsListModel', () => {
  it('starts empty and not loaded', () => {
    const m = new RunsListModel(50);
    expect(m.state.loaded).toBe(false);
    expect(m.request()).toEqual({ limit: 50, offset: 0, q: '' });
  });

  it('reports a change only when what is shown changed', () => {
    const m = new RunsListModel(50);
    expect(m.receive(page(['b', 'a'], 2), '')).toBe(true);
    expect(m.state.loaded).toBe(true);
    expect(m.receive(page(['b', 'a'], 2), '')).toBe(false); // a quiet poll
    expect(m.receive(page(['c', 'b', 'a'], 3), '')).toBe(true); // a new run arrived
    expect(m.state.rows.map(r => r.run_id)).toEqual(['c', 'b', 'a']);
  });

  it('notices a status or verdict change of the same run', () => {
    const m = new RunsListModel(50);
    m.receive(page(['a'], 1), '');
    const changed = page(['a'], 1);
    changed.runs[0].verdict = 'GC-bound: 50%';
    expect(m.receive(changed, '')).toBe(true);
  });

  it('pages through thousands of runs one page at a time', () => {
    const m = new RunsListModel(50);
    const ids = (offset: number) =>
      Array.from({ length: 50 }, (_, i) => `r${offset + i}`);
    m.receive(page(ids(0), 5000), '');
    expect(m.hasNewer).toBe(false);
    expect(m.hasOlder).toBe(true);
    expect(m.older()).toBe(true);
    expect(m.request()).toEqual({ limit: 50, offset: 50, q: '' });
    m.receive(page(ids(50), 5000, 50), '');
    expect(m.state.rows).toHaveLength(50);
    expect(m.newer()).toBe(true);
    expect(m.request().offset).toBe(0);
    expect(m.newer()).toBe(false);
  });

  it('does not page past the end', () => {
    const m = new RunsListModel(2);
    m.receive(page(['b', 'a'], 2), '');
    expect(m.hasOlder).toBe(false);
    expect(m.older()).toBe(false);
  });

  it('steps back when its page vanished (runs deleted elsewhere)', () => {
    const m = new RunsListModel(10);
    m.receive(
      page(
        Array.from({ length: 10 }, (_, i) => `x${i}`),
        25
      ),
      ''
    );
    m.older();
    m.older();
    expect(m.request().offset).toBe(20);
    expect(m.receive(page([], 12, 20, 10), '')).toBe(true);
    expect(m.request().offset).toBe(10);
  });

  it('resets to the first page on a new search, and drops stale answers', () => {
    const m = new RunsListModel(10);
    m.receive(page(['a'], 30), '');
    m.older();
    expect(m.setQuery('  daily ')).toBe(true);
    expect(m.request()).toEqual({ limit: 10, offset: 0, q: 'daily' });
    expect(m.setQuery('daily')).toBe(false);
    expect(m.receive(page(['stale'], 1), '')).toBe(false);
    expect(m.state.rows.map(r => r.run_id)).toEqual(['a']);
    expect(m.receive(page(['d'], 1), 'daily')).toBe(true);
  });

  it('keeps the rows on an error and clears it on the next answer', () => {
    const m = new RunsListModel(10);
    m.receive(page(['a'], 1), '');
    expect(m.fail('Could not load runs: 500')).toBe(true);
    expect(m.fail('Could not load runs: 500')).toBe(false);
    expect(m.state.rows).toHaveLength(1);
    expect(m.receive(page(['a'], 1), '')).toBe(true);
    expect(m.state.error).toBeNull();
  });

  it('clamps the page size and restarts at the first page when it changes', () => {
    const m = new RunsListModel(10_000);
    expect(m.request().limit).toBe(500);
    m.receive(page(['a'], 2000), '');
    m.older();
    expect(m.setLimit(20)).toBe(true);
    expect(m.request()).toEqual({ limit: 20, offset: 0, q: '' });
    expect(m.setLimit(20)).toBe(false);
  });

  it('finds listed runs', () => {
    const m = new RunsListModel(10);
    m.receive(page(['a', 'b'], 2), '');
    expect(m.find('b')?.run_id).toBe('b');
    expect(m.find('zzz')).toBeUndefined();
  });
});
