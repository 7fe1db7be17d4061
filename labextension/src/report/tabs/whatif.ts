/**
 * The What-if tab: sliders (disk speed, network speed, executor slots) and
 * toggles (no GC, no stragglers) whose answers are replayed in the page
 * (replay.ts: the same numbers `Analysis.whatif` returns, with no kernel),
 * the predicted time with the model error (estimated, and said so), the
 * host-CPU note, and the simulated schedule of the chosen setting (lanes.ts).
 *
 * Python (render/views/whatif.py) sends the words (slider titles naming the
 * breakdown components, the model error, driver gaps, host CPU); the slider
 * stops come from `tasks_meta` (render/payload.py).
 *
 * Test hooks: inputs carry `data-control` ("disk" | "network" | "slots" |
 * "gc" | "stragglers"); `.jp-whatif-out` carries the shown setting
 * (`data-disk`, `data-network`, `data-slots`, `data-gc`, `data-stragglers`,
 * as JavaScript writes the numbers: "Infinity" for ∞) and
 * `.jp-whatif-predicted` the exact prediction (`data-predicted-ms`; for a
 * range, its low end, and `data-predicted-high-ms` its high end).
 *
 * More slots for a run on a shared host without host CPU samples (an event log
 * of a local application) show a range, not a point (`slots_range`,
 * Analysis.whatif_range): low the plain replay, high with each group floored
 * at `share` × its replay on the measured slots.
 */
import { formatChange, formatDuration, pyFixed } from '../../format';
import { h } from '../dom';
import { laneFigure, ILaneFigure } from '../lanes';
import {
  cpuOnlyMakespans,
  IScenario,
  IWhatIf,
  npSum,
  predict,
  scenarioKeep,
  simPositions,
  whatif,
  withStarts
} from '../replay';
import { addStyles } from '../style';
import { ITaskData, num, taskData } from '../tasks';
import { ITab, ITabContext } from '../types';

/** What render/views/whatif.py sends. */
export interface IWhatIfData {
  wall_ms: number;
  actual_ms: number;
  driver_gap_ms: number;
  simulated_baseline_ms: number;
  model_error: number;
  slots_used: number;
  host_cpu: { busy_share: number; cores: number } | null;
  labels: {
    disk: string;
    network: string;
    slots: string;
    gc: string;
    stragglers: string;
  };
  /** keys of the breakdown components with any time (the legend) */
  components: string[];
  /** more slots give a range (no host CPU samples on a shared host); null: points */
  slots_range?: ISlotsRange | null;
}

/** render/views/whatif.py's slots_range. */
export interface ISlotsRange {
  /** per group: the high end's floor share (estimated) */
  share: number[];
  /** the heading, with {low} and {high} to fill */
  words: string;
  /** why it is a range: "(estimated; … unknown)" */
  reason: string;
  /** the host-CPU note for such a run */
  note: string;
}

/** One shown answer: the prediction and, for a range, its high end. */
interface IAnswer {
  predicted: number;
  sim: number;
  high: number | null;
}

const CSS = `
.jp-perf .jp-whatif-top { display: flex; flex-wrap: wrap; gap: 8px 28px;
  align-items: flex-start; }
.jp-perf .jp-whatif-controls { flex: 1 1 280px; min-width: 0; }
.jp-perf .jp-whatif-result { flex: 1 1 300px; min-width: 0; }
.jp-perf .jp-whatif-result > div { margin-bottom: 6px; }
.jp-perf .jp-whatif-slider { display: block; margin: 0 0 10px; }
.jp-perf .jp-whatif-title { display: block; overflow-wrap: anywhere; }
.jp-perf .jp-whatif-slider input[type='range'] { display: block; width: 100%;
  margin: 4px 0 0; box-sizing: border-box; }
.jp-perf .jp-whatif-ticks { display: flex; justify-content: space-between;
  color: #666; font-size: 10px; }
.jp-perf .jp-whatif-toggle { display: flex; align-items: baseline; gap: 6px;
  margin: 2px 0; }
.jp-perf .jp-whatif-sim { margin-top: 10px; }
.jp-perf .jp-whatif-legend span.jp-whatif-item { margin-right: 10px;
  white-space: nowrap; }
.jp-perf .jp-whatif-swatch { display: inline-block; width: 10px; height: 10px;
  margin-right: 3px; vertical-align: -1px; }
`;

