// tests/web/runpage.mjs - the run page and the runs list (issue 45), in
// Debian's chromium driven by playwright-core.  Called by
// tests/web/runpage_test.sh:
//   node tests/web/runpage.mjs URL RECORDED_RUN LINE_RATIO PLASTIC_RATIO
// Checks, on run 1 (fig8-steel-22, processed and validated):
//   - the impact ratio's plot, above the time plots: one point an impact
//     with a ratio, at its omega- and ratio, one bar an impact with a
//     standard error, the legend saying what the bars are; each law's
//     ratio (the stored validations') as a line across, the legend's
//     markers dashed (line-impact law) and dotted (plastic law) as drawn;
//     the numbers beside it;
//   - the impact markers of the omega plot, read from its canvas: at the
//     default zoom (the whole run, 152 impacts) none crosses the plot (a
//     row of ticks along its foot instead); zoomed to 10 impacts, each is
//     a line of its own across the plot;
//   - the runs list's file column: an imported run's file by name, the
//     recorded run how it was recorded.
// Prints "runpage: ..." lines; each check runs whatever the others gave;
// exits 1 if any failed.
import { session } from './harness.mjs';

const [url, recorded, lineRatio, plasticRatio] = process.argv.slice(2);
const s = session('runpage');
const { fail, problems } = s;

async function open(where) {
  const page = await s.ctx.newPage();
  page.on('console', m => { if (m.type() === 'error') problems.push(`${where}: console error: ${m.text()}`); });
  page.on('pageerror', e => problems.push(`${where}: uncaught: ${e.message}`));
  const r = await page.goto(url + where);
  if (!r.ok()) fail(`${where}: HTTP ${r.status()}`);
  await page.waitForFunction(() => window.plRun && (window.plRun.ready || window.plRun.error), null,
                             { timeout: 30000 }).catch(() => {});
  return page;
}

// every impact of run 1 as the impacts' table gives it
async function impacts(page) {
  return page.evaluate(() => fetch('/api/run/1/impacts?from=0&n=1000').then(r => r.json()).then(d => d.rows));
}

async function ratioPlot() {
  const run = await open('run/1');
  await run.waitForFunction(() => window.plRun.ratio && window.plRun.ratio.plot, null, { timeout: 15000 })
    .catch(() => fail('run 1: no plot of the impact ratio'));
  const rows = await impacts(run);
  const want = rows.filter(r => r[1] !== null && r[3] !== null);
  const got = await run.evaluate(() => {
    const u = window.plRun.ratio.plot;
    const legend = [...u.root.querySelectorAll('.u-legend tr.u-series')].map(tr => ({
      label: tr.querySelector('.u-label').textContent,
      border: getComputedStyle(tr.querySelector('.u-marker')).borderTopStyle,
      shown: getComputedStyle(tr).display !== 'none',
    }));
    return { title: u.root.querySelector('.u-title').textContent, x: u.data[0], y: u.data[1],
             lines: u.series.slice(2).map((s, k) => ({ label: s.label, y: [...new Set(u.data[2 + k])] })),
             bars: window.plRun.ratio.bars, legend,
             note: document.getElementById('ratio-note').textContent,
             top: document.getElementById('plot-ratio').getBoundingClientRect().top,
             vpTop: document.getElementById('plot-vp').getBoundingClientRect().top };
  });
  console.log(`runpage: run 1 ratio plot '${got.title}': ${got.x.length} points of ${rows.length} impacts, ` +
              `${got.bars} bars; lines ${got.lines.map(l => `${l.label} ${l.y.join(',')}`).join('; ')}; ` +
              `legend ${got.legend.map(l => `${l.label} [${l.border}${l.shown ? '' : ', hidden'}]`).join(', ')}`);
  console.log(`runpage: note: ${got.note}`);
  // each impact with a ratio is a point, at (omega-, ratio)
  const pts = want.map(r => [r[1], r[3]]).sort((a, b) => a[0] - b[0]);
  if (got.x.length !== pts.length || pts.some((p, i) => Math.abs(p[0] - got.x[i]) > 1e-6 * p[0] ||
                                                        Math.abs(p[1] - got.y[i]) > 1e-7))
    fail(`the ratio plot's points are not the ${pts.length} impacts with a ratio`);
  const withSe = want.filter(r => r[6] !== null && r[6] > 0).length;
  if (got.bars !== withSe) fail(`${got.bars} bars drawn, ${withSe} impacts with a standard error`);
  // each law's ratio as a line across: the stored validations'
  for (const [label, ratio, style] of [['line-impact law', +lineRatio, 'dashed'],
                                       ['plastic law', +plasticRatio, 'dotted']]) {
    const l = got.lines.find(s => s.label === label);
    if (!l || l.y.length !== 1 || Math.abs(l.y[0] - ratio) > 1e-7)
      fail(`the ${label}'s line is not at its stored ratio ${ratio}: ${JSON.stringify(l)}`);
    const key = got.legend.find(k => k.label === label);
    if (!key || !key.shown || key.border !== style)
      fail(`the legend shows the ${label} ${key ? key.border : 'nowhere'}, the plot draws it ${style}`);
    if (!got.note.includes(`${label} ${ratio.toFixed(5)} (${style})`))
      fail(`the note does not give the ${label}'s ${ratio.toFixed(5)}`);
  }
  if (!got.legend.some(k => /bars: 1 sd/.test(k.label) && k.shown) || !/bars: \u00b11 sd/.test(got.note))
    fail('the ratio plot does not say what its bars are');
  if (!(got.top < got.vpTop)) fail('the ratio plot is below the time plots');
  await run.close();
}

