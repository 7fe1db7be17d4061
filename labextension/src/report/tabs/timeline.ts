/**
 * The Timeline tab: one lane per executor slot, every task attempt as a bar
 * coloured by its breakdown components (lanes.ts: single bars when at most
 * DETAIL_LIMIT are in view, else per-lane aggregates), the stage track with
 * stage boundaries, failed/killed and speculative markers, the lag note.
 * Data: views/timeline.py and the shared per-task arrays (tasks.ts).
 *
 * Selections from other tabs (bus.ts): an operator highlights its stages'
 * attempts (the others faded) and shows their span; a task attempt (e.g. a
 * straggler) is outlined and zoomed to.
 */
import { formatCount, formatDuration, pyFixed } from '../../format';
import { h, uiLink } from '../dom';
import { ILaneFigure, laneFigure } from '../lanes';
import { addStyles } from '../style';
import { ITaskData, taskData } from '../tasks';
import { ITab, ITabContext, Selection } from '../types';

export interface ITimelineStages {
  code: number[];
  stage_id: number[];
  attempt: number[];
  label: string[];
  start_ms: number[];
  end_ms: number[];
  row: number[];
  tasks: number[];
  name: string[];
  ops: string[];
}

/** Failed/killed and speculative attempts, columnar. */
export interface ITimelineMarkers {
  pos: number[];
  kind: ('failed' | 'speculative')[];
  status: string[];
  /** index into `errors`, -1: none */
  error: number[];
  errors: string[];
}

/** views/timeline.py `data`. */
export interface ITimelineData {
  span_ms: number;
  detail_limit: number;
  bins: number;
  lanes: number;
  lagged: number;
  max_lag_ms: number;
  stage_rows: number;
  boundaries: boolean;
  stages: ITimelineStages;
  markers: ITimelineMarkers;
  components: string[];
}

const NAME = 'jp-timeline';
const MAX_UI_LINKS = 60;

const CSS = `
.jp-perf .jp-perf-timeline-legend { display: flex; flex-wrap: wrap; gap: 2px 12px; }
.jp-perf .jp-perf-timeline-legend .jp-perf-swatch { display: inline-block; width: 12px;
  height: 10px; margin-right: 4px; vertical-align: -1px; border: 1px solid rgba(0,0,0,0.2); }
.jp-perf .jp-perf-timeline-selected:empty { display: none; }
.jp-perf .jp-perf-timeline-selected { margin: 4px 0; padding: 3px 8px; background: #fff8d6;
  border-left: 3px solid #ffd400; }
.jp-perf .jp-perf-timeline-ui a { margin-right: 8px; }
`;

function legend(D: ITaskData, present: string[]): HTMLElement {
  const want = new Set(present);
  const items = D.comps
    .filter(c => want.has(c.key))
    .map(c => {
      const sw = h('span', { class: 'jp-perf-swatch' });
      sw.style.background = c.color;
      sw.style.opacity = c.kind === 'estimated' ? '0.45' : '1';
      return h(
        'span',
        { class: c.kind === 'estimated' ? 'jp-perf-est' : '' },
        sw,
        c.label
      );
    });
  const red = h('span', {}, '▭ red outline');
  red.style.color = '#d62728';
  const dashed = h('span', {}, 'dashed');
  dashed.style.color = '#9467bd';
  return h(
    'div',
    {},
    h('div', { class: 'jp-perf-timeline-legend' }, ...items),
    h(
      'div',
      { class: 'jp-perf-muted' },
      'Lighter: estimated (not measured by Spark). ',
      red,
      ': failed/killed attempt · ',
      dashed,
      ': speculative · black outline: straggler · ✕ failed/killed · ◆ speculative'
    )
  );
}

/** Why some bars overlap on one core: Spark's finish stamps lag the freed core. */
export function lagNote(t: ITimelineData): string {
  const n = t.lagged;
  if (!n) {
    return '';
  }
  return (
    ` ${formatCount(n)} attempt${n > 1 ? 's' : ''} launched up to ` +
    `${formatDuration(t.max_lag_ms)} before the previous attempt on the same core had its ` +
    'finish stamped: Spark stamps a finish when the driver has fetched the result, after the ' +
    'executor already started the next task. Lanes never exceed the executors’ cores, so ' +
    'those bars overlap by that lag.'
  );
}

function note(D: ITaskData, t: ITimelineData): string {
  let text =
    `${formatCount(D.n)} task attempts on ${formatCount(t.lanes)} lanes (one per executor ` +
    'core, from the real schedule). Zoomed out, a bar stands for every attempt of its lane ' +
    'and time bin — its hover says how many; zoom in (wheel, or drag a box) to see single ' +
    `attempts (at most ${formatCount(t.detail_limit)} in view). Every attempt is drawn, ` +
    'failed ones included.';
  if (!t.boundaries) {
    text +=
      ` ${formatCount(t.stages.code.length)} stages: boundary lines omitted, the stage ` +
      'track shows them.';
  }
  return text + lagNote(t);
}

