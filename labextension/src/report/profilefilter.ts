/**
 * The Profile tab's filters and search, as pure functions of the payload
 * (jupyter_perf/render/views/profile.py): the samples fall into groups
 * (operator × executor, each with the operator's stages); a filter by stage,
 * operator or executor is a set of groups, and the flame graph and the
 * hot-functions table are recomputed from the samples of those groups
 * (every number stays a count of samples: sampled).
 */

export interface IProfileGroups {
  operator: string[];
  executor: string[];
  stages: number[][];
}

export interface IFlameCells {
  node: number[];
  group: number[];
  n: number[];
  own: number[];
}

export interface IFlameTree {
  /** the parent's index (-1: the root); parents come before their children */
  parent?: number[];
  depth: number[];
  start: number[];
  n: number[];
  own: number[];
  name: string[];
  operator: string[];
  cells?: IFlameCells;
}

export interface IHotCells {
  function: string[];
  group: number[];
  self: number[];
  total: number[];
  kind: string[];
}

/** null: any */
export interface IProfileFilter {
  stage: number | null;
  operator: string | null;
  executor: string | null;
}

export const NO_FILTER: IProfileFilter = {
  stage: null,
  operator: null,
  executor: null
};

export function isFiltered(f: IProfileFilter): boolean {
  return f.stage !== null || f.operator !== null || f.executor !== null;
}

/** What each filter can choose: the stages (ascending), operators and executors. */
export function filterChoices(g: IProfileGroups): {
  stages: number[];
  operators: string[];
  executors: string[];
} {
  const stages = new Set<number>();
  g.stages.forEach(ss => ss.forEach(s => stages.add(s)));
  return {
    stages: [...stages].sort((a, b) => a - b),
    operators: [...new Set(g.operator)],
    executors: [...new Set(g.executor)].sort()
  };
}

/** The groups a filter keeps. */
export function groupsFor(g: IProfileGroups, f: IProfileFilter): Set<number> {
  const out = new Set<number>();
  g.operator.forEach((op, i) => {
    if (
      (f.operator === null || op === f.operator) &&
      (f.executor === null || g.executor[i] === f.executor) &&
      (f.stage === null || g.stages[i].includes(f.stage))
    ) {
      out.add(i);
    }
  });
  return out;
}

/** The icicle to draw: rows (root first) pointing at the payload's frames. */
export interface IFlameLayout {
  /** the frame's index in the payload's flame */
  node: number[];
  depth: number[];
  start: number[];
  n: number[];
  own: number[];
  /** the parent's row in this layout (-1: the root) */
  parent: number[];
  total: number;
}

/**
 * The icicle of the samples of `chosen` groups (all: null): each frame's
 * samples and self samples are those of the chosen groups; frames with none
 * are left out; children are laid out widest first, inside their parent.
 * A payload without groups (an older one) is drawn as it is.
 */
export function layoutFlame(
  f: IFlameTree,
  chosen: Set<number> | null
): IFlameLayout {
  const size = f.n.length;
  if (!f.parent || !f.cells || chosen === null || size === 0) {
    const parent = f.parent ?? parentsOf(f);
    return {
      node: f.n.map((_, i) => i),
      depth: f.depth.slice(),
      start: f.start.slice(),
      n: f.n.slice(),
      own: f.own.slice(),
      parent,
      total: size ? f.n[0] : 0
    };
  }
  const n = new Array<number>(size).fill(0);
  const own = new Array<number>(size).fill(0);
  const c = f.cells;
  for (let k = 0; k < c.node.length; k++) {
    if (chosen.has(c.group[k])) {
      n[c.node[k]] += c.n[k];
      own[c.node[k]] += c.own[k];
    }
  }
  const out: IFlameLayout = {
    node: [],
    depth: [],
    start: [],
    n: [],
    own: [],
    parent: [],
    total: n[0]
  };
  if (!n[0]) {
    return out;
  }
  const kids: number[][] = f.n.map(() => []);
  for (let i = 1; i < size; i++) {
    if (n[i] > 0 && f.parent[i] >= 0) {
      kids[f.parent[i]].push(i);
    }
  }
  const visit = (i: number, depth: number, start: number, up: number): void => {
    const row = out.node.length;
    out.node.push(i);
    out.depth.push(depth);
    out.start.push(start);
    out.n.push(n[i]);
    out.own.push(own[i]);
    out.parent.push(up);
    let at = start;
    kids[i]
      .sort((a, b) => n[b] - n[a] || (f.name[a] < f.name[b] ? -1 : 1))
      .forEach(k => {
        visit(k, depth + 1, at, row);
        at += n[k];
      });
  };
  visit(0, 0, 0, -1);
  return out;
}

