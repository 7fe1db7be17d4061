import {
  notebookName,
  operatorLine,
  runMeta,
  runSubtitle,
  runTitle,
  runTooltip,
  sparkline,
  SPARK_HEIGHT,
  SPARK_WIDTH,
  statusText,
  verdictBadge
} from '../row';

import { IRunRow, IRunSeries } from '../types';

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

describe('sparkline', () => {
  const series = (walls: number[], flags: Partial<IRunSeries> = {}) => ({
    run_id: walls.map((_, i) => `r${i}`),
    wall_ms: walls,
    cold: walls.map(() => false),
    regression: walls.map(() => false),
    improvement: walls.map(() => false),
    change_point: walls.map(() => false),
    ...flags
  });

  it('needs two runs', () => {
    expect(sparkline(null)).toBeNull();
    expect(sparkline(undefined)).toBeNull();
    expect(sparkline(series([1000]))).toBeNull();
    expect(sparkline(series([1000, NaN]))).toBeNull();
  });

  it('puts slower runs higher, oldest left, this run last', () => {
    const s = sparkline(series([1000, 2000, 1500]))!;
    expect(s.width).toBe(SPARK_WIDTH);
    expect(s.height).toBe(SPARK_HEIGHT);
    const pts = s.points.split(' ').map(p => p.split(',').map(Number));
    expect(pts).toHaveLength(3);
    expect(pts[0][0]).toBeLessThan(pts[1][0]);
    expect(pts[1][0]).toBeLessThan(pts[2][0]);
    // SVG y grows downwards: the slowest (2 s) is at the top, the fastest at the bottom
    expect(pts[1][1]).toBeLessThan(pts[2][1]);
    expect(pts[2][1]).toBeLessThan(pts[0][1]);
    expect(
      pts.every(
        ([x, y]) => x >= 0 && x <= SPARK_WIDTH && y >= 0 && y <= SPARK_HEIGHT
      )
    ).toBe(true);
    // only this run gets a dot when nothing is flagged, and it is not red
    expect(s.dots).toEqual([
      { cx: pts[2][0], cy: pts[2][1], kind: 'run', last: true }
    ]);
    expect(s.regression).toBe(false);
    expect(s.title).toBe(
      "wall time of this cell's last 3 runs (measured): 1.00 s–2.00 s; this run 1.50 s"
    );
  });

  it("makes the newest run's dot red when it is a flagged regression", () => {
    const s = sparkline(
      series([1000, 1010, 990, 4000], {
        regression: [false, false, false, true]
      })
    )!;
    expect(s.regression).toBe(true);
    const last = s.dots.find(d => d.last)!;
    expect(last.kind).toBe('regression');
    expect(s.title).toContain(', a regression (beyond the noise');
  });

  it('marks earlier flagged runs but keeps this run plain when it is not flagged', () => {
    const s = sparkline(
      series([1000, 4000, 1000], {
        regression: [false, true, false],
        cold: [true, false, false]
      })
    )!;
    expect(s.regression).toBe(false);
    expect(s.dots.map(d => [d.kind, d.last])).toEqual([
      ['regression', false],
      ['run', true]
    ]);
    expect(s.title).toContain('; 1 regression');
  });

  it('draws a flat line through the middle when every run took the same', () => {
    const s = sparkline(series([500, 500]))!;
    expect(s.points).toBe(
      `2,${SPARK_HEIGHT / 2} ${SPARK_WIDTH - 2},${SPARK_HEIGHT / 2}`
    );
  });
});