function stagePath(stageId: number, attempt: number): string {
  return `/stages/stage/?id=${stageId}&attempt=${attempt}`;
}

function stageTrack(ctx: ITabContext, lf: ILaneFigure, t: ITimelineData): any {
  const B: any = ctx.bokeh;
  const st = t.stages;
  const m = st.code.length;
  if (!m) {
    return null;
  }
  const data = {
    left: st.start_ms.map(x => x / 1000),
    right: st.end_ms.map(x => x / 1000),
    bottom: st.row.map(r => -r - 1 + 0.15),
    top: st.row.map(r => -r - 0.15),
    stage_id: st.stage_id,
    attempt: st.attempt,
    code: st.code,
    label: st.label,
    ops: st.ops.map(o => o || '– (no SQL operator)'),
    name: st.name.map(s => s || '–'),
    tasks: st.tasks.map(n => formatCount(n)),
    span: st.start_ms.map(
      (s, i) => `${pyFixed(s / 1000, 3)}–${pyFixed(st.end_ms[i] / 1000, 3)} s`
    ),
    alpha: new Array(m).fill(1.0)
  };
  const src = new B.ColumnDataSource({ data, name: `${NAME}-track` });
  const r = lf.fig.quad({
    left: { field: 'left' },
    right: { field: 'right' },
    bottom: { field: 'bottom' },
    top: { field: 'top' },
    source: src,
    fill_color: '#cfd8e3',
    line_color: '#6b7b8c',
    fill_alpha: { field: 'alpha' },
    line_alpha: { field: 'alpha' }
  });
  lf.fig.add_tools(
    new B.HoverTool({
      renderers: [r],
      tooltips: [
        ['stage', '@label'],
        ['operators', '@ops'],
        ['call site', '@name'],
        ['task attempts', '@tasks'],
        ['span', '@span']
      ]
    })
  );
  const ui = ctx.data.header.spark_ui;
  if (ui) {
    // a click on a stage bar opens its page in the live Spark UI
    lf.fig.add_tools(
      new B.TapTool({
        renderers: [r],
        callback: new B.OpenURL({
          url: `${ui}/stages/stage/?id=@stage_id&attempt=@attempt`,
          same_tab: false
        })
      })
    );
  }
  if (t.boundaries) {
    const xs = [...data.left, ...data.right];
    const bsrc = new B.ColumnDataSource({
      data: {
        x: xs,
        y0: xs.map(() => -t.stage_rows - 0.2),
        y1: xs.map(() => t.lanes + 0.2)
      },
      name: `${NAME}-boundaries`
    });
    lf.fig.segment({
      x0: { field: 'x' },
      y0: { field: 'y0' },
      x1: { field: 'x' },
      y1: { field: 'y1' },
      source: bsrc,
      line_color: '#8899aa',
      line_alpha: 0.45,
      line_dash: 'dotted'
    });
  }
  return src;
}

function markers(
  ctx: ITabContext,
  lf: ILaneFigure,
  D: ITaskData,
  t: ITimelineData
): void {
  const B: any = ctx.bokeh;
  const kinds: [string, string, string, string][] = [
    ['failed', 'x', '#d62728', 'failed/killed'],
    ['speculative', 'diamond', '#9467bd', 'speculative']
  ];
  for (const [kind, marker, color, label] of kinds) {
    const M = t.markers;
    const ms = (M?.pos || [])
      .map((pos, j) => j)
      .filter(j => M.kind[j] === kind && M.pos[j] >= 0 && M.pos[j] < D.n);
    if (!ms.length) {
      continue;
    }
    const sids: number[] = D.meta.stage_ids || [];
    const ps = ms.map(j => M.pos[j]);
    const src = new B.ColumnDataSource({
      data: {
        x: ps.map(p => (D.start[p] + D.dur[p]) / 1000),
        y: ps.map(p => D.lane[p] + 0.5),
        pos: ps,
        task: ps.map(
          p =>
            `${D.tid[p]} (stage ${sids[D.stage[p]]}, index ` +
            `${D.idx[p]}, attempt ${D.att[p]})`
        ),
        status: ms.map(j => M.status[j]),
        error: ms.map(j => (M.error[j] >= 0 ? M.errors[M.error[j]] : '–'))
      },
      name: `${NAME}-${kind}`
    });
    const r = lf.fig.scatter({
      x: { field: 'x' },
      y: { field: 'y' },
      source: src,
      marker,
      size: 9,
      fill_color: color,
      line_color: color,
      line_width: 2
    });
    lf.fig.add_tools(
      new B.HoverTool({
        renderers: [r],
        tooltips: [
          [label, '@task'],
          ['status', '@status'],
          ['error', '@error']
        ]
      })
    );
  }
}

