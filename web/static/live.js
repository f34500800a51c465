// web/static/live.js - the live page of prismlab serve: the daemon's
// stream (server-sent events from /api/live) drawn as both channels'
// levels and the last 10 s of their traces (min/max of each millisecond),
// the daemon's state, and arm / start / stop when the server runs with
// --control (the token comes from this page's URL, ?token=...).  With the
// rig's after-run pipeline ([pipeline] after_run), what it does and a link
// to the last run whose verdict is stored (the S line's verdict_run).
// The live search's events (`physics`) go to physics.js.
// window.plLive holds what the tests read: blocks drawn, the latency from
// the daemon's read of a block to its draw, gaps, the state, verdictRun.
'use strict';
(function () {
  const SPAN = 10;   // seconds shown
  const stateEl = document.getElementById('state');
  const replyEl = document.getElementById('reply');
  const latEl = document.getElementById('latency');
  const control = document.getElementById('daemon').dataset.control === '1';
  const params = new URLSearchParams(location.search);
  if (params.get('token')) sessionStorage.setItem('prismlab-token', params.get('token'));
  const token = sessionStorage.getItem('prismlab-token');
  // made here rather than in the page's HTML: the link is this script's alone
  const verdictEl = document.createElement('a');
  verdictEl.id = 'verdict';
  stateEl.after(' ', verdictEl);
  const live = window.plLive = { blocks: 0, drawn: 0, gaps: 0, state: null, run: -1, verdictRun: -1, pipeline: null,
                                 latencies: [], arrivals: [], maxLatency: 0, lastFrame: -1, connected: false };
  const t = [], mn1 = [], mx1 = [], mn2 = [], mx2 = [];
  let pendingStamps = [];
  let dirty = false;

  const el = document.getElementById('plot-live');
  const plot = new uPlot({
    title: 'v_p1, v_p2 as the daemon reads them (m/s)',
    width: Math.max(300, el.clientWidth - 20), height: 300,
    scales: { x: { time: false } },
    axes: [{ label: 'time since the source opened (s)' }, { label: 'm/s' }],
    series: [{ label: 't (s)' },
             { label: 'v_p1', stroke: '#1f77b4', width: 1, points: { show: false } },
             { label: 'v_p1 max', stroke: '#1f77b4', width: 1, points: { show: false } },
             { label: 'v_p2', stroke: '#d62728', width: 1, points: { show: false } },
             { label: 'v_p2 max', stroke: '#d62728', width: 1, points: { show: false } }],
    bands: [{ series: [2, 1], fill: '#1f77b433' }, { series: [4, 3], fill: '#d6272833' }],
  }, [t, mn1, mx1, mn2, mx2], el);

  function level(i, v) {
    const m = document.getElementById('level' + i);
    m.classList.remove('nodaemon');
    m.value = v;
    document.getElementById('value' + i).textContent = v.toFixed(4);
  }
  // no daemon: nothing measured, so no level (a bar at 0 m/s sits half full)
  function noLevel(why) {
    for (const i of [1, 2]) {
      const m = document.getElementById('level' + i);
      m.value = m.min;
      m.classList.add('nodaemon');
      document.getElementById('value' + i).textContent = why;
    }
  }

  // Drawn from the event itself (not from requestAnimationFrame, which a
  // page Chromium deems hidden delays up to a second), at most every 40 ms.
  let lastDraw = 0, timer = null;
  function draw() {
    timer = null;
    if (!dirty) return;
    dirty = false;
    plot.setData([t, mn1, mx1, mn2, mx2]);
    const now = Date.now();
    lastDraw = now;
    for (const stamp of pendingStamps) {
      const ms = now - stamp;
      live.latencies.push(ms);
      if (ms > live.maxLatency) live.maxLatency = ms;
    }
    if (live.latencies.length > 2000) live.latencies.splice(0, live.latencies.length - 2000);
    live.drawn += pendingStamps.length;
    pendingStamps = [];
    const l = live.latencies.slice(-100).sort((a, b) => a - b);
    if (l.length) latEl.textContent = `From the daemon's read to this drawing: median ${l[l.length >> 1].toFixed(0)} ms, ` +
      `worst of the last ${l.length} blocks ${l[l.length - 1].toFixed(0)} ms.`;
  }
  function scheduleDraw() {
    if (timer) return;
    const wait = Math.max(0, 40 - (Date.now() - lastDraw));
    if (wait === 0) draw(); else timer = setTimeout(draw, wait);
  }

  // The plot keeps one column per MERGE groups (5 ms: 2000 columns for
  // 10 s, about two a pixel), so each redraw costs the same whatever the
  // rate; the levels show the newest millisecond.
  const MERGE = 5;
  let acc = null;
  function onData(line) {
    const f = line.split(' ');
    const stamp = +f[1], frame = +f[2], rate = +f[3], k = +f[4], n = +f[5];
    if (frame < live.lastFrame) {   // the source reopened
      for (const a of [t, mn1, mx1, mn2, mx2]) a.length = 0;
      acc = null;
    }
    live.lastFrame = frame;
    for (let g = 0; g < n; g++) {
      const b = 6 + 4 * g, start = frame + g * k;
      const col = Math.floor(start / (k * MERGE));
      if (!acc || acc.col !== col) {
        if (acc) { t.push(acc.t); mn1.push(acc.a); mx1.push(acc.b); mn2.push(acc.c); mx2.push(acc.d); }
        acc = { col, t: col * k * MERGE / rate, a: +f[b], b: +f[b + 1], c: +f[b + 2], d: +f[b + 3] };
      } else {
        acc.a = Math.min(acc.a, +f[b]); acc.b = Math.max(acc.b, +f[b + 1]);
        acc.c = Math.min(acc.c, +f[b + 2]); acc.d = Math.max(acc.d, +f[b + 3]);
      }
    }
    const last = 6 + 4 * (n - 1);
    level(1, (+f[last] + +f[last + 1]) / 2);
    level(2, (+f[last + 2] + +f[last + 3]) / 2);
    const keep = t.length && t[t.length - 1] - SPAN;
    let cut = 0;
    while (cut < t.length && t[cut] < keep) cut++;
    if (cut) for (const a of [t, mn1, mx1, mn2, mx2]) a.splice(0, cut);
    live.blocks++;
    live.arrivals.push(Date.now() - stamp);
    if (live.arrivals.length > 2000) live.arrivals.splice(0, live.arrivals.length - 2000);
    pendingStamps.push(stamp);
    dirty = true;
    scheduleDraw();
  }

  // the state a reply describes ("ok armed": armed), kept while it holds
  const REPLY_STATE = { armed: 'armed', started: 'recording', stopped: 'idle' };
  let replyState = null;

  function onStatus(line) {
    const kv = {};
    for (const p of line.split(' ').slice(1)) { const [k, v] = p.split('='); kv[k] = v; }
    if (kv.state !== live.state && replyState && kv.state !== replyState) {
      replyEl.textContent = '';
      replyState = null;
    }
    live.state = kv.state;
    live.run = +kv.run;
    stateEl.textContent = kv.state + (kv.state === 'recording' ? ` run ${kv.run}, ${kv.frames} frames` : '') +
      (+kv.overruns ? `, ${kv.overruns} overruns` : '') + (+kv.last_run > 0 ? ` (last run ${kv.last_run})` : '') +
      pipelineText(kv);
    live.pipeline = kv.pipeline || null;
    const vr = +kv.verdict_run;
    if (vr > 0 && vr !== live.verdictRun) {
      verdictEl.href = '/run/' + vr;
      verdictEl.textContent = `run ${vr}: verdict ready`;
    }
    live.verdictRun = vr > 0 ? vr : -1;
    const can = control && !!token;
    document.getElementById('arm').disabled = !can || kv.state !== 'idle';
    document.getElementById('start').disabled = !can || kv.state === 'recording';
    document.getElementById('stop').disabled = !can || kv.state === 'idle';
  }

  // "process:4" -> "; processing run 4"; a failed last run said as such
  function pipelineText(kv) {
    if (!kv.pipeline || kv.pipeline === 'off') return '';
    const [step, run] = kv.pipeline.split(':');
    let text = run ? `; ${step === 'process' ? 'processing' : 'validating'} run ${run}` : '';
    const [lastRun, how] = (kv.pipeline_last || '').split(':');
    if (how && how.endsWith('-failed')) text += `; run ${lastRun}: ${how.replace('-', ' ')}`;
    if (how === 'validate-partial') text += `; run ${lastRun}: validated in part (a fit failed)`;
    return text;
  }

  async function send(cmd) {
    replyEl.textContent = '...';
    try {
      const r = await fetch('/api/control/' + cmd, { method: 'POST', headers: { 'X-Prismlab-Token': token } });
      const text = await r.text();
      let msg = text;
      try { msg = JSON.parse(text).reply; } catch (e) { /* a plain-text error */ }
      replyEl.textContent = msg.trim();
      const m = /^ok (\w+)/.exec(msg.trim());
      replyState = m && REPLY_STATE[m[1]] ? REPLY_STATE[m[1]] : null;
      // a release may have started the run before the arm's reply came
      // (the other replies come before the state they name: kept)
      if (replyState === 'armed' && live.state === 'recording') {
        replyEl.textContent = '';
        replyState = null;
      }
    } catch (e) {
      replyEl.textContent = 'failed: ' + e.message;
    }
  }
  for (const cmd of ['arm', 'start', 'stop'])
    document.getElementById(cmd).addEventListener('click', () => send(cmd));
  if (!control) replyEl.textContent = 'read-only (prismlab serve --control enables the buttons)';
  else if (!token) replyEl.textContent = 'open the URL with the token prismlab serve printed';

  const es = new EventSource('/api/live');
  es.addEventListener('open', () => { live.connected = true; });
  es.addEventListener('data', e => onData(e.data));
  es.addEventListener('status', e => onStatus(e.data));
  const physics = window.plPhysics(live);
  es.addEventListener('physics', e => physics.onEvent(e.data));
  es.addEventListener('gap', e => { const n = +e.data.split(' ')[1]; live.gaps += n; physics.onGap(n); });
  es.addEventListener('nodaemon', e => { live.state = null; stateEl.textContent = e.data; noLevel('no daemon'); });
})();