/** Parents from depth and start (a payload without `parent`). */
function parentsOf(f: IFlameTree): number[] {
  const last: number[] = [];
  return f.depth.map((d, i) => {
    last[d] = i;
    return d > 0 ? (last[d - 1] ?? -1) : -1;
  });
}

export interface ISearchResult {
  /** per layout row: its name matches */
  hit: boolean[];
  /** matching frames */
  frames: number;
  /** samples with a matching frame on their stack (sampled) */
  samples: number;
}

/**
 * Frames whose name contains `query` (case-insensitive; text, not a pattern),
 * and the samples under them (a matching frame below a matching frame counts
 * once).
 */
export function searchFlame(
  names: string[],
  layout: IFlameLayout,
  query: string
): ISearchResult {
  const q = query.trim().toLowerCase();
  const hit = layout.node.map(
    i => q !== '' && names[i].toLowerCase().includes(q)
  );
  const covered: boolean[] = [];
  let frames = 0;
  let samples = 0;
  layout.node.forEach((_, r) => {
    const up = layout.parent[r];
    const inside = up >= 0 && covered[up];
    covered[r] = inside || hit[r];
    if (hit[r]) {
      frames += 1;
      if (!inside) {
        samples += layout.n[r];
      }
    }
  });
  return { hit, frames, samples };
}

export interface IHotRow {
  function: string;
  self_samples: number;
  total_samples: number;
  share: number;
  operator: string;
  kind: string;
  stages: string;
  executors: string;
}

/** How an executor id reads ('' is a profile that did not record it). */
export function executorLabel(id: string): string {
  return id === '' ? '(not recorded)' : id;
}

/**
 * The hot functions of the samples of `chosen` groups: self and total samples
 * summed over them, the operator (and its stages) of the group with most self
 * samples, the executors they ran on; hottest first, at most `limit`; share of
 * `total` (the chosen groups' samples).
 */
export function hotRows(
  cells: IHotCells,
  groups: IProfileGroups,
  chosen: Set<number>,
  total: number,
  limit: number
): IHotRow[] {
  const byFn = new Map<
    string,
    {
      own: number;
      all: number;
      kind: string;
      best: number;
      bestN: number;
      ex: Set<string>;
    }
  >();
  for (let k = 0; k < cells.function.length; k++) {
    const g = cells.group[k];
    if (!chosen.has(g)) {
      continue;
    }
    const name = cells.function[k];
    let row = byFn.get(name);
    if (!row) {
      row = {
        own: 0,
        all: 0,
        kind: cells.kind[k],
        best: g,
        bestN: -1,
        ex: new Set()
      };
      byFn.set(name, row);
    }
    row.own += cells.self[k];
    row.all += cells.total[k];
    if (cells.self[k] > row.bestN) {
      row.best = g;
      row.bestN = cells.self[k];
    }
    if (cells.self[k] > 0) {
      row.ex.add(groups.executor[g]);
    }
  }
  const rows: IHotRow[] = [];
  byFn.forEach((r, name) => {
    if (r.own > 0) {
      rows.push({
        function: name,
        self_samples: r.own,
        total_samples: r.all,
        share: total ? r.own / total : 0,
        operator: groups.operator[r.best],
        kind: r.kind,
        stages: groups.stages[r.best].join(', '),
        executors: [...r.ex].sort().map(executorLabel).join(', ')
      });
    }
  });
  rows.sort(
    (a, b) =>
      b.self_samples - a.self_samples ||
      b.total_samples - a.total_samples ||
      (a.function < b.function ? -1 : a.function > b.function ? 1 : 0)
  );
  return rows.slice(0, limit);
}
