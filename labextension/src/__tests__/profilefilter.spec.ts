import {
  IFlameTree,
  IHotCells,
  IProfileGroups,
  NO_FILTER,
  executorLabel,
  filterChoices,
  groupsFor,
  hotRows,
  isFiltered,
  layoutFlame,
  searchFlame
} from '../report/profilefilter';

// Three groups: the aggregate on executor 0 (stage 1), the regex filter on
// executors 0 and 1 (stage 1), the exchange on executor 1 (stages 1 and 2).
const groups: IProfileGroups = {
  operator: ['HashAggregate #1', 'Filter #2', 'Filter #2', 'Exchange #3'],
  executor: ['0', '0', '1', '1'],
  stages: [[1], [1], [1], [1, 2]]
};

// all task threads (100)
//   Task.run (100)
//     processNext (80)        agg 50 (g0), filter 30 (g1 20, g2 10)
//       safeLookup (50)       g0, self 50
//       <img src=x> regex (30)  g1 20 + g2 10, self
//     ShuffleWriter.write (20)  g3, self 20
const flame: IFlameTree = {
  parent: [-1, 0, 1, 2, 2, 1],
  depth: [0, 1, 2, 3, 3, 2],
  start: [0, 0, 0, 0, 50, 80],
  n: [100, 100, 80, 50, 30, 20],
  own: [0, 0, 0, 50, 30, 20],
  name: [
    'all task threads',
    'Task.run',
    'processNext',
    'BytesToBytesMap.safeLookup',
    '<img src=x> Pattern.match',
    'ShuffleWriter.write'
  ],
  operator: [
    '',
    'HashAggregate #1',
    'HashAggregate #1',
    'HashAggregate #1',
    'Filter #2',
    'Exchange #3'
  ],
  cells: {
    node: [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 3, 4, 4, 5],
    group: [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 0, 1, 2, 3],
    n: [50, 20, 10, 20, 50, 20, 10, 20, 50, 20, 10, 50, 20, 10, 20],
    own: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 50, 20, 10, 20]
  }
};

const hot: IHotCells = {
  function: [
    'BytesToBytesMap.safeLookup',
    'Task.run',
    '<img src=x> Pattern.match',
    'Task.run',
    '<img src=x> Pattern.match',
    'Task.run',
    'ShuffleWriter.write',
    'Task.run'
  ],
  group: [0, 0, 1, 1, 2, 2, 3, 3],
  self: [50, 0, 20, 0, 10, 0, 20, 0],
  total: [50, 50, 20, 20, 10, 10, 20, 20],
  kind: ['aggregate', '', 'regex', '', 'regex', '', 'shuffle write', '']
};

describe('profile filters', () => {
  it('offers every stage, operator and executor once', () => {
    expect(filterChoices(groups)).toEqual({
      stages: [1, 2],
      operators: ['HashAggregate #1', 'Filter #2', 'Exchange #3'],
      executors: ['0', '1']
    });
    expect(isFiltered(NO_FILTER)).toBe(false);
  });

  it('chooses the groups of a stage, an operator, an executor, or all three', () => {
    const f = { ...NO_FILTER };
    expect([...groupsFor(groups, f)]).toEqual([0, 1, 2, 3]);
    expect([...groupsFor(groups, { ...f, stage: 2 })]).toEqual([3]);
    expect([...groupsFor(groups, { ...f, operator: 'Filter #2' })]).toEqual([
      1, 2
    ]);
    expect([...groupsFor(groups, { ...f, executor: '1' })]).toEqual([2, 3]);
    expect([
      ...groupsFor(groups, { stage: 1, operator: 'Filter #2', executor: '0' })
    ]).toEqual([1]);
    expect([...groupsFor(groups, { ...f, stage: 9 })]).toEqual([]);
  });
});