type SliderKey = 'disk' | 'network' | 'slots';

interface ISlider {
  input: HTMLInputElement;
  values: number[];
  value(): number;
}

/** "∞" or "1.25×", as render/payload.py's stop_label writes the stops. */
function factorLabel(f: number): string {
  return f === Infinity ? '∞' : `${f}×`;
}

function key(s: IScenario): string {
  return `${s.disk}|${s.network}|${s.slots}|${s.gc}|${s.stragglers}`;
}

/** The settings one move away: each slider one stop either way or to either end, each toggle flipped. */
export function neighbours(
  s: IScenario,
  stops: number[],
  slotVals: number[]
): IScenario[] {
  const out: IScenario[] = [];
  const around = (vals: number[], v: number): number[] => {
    const i = vals.indexOf(v),
      n = vals.length;
    return [...new Set([i - 1, i + 1, 0, n - 1])]
      .filter(j => j >= 0 && j < n && j !== i)
      .map(j => vals[j]);
  };
  for (const v of around(stops, s.disk)) {
    out.push({ ...s, disk: v });
  }
  for (const v of around(stops, s.network)) {
    out.push({ ...s, network: v });
  }
  for (const v of around(slotVals, s.slots)) {
    out.push({ ...s, slots: v });
  }
  out.push({ ...s, gc: !s.gc }, { ...s, stragglers: !s.stragglers });
  return out;
}

function measure(name: string, start: number): void {
  try {
    performance.measure(`jupyter-perf: ${name}`, {
      start,
      end: performance.now()
    });
  } catch {
    // no User Timing level 3: timings are a convenience for benchmarks only
  }
}

function slider(
  key: SliderKey,
  title: string,
  labels: string[],
  values: number[],
  initial: number,
  onChange: () => void
): { el: HTMLElement; slider: ISlider } {
  const shown = h('b', {}, labels[initial] ?? '');
  const input = h('input', {
    type: 'range',
    min: '0',
    max: String(Math.max(values.length - 1, 0)),
    step: '1',
    value: String(initial),
    'aria-label': title
  });
  input.dataset.control = key;
  input.addEventListener('input', () => {
    shown.textContent = labels[Number(input.value)] ?? '';
    onChange();
  });
  const ticks = h(
    'div',
    { class: 'jp-whatif-ticks', 'aria-hidden': 'true' },
    ...labels.map(l => h('span', {}, l))
  );
  const el = h(
    'label',
    { class: 'jp-whatif-slider' },
    h('span', { class: 'jp-whatif-title' }, `${title}: `, shown),
    input,
    ticks
  );
  el.dataset.control = key;
  return {
    el,
    slider: { input, values, value: () => values[Number(input.value)] }
  };
}

function toggle(
  key: 'gc' | 'stragglers',
  text: string,
  onChange: () => void
): { el: HTMLElement; box: HTMLInputElement } {
  const box = h('input', { type: 'checkbox' });
  box.dataset.control = key;
  box.addEventListener('change', onChange);
  return {
    el: h('label', { class: 'jp-whatif-toggle' }, box, h('span', {}, text)),
    box
  };
}

