/**
 * The History tab (issue T; data: jupyter_perf/render/views/series.py): the
 * cell's stored runs as a series — wall time per run (this run highlighted),
 * the band each warm run was expected in, regressions, improvements and
 * change points, and the earlier run's prediction (estimated) beside the
 * measured wall time of a run that changed only what it predicts — then one
 * row per run. Every word (labels, the band's
 * sentence, flags, what changed) comes from the data; numbers are formatted
 * here. Only present when the store holds earlier runs of the cell.
 */
import { formatDuration } from '../../format';
import { showModel } from '../bokeh';
import { h } from '../dom';
import { addStyles } from '../style';
import { IColumn, table } from '../table';
import { ITab, ITabContext } from '../types';

export interface IHistoryData {
  context: string;
  band: string;
  shown: string;
  note: string;
  index: number;
  run_id: string;
  x: number[];
  wall_ms: number[];
  low_ms: (number | null)[];
  high_ms: (number | null)[];
  warm: (boolean | null)[];
  same: boolean[];
  regression: boolean[];
  improvement: boolean[];
  change_point: boolean[];
  /** Absent in payloads older than the predictions. */
  predicted_ms?: (number | null)[];
  rows: Record<string, any>[];
  columns: IColumn[];
  labels: Record<string, string>;
  change_points: { ordinal: number; run_id: string; text: string }[];
  colors: Record<string, string>;
}

const CSS = `
.jp-perf-history .jp-perf-history-context { margin: 4px 0; }
.jp-perf-history .jp-perf-table-wrap { overflow-x: auto; }
.jp-perf-history table.jp-perf-table { width: max-content; }
.jp-perf-history tr.jp-perf-history-current td { font-weight: bold; }
`;

function finite(v: number | null | undefined): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/** The indices of runs of one kind (what each glyph draws). */
function kinds(d: IHistoryData): Record<string, number[]> {
  const out: Record<string, number[]> = {
    run: [],
    cold: [],
    regression: [],
    improvement: []
  };
  d.x.forEach((_, i) => {
    if (d.regression[i]) {
      out.regression.push(i);
    } else if (d.improvement[i]) {
      out.improvement.push(i);
    } else if (d.warm[i] === false) {
      out.cold.push(i);
    } else {
      out.run.push(i);
    }
  });
  return out;
}

function pointData(d: IHistoryData, idx: number[]): Record<string, any[]> {
  return {
    x: idx.map(i => d.x[i]),
    y: idx.map(i => d.wall_ms[i] / 1000),
    run: idx.map(i => d.rows[i]?.run_id ?? ''),
    wall: idx.map(i => formatDuration(d.wall_ms[i])),
    expected: idx.map(i => d.rows[i]?.expected ?? ''),
    flag: idx.map(i => d.rows[i]?.flag || d.rows[i]?.warm_text || '')
  };
}

