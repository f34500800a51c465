// tests/web/view.mjs - the web view's rough edges (issue 30, items 1, 2
// and 5), in Debian's chromium driven by playwright-core.  Called by
// tests/web/view_test.sh:  node tests/web/view.mjs URL SECRET
// (SECRET: a string, the database's folder, no page may show).  Checks:
//   - a missing run is an HTML 404 page for a browser, plain text for the
//     API, and neither names the server's path;
//   - the runs filter shows the experiment asked for, also one with no
//     runs or unknown ("all" only when it shows all);
//   - a run page carries the verdict, both laws' lambda0 (the plastic fit
//     flagged undetermined) and the link to the experiment's report;
//   - tick labels tell their ticks apart: the Welch spectrum's small
//     values and v_p zoomed into the quiet lead-in are never "0", and a
//     zoomed time axis has no two equal labels;
//   - the zoom is in the URL (#t0=..&t1=..) and a link reopens it; "zoom
//     to the roll" shows the release to the end; the loading sign shows
//     while a zoomed window is on its way;
//   - the live page with no daemon: level bars empty, greyed, "no daemon";
//   - a run some process is validating now (issue 45): its page says so,
//     with the process, above the validation before it, and once the
//     mark is gone (validate ended) the section shows the verdict alone
//     without a reload.  The mark is this node process's own, written
//     with sqlite3 into the served store (SECRET/lab.db).
// Prints "view: ..." lines; each check runs whatever the others gave (a
// failure is printed and the next goes on); exits 1 if any failed.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { session } from './harness.mjs';

const [url, secret] = process.argv.slice(2);
const s = session('view');
const { fail, problems } = s;

async function open(where, ok = true) {
  const page = await s.ctx.newPage();
  page.on('console', m => {
    // the 404 page's own load is the one error expected
    if (m.type() === 'error' && !/404/.test(m.text())) problems.push(`${where}: console error: ${m.text()}`);
  });
  page.on('pageerror', e => problems.push(`${where}: uncaught: ${e.message}`));
  const r = await page.goto(url + where);
  if (ok && !r.ok()) fail(`${where}: HTTP ${r.status()}`);
  return [page, r];
}

// labels that tell their values apart: none empty, none "0" for a value
// that is not 0, no two equal
function checkLabels(what, labels, splits) {
  if (!labels || labels.length < 2) fail(`${what}: no tick labels (${labels})`);
  const shown = labels.filter(l => l !== '');
  if (new Set(shown).size !== shown.length) fail(`${what}: equal labels ${labels.join(' ')}`);
  labels.forEach((l, i) => {
    if (splits && splits[i] !== 0 && /^-?0(\.0*)?$/.test(l)) fail(`${what}: ${splits[i]} labelled '${l}'`);
  });
  console.log(`view: ${what}: ${labels.join(' | ')}`);
}

// the labels (or the values: what 'splits') on axis k of the plot whose
// title starts with `title`, as last drawn
async function axis(page, title, k, what = 'values') {
  return page.evaluate(([t, a, w]) => {
    const u = window.__plots.find(p => (p.root.querySelector('.u-title') || {}).textContent.startsWith(t));
    const v = u && u.axes[a]['_' + w];
    return v ? v.slice() : null;
  }, [title, k, what]);
}
const PSD = 'Welch', VP = 'Gauge-point';

async function notFound() {
  // 404: a page for the browser, text for the API, no path in either
  const [nf, r404] = await open('run/999', false);
  const body = await nf.content();
  const type = r404.headers()['content-type'];
  const api = await nf.evaluate(async () => {
    const r = await fetch('/api/run/999/meta');
    return [r.status, r.headers.get('content-type'), await r.text()];
  });
  const why = await nf.locator('#why').count() ? (await nf.locator('#why').textContent()).trim() : body.slice(0, 80);
  console.log(`view: /run/999: ${r404.status()} ${type}, '${why}'; ` +
              `API ${api[0]} ${api[1]} '${api[2].trim()}'`);
  if (r404.status() !== 404 || !/^text\/html/.test(type) || !(await nf.locator('h1#error').count()))
    fail('a missing run is not an HTML 404 page');
  if (body.includes(secret) || api[2].includes(secret) || /\.db\b/.test(body + api[2]))
    fail("a 404 names the server's path");
  if (api[0] !== 404 || !/^text\/plain/.test(api[1])) fail('the API 404 is not plain text');
}