function legend(D: ITaskData, keys: string[]): HTMLElement {
  const items = D.comps
    .filter(c => keys.includes(c.key))
    .map(c => {
      const sw = h('span', { class: 'jp-whatif-swatch' });
      sw.style.background = c.color;
      sw.style.opacity = c.kind === 'estimated' ? '0.45' : '1';
      return h('span', { class: 'jp-whatif-item' }, sw, c.label);
    });
  const outline = (
    color: string,
    text: string,
    dashed = false
  ): HTMLElement => {
    const s = h('span', {}, text);
    s.style.color = color;
    if (dashed) {
      s.style.borderBottom = `1px dashed ${color}`;
    }
    return s;
  };
  return h(
    'div',
    { class: 'jp-whatif-legend' },
    h('div', {}, ...items),
    h(
      'div',
      { class: 'jp-perf-muted' },
      'Lighter: estimated (not measured by Spark). ',
      outline('#d62728', '▭ red outline'),
      ': failed/killed attempt · ',
      outline('#9467bd', 'dashed', true),
      ': speculative · black outline: straggler'
    )
  );
}

function hostCpuNote(w: IWhatIfData): HTMLElement {
  const hc = w.host_cpu;
  if (w.slots_range) {
    return h(
      'div',
      { class: 'jp-perf-muted jp-whatif-host' },
      w.slots_range.note
    );
  }
  if (!hc || !hc.cores) {
    return h(
      'div',
      { class: 'jp-perf-muted jp-whatif-host' },
      'Added slots are assumed to bring their own cores (no host CPU samples for this run).'
    );
  }
  return h(
    'div',
    { class: 'jp-perf-muted jp-whatif-host' },
    `Added slots share this host's ${hc.cores} cores: they were `,
    h('b', {}, `${pyFixed(100 * hc.busy_share, 0)}% busy`),
    ' (measured) while tasks ran, so no slot count can finish a stage group ' +
      'faster than that share of its replay.'
  );
}

