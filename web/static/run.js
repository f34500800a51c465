// web/static/run.js - the run page of prismlab serve: linked, zoomable
// plots of v_p1, v_p2 (from the stored chunks), omega (4.1) and L_p (4.2)
// with the matching simulation, the impacts marked with their ratios, and
// the spectrum of omega's residual, and the run's data quality (a badge
// and its faults in words).  Each zoom asks the server for the
// window's min/max envelope at the plot's width (full-rate samples once
// the window is short enough); state for tests is in window.plRun.
// The page shows a loading sign until the plots are drawn; the impacts'
// table is filled a page at a time (/api/run/N/impacts) and follows the
// zoom.  The first window is asked for together with /meta, not after it.
// The window in view is in the URL (#t0=..&t1=..: a link reopens it), and
// "zoom to the roll" shows the release to the end of the valid data.  Tick
// labels carry the digits that tell neighbouring ticks apart (a zoomed
// v_p or the Welch spectrum's small values, not "0").  The validation's
// section (/api/run/N/answer) is asked for once the plots are drawn.
'use strict';
(function () {
  const root = document.getElementById('plots');
  const run = root.dataset.run;
  const status = document.getElementById('status');
  const loading = document.getElementById('loading');
  const state = window.plRun = { ready: false, loads: 0, last: null, error: null, impacts: 0,
                                 quality: null, faults: [], table: null, answer: null,
                                 marks: {}, ratio: null };
  let meta = null;
  const plots = [];
  let syncing = false;
  let pending = 0;
  let view = null;   // the window last asked for

  function width() { return Math.max(300, root.clientWidth - 20); }

  // Tick labels: the fewest decimals that give every tick within a
  // thousandth of the step between ticks (on a log axis, of the value
  // itself), in exponent form below 1e-3 and from 1e6 up.  uPlot's own
  // labels round small values to "0" and zoomed times to equal labels.
  function tickLabels(u, splits) {
    const vals = splits.filter(v => v != null && isFinite(v));
    let step = Infinity;
    for (let i = 1; i < vals.length; i++) {
      const d = Math.abs(vals[i] - vals[i - 1]);
      if (d > 0 && d < step) step = d;
    }
    const log = vals.length > 2 && vals.every(v => v > 0) &&
                Math.abs(vals[2] / vals[1] - vals[1] / vals[0]) < 1e-9 * (vals[1] / vals[0]) &&
                vals[1] / vals[0] >= 2;
    return splits.map(v => {
      if (v == null || !isFinite(v)) return '';
      if (v === 0) return '0';
      const a = Math.abs(v), tol = (log || !isFinite(step) ? a : step) * 1e-3;
      const expo = a < 1e-3 || a >= 1e6;
      for (let d = 0; d <= 15; d++) {
        const text = expo ? v.toExponential(d) : v.toFixed(d);
        if (Math.abs(+text - v) <= tol) return text;
      }
      return expo ? v.toExponential(15) : String(v);
    });
  }

  function showError(msg) {
    state.error = msg;
    status.textContent = msg;
    status.style.color = '#b00';
    if (loading) loading.hidden = true;
  }

  async function getJson(url) {
    const r = await fetch(url);
    if (!r.ok) throw new Error(await r.text());
    return r.json();
  }

  // the first impact at or after t (meta.impacts is in time order)
  function impactAt(t) {
    const imp = meta.impacts;
    let lo = 0, hi = imp.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (imp[mid][0] < t) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  // The impacts in view.  Where they stand at least MARK_GAP px apart
  // (all but a tenth of neighbours), a line across the plot at each, and
  // its ratio when there is room; closer, as a whole run's ~150-500
  // impacts are, lines would wall the curve in: a row of ticks
  // MARK_TICK px tall along the plot's foot instead.  One line a pixel
  // column and colour, one path a colour: a 10-minute run has ~40 000
  // impacts, ~35 a column when whole.  state.marks[key] says which.
  const MARK_GAP = 8, MARK_TICK = 6;
  function drawImpacts(u, withRatio, key) {
    if (!meta || !meta.impacts || !meta.impacts.length) return;
    const ctx = u.ctx, xs = u.scales.x, top = u.bbox.top, h = u.bbox.height;
    const dpr = devicePixelRatio;
    const imp = meta.impacts, a = impactAt(xs.min);
    let b = a;
    while (b < imp.length && imp[b][0] <= xs.max) b++;
    let close = 0;
    for (let i = a + 1; i < b; i++)
      close += u.valToPos(imp[i][0], 'x', true) - u.valToPos(imp[i - 1][0], 'x', true) < MARK_GAP * dpr;
    const apart = close <= 0.1 * (b - a);
    const room = b > a && u.bbox.width / (b - a) > 45 * dpr;
    const y0 = apart ? top : top + h - MARK_TICK * dpr;
    let drawn = 0;
    ctx.save();
    ctx.lineWidth = 1;
    for (const [colour, seen] of [['rgba(200,0,0,0.45)', true], ['rgba(200,120,0,0.35)', false]]) {
      ctx.strokeStyle = colour;
      ctx.beginPath();
      let last = null;
      for (let i = a; i < b; i++) {
        if ((imp[i][2] > 0) !== seen) continue;
        const x = Math.round(u.valToPos(imp[i][0], 'x', true));
        if (x === last) continue;
        last = x;
        drawn++;
        ctx.moveTo(x, y0); ctx.lineTo(x, top + h);
      }
      ctx.stroke();
    }
    state.marks[key] = { inView: b - a, drawn, as: apart ? 'lines' : 'ticks' };
    if (withRatio && room && apart) {
      ctx.font = (10 * devicePixelRatio) + 'px sans-serif';
      ctx.fillStyle = '#900';
      for (let i = a; i < b; i++) {
        if (imp[i][1] === null) continue;
        ctx.fillText(imp[i][1].toFixed(3), Math.round(u.valToPos(imp[i][0], 'x', true)) + 2,
                     top + 12 * devicePixelRatio);
      }
    }
    ctx.restore();
  }

  function onScale(u, key) {
    if (key !== 'x' || syncing || !meta) return;
    const { min, max } = u.scales.x;
    if (min == null || max == null || !(max > min)) return;
    // uPlot sets the scale itself on new data: only a new window is a zoom
    const eps = 1e-9 * Math.max(1, Math.abs(max));
    if (view && Math.abs(min - view.t0) < eps && Math.abs(max - view.t1) < eps) return;
    load(min, max);
  }

  function makePlot(el, key, title, yLabel, names, colours, withRatio) {
    const series = [{ label: 't (s)' }];
    const bands = [];
    for (let k = 0; k < names.length; k++) {
      // the legend shows each band once (its max row is hidden by the CSS)
      series.push({ label: names[k], stroke: colours[k], width: 1, points: { show: false } });
      series.push({ label: names[k] + ' max', stroke: colours[k], width: 1, points: { show: false } });
      bands.push({ series: [2 + 2 * k, 1 + 2 * k], fill: colours[k] + '33' });
    }
    const opts = {
      title, width: width(), height: 220,
      cursor: { sync: { key: 'run' + run }, bind: { dblclick: () => null } },
      scales: { x: { time: false } },
      axes: [{ label: 'time on the run\u2019s clock (s)', values: tickLabels },
             { label: yLabel, values: tickLabels, size: 70 }],
      series, bands,
      legend: { live: true },
      hooks: { setScale: [onScale], draw: [u => drawImpacts(u, withRatio, key)] },
    };
    const data = [[]];
    for (let k = 0; k < 2 * names.length; k++) data.push([]);
    const u = new uPlot(opts, data, el);
    u.over.addEventListener('dblclick', () => load(0, meta.duration));
    plots.push(u);
    return u;
  }

  let vpPlot, omPlot, lpPlot;

  function setAll(t0, t1) {
    syncing = true;
    for (const u of plots) u.setScale('x', { min: t0, max: t1 });
    syncing = false;
  }

  // the window in the URL: replaced, not pushed (a zoom is not a page)
  function putInUrl(t0, t1) {
    const whole = t0 <= 0 && t1 >= meta.duration;
    const hash = whole ? '' : `#t0=${+t0.toPrecision(10)}&t1=${+t1.toPrecision(10)}`;
    if (location.hash !== hash) history.replaceState(null, '', location.pathname + location.search + hash);
  }

  // the window a link names (#t0=..&t1=..), else null
  function fromUrl() {
    const h = new URLSearchParams(location.hash.slice(1));
    const t0 = parseFloat(h.get('t0')), t1 = parseFloat(h.get('t1'));
    return isFinite(t0) && isFinite(t1) && t1 > Math.max(0, t0) ? { t0: Math.max(0, t0), t1 } : null;
  }

  async function load(t0, t1, first) {
    const px = Math.round(width());
    view = { t0, t1 };
    const seq = ++pending;
    if (loading && state.ready) loading.hidden = false;   // a zoom on its way
    const started = performance.now();
    let d;
    try {
      // the first window is on its way since start(): its t1 is past the end
      d = await (first || getJson(`/api/run/${run}/window?t0=${t0}&t1=${t1}&px=${px}`));
    } catch (e) {
      showError('loading the window failed: ' + e.message);
      return;
    }
    if (seq !== pending) return;   // a newer zoom is on its way
    if (loading && state.ready) loading.hidden = true;
    const vp = d.vp;
    vpPlot.setData([vp.t, vp.min1, vp.max1, vp.min2, vp.max2], false);
    if (d.derived && omPlot) {
      const s = d.derived;
      const om = [s.t, s.omega_min, s.omega_max], lp = [s.t, s.lp_min, s.lp_max];
      if (meta.sim) {
        om.push(s.somega_min, s.somega_max);
        lp.push(s.slp_min, s.slp_max);
      }
      omPlot.setData(om, false);
      lpPlot.setData(lp, false);
    }
    setAll(t0, t1);
    putInUrl(t0, t1);
    state.loads++;
    state.last = { t0, t1, n: vp.n, full: vp.full, ms: performance.now() - started };
    status.textContent = `${t0.toFixed(4)} to ${t1.toFixed(4)} s: ` +
      (vp.full ? `${vp.n} samples a channel at full rate`
               : `min/max envelope of ${vp.n} columns (${((t1 - t0) * d.rate / vp.n).toFixed(0)} frames each)`);
    if (meta.impacts && meta.impacts.length) showImpacts(impactAt(t0));
  }

  // the impacts' table: a page of rows from index `from`
  const PAGE = 200;
  let tableSeq = 0;
  async function showImpacts(from) {
    const table = document.getElementById('impacts');
    if (!table) return;
    from = Math.max(0, Math.min(from, meta.impacts.length - 1));
    const seq = ++tableSeq;
    let d;
    try {
      d = await getJson(`/api/run/${run}/impacts?from=${from}&n=${PAGE}`);
    } catch (e) {
      showError('loading the impacts failed: ' + e.message);
      return;
    }
    if (seq !== tableSeq) return;
    const body = document.createElement('tbody');
    // the +- columns: 1 sd of the instant (us), 1 s.e. of the ratio; '-'
    // for rows processed before prismlab stated them
    d.rows.forEach(([t, om, op, ratio, confirmed, tsd, rse], k) => {
      const tr = document.createElement('tr');
      const cells = [String(d.from + k + 1), t.toFixed(5),
                     tsd === null || tsd === undefined ? '-' : (1e6 * tsd).toPrecision(2),
                     om === null ? '-' : om.toFixed(4),
                     op === null ? '-' : op.toFixed(4), ratio === null ? '-' : ratio.toFixed(4),
                     rse === null || rse === undefined ? '-' : rse.toPrecision(2),
                     confirmed > 0 ? 'seen' : confirmed === 0 ? 'lattice' : '?'];
      for (const c of cells) {
        const td = document.createElement('td');
        td.textContent = c;
        tr.append(td);
      }
      body.append(tr);
    });
    table.replaceChild(body, table.tBodies[0]);
    const end = d.from + d.rows.length;
    document.getElementById('impacts-range').textContent =
      d.rows.length ? `impacts ${d.from + 1} to ${end} of ${d.total}` : `none of ${d.total}`;
    const prev = document.getElementById('impacts-prev'), next = document.getElementById('impacts-next');
    prev.disabled = d.from === 0;
    next.disabled = end >= d.total;
    prev.onclick = () => showImpacts(d.from - PAGE);
    next.onclick = () => showImpacts(end);
    state.table = { from: d.from, rows: d.rows.length, total: d.total };
  }

  function psdPlot(el) {
    if (!meta.psd || meta.psd.v.length < 2) return null;
    const f = [], v = [];
    for (let k = 1; k < meta.psd.v.length; k++) {
      const y = meta.psd.v[k];
      if (y > 0) { f.push(k * meta.psd.df); v.push(y); }
    }
    return new uPlot({
      title: 'Welch spectrum of the residual of \u03c9 (rad\u00b2/s\u00b2/Hz)', width: width(), height: 240,
      scales: { x: { time: false, distr: 3 }, y: { distr: 3 } },
      axes: [{ label: 'frequency (Hz)', values: tickLabels }, { label: 'PSD', values: tickLabels, size: 80 }],
      series: [{ label: 'f (Hz)' }, { label: 'residual', stroke: '#555', width: 1, points: { show: false } }],
    }, [f, v], el);
  }

  // the data-quality record: its word as a badge, then one item a fault;
  // nothing for a run neither processed nor refused (the page says so)
  function showQuality() {
    const el = document.getElementById('quality');
    const q = meta.quality;
    state.quality = q;
    state.faults = meta.faults || [];
    if (!el || (!q && !meta.processed)) return;
    const p = document.createElement('p');
    const badge = document.createElement('span');
    badge.className = 'badge q-' + (q || 'unknown');
    badge.textContent = q || 'not assessed';
    p.append('Data quality: ', badge);
    if (!q) p.append(' (processed before prismlab recorded data quality)');
    else if (q === 'degraded') p.append(' (measured through the faults below)');
    else if (q === 'suspect') p.append(' (a check against the physics failed: do not trust the numbers; see the faults below)');
    el.append(p);
    if (meta.fault_words && meta.fault_words.length) {
      const ul = document.createElement('ul');
      ul.id = 'faults';
      for (const w of meta.fault_words) {
        const li = document.createElement('li');
        li.textContent = w;
        ul.append(li);
      }
      el.append(ul);
    }
  }

  // "zoom to the roll": the detected release to the end of the valid
  // data, a twentieth of it either side (a long lead-in hides the roll)
  function rollButton() {
    const hint = status.parentNode;
    const b = document.createElement('button');
    b.id = 'zoom-roll';
    b.type = 'button';
    b.textContent = 'zoom to the roll';
    const ok = meta.processed && isFinite(meta.release) && isFinite(meta.end) && meta.end > meta.release;
    b.disabled = !ok;
    b.title = ok ? `release ${meta.release.toFixed(4)} s to end ${meta.end.toFixed(4)} s`
                 : 'the run is not processed: no release or end detected';
    b.addEventListener('click', () => {
      const pad = (meta.end - meta.release) / 20;
      load(Math.max(0, meta.release - pad), Math.min(meta.duration, meta.end + pad));
    });
    hint.insertBefore(b, status);
    hint.insertBefore(document.createTextNode(' '), status);
  }

  async function start() {
    const linked = fromUrl();
    const firstWindow = getJson(linked ? `/api/run/${run}/window?t0=${linked.t0}&t1=${linked.t1}&px=${Math.round(width())}`
                                       : `/api/run/${run}/window?t0=0&t1=1e12&px=${Math.round(width())}`);
    firstWindow.catch(() => {});   // reported by load() below
    try {
      meta = await getJson(`/api/run/${run}/meta`);
    } catch (e) {
      showError('loading the run failed: ' + e.message);
      return;
    }
    state.impacts = meta.impacts ? meta.impacts.length : 0;
    showQuality();
    vpPlot = makePlot(document.getElementById('plot-vp'), 'vp', 'Gauge-point velocities v_p1, v_p2 (raw, m/s)',
                      'm/s', ['v_p1', 'v_p2'], ['#1f77b4', '#d62728'], false);
    if (meta.processed) {
      const sim = meta.sim ? ['simulated (' + meta.sim + ')'] : [];
      omPlot = makePlot(document.getElementById('plot-omega'), 'omega',
                        'Rotary speed \u03c9 (4.1), rad/s; impacts: ticks along the foot, lines with \u03c9+/\u03c9- zoomed in',
                        'rad/s', ['\u03c9'].concat(sim), ['#2ca02c', '#7f7f7f'], true);
      lpPlot = makePlot(document.getElementById('plot-lp'), 'lp', 'Line-impact count L_p (4.2)',
                        'L_p', ['L_p'].concat(sim), ['#9467bd', '#7f7f7f'], false);
      psdPlot(document.getElementById('plot-psd'));
    }
    rollButton();
    if (linked && linked.t0 >= meta.duration) {
      await load(0, meta.duration);   // a link past the run's end: the whole run
    } else if (linked) {
      await load(linked.t0, Math.min(meta.duration, linked.t1), firstWindow);
    } else {
      await load(0, meta.duration, firstWindow);
    }
    if (state.error) return;
    if (loading) loading.hidden = true;
    state.drawnMs = performance.now();   // from the navigation's start
    state.ready = true;
    showRatios();
    showAnswer();
  }

  // each impact's ratio's standard error as a bar (bars: 1 sd), inside
  // the plot's frame; returns how many were drawn
  function drawBars(u, x, y, se) {
    const ctx = u.ctx, bb = u.bbox;
    let n = 0;
    ctx.save();
    ctx.beginPath();
    ctx.rect(bb.left, bb.top, bb.width, bb.height);
    ctx.clip();
    ctx.strokeStyle = '#1f77b4';
    ctx.lineWidth = devicePixelRatio;
    ctx.beginPath();
    for (let i = 0; i < x.length; i++) {
      if (!(se[i] > 0)) continue;
      const px = Math.round(u.valToPos(x[i], 'x', true));
      ctx.moveTo(px, u.valToPos(y[i] - se[i], 'y', true));
      ctx.lineTo(px, u.valToPos(y[i] + se[i], 'y', true));
      n++;
    }
    ctx.stroke();
    ctx.restore();
    return n;
  }

  // The run's central measurement: each impact's omega+/omega- against
  // omega- just before it, its standard error as a bar, and each law's
  // ratio (model/validate/ratio.h) as a line across: dashed the
  // line-impact law's, dotted the plastic law's, as in the report; the
  // legend's markers are drawn as the lines are.  The note beside it
  // gives the numbers and says what the bars are.
  async function showRatios() {
    const el = document.getElementById('plot-ratio'), note = document.getElementById('ratio-note');
    if (!el) return;
    let d;
    try {
      d = await getJson(`/api/run/${run}/ratios`);
    } catch (e) {
      note.textContent = 'loading the impacts failed: ' + e.message;
      state.ratio = { error: e.message };
      return;
    }
    const pts = d.impacts.slice().sort((p, q) => p[0] - q[0]);
    const x = pts.map(p => p[0]), y = pts.map(p => p[1]), se = pts.map(p => p[2]);
    const laws = [['line-impact law', d.line, '#d62728', [10, 6], 'dashed'],
                  ['plastic law', d.plastic, '#2ca02c', [2, 4], 'dotted']].filter(l => l[1] !== null);
    const dot = { show: true, size: 5, width: 1, stroke: '#1f77b4', fill: '#1f77b4' };
    const series = [{ label: '\u03c9- (rad/s)' },
                    { label: 'impacts (bars: 1 sd)', stroke: '#1f77b4', width: 0, paths: () => null, points: dot }];
    const data = [x, y];
    for (const [label, r, colour, dash] of laws) {
      series.push({ label, stroke: colour, width: 1.5, dash, points: { show: false } });
      data.push(x.map(() => r));
    }
    const markers = ['solid', 'solid'].concat(laws.map(l => l[4]));
    state.ratio = { points: x.length, total: d.total, bars: 0, line: d.line, plastic: d.plastic,
                    laws: laws.map(l => l[0] + ' (' + l[4] + ')') };
    state.ratio.plot = new uPlot({
      title: 'Impact ratio \u03c9+/\u03c9- of each impact against \u03c9- just before it',
      width: width(), height: 260,
      scales: { x: { time: false } },
      axes: [{ label: '\u03c9- just before the impact (rad/s)', values: tickLabels },
             { label: '\u03c9+/\u03c9-', values: tickLabels, size: 80 }],
      series,
      legend: { markers: { dash: (u, i) => markers[i] } },
      hooks: { draw: [u => { state.ratio.bars = drawBars(u, x, y, se); }] },
    }, data, el);
    const f = v => v === null ? 'none' : v.toFixed(5);
    note.textContent = `Each point one impact (${x.length} of ${d.total}): \u03c9+/\u03c9- against \u03c9- ` +
      `just before it; bars: \u00b11 sd of that impact's ratio (from its tops' fits scaled to the ` +
      `run's noise).  Lines: what each law predicts for this prism, line-impact law ${f(d.line)} ` +
      `(dashed), plastic law ${f(d.plastic)} (dotted).  Measured mean ${f(d.mean)}` +
      (d.mean_se === null ? '' : ` \u00b1 ${d.mean_se.toPrecision(2)} (1 sd of the mean)`) + '.';
  }

  // the validation's section (verdict, each law's lambda0, the report),
  // asked for once the plots are drawn: it simulates both laws again
  async function showAnswer() {
    const el = document.getElementById('validation');
    if (!el) return;
    try {
      const asked = performance.now();
      const r = await fetch(`/api/run/${run}/answer`);
      const text = await r.text();
      if (!r.ok) throw new Error(text);
      el.innerHTML = text;   // the server's markup, its text escaped there
      state.answer = 'shown';
      // a command is processing or validating the run now: ask again
      // until it is done, so the verdict appears without a reload; each
      // answer simulates both laws again on the server, so a long run's
      // (hundreds of ms) is asked at most a tenth of the time
      if (document.getElementById('under-way')) {
        state.answer = 'under way';
        setTimeout(showAnswer, Math.max(1000, 10 * (performance.now() - asked)));
      }
    } catch (e) {
      el.lastElementChild.textContent = 'loading the validation failed: ' + e.message;
      state.answer = 'failed';
    }
  }
  start();
})();
