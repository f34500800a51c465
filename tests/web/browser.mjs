// tests/web/browser.mjs - prismlab serve in a real browser (Debian's
// chromium driven by playwright-core).  Called by tests/web/browser_test.sh:
//   node tests/web/browser.mjs URL TOKEN SHOTS_DIR
// Checks, on the fixture database with a daemon recording from the rig
// simulator in real time:
//   - the runs page lists every fixture run;
//   - a run page shows a loading sign until its plots are drawn (its first
//     window held back to see it), shows its data quality as a badge (and
//     its faults; a suspect run's badge, its meaning and its fault in
//     words), draws its four plots, shows its impacts, and a drag on
//     a plot asks for the zoomed window and gets finer data (fewer frames
//     a column), down to full-rate samples, the impacts' table following;
//   - an experiment's page is its validation report, every figure loaded;
//   - the live page shows the recording's blocks soon after the daemon
//     read them; its arm button arms the daemon (and its reply "ok armed"
//     goes once the run records), its stop button stops it;
//   - 4 live pages at once while a run records: every page gets its
//     blocks (the daemon side, no frame lost, is checked by the script);
//   - no console error and no uncaught exception on any page.
// Prints "browser: ..." lines the script greps; exits 1 on the first failure.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [url, token, shots] = process.argv.slice(2);
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'prismlab-chromium-'));
const problems = [];
let ctx;

function fail(msg) {
  console.error('browser: FAIL ' + msg);
  throw new Error(msg);
}

function watch(page, name) {
  page.on('console', m => { if (m.type() === 'error') problems.push(`${name}: console error: ${m.text()}`); });
  page.on('pageerror', e => problems.push(`${name}: uncaught: ${e.message}`));
}

async function openPage(name, where) {
  const page = await ctx.newPage();
  watch(page, name);
  const r = await page.goto(url + where);
  if (!r.ok()) fail(`${where}: HTTP ${r.status()}`);
  return page;
}

