// tests/web/live_bench.mjs - the live page's figures, for make bench
// (tests/bench/web_live_bench.sh starts the daemon and the server):
//   node tests/web/live_bench.mjs URL TOKEN SECONDS DAEMON_PID
// Opens 4 live pages in Debian's chromium, starts a run from the first
// page's button, and over SECONDS of recording measures the delay from
// the daemon's read of each block (the stamp in its D line) to the page's
// drawing of it, the daemon's CPU time (/proc/PID/stat), and what the
// live search's physics costs the pages: impacts and track events a
// second, the time of physics.js a second of one page, and the time the
// page's main thread was busy (Chrome's TaskDuration).  Prints
// `name: value unit` lines.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [url, token, seconds, pid] = process.argv.slice(2);
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'prismlab-chromium-'));
const hz = 100;   // USER_HZ of /proc/PID/stat on Linux

function cpu() {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (+f[11] + +f[12]) / hz;   // utime + stime, s
}

const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium', headless: true, viewport: { width: 1200, height: 900 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage',
           // four pages stand for four browsers on four screens: none is a
           // background tab whose timers and frames Chromium throttles
           '--disable-background-timer-throttling', '--disable-renderer-backgrounding',
           '--disable-backgrounding-occluded-windows'],
});
try {
  const pages = [];
  for (let i = 0; i < 4; i++) {
    const p = await ctx.newPage();
    await p.goto(url + 'live?token=' + token);
    await p.waitForFunction(() => window.plLive && window.plLive.state === 'idle', null, { timeout: 15000 });
    pages.push(p);
  }
  await pages[0].click('#start');
  await pages[0].waitForFunction(() => window.plLive.state === 'recording', null, { timeout: 10000 });
  await new Promise(r => setTimeout(r, 1000));   // settle
  const cdps = await Promise.all(pages.map(async p => {
    const c = await ctx.newCDPSession(p);
    await c.send('Performance.enable');
    return c;
  }));
  const physics = () => Promise.all(pages.map(async (p, i) => {
    const m = (await cdps[i].send('Performance.getMetrics')).metrics;
    // a build without the live physics (the A of an A/B) counts nothing
    const ph = (await p.evaluate(() => window.plLive.physics)) || { busyMs: 0, impacts: 0 };
    return { task: m.find(x => x.name === 'TaskDuration').value, busy: ph.busyMs, impacts: ph.impacts,
             points: ph.trackPoints };
  }));
  const p0 = await physics();
  const n0 = await Promise.all(pages.map(p => p.evaluate(() => window.plLive.latencies.length)));
  const a0 = await Promise.all(pages.map(p => p.evaluate(() => window.plLive.arrivals.length)));
  const c0 = cpu(), t0 = process.hrtime.bigint();
  await new Promise(r => setTimeout(r, 1000 * +seconds));
  const c1 = cpu(), t1 = process.hrtime.bigint();
  const p1 = await physics();
  const lat = [], arr = [];
  for (let i = 0; i < 4; i++) {
    const a = await pages[i].evaluate(() => window.plLive.arrivals);
    arr.push(...a.slice(a0[i]));
    const l = await pages[i].evaluate(() => window.plLive.latencies);
    lat.push(...l.slice(n0[i]));   // the blocks drawn during the window
  }
  const state = await pages[0].evaluate(() => window.plLive.state);
  await pages[0].click('#stop');
  lat.sort((a, b) => a - b);
  arr.sort((a, b) => a - b);
  const q = f => lat[Math.min(lat.length - 1, Math.floor(f * lat.length))];
  const qa = f => arr[Math.min(arr.length - 1, Math.floor(f * arr.length))];
  const wall = Number(t1 - t0) / 1e9;
  if (state !== 'recording') console.error(`live_bench: the run ended before the window closed (${state})`);
  console.log(`web_live_latency_median: ${q(0.5).toFixed(1)} ms`);
  console.log(`web_live_latency_p95: ${q(0.95).toFixed(1)} ms`);
  console.log(`web_live_latency_max: ${lat[lat.length - 1].toFixed(1)} ms`);
  console.log(`web_live_arrival_median: ${qa(0.5).toFixed(1)} ms`);
  console.log(`web_live_arrival_p95: ${qa(0.95).toFixed(1)} ms`);
  console.log(`daemon_cpu_4_live_clients: ${(100 * (c1 - c0) / wall).toFixed(2)} %`);
  const mean = f => p0.reduce((a, x, i) => a + f(x, p1[i]), 0) / p0.length;
  console.log(`web_live_impacts_per_s: ${mean((a, b) => (b.impacts - a.impacts) / wall).toFixed(1)} /s`);
  console.log(`web_live_physics_js: ${mean((a, b) => (b.busy - a.busy) / wall).toFixed(2)} ms/s`);
  console.log(`web_live_page_busy: ${mean((a, b) => 100 * (b.task - a.task) / wall).toFixed(1)} %`);
  console.error(`live_bench: ${lat.length} blocks drawn by 4 pages over ${wall.toFixed(1)} s`);
} finally {
  await ctx.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