function uiLinks(ctx: ITabContext, t: ITimelineData): HTMLElement | null {
  const ui = ctx.data.header.spark_ui;
  const st = t.stages;
  if (!ui || !st.code.length) {
    return null;
  }
  const order = st.code
    .map((_, i) => i)
    .sort(
      (a, b) => st.stage_id[a] - st.stage_id[b] || st.attempt[a] - st.attempt[b]
    );
  const links = order
    .slice(0, MAX_UI_LINKS)
    .map(i =>
      uiLink(ui, stagePath(st.stage_id[i], st.attempt[i]), st.label[i])
    );
  const more =
    order.length > MAX_UI_LINKS
      ? ` … and ${formatCount(order.length - MAX_UI_LINKS)} more (the Stages tab links each).`
      : '';
  return h(
    'div',
    { class: 'jp-perf-muted jp-perf-timeline-ui' },
    'In the Spark UI (or click a stage bar): ',
    ...links,
    more
  );
}

async function render(el: HTMLElement, ctx: ITabContext): Promise<void> {
  addStyles('timeline', CSS);
  const t: ITimelineData = ctx.data.tabs.timeline;
  const D = taskData(ctx.data);
  const labels: string[] = D.meta.lanes || [];
  const lanesN = Math.max(t.lanes, labels.length);
  el.classList.add('jp-perf-timeline');
  el.append(
    legend(D, t.components || []),
    h('div', { class: 'jp-perf-muted' }, note(D, t))
  );
  const links = uiLinks(ctx, t);
  if (links) {
    el.append(links);
  }
  const selected = h('div', { class: 'jp-perf-timeline-selected' });
  el.append(selected);
  const lf = laneFigure(ctx, {
    name: NAME,
    lanes: lanesN,
    labels,
    spanMs: t.span_ms,
    stageRows: t.stage_rows,
    limit: t.detail_limit,
    bins: t.bins
  });
  const track = stageTrack(ctx, lf, t);
  markers(ctx, lf, D, t);
  lf.fill(D.start, D.dur, D.lane, { nLanes: lanesN });
  await lf.show(el);

  const sids: number[] = D.meta.stage_ids || [];
  const setTrackAlpha = (want: Set<number> | null): void => {
    if (track) {
      const codes: number[] = track.data.code;
      track.data = {
        ...track.data,
        alpha: codes.map(c => (!want || want.has(c) ? 1.0 : 0.2))
      };
    }
  };

  function onSelect(s: Selection): void {
    if (s.kind === 'operator') {
      const want = new Set(s.stageCodes);
      const focus = new Uint8Array(sids.length);
      for (const c of want) {
        if (c >= 0 && c < focus.length) {
          focus[c] = 1;
        }
      }
      lf.highlight(null);
      lf.setFocus(focus);
      setTrackAlpha(want);
      let n = 0,
        lo = Infinity,
        hi = -Infinity;
      for (let i = 0; i < D.n; i++) {
        if (!focus[D.stage[i]]) {
          continue;
        }
        n++;
        lo = Math.min(lo, D.start[i]);
        hi = Math.max(hi, D.start[i] + D.dur[i]);
      }
      if (n) {
        const pad = Math.max((hi - lo) * 0.05, 20);
        lf.setRange(lo - pad, hi + pad);
      }
      const stages = [...want]
        .map(c => sids[c])
        .filter(x => x !== undefined)
        .sort((a, b) => a - b);
      selected.replaceChildren(
        `The selected operator ran in stage${stages.length === 1 ? '' : 's'} ` +
          `${stages.join(', ') || 'none'}: its ${formatCount(n)} task ` +
          `attempt${n === 1 ? ' is' : 's are'} highlighted, the others faded.`
      );
      selected.dataset.kind = 'operator';
      selected.dataset.count = String(n);
    } else if (s.kind === 'task' && s.pos >= 0 && s.pos < D.n) {
      const pos = s.pos;
      lf.setFocus(null);
      setTrackAlpha(null);
      lf.highlight(pos);
      const st = D.start[pos],
        d = D.dur[pos];
      const pad = Math.max(d * 1.5, 50);
      lf.setRange(st - pad, st + d + pad);
      selected.replaceChildren(
        `Task attempt ${D.tid[pos]} (stage ${sids[D.stage[pos]]}, index ${D.idx[pos]}, ` +
          `${formatDuration(d)} long, starting at ${pyFixed(st / 1000, 3)} s) is ` +
          `highlighted on lane “${labels[D.lane[pos]] ?? D.lane[pos]}”.`
      );
      selected.dataset.kind = 'task';
      selected.dataset.pos = String(pos);
    } else {
      lf.setFocus(null);
      setTrackAlpha(null);
      lf.highlight(null);
      selected.replaceChildren();
      delete selected.dataset.kind;
    }
  }

  ctx.onDispose(ctx.bus.subscribe(s => onSelect(s)));
  // test hook: the browser tests select through the report's bus, as other tabs do
  Object.defineProperty(el, 'jpBus', { value: ctx.bus, configurable: true });
  if (ctx.bus.current().kind !== 'none') {
    onSelect(ctx.bus.current());
  }
}

export const timelineTab: ITab = {
  key: 'timeline',
  title: 'Timeline',
  render
};
