// web/static/physics.js - the live page's physics: the daemon's online
// impact search (its "E {json}" lines, relayed by /api/live as `physics`
// events; acquire/live.h lists them) drawn while the prism rolls: omega
// and L_p against the run's time from the `track` events, a tick for each
// `impact` (its ratio written by it where there is room), the newest
// impacts listed, one line for each notice (finding, pace, paused, a run
// not searched) and the search's summary at the stop.  live.js makes it
// with plPhysics(live) and feeds it; what the tests read goes in
// live.physics (impacts received, ticks drawn, track points, the stop;
// busyMs, the time this code has taken, for the bench).
'use strict';
window.plPhysics = function (live) {
  const KEEP = 12000;      // track points kept: 120 s at the search's 10 ms
  const LISTED = 8;        // newest impacts in the table
  const EVERY_MS = 250;    // redraws at most this often (4 a second; docs/web.md)
  const ph = live.physics = { run: -1, impacts: 0, ticksDrawn: 0, trackPoints: 0, lastRatio: null,
                              release: null, stop: null, notices: 0, gaps: 0, joined: false, busyMs: 0 };
  const t = [], om = [], lp = [];
  let marks = [];          // impacts still inside the track kept: {t, ratio, confirmed}
  let newest = [];         // the last LISTED impacts' events
  const stateEl = document.getElementById('physics-state');
  const noticeEl = document.getElementById('notices');
  const bodyEl = document.querySelector('#impacts-live tbody');
  const summaryEl = document.getElementById('summary');
  const el = document.getElementById('plot-physics');

  const num = (x, d) => (x === null || x === undefined || !isFinite(x) ? '-' : (+x).toFixed(d));
  // a standard error or sd in two figures, as the run page's table
  const sig = x => (x === null || x === undefined || !isFinite(x) ? '-' : (+x).toPrecision(2));

  // Ticks along the plot's top edge, the ratio under one where the last
  // label is at least 56 px away; the release a dashed line.
  function drawMarks(u) {
    const ctx = u.ctx, top = u.bbox.top, r = devicePixelRatio || 1;
    const x0 = u.scales.x.min, x1 = u.scales.x.max;
    let drawn = 0, lastLabel = -Infinity;
    ctx.save();
    ctx.font = `${10 * r}px sans-serif`;
    ctx.textAlign = 'center';
    for (const confirmed of [1, 0]) {
      ctx.beginPath();
      ctx.strokeStyle = confirmed ? '#222' : '#aaa';
      ctx.lineWidth = r;
      for (const m of marks) {
        if ((m.confirmed === 1) !== (confirmed === 1) || m.t < x0 || m.t > x1) continue;
        const x = u.valToPos(m.t, 'x', true);
        ctx.moveTo(x, top);
        ctx.lineTo(x, top + 12 * r);
        drawn++;
      }
      ctx.stroke();
    }
    ctx.fillStyle = '#222';
    for (const m of marks) {
      if (m.t < x0 || m.t > x1 || m.ratio === null) continue;
      const x = u.valToPos(m.t, 'x', true);
      if (x - lastLabel < 56 * r) continue;
      ctx.fillText(m.ratio.toFixed(4), x, top + 24 * r);
      lastLabel = x;
    }
    if (ph.release !== null && ph.release >= x0 && ph.release <= x1) {
      const x = u.valToPos(ph.release, 'x', true);
      ctx.setLineDash([4 * r, 4 * r]);
      ctx.strokeStyle = '#888';
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, top + u.bbox.height);
      ctx.stroke();
    }
    ctx.restore();
    ph.ticksDrawn = drawn;
  }

  let drawStart = 0;
  function xRange(lo, hi) {
    if (marks.length) {
      lo = lo === null ? marks[0].t : Math.min(lo, marks[0].t);
      hi = hi === null ? marks[marks.length - 1].t : Math.max(hi, marks[marks.length - 1].t);
    }
    if (lo === null || hi === null) return [0, 1];
    return hi > lo ? [lo, hi] : [lo - 0.5, lo + 0.5];
  }

  const plot = new uPlot({
    title: 'omega and L_p as the live search finds them (ticks: impacts, with their ratio)',
    width: Math.max(300, el.clientWidth - 20), height: 260,
    // the x range takes in every impact kept, even one past the track
    // and omega's headroom keeps the ticks and their labels off its line
    scales: { x: { time: false, range: (u, lo, hi) => xRange(lo, hi) },
              omega: { range: (u, lo, hi) => [Math.min(0, lo), Math.max(1, hi) * 1.35] }, lp: {} },
    axes: [{ label: 'time since the run started (s)' }, { scale: 'omega', label: 'omega (rad/s)' },
           { scale: 'lp', side: 1, label: 'L_p (line impacts)', grid: { show: false } }],
    series: [{ label: 't (s)' },
             { label: 'omega (rad/s)', scale: 'omega', stroke: '#2ca02c', width: 1, points: { show: false } },
             { label: 'L_p', scale: 'lp', stroke: '#9467bd', width: 1, points: { show: false } }],
    // uPlot draws in a microtask after setData: its time is taken here
    hooks: { drawClear: [() => { drawStart = performance.now(); }],
             draw: [u => { drawMarks(u); ph.busyMs += performance.now() - drawStart; }] },
  }, [t, om, lp], el);

  function notice(key, cls, text) {
    let li = key && noticeEl.querySelector(`li[data-key="${CSS.escape(key)}"]`);
    if (!li) {
      li = document.createElement('li');
      if (key) li.dataset.key = key;
      noticeEl.append(li);
      ph.notices++;
    }
    li.className = cls;
    li.textContent = text;
  }

  function reset(run, joined) {
    for (const a of [t, om, lp]) a.length = 0;
    marks = [];
    newest = [];
    Object.assign(ph, { run, impacts: 0, ticksDrawn: 0, trackPoints: 0, lastRatio: null, release: null,
                        stop: null, notices: 0, gaps: 0, joined });
    noticeEl.textContent = '';
    summaryEl.textContent = '';
    bodyEl.textContent = '';
    dirty = true;
  }

  function stateText() {
    let s = `run ${ph.run}: ${ph.impacts} impact${ph.impacts === 1 ? '' : 's'}`;
    if (ph.release !== null) s += `, released at ${num(ph.release, 2)} s`;
    if (ph.lastRatio !== null) s += `; newest ratio ${num(ph.lastRatio, 5)}`;
    if (ph.joined) s += ' (this page joined during the run: earlier impacts are not shown)';
    return s;
  }

  function table() {
    const rows = [];
    for (let i = newest.length - 1; i >= 0; i--) {
      const e = newest[i], tr = document.createElement('tr');
      const cells = [num(e.t_s, 3), `${num(e.ratio, 5)} ± ${sig(e.ratio_se)}` + (e.confirmed === 1 ? '' : ' (unconfirmed)'),
                     `${num(e.omega_minus, 3)} → ${num(e.omega_plus, 3)}`, num(e.lp, 2),
                     num(e.latency_s === null ? null : 1e3 * e.latency_s, 0)];
      for (const c of cells) {
        const td = document.createElement('td');
        td.textContent = c;
        tr.append(td);
      }
      rows.push(tr);
    }
    bodyEl.replaceChildren(...rows);
  }

  // Drawn from the events (as the traces: timers, not animation frames),
  // at most every EVERY_MS, whatever the rate of impacts.
  let dirty = false, lastDraw = 0, timer = null;
  function draw() {
    timer = null;
    if (!dirty) return;
    const t0 = performance.now();
    dirty = false;
    lastDraw = Date.now();
    plot.setData([t, om, lp]);
    stateEl.textContent = ph.run < 0 ? 'no run searched yet' : stateText();
    table();
    ph.busyMs += performance.now() - t0;
  }
  function schedule() {
    dirty = true;
    if (timer) return;
    timer = setTimeout(draw, Math.max(0, EVERY_MS - (Date.now() - lastDraw)));
  }

  function onTrack(e) {
    const last = t.length ? t[t.length - 1] : -Infinity;
    for (let j = 0; j < e.omega.length; j++) {
      const x = e.t0_s + j * e.dt_s;
      if (x <= last) continue;   // a stretch already drawn
      t.push(x); om.push(e.omega[j]); lp.push(e.lp[j]);
    }
    if (t.length > KEEP) {
      const cut = t.length - KEEP;
      for (const a of [t, om, lp]) a.splice(0, cut);
      marks = marks.filter(m => m.t >= t[0]);
    }
    ph.trackPoints = t.length;
  }

  function onImpact(e) {
    ph.impacts++;
    if (e.ratio !== null) ph.lastRatio = e.ratio;
    marks.push({ t: e.t_s, ratio: e.ratio, confirmed: e.confirmed });
    newest.push(e);
    if (newest.length > LISTED) newest.shift();
  }

  function onStop(e) {
    ph.stop = e;
    let s = `run ${e.run} ended (${e.why}): ${e.impacts} impacts, L_p ${num(e.lp, 2)}, ` +
            `ratio ${num(e.ratio_mean, 5)} ± ${sig(e.ratio_sd)} (sd of the confirmed impacts), ` +
            `latency median ${num(e.latency_median_s === null ? null : 1e3 * e.latency_median_s, 0)} ms; ` +
            `${e.looks} looks, ${num(e.cpu_s, 2)} s of CPU.`;
    if (e.paused) s += ' The search paused during the run: these are its impacts up to then.';
    if (ph.impacts !== e.impacts)
      s += ` This page saw ${ph.impacts} of them (it joined late or lost lines).`;
    s += ' The stored result is processing of the whole run, as always.';
    summaryEl.textContent = s;
  }

  // An event ("E {json}"); a new run clears the last one's physics.
  function onEvent(line) {
    const t0 = performance.now();
    const e = JSON.parse(line.slice(2));
    if (e.run !== ph.run) reset(e.run, e.event !== 'start');
    switch (e.event) {
      case 'start':
        if (e.live === false) notice('start', 'warn', `not searched live: ${e.why}`);
        break;
      case 'release': ph.release = e.t_s; break;
      case 'impact': onImpact(e); break;
      case 'track': onTrack(e); break;
      case 'finding': notice('finding-' + e.kind, 'warn', `finding: ${e.text}`); break;
      case 'pace':
        notice('pace', 'hint', `the search now looks every ${num(e.look_s, 2)} s (${e.why})`);
        break;
      case 'paused':
        notice('paused', 'warn', `live search paused (${num(e.behind_s, 1)} s behind: ${e.why}); ` +
               'the recording goes on and is processed whole at the stop');
        break;
      case 'stop': onStop(e); break;
    }
    schedule();
    ph.busyMs += performance.now() - t0;
  }

  // n lines the daemon could not queue for this page: some may have been
  // impacts, so the count here may fall short of the daemon's
  function onGap(n) {
    if (ph.run < 0 || ph.stop) return;
    ph.gaps += n;
    notice('gap', 'warn', `this page lost ${ph.gaps} lines of the stream (it fell behind): ` +
           'impacts may be missing here; the recording is complete');
  }

  stateEl.textContent = 'no run searched yet';
  return { onEvent, onGap };
};