async function main() {
  ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true,
    viewport: { width: 1200, height: 900 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage',
           // four pages stand for four browsers on four screens: none is a
           // background tab whose timers and frames Chromium throttles
           '--disable-background-timer-throttling', '--disable-renderer-backgrounding',
           '--disable-backgrounding-occluded-windows'],
  });

  // the runs
  const runs = await openPage('runs', '');
  const rows = await runs.locator('#runs tbody tr').count();
  const listed = await runs.locator('#runs').getAttribute('data-count');
  console.log(`browser: runs page lists ${rows} runs (data-count ${listed})`);
  if (rows !== +listed || rows < 17) fail(`runs page: ${rows} rows`);
  await runs.screenshot({ path: path.join(shots, 'web-runs.png') });

  // a run: the loading sign while its data is on the way (the first
  // window held back here), then plots, impacts, zoom
  const run = await ctx.newPage();
  watch(run, 'run');
  let release;
  const held = new Promise(r => { release = r; });
  await run.route('**/api/run/1/window*', async route => { await held; await route.continue(); });
  const r1 = await run.goto(url + 'run/1');
  if (!r1.ok()) fail(`run/1: HTTP ${r1.status()}`);
  const signShown = await run.locator('#loading').isVisible();
  const signText = await run.locator('#loading').textContent();
  const readyEarly = await run.evaluate(() => window.plRun.ready);
  release();
  await run.waitForFunction(() => window.plRun && (window.plRun.ready || window.plRun.error), null, { timeout: 20000 });
  await run.unroute('**/api/run/1/window*');
  const signAfter = await run.locator('#loading').isVisible();
  console.log(`browser: run 1 loading sign '${signText.trim()}' shown while loading: ${signShown}, ` +
              `after drawing: ${signAfter}`);
  if (!signShown || readyEarly || signAfter) fail('run page: the loading sign is not shown until the plots are drawn');
  let st = await run.evaluate(() => window.plRun);
  if (st.error) fail('run page: ' + st.error);
  await run.waitForFunction(() => window.plRun.table, null, { timeout: 10000 });
  st = await run.evaluate(() => window.plRun);
  const canvases = await run.locator('#plots canvas').count();
  const impactRows = await run.locator('#impacts tbody tr').count();
  const impactCount = +(await run.locator('#impacts').getAttribute('data-count'));
  console.log(`browser: run 1 draws ${canvases} plots, ${st.impacts} impacts (table ${impactRows} rows ` +
              `of ${impactCount}); whole run: ${st.last.n} columns, full=${st.last.full}`);
  if (canvases < 4) fail(`run page: ${canvases} plots drawn`);
  if (st.impacts < 10 || impactCount !== st.impacts || impactRows !== Math.min(st.impacts, 200))
    fail(`run page: ${st.impacts} impacts, ${impactRows} rows of ${impactCount}`);
  if (st.last.full) fail('the whole run came at full rate');
  const badge = await run.locator('#quality .badge').textContent();
  const faultItems = await run.locator('#faults li').count();
  console.log(`browser: run 1 quality ${badge}, ${faultItems} faults listed`);
  if (!['good', 'degraded'].includes(badge) || badge !== st.quality)
    fail(`run page: quality badge '${badge}', meta says '${st.quality}'`);
  if (faultItems !== st.faults.length) fail(`run page: ${faultItems} faults listed of ${st.faults.length}`);
  // run 2 marked suspect by browser_test.sh: the badge, what it means, the fault in words
  const sus = await ctx.newPage();
  await sus.goto(url + 'run/2');
  await sus.locator('#quality .badge').waitFor({ timeout: 15000 });
  const susBadge = await sus.locator('#quality .badge').textContent();
  const susText = await sus.locator('#quality').textContent();
  const susFaults = await sus.locator('#faults li').allTextContents();
  console.log(`browser: run 2 quality ${susBadge}: ${susFaults.join(' / ')}`);
  if (susBadge !== 'suspect' || !/do not trust/.test(susText) ||
      !susFaults.some(f => /0\.9094 around 4\.555 s/.test(f)))
    fail(`run page of a suspect run: badge '${susBadge}', '${susText}'`);
  await sus.close();
  await run.screenshot({ path: path.join(shots, 'web-run.png'), fullPage: false });
  const over = run.locator('#plot-vp .u-over');
  await over.scrollIntoViewIfNeeded();   // below the validation's table
  const box = await over.boundingBox();
  const perColumn = s => (s.t1 - s.t0) * 10000 / s.n;
  let before = st;
  // two drags: 30 %..40 % of the plot, then 45 %..50 % of that
  for (const [a, b] of [[0.30, 0.40], [0.45, 0.50]]) {
    const span = before.last.t1 - before.last.t0;
    await run.mouse.move(box.x + a * box.width, box.y + box.height / 2);
    await run.mouse.down();
    await run.mouse.move(box.x + b * box.width, box.y + box.height / 2, { steps: 5 });
    await run.mouse.up();
    await run.waitForFunction(w => window.plRun.last.t1 - window.plRun.last.t0 < 0.5 * w, span,
                              { timeout: 10000 }).catch(() => fail('the drag did not load a narrower window'));
    const now = await run.evaluate(() => window.plRun);
    console.log(`browser: zoom to ${now.last.t0.toFixed(4)}..${now.last.t1.toFixed(4)} s: ` +
                `${now.last.n} columns, ${perColumn(now.last).toFixed(2)} frames a column, full=${now.last.full}`);
    if (!(now.last.t1 - now.last.t0 < before.last.t1 - before.last.t0)) fail('the zoom did not narrow the window');
    if (!(perColumn(now.last) < perColumn(before.last))) fail('the zoomed window is not finer');
    // the impacts' table follows: it starts at the first impact in view
    await run.waitForFunction(t0 => {
      const row = document.querySelector('#impacts tbody tr');
      return row && +row.cells[1].textContent >= t0 - 1e-5;
    }, now.last.t0, { timeout: 10000 }).catch(() => fail('the impacts table did not follow the zoom'));
    const firstRow = await run.locator('#impacts tbody tr').first().locator('td').allTextContents();
    console.log(`browser: impacts table from #${firstRow[0]} at ${firstRow[1]} s`);
    before = now;
  }
  if (!before.last.full) fail('a window of ~450 frames did not come at full rate');
  await run.screenshot({ path: path.join(shots, 'web-run-zoom.png') });

  // an experiment: the validation report
  const exp = await openPage('experiment', 'experiment/fig8/');
  await exp.waitForFunction(() => {
    const c = document.getElementById('check');
    return c && c.dataset.images !== 'pending';
  }, null, { timeout: 60000 });
  const images = await exp.locator('#check').getAttribute('data-images');
  console.log(`browser: experiment fig8: report with images ${images}`);
  const [ok, all] = images.split('/').map(Number);
  if (!(all >= 5 && ok === all)) fail(`experiment page: images ${images}`);
  await exp.screenshot({ path: path.join(shots, 'web-experiment.png') });

  // live: arm, see the recording, stop
  const live = await openPage('live', 'live?token=' + token);
  await live.waitForFunction(() => window.plLive && window.plLive.state === 'idle', null, { timeout: 10000 });
  await live.click('#arm');
  await live.waitForFunction(() => window.plLive.state === 'recording', null, { timeout: 15000 });
  // the arm's reply goes once the daemon records: the page shows the
  // daemon's state, not "ok armed" for the rest of the run
  await live.waitForFunction(() => !/ok armed/.test(document.getElementById('reply').textContent),
                             null, { timeout: 3000 })
    .catch(async () => fail(`live: recording, but the reply still says '${await live.locator('#reply').textContent()}'`));
  const b0 = await live.evaluate(() => window.plLive.drawn);
  await live.waitForTimeout(2000);
  let lv = await live.evaluate(() => window.plLive);
  const lat = lv.latencies.slice(-Math.max(1, lv.drawn - b0)).sort((x, y) => x - y);
  const median = lat[lat.length >> 1], worst = lat[lat.length - 1];
  console.log(`browser: live: ${lv.drawn - b0} blocks drawn in 2 s while recording run ${lv.run}; ` +
              `read-to-draw median ${median.toFixed(0)} ms, worst ${worst.toFixed(0)} ms`);
  if (lv.drawn - b0 < 20) fail('live: fewer than 20 blocks (of 40) drawn in 2 s');
  // live, not replayed: a block is drawn within a second of its read
  if (median > 1000) fail(`live: blocks drawn ${median} ms after their read`);
  await live.screenshot({ path: path.join(shots, 'web-live.png') });
  await live.click('#stop');
  await live.waitForFunction(() => /ok stopped run=\d+/.test(document.getElementById('reply').textContent),
                             null, { timeout: 10000 });
  const stopped = await live.locator('#reply').textContent();
  await live.waitForFunction(() => window.plLive.state === 'idle', null, { timeout: 10000 });
  console.log(`browser: live: stop button: '${stopped}', daemon idle`);

  // four live pages while a run records (the script checks the run)
  const four = [live];
  for (let i = 1; i < 4; i++) four.push(await openPage('live' + i, 'live?token=' + token));
  for (const p of four) await p.waitForFunction(() => window.plLive.state === 'idle', null, { timeout: 10000 });
  const counts0 = await Promise.all(four.map(p => p.evaluate(() => window.plLive.drawn)));
  await four[1].click('#start');
  await live.waitForFunction(() => window.plLive.state === 'recording', null, { timeout: 10000 });
  const recorded = await live.evaluate(() => window.plLive.run);
  await live.waitForFunction(() => window.plLive.state === 'idle', null, { timeout: 30000 });
  const counts = await Promise.all(four.map(p => p.evaluate(() => window.plLive.drawn)));
  const gaps = await Promise.all(four.map(p => p.evaluate(() => window.plLive.gaps)));
  const got = counts.map((c, i) => c - counts0[i]);
  console.log(`browser: 4 live pages during run ${recorded}: ` +
              `blocks drawn ${got.join(', ')}; lines the daemon dropped for them ${gaps.join(', ')}`);
  if (got.some(c => c < 40)) fail('a live page drew fewer than 40 blocks (2 s) of the run');

  if (problems.length) fail(problems.join('; '));
  console.log('browser: no console errors');
}

try {
  await main();
} catch (e) {
  if (!String(e.message).startsWith('browser:')) console.error('browser: FAIL ' + e.message);
  process.exitCode = 1;
} finally {
  if (ctx) await ctx.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
