// jupyter-perf report: the browser half. Plain ES2017, no imports, no network.
//
// JP.whatif(D, settings) is a port of jupyter_perf/analysis/whatif.py (scenario_durations,
// predict) and analysis/replay.py (replay, scaled_slots, simulate_group), operation for
// operation in float64, including numpy's summation order (pairwise sums), so the predicted
// time equals Analysis.whatif(...) exactly. JP.lod() turns per-task arrays into the bars of
// a timeline: every task when few are in view, per-lane aggregates (with their task counts)
// otherwise. Numbers are written by JPF (format.js, inlined before this file: the sidebar's
// labextension/src/format.ts, built), the one formatter of the browser side; JP.fmt is it.
const JP = (() => {
  "use strict";
  const FMT = JPF;

  const num = (v) => (v === "inf" ? Infinity : v === "-inf" ? -Infinity : v);
  const get = (obj, key) => (obj instanceof Map ? obj.get(key) : obj[key]);

  function toF64(a) {
    const out = new Float64Array(a.length);
    for (let i = 0; i < a.length; i++) out[i] = a[i];
    return out;
  }

  // Twin of codec.decode (Python).
  function decode(spec, P, done) {
    if (spec.k === "dense") return toF64(get(P, spec.a));
    let out;
    if (spec.base !== undefined) out = Float64Array.from(done[spec.base]);
    else out = new Float64Array(spec.n).fill(num(spec.c));
    if (spec.k === "sparse") {
      const idx = get(P, spec.i);
      const vals = decode(spec.v, P, done);
      for (let j = 0; j < idx.length; j++) out[idx[j]] = vals[j];
    }
    return out;
  }

  // numpy's pairwise summation (DOUBLE_pairwise_sum), as np.sum uses it.
  function pairwise(a, lo, n) {
    if (n < 8) {
      let res = -0.0;
      for (let i = lo; i < lo + n; i++) res += a[i];
      return res;
    }
    if (n <= 128) {
      const r = [a[lo], a[lo + 1], a[lo + 2], a[lo + 3], a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]];
      let i = 8;
      const stop = n - (n % 8);
      for (; i < stop; i += 8) {
        for (let j = 0; j < 8; j++) r[j] += a[lo + i + j];
      }
      let res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
      for (; i < n; i++) res += a[lo + i];
      return res;
    }
    let n2 = Math.floor(n / 2);
    n2 -= n2 % 8;
    return pairwise(a, lo, n2) + pairwise(a, lo + n2, n - n2);
  }
  const npSum = (a) => pairwise(a, 0, a.length);
  // np.add.reduceat over one segment: the first element, then a pairwise sum of the rest.
  const reduceatSum = (a, lo, n) => (n <= 1 ? a[lo] : a[lo] + pairwise(a, lo + 1, n - 1));

  // np.round (half to even) is FMT.pyRound: exact, as Python's round.
  function scaledSlots(slots, factor, nTasks) {  // replay.scaled_slots
    if (!(factor === Infinity)) {
      const k = Math.max(FMT.pyRound(slots * factor), 1);
      return Math.min(k, Math.max(nTasks, 1));
    }
    return Math.max(nTasks, 1);
  }

  const savedShare = (f) => (f === Infinity ? 1.0 : 1.0 - 1.0 / f);

  // whatif.scenario_durations
  function durations(D, s) {
    const n = D.n, out = new Float64Array(n);
    const disk = s.disk, network = s.network;
    const useFetch = disk !== 1.0 || network !== 1.0;
    const fetchF = network !== 1.0 && disk !== 1.0 ? Math.max(disk, network) : disk === 1.0 ? network : disk;
    const shF = savedShare(fetchF), shD = savedShare(disk);
    const dur = D.dur, ns = D.nostrag, fw = D.fw, dk = D.disk, gc = D.gc, run = D.run;
    for (let i = 0; i < n; i++) {
      const d = s.stragglers ? dur[i] : Math.min(dur[i], ns[i]);
      let saved = 0.0;
      if (useFetch) saved = saved + fw[i] * shF;
      if (disk !== 1.0) saved = saved + dk[i] * shD;
      if (!s.gc) saved = saved + gc[i];
      if (saved > run[i]) saved = run[i];
      const keep = dur[i] > 0 ? 1.0 - saved / dur[i] : 1.0;
      out[i] = d * (keep > 0 ? keep : 0.0);
    }
    return out;
  }

  // A binary min-heap of (time, slot): the earliest-free slot first, ties by slot number.
  function Heap(k) {
    this.t = new Float64Array(k);
    this.s = new Int32Array(k);
    for (let i = 0; i < k; i++) this.s[i] = i;
    this.k = k;
  }
  Heap.prototype.less = function (i, j) {
    return this.t[i] < this.t[j] || (this.t[i] === this.t[j] && this.s[i] < this.s[j]);
  };
  Heap.prototype.swap = function (i, j) {
    const t = this.t[i]; this.t[i] = this.t[j]; this.t[j] = t;
    const s = this.s[i]; this.s[i] = this.s[j]; this.s[j] = s;
  };
  Heap.prototype.down = function (i) {
    const k = this.k;
    for (;;) {
      const l = 2 * i + 1, r = l + 1;
      let m = i;
      if (l < k && this.less(l, m)) m = l;
      if (r < k && this.less(r, m)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  };
  Heap.prototype.raise = function (ready) {     // every slot free before `ready` waits for it
    for (let i = 0; i < this.k; i++) if (this.t[i] < ready) this.t[i] = ready;
    for (let i = (this.k >> 1) - 1; i >= 0; i--) this.down(i);
  };
  Heap.prototype.max = function () {
    let m = this.t[0];
    for (let i = 1; i < this.k; i++) if (this.t[i] > m) m = this.t[i];
    return m;
  };

  // replay.scaled_windows: k x the slot windows, repeated in order (or the earliest kept).
  function scaledWindows(w, factor, nTasks) {
    const m = w[0].length;
    const count = factor === Infinity ? Math.max(nTasks, m) : Math.max(FMT.pyRound(m * factor), 1);
    const from = new Float64Array(count), until = new Float64Array(count);
    for (let j = 0; j < count; j++) {
      from[j] = w[0][j % m];
      until[j] = w[1][j % m] === null ? Infinity : w[1][j % m];
    }
    return [from, until];
  }

  // replay.simulate_windows: slots free from `from`, taking no task at or after `until`;
  // the earliest-free slot still there takes the next task (ties: the lower slot).
  function simulateWindows(D, dd, lo, nT, w, splits, starts, slot) {
    const k = w[0].length, until = w[1];
    const h = new Heap(k);
    for (let j = 0; j < k; j++) h.t[j] = w[0][j];
    for (let i = (k >> 1) - 1; i >= 0; i--) h.down(i);
    const loc = new Float64Array(nT);
    const nSeg = splits ? splits.length + 1 : 1;
    let next = 0, makespan = 0.0;
    for (let sg = 0; sg < nSeg; sg++) {
      const upto = sg < nSeg - 1 ? splits[sg][0] : nT;
      for (; next < upto; next++) {
        while (h.k > 1 && h.t[0] >= until[h.s[0]]) {       // its executor left: drop it
          h.k -= 1;
          h.t[0] = h.t[h.k]; h.s[0] = h.s[h.k];
          h.down(0);
        }
        const i = lo + next, t0 = h.t[0];
        loc[next] = t0;
        if (starts) { starts[i] = t0; slot[i] = h.s[0]; }
        h.t[0] = t0 + dd[i];
        if (h.t[0] > makespan) makespan = h.t[0];
        h.down(0);
      }
      if (sg < nSeg - 1) {
        const pos = splits[sg][0], parents = splits[sg][1];
        let ready = -Infinity;
        for (let p = 0; p < pos; p++) {
          if (parents.has(D.stage[lo + p])) {
            const f = loc[p] + dd[lo + p];
            if (f > ready) ready = f;
          }
        }
        h.raise(ready);
      }
    }
    return makespan;
  }

  // replay.replay: per group makespan; starts / slots (group-relative) when asked.
  function replay(D, d, slotsFactor, wantStarts) {
    const G = D.G, bounds = D.bounds, gslots = D.slots, stage = D.stage;
    const makespan = new Float64Array(G);
    const starts = wantStarts ? new Float64Array(D.n) : null;
    const slot = wantStarts ? new Int32Array(D.n) : null;
    const dd = new Float64Array(d.length);
    for (let i = 0; i < d.length; i++) dd[i] = d[i] > 0 ? d[i] : 0.0;
    let maxK = 1;
    for (let g = 0; g < G; g++) {
      const lo = bounds[g], hi = bounds[g + 1], nT = hi - lo;
      const splits = D.splits[g];
      const win = D.windows ? D.windows[g] : null;
      if (win) {                                      // executors came or went
        const w = scaledWindows(win, slotsFactor, nT);
        if (w[0].length > maxK) maxK = w[0].length;
        makespan[g] = simulateWindows(D, dd, lo, nT, w, splits, starts, slot);
        continue;
      }
      const k = scaledSlots(gslots[g], slotsFactor, nT);
      if (k > maxK) maxK = k;
      if (!splits && k >= nT) {                       // one wave
        let m = nT ? dd[lo] : 0.0;
        for (let i = lo + 1; i < hi; i++) if (dd[i] > m) m = dd[i];
        makespan[g] = m;
        if (wantStarts) for (let i = lo; i < hi; i++) { starts[i] = 0.0; slot[i] = i - lo; }
        continue;
      }
      if (!splits && k === 1) {                       // one slot
        makespan[g] = reduceatSum(dd, lo, nT);
        if (wantStarts) {
          let c = 0.0;
          for (let i = lo; i < hi; i++) { starts[i] = c; slot[i] = 0; c += dd[i]; }
        }
        continue;
      }
      const h = new Heap(k), ht = h.t, hs = h.s;
      const loc = new Float64Array(nT);            // group-relative starts (barriers need them)
      const nSeg = splits ? splits.length + 1 : 1;
      let next = 0;
      for (let sg = 0; sg < nSeg; sg++) {
        const upto = sg < nSeg - 1 ? splits[sg][0] : nT;
        for (; next < upto; next++) {              // heapq.heapreplace(h, h[0] + d), inlined
          const i = lo + next, t0 = ht[0], s0 = hs[0];
          loc[next] = t0;
          if (wantStarts) { starts[i] = t0; slot[i] = s0; }
          const nt = t0 + dd[i];
          let q = 0;
          for (;;) {                               // sift (nt, s0) down from the root
            const l = 2 * q + 1;
            if (l >= k) break;
            const r = l + 1;
            let c = l;
            if (r < k && (ht[r] < ht[l] || (ht[r] === ht[l] && hs[r] < hs[l]))) c = r;
            if (ht[c] < nt || (ht[c] === nt && hs[c] < s0)) {
              ht[q] = ht[c]; hs[q] = hs[c]; q = c;
            } else break;
          }
          ht[q] = nt; hs[q] = s0;
        }
        if (sg < nSeg - 1) {                       // a DAG barrier: wait for the parents
          const pos = splits[sg][0], parents = splits[sg][1];
          let ready = -Infinity;
          for (let p = 0; p < pos; p++) {
            if (parents.has(stage[lo + p])) {
              const f = loc[p] + dd[lo + p];
              if (f > ready) ready = f;
            }
          }
          if (ready > ht[0]) h.raise(ready);
        }
      }
      makespan[g] = nT ? h.max() : 0.0;
    }
    return { makespan, total: npSum(makespan), starts, slot, maxK };
  }

  // whatif.predict
  function predict(D, sim) {
    const M = D.meta;
    if (M.base_ms <= 0) return M.driver_gap_ms + M.actual_ms;
    return M.driver_gap_ms + M.actual_ms * sim / M.base_ms;
  }

  // hostcpu.with_floor: more slots on the same host cannot beat its measured CPU busy share.
  // A faster disk or network does not shrink the CPU work: their floor replays the durations
  // without those savings (Analysis.simulate's cpu_d).
  function hostFloor(D, s, d, r) {
    const share = D.meta.cpu_share;
    const io = s.disk !== 1.0 || s.network !== 1.0;
    if (!(s.slots > 1 || io) || !share || !share.some((x) => x > 0)) return;
    // The floor's replay (measured slots, disk and network as measured) depends only on the
    // GC and straggler toggles: computed once per pair, so a cold move replays once, not twice.
    const fk = `${s.gc}|${s.stragglers}`;
    const memo = D.floorMemo || (D.floorMemo = new Map());
    let one = memo.get(fk);
    if (!one) {
      const dc = io ? durations(D, Object.assign({}, s, { disk: 1.0, network: 1.0 })) : d;
      one = replay(D, dc, 1.0, false).makespan;
      memo.set(fk, one);
    }
    for (let g = 0; g < D.G; g++) {
      const f = share[g] * one[g];
      if (f > r.makespan[g]) r.makespan[g] = f;
    }
    r.total = npSum(r.makespan);
  }

  function whatif(D, s, wantStarts) {
    const d = durations(D, s);
    const r = replay(D, d, s.slots, wantStarts);
    hostFloor(D, s, d, r);
    return { predicted: predict(D, r.total), sim: r.total, d, r };
  }

  // ---------------------------------------------------------------- data
  function init(P, meta) {
    const D = { meta, n: meta.n, G: meta.groups, windows: meta.slot_windows || null };
    const done = {};
    for (const name of ["dur", "fw", "disk", "gc", "run", "nostrag"]) {
      done[name] = decode(meta.cols[name], P, done);
    }
    Object.assign(D, done);
    for (const name of ["start", "lane", "stage", "inb", "shr", "tid", "idx", "att", "flags",
                        "bounds", "slots"]) D[name] = get(P, name);
    const sg = get(P, "split_g"), sp = get(P, "split_pos"), so = get(P, "split_off"),
          sc = get(P, "split_codes");
    D.splits = new Array(D.G).fill(null);
    for (let j = 0; j < sg.length; j++) {
      const set = new Set();
      for (let q = so[j]; q < so[j + 1]; q++) set.add(sc[q]);
      (D.splits[sg[j]] = D.splits[sg[j]] || []).push([sp[j], set]);
    }
    // The breakdown components (analysis/components.py, carried in the payload): labels,
    // colours, measured or estimated, and each attempt's milliseconds of each.
    const comps = meta.components, C = comps.length, n = D.n;
    const comp = new Float32Array(n * C), compSum = new Float64Array(n);
    for (let k = 0; k < C; k++) {
      const col = comps[k].col;
      const v = D[col] || (done[col] = decode(meta.cols[col], P, done));
      for (let i = 0; i < n; i++) comp[i * C + k] = v[i] > 0 ? v[i] : 0;
    }
    for (let i = 0; i < n; i++) {
      let t = 0;
      for (let k = 0; k < C; k++) t += comp[i * C + k];
      compSum[i] = t;
    }
    D.comps = comps;
    D.C = C;
    D.comp = comp;
    D.compSum = compSum;
    D.estimated = comps.map((c) => c.kind === "estimated");
    return D;
  }

  // What a scenario keeps of each component (whatif.scenario_durations, per component):
  // network/disk remove 1 − 1/f of fetch wait, disk of shuffle write and estimated I/O wait,
  // no GC all of GC. The simulated bars draw what is left, scaled to the replayed duration.
  function scenarioKeep(D, s) {
    const keep = new Float64Array(D.C).fill(1.0);
    const fetchF = s.network !== 1.0 && s.disk !== 1.0 ? Math.max(s.disk, s.network)
      : s.disk === 1.0 ? s.network : s.disk;
    D.comps.forEach((c, k) => {
      if (c.key === "shuffle_fetch_wait" && (s.disk !== 1.0 || s.network !== 1.0)) keep[k] = 1.0 - savedShare(fetchF);
      if ((c.key === "shuffle_write" || c.key === "io_wait_est") && s.disk !== 1.0) keep[k] = 1.0 - savedShare(s.disk);
      if (c.key === "gc" && !s.gc) keep[k] = 0.0;
    });
    return keep;
  }

  // Simulated positions (ms from the window start): groups keep the measured driver gaps.
  function simPositions(D, r) {
    const M = D.meta, G = D.G, pos = new Float64Array(D.n);
    let t = G ? Math.max(M.group_start[0], 0) : 0;
    for (let g = 0; g < G; g++) {
      if (g > 0) t += Math.max(M.group_start[g] - M.group_end[g - 1], 0);
      for (let i = D.bounds[g]; i < D.bounds[g + 1]; i++) pos[i] = t + r.starts[i];
      t += r.makespan[g];
    }
    return { pos, end: t };
  }

  const fmtMs = FMT.formatDuration, fmtBytes = FMT.formatBytes;

  // ---------------------------------------------------------------- level of detail
  // Each attempt is drawn as its components (the scenario's remainder, `keep`), scaled so the
  // bar spans its (measured or replayed) duration `d`. Returns the scale, 0 for an empty bar.
  function barScale(D, i, d, keep) {
    const C = D.C, o = i * C;
    let tot = 0;
    if (keep) for (let k = 0; k < C; k++) tot += D.comp[o + k] * keep[k];
    else tot = D.compSum[i];
    return tot > 0 ? d / tot : 0;
  }

  function taskText(D, i, startMs, durMs, keep, scale) {
    const M = D.meta, c = D.stage[i], lane = D.lane[i];
    const F = M.flags, f = D.flags[i];
    const notes = [];
    if (f & F.failed) notes.push("FAILED");
    if (f & F.killed) notes.push("KILLED");
    if (f & F.speculative) notes.push("speculative");
    if (f & F.straggler) notes.push("straggler");
    if (f & F.skew) notes.push("data skew");
    if (f & F.spill) notes.push("spilled");
    const parts = [];
    for (let k = 0; k < D.C; k++) {
      const v = D.comp[i * D.C + k] * (keep ? keep[k] : 1) * scale;
      if (v > 0) parts.push(`${D.comps[k].short} ${fmtMs(v)}`);
    }
    return {
      task: `${D.tid[i]} (index ${D.idx[i]}, attempt ${D.att[i]})`,
      stage: M.stage_attempts[c] > 0 ? `${M.stage_ids[c]} (attempt ${M.stage_attempts[c]})` : `${M.stage_ids[c]}`,
      exec: `${M.lane_exec[lane]} on ${M.lane_host[lane]}`,
      time: `${fmtMs(durMs)} from ${FMT.pyFixed(startMs / 1000, 3)} s`,
      parts: parts.join(" · ") || "–",
      read: `input ${fmtBytes(D.inb[i])} · shuffle read ${fmtBytes(D.shr[i])}`,
      notes: notes.join(", ") || "–",
    };
  }

  // xs: start ms per task; ds: duration ms; lanes: lane per task. x0/x1 in ms.
  // opts.keep: per component, the share a what-if scenario keeps (null: as measured).
  // opts.focus: per stage code, 1 for the stages of a selected operator (null: no selection);
  // the other attempts are drawn faded.
  function lod(D, xs, ds, lanes, nLanes, x0, x1, opts) {
    const n = D.n, limit = opts.limit || 2000, nb = opts.bins || 160;
    const C = D.C, comps = D.comps, keep = opts.keep || null, est = D.estimated;
    const focus = opts.focus || null, fade = (i) => (focus && !focus[D.stage[i]] ? 0.15 : 1.0);
    let vis = 0;
    for (let i = 0; i < n; i++) { const s = xs[i]; if (s <= x1 && s + ds[i] >= x0) vis++; }
    if (vis <= limit) {
      const seg = { left: [], right: [], bottom: [], top: [], color: [], alpha: [] };
      const box = { left: [], right: [], bottom: [], top: [], line: [], dash: [], row: [],
                    task: [], stage: [], exec: [], time: [], parts: [], read: [], notes: [] };
      const F = D.meta.flags;
      for (let i = 0; i < n; i++) {
        const s = xs[i], d = ds[i];
        if (!(s <= x1 && s + d >= x0)) continue;
        const y = lanes[i];
        const scale = barScale(D, i, d, keep);
        let x = s;
        for (let k = 0; k < C; k++) {
          const w = D.comp[i * C + k] * (keep ? keep[k] : 1) * scale;
          if (w <= 0) continue;
          seg.left.push(x / 1000); seg.right.push((x + w) / 1000);
          seg.bottom.push(y + 0.12); seg.top.push(y + 0.88); seg.color.push(comps[k].color);
          seg.alpha.push((est[k] ? 0.45 : 1.0) * fade(i));  // estimated components are lighter
          x += w;
        }
        const f = D.flags[i];
        box.left.push(s / 1000); box.right.push((s + d) / 1000);
        box.bottom.push(y + 0.08); box.top.push(y + 0.92);
        box.line.push(f & (F.failed | F.killed) ? "#d62728" : f & F.speculative ? "#9467bd"
                      : f & F.straggler ? "#111111" : "rgba(0,0,0,0.25)");
        box.dash.push(f & F.speculative ? "dashed" : "solid");
        box.row.push(i);
        const t = taskText(D, i, s, d, keep, scale);
        for (const key of ["task", "stage", "exec", "time", "parts", "read", "notes"]) box[key].push(t[key]);
      }
      return { mode: "detail", visible: vis, seg, box, agg: null };
    }
    // Bins per lane: enough to follow the schedule, few enough to draw fast (≤ ~6000 bars).
    const nbl = Math.max(12, Math.min(nb, Math.floor(6000 / Math.max(nLanes, 1))));
    const w = (x1 - x0) / nbl;
    const L = Math.max(nLanes, 1), cells = L * nbl;
    const count = new Int32Array(cells), fail = new Int32Array(cells), inFocus = new Int32Array(cells);
    const minS = new Float64Array(cells).fill(Infinity), maxE = new Float64Array(cells).fill(-Infinity);
    const sums = new Float64Array(cells * C);
    const stMin = new Int32Array(cells).fill(2147483647), stMax = new Int32Array(cells).fill(-1);
    const F = D.meta.flags, bad = F.failed | F.killed, sids = D.meta.stage_ids;
    const comp = D.comp, flags = D.flags, stage = D.stage;
    for (let i = 0; i < n; i++) {
      const s = xs[i], d = ds[i];
      if (!(s <= x1 && s + d >= x0)) continue;
      let b = Math.floor((Math.max(s, x0) - x0) / w);
      if (b >= nbl) b = nbl - 1;
      const key = lanes[i] * nbl + b;
      count[key]++;
      if (s < minS[key]) minS[key] = s;
      if (s + d > maxE[key]) maxE[key] = s + d;
      const scale = barScale(D, i, d, keep);
      const o = key * C, oi = i * C;
      for (let k = 0; k < C; k++) sums[o + k] += comp[oi + k] * (keep ? keep[k] : 1) * scale;
      if (flags[i] & bad) fail[key]++;
      if (focus && focus[stage[i]]) inFocus[key]++;
      const sid = sids[stage[i]];
      if (sid < stMin[key]) stMin[key] = sid;
      if (sid > stMax[key]) stMax[key] = sid;
    }
    let m = 0;
    for (let key = 0; key < cells; key++) if (count[key]) m++;
    const agg = { left: new Float64Array(m), right: new Float64Array(m), bottom: new Float64Array(m),
                  top: new Float64Array(m), color: new Array(m), alpha: new Float64Array(m), count: new Int32Array(m),
                  busy: new Float64Array(m), mostly: new Array(m), share: new Float64Array(m),
                  smin: new Int32Array(m), smax: new Int32Array(m), failed: new Int32Array(m) };
    let j = 0;
    for (let key = 0; key < cells; key++) {
      const c = count[key];
      if (!c) continue;
      const lane = Math.floor(key / nbl);
      let total = 0, best = 0, bi = 0;
      for (let k = 0; k < C; k++) {
        const v = sums[key * C + k];
        total += v;
        if (v > best) { best = v; bi = k; }
      }
      agg.left[j] = minS[key] / 1000; agg.right[j] = maxE[key] / 1000;
      agg.bottom[j] = lane + 0.12; agg.top[j] = lane + 0.88;
      agg.color[j] = comps[bi].color;
      agg.alpha[j] = (est[bi] ? 0.45 : 0.9) * (focus && !inFocus[key] ? 0.15 : 1.0);
      agg.count[j] = c; agg.busy[j] = total / 1000;
      agg.mostly[j] = comps[bi].label; agg.share[j] = total > 0 ? best / total : 0;
      agg.smin[j] = stMin[key]; agg.smax[j] = stMax[key]; agg.failed[j] = fail[key];
      j++;
    }
    return { mode: "aggregate", visible: vis, seg: null, box: null, agg };
  }

  return { decode, pairwise, npSum, reduceatSum, scaledSlots, durations, replay,
           predict, whatif, init, scenarioKeep, simPositions, lod, get, num, fmt: FMT };
})();
