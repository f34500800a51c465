// tests/web/live_impacts.mjs - the live page shows the physics while the
// prism rolls.  Called by tests/web/live_impacts_test.sh:
//   node tests/web/live_impacts.mjs URL TOKEN SHOTS
// Arms the daemon from the page's button; while the run records (the
// daemon's status says state=recording, no stop event yet) the page's
// impact ticks on the omega plot are counted twice, a second apart, and
// must be there and grow; the newest impact's ratio is read from the
// page's table (steel-38 on glass: near 0.996); the omega plot has
// points.  After the stop event, the ticks drawn and the page's count
// equal the stop event's `impacts`, and the summary says so.  Then, with
// SIG given, the same page sees a run the daemon does not search: it
// writes SIG.swap, the test script restarts the daemon with a rig naming
// no prism and writes SIG.swapped; armed again from the page, the new
// run clears the last one's physics and says why it is not searched.
// Prints "live_impacts: ..." lines; exits 1 on a failure or a console
// error.
import { session } from './harness.mjs';
import fs from 'node:fs';
import path from 'node:path';

const [url, token, shots, sig] = process.argv.slice(2);
const s = session('live_impacts');

// What the page shows now, and the daemon's state from the server.
async function sample(page) {
  return page.evaluate(async () => {
    const r = await fetch('/api/status');
    const st = await r.json();
    const ph = window.plLive.physics;
    const plot = window.__plots.find(u => u.series[1] && u.series[1].label.startsWith('omega'));
    const om = plot ? plot.data[1].filter(v => v !== null && v !== undefined) : [];
    const first = document.querySelector('#impacts-live tbody tr');
    return { status: st.reply || '', ticks: ph.ticksDrawn, impacts: ph.impacts, stop: ph.stop,
             omega: om.length, omegaMax: om.length ? Math.max(...om) : NaN,
             row: first ? [...first.cells].map(c => c.textContent) : null,
             state: document.getElementById('physics-state').textContent,
             summary: document.getElementById('summary').textContent };
  });
}

async function whileRecording() {
  const page = await s.ctx.newPage();
  page.on('console', m => { if (m.type() === 'error') s.problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', e => s.problems.push(`uncaught: ${e.message}`));
  const r = await page.goto(url + 'live?token=' + token);
  if (!r.ok()) s.fail(`live: HTTP ${r.status()}`);
  await page.waitForFunction(() => window.plLive && window.plLive.state === 'idle', null, { timeout: 15000 });
  await page.click('#arm');
  await page.waitForFunction(() => window.plLive.state === 'recording', null, { timeout: 20000 });
  // the first ticks drawn: the run still records
  await page.waitForFunction(() => window.plLive.physics && window.plLive.physics.ticksDrawn > 0,
                             null, { timeout: 20000 })
    .catch(() => s.fail('no impact drawn on the page within 20 s of the recording\'s start'));
  const a = await sample(page);
  console.log(`live_impacts: first sample: ${a.ticks} ticks drawn, ${a.impacts} impacts, status '${a.status.trim()}'`);
  if (!/\bstate=recording\b/.test(a.status)) s.fail(`the first ticks came after the recording: '${a.status}'`);
  if (a.stop) s.fail('the first ticks came with the stop event');
  await page.waitForFunction(n => window.plLive.physics.ticksDrawn > n, a.ticks, { timeout: 20000 })
    .catch(() => s.fail(`the ticks stayed at ${a.ticks}`));
  await page.waitForTimeout(300);   // a redraw apart, so the second count is a new drawing
  const b = await sample(page);
  console.log(`live_impacts: second sample: ${b.ticks} ticks drawn, ${b.impacts} impacts, ` +
              `${b.omega} omega points (max ${b.omegaMax.toFixed(2)} rad/s), status '${b.status.trim()}'`);
  console.log(`live_impacts: newest impact row: ${JSON.stringify(b.row)}; state '${b.state}'`);
  if (b.stop) s.fail('the second sample came after the stop event: the run is too short for two samples');
  if (!(b.ticks > a.ticks)) s.fail(`the ticks did not grow: ${a.ticks} then ${b.ticks}`);
  if (!(b.omega > 20) || !(b.omegaMax > 1)) s.fail(`the omega plot: ${b.omega} points, max ${b.omegaMax}`);
  const ratio = b.row ? parseFloat(b.row[1]) : NaN;
  if (!(Math.abs(ratio - 0.996) < 0.01)) s.fail(`the newest impact's ratio on the page: '${b.row && b.row[1]}'`);
  if (!/^\d\.\d{5} ± \d\.?\d*(e-\d+)?/.test(b.row[1])) s.fail(`no standard error by the ratio: '${b.row[1]}'`);

  await page.waitForFunction(() => window.plLive.physics.stop, null, { timeout: 30000 })
    .catch(() => s.fail('no stop event within 30 s'));
  const stop = (await sample(page)).stop;
  await page.waitForFunction(n => window.plLive.physics.ticksDrawn === n, stop.impacts, { timeout: 5000 })
    .catch(() => {});
  const c = await sample(page);
  console.log(`live_impacts: stop event: ${stop.impacts} impacts, ratio ${stop.ratio_mean} ± ${stop.ratio_sd}; ` +
              `the page: ${c.impacts} impacts, ${c.ticks} ticks drawn`);
  console.log(`live_impacts: summary '${c.summary}'`);
  if (!(stop.impacts > 50)) s.fail(`the stop event counts ${stop.impacts} impacts`);
  if (c.impacts !== stop.impacts || c.ticks !== stop.impacts)
    s.fail(`the page has ${c.impacts} impacts (${c.ticks} ticks drawn), the stop event ${stop.impacts}`);
  if (!c.summary.includes(`${stop.impacts} impacts`)) s.fail(`the summary: '${c.summary}'`);
  await page.screenshot({ path: path.join(shots, 'web-live-impacts.png'), fullPage: true });
  if (sig) await notSearched(page, stop.run);
}

// The daemon restarted with no prism named: the next run is not searched.
async function notSearched(page, last) {
  fs.writeFileSync(sig + '.swap', '');
  await page.waitForFunction(() => window.plLive.state === null, null, { timeout: 30000 })
    .catch(() => s.fail('the page did not see the daemon go'));
  for (let i = 0; i < 600 && !fs.existsSync(sig + '.swapped'); i++) await page.waitForTimeout(100);
  await page.waitForFunction(() => window.plLive.state === 'idle', null, { timeout: 30000 })
    .catch(() => s.fail('the page did not see the new daemon'));
  await page.click('#arm');
  await page.waitForFunction(r => window.plLive.physics.run > r, last, { timeout: 20000 })
    .catch(() => s.fail('no event of the next run'));
  await page.waitForFunction(() => /^run \d+: 0 impacts/.test(document.getElementById('physics-state').textContent),
                             null, { timeout: 5000 }).catch(() => {});
  const c = await sample(page);
  const notice = await page.locator('#notices li').allTextContents();
  console.log(`live_impacts: the next run: state '${c.state}', notices ${JSON.stringify(notice)}, ` +
              `${c.ticks} ticks, ${c.omega} omega points, summary '${c.summary}'`);
  if (!notice.some(n => n.startsWith('not searched live: no [run] prism')))
    s.fail(`no notice that the run is not searched: ${JSON.stringify(notice)}`);
  if (c.impacts || c.ticks || c.omega || c.row || c.summary)
    s.fail('the last run\'s physics is still shown');
}

await s.run([whileRecording]);