// The omega plot's marker columns across it: those marked (a marker's
// red or orange over white, anti-aliased: red well above blue) in half
// or more of its rows every 5 px from the top to 12 px above its foot (a
// grid line or the curve crossing a marker leaves the rest); the columns
// marked in its lowest 3 rows; and the runs of marked columns (one a
// marker).
async function marks(page) {
  return page.evaluate(() => {
    const u = window.__plots.find(p => /^Rotary speed/.test(p.root.querySelector('.u-title').textContent));
    const bb = u.bbox, c = u.ctx;
    const marked = (y) => {
      const d = c.getImageData(bb.left, Math.round(y), bb.width, 1).data;
      return Array.from({ length: bb.width }, (_, i) => d[4 * i] > 200 && d[4 * i] - d[4 * i + 2] > 30);
    };
    const across = [];
    for (let y = bb.top + 5; y < bb.top + bb.height - 12; y += 5) across.push(marked(y));
    const foot = [1, 2, 3].map(k => marked(bb.top + bb.height - k));
    const most = rows => rows[0].map((_, i) => 2 * rows.filter(r => r[i]).length >= rows.length);
    const any = rows => rows[0].map((_, i) => rows.some(r => r[i]));
    const runs = cols => cols.filter((m, i) => m && !cols[i - 1]).length;
    const m = most(across), f = any(foot);
    return { width: bb.width, midColumns: m.filter(Boolean).length, midMarks: runs(m),
             footColumns: f.filter(Boolean).length, state: (window.plRun.marks || {}).omega || null,
             window: window.plRun.last };
  });
}

async function impactMarks() {
  const run = await open('run/1');
  const whole = await marks(run);
  console.log(`runpage: default zoom ${whole.window.t0}..${whole.window.t1.toFixed(3)} s: ` +
              `${whole.midColumns} of ${whole.width} columns marked across the plot, ` +
              `${whole.footColumns} in its foot; drawn ${JSON.stringify(whole.state)}`);
  const rows = await impacts(run);
  // the default view holds every impact: none walls the curve in, all
  // are there along the foot
  if (whole.midColumns !== 0) fail(`${whole.midColumns} impact marker columns across the plot at the default zoom`);
  if (whole.footColumns < 0.5 * rows.length) fail(`only ${whole.footColumns} ticks for ${rows.length} impacts`);
  await run.close();
  // 10 impacts mid-run: each its own line across the plot
  const k = Math.floor(rows.length / 2);
  const t0 = (rows[k - 1][0] + rows[k][0]) / 2, t1 = (rows[k + 9][0] + rows[k + 10][0]) / 2;
  const zoomed = await open(`run/1#t0=${t0}&t1=${t1}`);
  const near = await marks(zoomed);
  console.log(`runpage: zoomed to ${t0.toFixed(4)}..${t1.toFixed(4)} s (10 impacts): ${near.midMarks} markers ` +
              `across the plot (${near.midColumns} columns); drawn ${JSON.stringify(near.state)}`);
  if (near.midMarks !== 10) fail(`zoomed to 10 impacts, ${near.midMarks} markers across the plot`);
  await zoomed.close();
}

async function fileColumn() {
  const page = await s.ctx.newPage();
  page.on('pageerror', e => problems.push(`runs: uncaught: ${e.message}`));
  await page.goto(url);
  const heads = await page.locator('#runs thead th').allTextContents();
  const col = heads.findIndex(h => /^file/.test(h));
  if (col < 0) fail(`the runs list has no file column: ${heads.join(' | ')}`);
  const cell = id => page.locator(`#runs tr[data-run="${id}"] td`).nth(col);
  const imported = [await cell(1).textContent(), await cell(1).getAttribute('title')];
  const rec = await cell(recorded).textContent();
  console.log(`runpage: runs list column '${heads[col]}': run 1 '${imported[0]}' (title '${imported[1]}'), ` +
              `run ${recorded} '${rec}'`);
  if (imported[0] !== 'fig8-steel-22.wav' || !imported[1].endsWith('fixtures/runs/fig8-steel-22.wav'))
    fail('the imported run does not name its file');
  if (!/^recorded from rig simulator steel-38 on glass-0\.4079, seed 2$/.test(rec))
    fail('the recorded run does not say how it was recorded');
  await page.close();
}

await s.run([ratioPlot, impactMarks, fileColumn]);
