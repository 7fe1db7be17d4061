import {
  notebookName,
  runSubtitle,
  runTitle,
  runTooltip,
  statusText,
  verdictBadge
} from '../row';

import { NOW, row } from './fixtures';

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