async function render(el: HTMLElement, ctx: ITabContext): Promise<void> {
  addStyles('whatif', CSS, el.ownerDocument);
  const w: IWhatIfData = ctx.data.tabs.whatif;
  const D = taskData(ctx.data);
  const meta = D.meta;
  const stops: number[] = (meta.disk_values ?? [1]).map(num);
  const stopLabels: string[] = meta.disk_stops ?? stops.map(factorLabel);
  const slotVals: number[] = meta.slot_values ?? [1];
  const slotLabels: string[] = meta.slot_stops ?? slotVals.map(f => `×${f}`);
  const wall = w.wall_ms;

  const cache = new Map<string, IAnswer>();
  const range = w.slots_range ?? null;

  /** The high end of a slots range (Analysis.whatif_range); null for a point. */
  function rangeHigh(s: IScenario, r: IWhatIf): number | null {
    if (!range || s.slots <= 1) {
      return null;
    }
    const one = cpuOnlyMakespans(D, s);
    const m = new Float64Array(D.G);
    for (let g = 0; g < D.G; g++) {
      m[g] = Math.max(r.r.makespan[g], range.share[g] * one[g]);
    }
    return Math.max(predict(D, npSum(m)), r.predicted);
  }

  function answer(s: IScenario, r: IWhatIf): IAnswer {
    return { predicted: r.predicted, sim: r.sim, high: rangeHigh(s, r) };
  }
  let queue: IScenario[] = [];
  let prefetching = false;
  let token = 0;
  let disposed = false;
  ctx.onDispose(() => {
    disposed = true;
  });

  const onChange = (): void => void update();
  const disk = slider(
    'disk',
    w.labels.disk,
    stopLabels,
    stops,
    Math.max(stops.indexOf(1), 0),
    onChange
  );
  const network = slider(
    'network',
    w.labels.network,
    stopLabels,
    stops,
    Math.max(stops.indexOf(1), 0),
    onChange
  );
  const slots = slider(
    'slots',
    w.labels.slots,
    slotLabels,
    slotVals,
    Math.max(slotVals.indexOf(1), 0),
    onChange
  );
  const noGc = toggle('gc', w.labels.gc, onChange);
  const noStrag = toggle('stragglers', w.labels.stragglers, onChange);

  const predictedEl = h('div', {
    class: 'jp-perf-big jp-whatif-predicted'
  });
  const rangeEl = h('div', { class: 'jp-perf-est jp-whatif-range' });
  rangeEl.hidden = true;
  const detailEl = h('div', { class: 'jp-perf-muted jp-whatif-detail' });
  const out = h(
    'div',
    { class: 'jp-whatif-out' },
    predictedEl,
    rangeEl,
    detailEl
  );
  const labels = h(
    'div',
    { class: 'jp-whatif-labels' },
    h(
      'div',
      {},
      h('b', {}, `Model error ${pyFixed(100 * w.model_error, 1)}%`),
      ` — the replay of the measured run took ${formatDuration(
        w.simulated_baseline_ms
      )} against ${formatDuration(w.actual_ms)} of actual task time. ` +
        'Every prediction is ',
      h(
        'i',
        {},
        'driver gaps + actual × simulated scenario / simulated baseline'
      ),
      ', so this error cancels out.'
    ),
    h(
      'div',
      { class: 'jp-perf-est' },
      'All what-if numbers are ',
      h('b', {}, 'estimates'),
      ' from a schedule replay. Disk is an ',
      h('b', {}, 'upper bound'),
      ': it also removes the input/output wait that Spark does not measure ' +
        '(estimated from the unexplained run time of tasks that read or write).'
    ),
    h(
      'div',
      { class: 'jp-perf-muted' },
      `Driver gaps (no task running: ${formatDuration(
        w.driver_gap_ms
      )}) stay fixed. Slots: every stage group replayed on round(k × the slots it used).`
    ),
    hostCpuNote(w)
  );

  const maxSlots = Math.max(1, w.slots_used);
  const lf: ILaneFigure = laneFigure(ctx, {
    name: 'jp-sim',
    lanes: maxSlots,
    spanMs: Math.max(wall, 1),
    xLabel:
      'seconds (simulated schedule; groups keep their measured driver gaps)'
  });
  lf.fig.x_range.bounds = null; // the simulated schedule may end after the measured one
  let lanesShown = maxSlots;
  const simHolder = h('div', { class: 'jp-whatif-simfig' });
  el.append(
    h(
      'div',
      { class: 'jp-perf-whatif' },
      h(
        'div',
        { class: 'jp-whatif-top' },
        h(
          'div',
          { class: 'jp-whatif-controls' },
          disk.el,
          network.el,
          slots.el,
          noGc.el,
          noStrag.el
        ),
        h('div', { class: 'jp-whatif-result' }, out, labels)
      ),
      h(
        'div',
        { class: 'jp-whatif-sim' },
        h(
          'div',
          {},
          h('b', {}, 'Simulated schedule'),
          ' ',
          h(
            'span',
            { class: 'jp-perf-muted' },
            '(the replay for these settings, not rescaled; colours are the measured ' +
              'breakdown, scaled with each task)'
          )
        ),
        legend(D, w.components ?? []),
        simHolder
      )
    )
  );

  function settings(): IScenario {
    return {
      disk: disk.slider.value(),
      network: network.slider.value(),
      slots: slots.slider.value(),
      gc: !noGc.box.checked,
      stragglers: !noStrag.box.checked
    };
  }

  function showNumber(s: IScenario, a: IAnswer): void {
    const predicted = a.predicted,
      simMs = a.sim,
      high = a.high;
    if (range && high !== null) {
      const words = range.words
        .replace('{low}', formatDuration(predicted))
        .replace('{high}', formatDuration(high));
      predictedEl.textContent =
        `Predicted: ${words} (${formatChange(predicted, wall)} to ` +
        `${formatChange(high, wall)} vs ${formatDuration(wall)} measured)`;
      predictedEl.dataset.predictedHighMs = String(high);
      rangeEl.textContent = range.reason;
      rangeEl.hidden = false;
    } else {
      predictedEl.textContent =
        `Predicted: ${formatDuration(predicted)} ` +
        `(${formatChange(predicted, wall)} vs ${formatDuration(wall)} measured)`;
      delete predictedEl.dataset.predictedHighMs;
      rangeEl.textContent = '';
      rangeEl.hidden = true;
    }
    predictedEl.dataset.predictedMs = String(predicted);
    detailEl.replaceChildren(
      `disk ${factorLabel(s.disk)}${s.disk !== 1 ? ' (upper bound)' : ''} · ` +
        `network ${factorLabel(s.network)} · slots ×${s.slots} · ` +
        `${s.gc ? 'GC as measured' : 'no GC'} · ` +
        `${s.stragglers ? 'stragglers as measured' : 'no stragglers'} — ` +
        `simulated ${formatDuration(simMs)} vs baseline ${formatDuration(
          meta.base_ms ?? w.simulated_baseline_ms
        )} `,
      h('span', { class: 'jp-perf-est' }, '(estimated)')
    );
    Object.assign(out.dataset, {
      disk: String(s.disk),
      network: String(s.network),
      slots: String(s.slots),
      gc: String(s.gc),
      stragglers: String(s.stragglers)
    });
  }

  /** The simulated schedule of `w`: its starts replayed now, after the number is shown. */
  function drawSim(s: IScenario, w: IWhatIf): void {
    const r = withStarts(D, s, w);
    const p = simPositions(D, r);
    const k = Math.max(r.maxK, 1);
    if (k !== lanesShown) {
      lf.setLanes(k);
      lanesShown = k;
    }
    const x0 = -Math.max(p.end * 0.01, 1),
      x1 = Math.max(p.end * 1.01, 1);
    const xr = lf.fig.x_range;
    if (xr.start !== x0 / 1000 || xr.end !== x1 / 1000) {
      xr.setv({ start: x0 / 1000, end: x1 / 1000 });
    }
    lf.fill(p.pos, w.d!, r.slot!, { nLanes: k, keep: scenarioKeep(D, s) });
  }

  function prefetch(): void {
    if (prefetching || disposed) {
      return;
    }
    if (!queue.length) {
      try {
        performance.mark('jupyter-perf: prefetched');
      } catch {
        // see measure()
      }
      return;
    }
    prefetching = true;
    const idle: (f: () => void) => void =
      typeof requestIdleCallback === 'function'
        ? f => requestIdleCallback(() => f())
        : f => setTimeout(f, 30);
    idle(() => {
      prefetching = false;
      const s = queue.shift();
      if (s && !cache.has(key(s)) && !disposed) {
        cache.set(key(s), answer(s, whatif(D, s, false)));
      }
      prefetch();
    });
  }

  let simDone: (() => void) | null = null;
  /** Show the setting's number now; its simulated schedule after the next paint. */
  function update(): Promise<void> {
    const s = settings();
    const t0 = performance.now();
    const k = key(s);
    const hit = cache.get(k);
    let r: IWhatIf | null = null;
    if (hit) {
      showNumber(s, hit);
    } else {
      // the number first: the replay without starts (drawSim adds them)
      r = whatif(D, s, false);
      const a = answer(s, r);
      cache.set(k, a);
      showNumber(s, a);
    }
    measure(hit ? 'what-if (prepared)' : 'what-if (replayed)', t0);
    const mine = ++token;
    return new Promise<void>(resolve => {
      simDone?.();
      simDone = resolve;
      const later = (f: () => void): void => {
        if (typeof requestAnimationFrame === 'function') {
          requestAnimationFrame(() => setTimeout(f, 0));
        } else {
          setTimeout(f, 0);
        }
      };
      later(() => {
        if (mine !== token || disposed) {
          resolve(); // a newer setting is on its way
          return;
        }
        try {
          drawSim(s, r ?? whatif(D, s, true));
          el.dataset.jpSim = k;
          measure('simulated timeline', t0);
        } finally {
          simDone = null;
          resolve();
        }
        queue = neighbours(s, stops, slotVals);
        prefetch();
      });
    });
  }

  await lf.show(simHolder);
  await update();
}

export const whatifTab: ITab = {
  key: 'whatif',
  title: 'What-if',
  render
};
