import {
  notebookName,
  operatorLine,
  runMeta,
  runSubtitle,
  runTitle,
  runTooltip,
  statusText,
  verdictBadge
} from '../row';

import { IRunRow } from '../types';

import textVectors from '../../../tests/render/text_vectors.json';

import { NOW, row } from './fixtures';

/** jupyter_perf/fmt.py's run_title() of these rows (tests/render/text_vectors.json). */
const TITLES = textVectors.run_title as [Partial<IRunRow>, string][];

describe('runTitle and friends', () => {
  it('prefers the label, then the first line, the app id, the run id', () => {
    expect(runTitle(row({ label: 'daily aggregate' }))).toBe('daily aggregate');
    expect(runTitle(row({ label: '  ' }))).toBe(
      "df.groupBy('k').count().collect()"
    );
    expect(runTitle(row({ label: null, first_line: '' }))).toBe('local-1');
    expect(runTitle(row({ label: null, first_line: '', app_id: null }))).toBe(
      '20261122-115900-abcdef'
    );
  });

  it('titles every shared vector as jupyter_perf/fmt.py run_title()', () => {
    expect(TITLES.length).toBeGreaterThan(5);
    const wrong = TITLES.map(([r, title]) => [
      r,
      title,
      runTitle({ label: null, first_line: null, run_id: '', ...r })
    ]).filter(([, title, got]) => got !== title);
    expect(wrong).toEqual([]);
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
    expect(runMeta(row(), NOW)).toEqual({
      notebook: 'etl.ipynb',
      duration: '4.21 s',
      age: '1 min ago'
    });
    expect(runSubtitle(row(), NOW)).toBe('etl.ipynb · 4.21 s · 1 min ago');
    expect(runSubtitle(row({ notebook: '', notebook_path: null }), NOW)).toBe(
      '4.21 s · 1 min ago'
    );
  });

  it('puts counts and the verdict in the tooltip', () => {
    const tip = runTooltip(row());
    expect(tip).toContain('1 job · 2 stages · 8 task attempts');
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
  const verdict =
    'Driver-bound: no Spark task ran for 80% of the time; inside tasks 60% went to CPU';

  it('shows the headline and category the analysis stored', () => {
    const badge = verdictBadge(
      row({
        verdict,
        verdict_category: 'driver',
        verdict_headline: 'Driver-bound'
      })
    );
    expect(badge).toEqual({
      text: 'Driver-bound',
      kind: 'driver',
      label: `Diagnosis: Driver-bound (${verdict})`
    });
  });

  it('never parses the sentence: no stored headline, no badge', () => {
    // a run stored before the category existed, or whose analysis failed
    expect(verdictBadge(row({ verdict }))).toBeNull();
    expect(
      verdictBadge(
        row({ verdict, verdict_category: null, verdict_headline: null })
      )
    ).toBeNull();
  });

  it('keeps the words and makes the category safe as a CSS class', () => {
    const badge = verdictBadge(
      row({
        verdict: '',
        verdict_category: 'core_wait" onclick="x',
        verdict_headline: 'Waiting for cores'
      })
    );
    expect(badge!.kind).toBe('core_waitonclickx');
    expect(badge!.text).toBe('Waiting for cores');
    expect(badge!.label).toBe('Diagnosis: Waiting for cores');
  });
});

describe('operatorLine', () => {
  const top = {
    name: 'HashAggregate',
    description: 'HashAggregate(keys=[k#3L], functions=[count(1)])',
    share: 0.525,
    kind: 'estimated',
    line: { line: 3, text: 'df.groupBy("k").count().collect()' }
  };

  it('names the top operator from the list row alone', () => {
    expect(operatorLine(row({ top_operator: 'HashAggregate' }))).toEqual({
      text: 'top: HashAggregate',
      title: 'Most task time: HashAggregate'
    });
  });

  it('adds its share and the cell line once the details are known', () => {
    const line = operatorLine(row({ top_operator: 'HashAggregate' }), top)!;
    expect(line.text).toBe('top: HashAggregate 52% · line 3');
    expect(line.title).toBe(
      'Most task time: HashAggregate (52% of task time, estimated)\n' +
        'HashAggregate(keys=[k#3L], functions=[count(1)])\n' +
        'line 3: df.groupBy("k").count().collect()'
    );
  });

  it('prefers the label, which names what the operator works on', () => {
    const line = operatorLine(row({ top_operator: 'HashAggregate by k' }), {
      ...top,
      label: 'HashAggregate by k'
    })!;
    expect(line.text).toBe('top: HashAggregate by k 52% · line 3');
    expect(line.title.split('\n')[0]).toBe(
      'Most task time: HashAggregate by k (52% of task time, estimated)'
    );
  });

  it('leaves out what is not known', () => {
    const line = operatorLine(row({ top_operator: 'Sort' }), {
      name: 'Sort',
      share: null,
      line: null
    })!;
    expect(line.text).toBe('top: Sort');
    expect(operatorLine(row({ top_operator: null }))).toBeNull();
    expect(operatorLine(row({ top_operator: '  ' }), null)).toBeNull();
  });
});