async function filter() {
  for (const [q, want, rows] of [['nope', /nope/, 0], ['fig8', /^fig8$/, 6], ['', /^all$/, 17]]) {
    const [p] = await open('?experiment=' + q);
    const sel = (await p.locator('#filter select option:checked').textContent()).trim();
    const n = await p.locator('#runs tbody tr').count();
    const none = await p.locator('#none').count() ? (await p.locator('#none').textContent()).trim() : '';
    console.log(`view: runs ?experiment=${q}: filter shows '${sel}', ${n} rows ${none ? `('${none}')` : ''}`);
    if (!want.test(sel) || n !== rows) fail(`the filter shows '${sel}' with ${n} runs for '${q}'`);
    if (!rows && !none.includes(q)) fail('no word on why there are no runs');
    await p.close();
  }
}

async function runPage() {
  const [run] = await open('run/1');
  await run.waitForFunction(() => window.plRun && (window.plRun.ready || window.plRun.error), null, { timeout: 30000 });
  return run;
}

async function answer() {
  const run = await runPage();
  await run.locator('#answer').waitFor({ timeout: 15000 })
    .catch(() => fail('the run page has no validation (#answer)'));
  const verdict = await run.locator('#answer').getAttribute('data-verdict');
  const lineRow = (await run.locator('#answer tr[data-law="line"] td').textContent()).trim();
  const plasticFlag = await run.locator('#answer tr[data-law="plastic"] .flag').getAttribute('data-flag');
  const plasticWords = await run.locator('#answer tr[data-law="plastic"] .flag').textContent();
  const link = await run.locator('#report-link').getAttribute('href');
  console.log(`view: run 1: verdict ${verdict}; line: ${lineRow}; plastic flagged '${plasticFlag}'; report ${link}`);
  // +- is one sd, named, with the 95 % interval beside it; an
  // undetermined lambda0 says so instead of a +- of hundreds of degrees
  if (verdict !== 'line' || !/^7\.2\d* ± 0\.\d+ deg \(1 sd; 95 %: 7\.2\d* to 7\.2\d*\)/.test(lineRow) ||
      plasticFlag !== 'undetermined' || !/not determined by this run/.test(plasticWords) ||
      /±/.test(plasticWords) || link !== '/experiment/fig8/')
    fail('the run page does not carry the validation');
}

async function quietPage(run) {
  const meta = await run.evaluate(() => fetch('/api/run/1/meta').then(r => r.json()));
  const q0 = +(meta.release * 0.5).toFixed(4), q1 = +(q0 + 0.0012).toFixed(4);
  const [quiet] = await open(`run/1#t0=${q0}&t1=${q1}`);
  await quiet.waitForFunction(() => window.plRun.ready || window.plRun.error, null, { timeout: 30000 });
  return [quiet, q0, q1];
}

async function ticks() {
  const run = await runPage();
  const psd = await axis(run, PSD, 1);
  checkLabels('Welch spectrum PSD axis', psd, null);
  if (psd.some(l => /^-?0(\.0*)?$/.test(l))) fail('the spectrum labels a value 0');

  // the quiet lead-in (before the release), 1.2 ms of it, from a link
  const [quiet, q0, q1] = await quietPage(run);
  const xs = await axis(quiet, VP, 0);
  checkLabels(`time axis zoomed to ${q0}..${q1} s`, xs, await axis(quiet, VP, 0, 'splits'));
  checkLabels('v_p axis in the quiet lead-in', await axis(quiet, VP, 1), await axis(quiet, VP, 1, 'splits'));
}