/** The series as a BokehJS figure (not yet shown). */
export function historyFigure(ctx: ITabContext, d: IHistoryData): any {
  const B: any = ctx.bokeh;
  const L = d.labels;
  const C = d.colors;
  const fig = B.Plotting.figure({
    height: 300,
    sizing_mode: 'stretch_width',
    tools: 'pan,wheel_zoom,box_zoom,reset,save',
    toolbar_location: 'above',
    x_axis_label: L.x,
    y_axis_label: `${L.y}, s`,
    name: 'jp-history'
  });
  if (d.x.length <= 20) {
    fig.xaxis.ticker = new B.SingleIntervalTicker({ interval: 1 });
  }
  // the band each run was expected in (estimated): a translucent bar per run
  const band = d.x
    .map((_, i) => i)
    .filter(i => finite(d.low_ms[i]) && finite(d.high_ms[i]));
  if (band.length) {
    const source = new B.ColumnDataSource({
      name: 'jp-history-band',
      data: {
        x: band.map(i => d.x[i]),
        y0: band.map(i => (d.low_ms[i] as number) / 1000),
        y1: band.map(i => (d.high_ms[i] as number) / 1000),
        expected: band.map(i => d.rows[i]?.expected ?? '')
      }
    });
    const r = fig.segment({
      x0: { field: 'x' },
      x1: { field: 'x' },
      y0: { field: 'y0' },
      y1: { field: 'y1' },
      source,
      line_color: C.band,
      line_alpha: 0.25,
      line_width: 10,
      legend_label: L.band
    });
    fig.add_tools(
      new B.HoverTool({ renderers: [r], tooltips: [[L.band, '@expected']] })
    );
  }
  // the wall times in order, as a thin line under the points
  const line = new B.ColumnDataSource({
    name: 'jp-history-line',
    data: { x: d.x, y: d.wall_ms.map(v => v / 1000) }
  });
  fig.line({
    x: { field: 'x' },
    y: { field: 'y' },
    source: line,
    line_color: '#bbbbbb',
    line_width: 1
  });
  const by = kinds(d);
  const glyphs: [string, string, number, boolean][] = [
    ['run', 'circle', 7, true],
    ['cold', 'circle', 7, false],
    ['improvement', 'inverted_triangle', 10, true],
    ['regression', 'triangle', 10, true]
  ];
  const renderers: any[] = [];
  for (const [kind, marker, size, filled] of glyphs) {
    const idx = by[kind];
    if (!idx.length) {
      continue;
    }
    const source = new B.ColumnDataSource({
      name: `jp-history-${kind}`,
      data: pointData(d, idx)
    });
    renderers.push(
      fig.scatter({
        x: { field: 'x' },
        y: { field: 'y' },
        source,
        marker,
        size,
        line_color: C[kind],
        fill_color: filled ? C[kind] : 'white',
        legend_label: L[kind]
      })
    );
  }
  // this run: a ring around its point
  const cur = new B.ColumnDataSource({
    name: 'jp-history-current',
    data: pointData(d, [d.index])
  });
  renderers.push(
    fig.scatter({
      x: { field: 'x' },
      y: { field: 'y' },
      source: cur,
      marker: 'circle',
      size: 16,
      line_color: C.current,
      line_width: 2,
      fill_alpha: 0,
      legend_label: L.current
    })
  );
  fig.add_tools(
    new B.HoverTool({
      renderers,
      tooltips: [
        ['run', '@run'],
        ['wall', '@wall'],
        ['expected', '@expected'],
        ['', '@flag']
      ]
    })
  );
  // the earlier run's prediction (estimated) beside the measured wall time: a
  // hollow diamond joined to the run's point
  const pred = d.x.map((_, i) => i).filter(i => finite(d.predicted_ms?.[i]));
  if (pred.length) {
    const source = new B.ColumnDataSource({
      name: 'jp-history-predicted',
      data: {
        x: pred.map(i => d.x[i]),
        y: pred.map(i => (d.predicted_ms?.[i] as number) / 1000),
        y1: pred.map(i => d.wall_ms[i] / 1000),
        run: pred.map(i => d.rows[i]?.run_id ?? ''),
        predicted: pred.map(i => formatDuration(d.predicted_ms?.[i] as number)),
        wall: pred.map(i => formatDuration(d.wall_ms[i])),
        prediction: pred.map(i => d.rows[i]?.prediction ?? '')
      }
    });
    fig.segment({
      x0: { field: 'x' },
      x1: { field: 'x' },
      y0: { field: 'y' },
      y1: { field: 'y1' },
      source,
      line_color: C.predicted,
      line_dash: 'dotted',
      line_width: 1
    });
    const r = fig.scatter({
      x: { field: 'x' },
      y: { field: 'y' },
      source,
      marker: 'diamond',
      size: 12,
      line_color: C.predicted,
      line_width: 2,
      fill_alpha: 0,
      legend_label: L.predicted
    });
    fig.add_tools(
      new B.HoverTool({
        renderers: [r],
        tooltips: [
          ['run', '@run'],
          [L.predicted, '@predicted'],
          ['wall', '@wall'],
          ['', '@prediction']
        ]
      })
    );
  }
  for (const cp of d.change_points) {
    fig.add_layout(
      new B.Span({
        location: cp.ordinal - 0.5,
        dimension: 'height',
        line_color: C.change_point,
        line_dash: 'dashed',
        line_width: 2
      })
    );
  }
  fig.legend.location = 'top_left';
  fig.legend.label_text_font_size = '8pt';
  fig.legend.background_fill_alpha = 0.7;
  fig.legend.click_policy = 'hide';
  return fig;
}

export const historyTab: ITab = {
  key: 'history',
  title: 'History',
  async render(el, ctx) {
    addStyles('history', CSS, el.ownerDocument);
    el.classList.add('jp-perf-history');
    const d = ctx.data.tabs.history as IHistoryData;
    const context = h(
      'div',
      { class: 'jp-perf-history-context' },
      h('b', {}, d.context)
    );
    context.dataset.view = 'history-context';
    const band = h('div', {}, d.band);
    band.dataset.view = 'history-band';
    el.append(context, band);
    if (d.change_points.length) {
      const cps = h(
        'div',
        {},
        `${d.labels.change_point}: ` +
          d.change_points
            .map(c => `#${c.ordinal} (run ${c.run_id}) ${c.text}`)
            .join('; ')
      );
      cps.dataset.view = 'history-change-points';
      el.append(cps);
    }
    const chart = h('div', { class: 'jp-perf-history-chart' });
    chart.dataset.points = String(d.x.length);
    chart.dataset.current = String(d.x[d.index]);
    chart.dataset.regressions = String(d.regression.filter(x => x).length);
    chart.dataset.predicted = String(
      (d.predicted_ms ?? []).filter(v => finite(v)).length
    );
    el.append(chart);
    const handle = table(d.rows, d.columns, {
      view: 'history',
      maxHeight: 360
    });
    // this run's row, marked without scrolling the page to it
    handle.el
      .querySelector(`tr[data-row="${d.index}"]`)
      ?.classList.add('jp-perf-selected', 'jp-perf-history-current');
    el.append(
      h('div', { class: 'jp-perf-muted' }, `${d.shown} ${d.note}`),
      handle.el
    );
    await showModel(ctx, historyFigure(ctx, d), chart);
  }
};