describe('layoutFlame', () => {
  it('draws the whole profile as the payload has it', () => {
    const at = layoutFlame(flame, null);
    expect(at.total).toBe(100);
    expect(at.start).toEqual(flame.start);
    expect(at.n).toEqual(flame.n);
  });

  it('keeps only the chosen samples, every frame inside its parent', () => {
    const at = layoutFlame(flame, new Set([1, 2])); // the regex filter
    expect(at.total).toBe(30);
    expect(at.node).toEqual([0, 1, 2, 4]);
    expect(at.n).toEqual([30, 30, 30, 30]);
    expect(at.own).toEqual([0, 0, 0, 30]);
    expect(at.start).toEqual([0, 0, 0, 0]);
    const ex1 = layoutFlame(flame, new Set([2, 3])); // executor 1
    expect(ex1.total).toBe(30);
    // the widest child first: the shuffle write (20) left of processNext (10)
    expect(ex1.node).toEqual([0, 1, 5, 2, 4]);
    expect(ex1.start).toEqual([0, 0, 0, 20, 20]);
    for (let r = 1; r < ex1.node.length; r++) {
      const p = ex1.parent[r];
      expect(ex1.depth[r]).toBe(ex1.depth[p] + 1);
      expect(ex1.start[r]).toBeGreaterThanOrEqual(ex1.start[p]);
      expect(ex1.start[r] + ex1.n[r]).toBeLessThanOrEqual(
        ex1.start[p] + ex1.n[p]
      );
    }
  });

  it('is empty when no sample is chosen', () => {
    const at = layoutFlame(flame, new Set());
    expect(at.total).toBe(0);
    expect(at.node).toEqual([]);
  });

  it('draws an older payload (no groups) as it is', () => {
    const { parent, cells, ...old } = flame;
    expect(parent && cells).toBeTruthy();
    const at = layoutFlame(old, new Set([0]));
    expect(at.n).toEqual(flame.n);
    expect(at.parent).toEqual(flame.parent);
  });
});

describe('searchFlame', () => {
  it('marks frames by name as text and counts their samples once', () => {
    const at = layoutFlame(flame, null);
    const s = searchFlame(flame.name, at, '  PATTERN ');
    expect(s.frames).toBe(1);
    expect(s.samples).toBe(30);
    expect(s.hit).toEqual([false, false, false, false, true, false]);
    // a frame under a matching frame: its samples are not counted twice
    const nested = searchFlame(flame.name, at, 'e');
    expect(nested.frames).toBe(5); // every frame but Task.run
    expect(nested.samples).toBe(100);
    // not a pattern: "." is a dot
    expect(searchFlame(flame.name, at, '.*').frames).toBe(0);
    expect(searchFlame(flame.name, at, '').frames).toBe(0);
  });

  it('counts within the filtered flame', () => {
    const at = layoutFlame(flame, new Set([2]));
    const s = searchFlame(flame.name, at, 'match');
    expect(s).toEqual({
      hit: [false, false, false, true],
      frames: 1,
      samples: 10
    });
  });
});

describe('hotRows', () => {
  it('sums the chosen groups, hottest first, with their operator and executors', () => {
    const rows = hotRows(hot, groups, new Set([0, 1, 2, 3]), 100, 200);
    expect(rows.map(r => r.function)).toEqual([
      'BytesToBytesMap.safeLookup',
      '<img src=x> Pattern.match',
      'ShuffleWriter.write'
    ]);
    expect(rows[1]).toEqual({
      function: '<img src=x> Pattern.match',
      self_samples: 30,
      total_samples: 30,
      share: 0.3,
      operator: 'Filter #2',
      kind: 'regex',
      stages: '1',
      executors: '0, 1'
    });
  });

  it('keeps only the filter and the limit', () => {
    const rows = hotRows(hot, groups, new Set([2, 3]), 30, 200);
    expect(rows.map(r => [r.function, r.self_samples, r.executors])).toEqual([
      ['ShuffleWriter.write', 20, '1'],
      ['<img src=x> Pattern.match', 10, '1']
    ]);
    expect(rows[0].share).toBeCloseTo(20 / 30);
    expect(rows[0].stages).toBe('1, 2');
    expect(hotRows(hot, groups, new Set([0, 1, 2, 3]), 100, 1)).toHaveLength(1);
    expect(hotRows(hot, groups, new Set(), 0, 200)).toEqual([]);
  });

  it('names an executor the profile did not record', () => {
    expect(executorLabel('')).toBe('(not recorded)');
    expect(executorLabel('driver')).toBe('driver');
  });
});