async function zoom() {
  const run = await runPage();
  const meta = await run.evaluate(() => fetch('/api/run/1/meta').then(r => r.json()));
  const [quiet, q0, q1] = await quietPage(run);
  const ql = await quiet.evaluate(() => window.plRun.last);
  console.log(`view: link #t0=${q0}&t1=${q1} opens ${ql.t0}..${ql.t1} (${ql.n} points, full=${ql.full})`);
  if (Math.abs(ql.t0 - q0) > 1e-9 || Math.abs(ql.t1 - q1) > 1e-9) fail('a link does not reopen its zoom');

  // a drag puts the window in the URL; the loading sign shows meanwhile
  let release;
  const held = new Promise(r => { release = r; });
  await run.route('**/api/run/1/window*', async route => { await held; await route.continue(); });
  const over = run.locator('#plot-vp .u-over');
  await over.scrollIntoViewIfNeeded();
  const box = await over.boundingBox();
  await run.mouse.move(box.x + 0.4 * box.width, box.y + box.height / 2);
  await run.mouse.down();
  await run.mouse.move(box.x + 0.5 * box.width, box.y + box.height / 2, { steps: 5 });
  await run.mouse.up();
  await run.waitForTimeout(300);
  const signWhileZoom = await run.locator('#loading').isVisible();
  release();
  await run.waitForFunction(() => window.plRun.loads >= 2, null, { timeout: 10000 });
  await run.unroute('**/api/run/1/window*');
  await run.waitForFunction(() => /^#t0=/.test(location.hash), null, { timeout: 5000 })
    .catch(() => fail('the zoom is not in the URL'));
  const [hash, last, signAfter] = await run.evaluate(() => [location.hash, window.plRun.last,
    !document.getElementById('loading').hidden]);
  console.log(`view: drag: loading sign while the window loads: ${signWhileZoom}, after: ${signAfter}; URL ${hash}`);
  if (!signWhileZoom || signAfter) fail('the loading sign does not follow the zoom');
  const h = new URLSearchParams(hash.slice(1));
  if (Math.abs(+h.get('t0') - last.t0) > 1e-6 || Math.abs(+h.get('t1') - last.t1) > 1e-6)
    fail(`the URL ${hash} is not the window ${last.t0}..${last.t1}`);

  // zoom to the roll
  if (!await run.locator('#zoom-roll').count()) fail('no "zoom to the roll" button');
  await run.click('#zoom-roll');
  const pad = (meta.end - meta.release) / 20;
  await run.waitForFunction(([a, b]) => Math.abs(window.plRun.last.t0 - a) < 1e-6 && Math.abs(window.plRun.last.t1 - b) < 1e-6,
                            [Math.max(0, meta.release - pad), Math.min(meta.duration, meta.end + pad)], { timeout: 10000 })
    .catch(() => fail('"zoom to the roll" did not show the release to the end'));
  const roll = await run.evaluate(() => [window.plRun.last, location.hash]);
  console.log(`view: zoom to the roll: ${roll[0].t0.toFixed(4)}..${roll[0].t1.toFixed(4)} s ` +
              `(release ${meta.release.toFixed(4)}, end ${meta.end.toFixed(4)}); URL ${roll[1]}`);
}

async function liveNoDaemon() {
  const [live] = await open('live');
  await live.waitForFunction(() => document.getElementById('level1').classList.contains('nodaemon'), null,
                             { timeout: 10000 }).catch(() => fail('live: the level bars do not say "no daemon"'));
  const lv = await live.evaluate(() => [1, 2].map(i => {
    const m = document.getElementById('level' + i);
    return [m.value, m.min, document.getElementById('value' + i).textContent, getComputedStyle(m).opacity];
  }));
  const stateText = await live.locator('#state').textContent();
  console.log(`view: live, no daemon: bars ${lv.map(x => `${x[0]} (min ${x[1]}) '${x[2]}' opacity ${x[3]}`).join('; ')}; state '${stateText}'`);
  if (lv.some(([v, min, text, op]) => v !== min || text !== 'no daemon' || !(+op < 1)))
    fail('live: with no daemon the bars are not empty, greyed and labelled');
  if (stateText.includes(secret)) fail("live: the state names the server's path");
}

async function underWay() {
  const db = path.join(secret, 'lab.db');
  const sql = (q) => execFileSync('sqlite3', [db, q]);
  sql(`INSERT OR REPLACE INTO run_work VALUES (2, 'validating', ${process.pid}, '${os.hostname()}', '2026-11-29T10:00:00Z')`);
  const [run] = await open('run/2');
  await run.waitForFunction(() => window.plRun && (window.plRun.ready || window.plRun.error), null, { timeout: 30000 });
  const said = await run.locator('#under-way').textContent({ timeout: 15000 })
    .catch(() => fail('a run being validated: its page does not say so (#under-way)'));
  console.log(`view: run 2 being validated: '${said}'`);
  if (!said.startsWith(`being validated now (process ${process.pid} on `) || !/the validation before it/.test(said))
    fail(`a run being validated: '${said}'`);
  sql('DELETE FROM run_work WHERE run_id = 2');
  await run.waitForFunction(() => !document.getElementById('under-way') && document.getElementById('answer') &&
                            window.plRun.answer === 'shown', null, { timeout: 5000 })
    .catch(() => fail('the validation done, the page still says it is under way'));
  console.log(`view: run 2's validation done: the page shows '${await run.locator('#answer').getAttribute('data-verdict')}' without a reload`);
}

await s.run([notFound, filter, answer, ticks, zoom, liveNoDaemon, underWay]);
