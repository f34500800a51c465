// tests/web/live_verdict.mjs - the live page links to a run once the
// daemon's after-run pipeline has stored its verdict.  Called by
// tests/web/live_verdict_test.sh:
//   node tests/web/live_verdict.mjs URL TOKEN
// Arms the daemon from the page's button, waits for the run to record and
// end, then for the page's link "run N: verdict ready" (href /run/N), and
// follows it: the run page answers.  Prints "live_verdict: ..." lines;
// exits 1 on the first failure or on any console error.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [url, token] = process.argv.slice(2);
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'prismlab-chromium-'));
const problems = [];

function fail(msg) {
  console.error('live_verdict: FAIL ' + msg);
  throw new Error(msg);
}

async function main() {
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  try {
    const page = await ctx.newPage();
    page.on('console', m => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
    page.on('pageerror', e => problems.push(`uncaught: ${e.message}`));
    const r = await page.goto(url + 'live?token=' + token);
    if (!r.ok()) fail(`live: HTTP ${r.status()}`);
    await page.waitForFunction(() => window.plLive && window.plLive.state === 'idle', null, { timeout: 10000 });
    if (await page.locator('#verdict').textContent() !== '') fail('a verdict link before any run');
    await page.click('#arm');
    await page.waitForFunction(() => window.plLive.state === 'recording', null, { timeout: 15000 });
    const run = await page.evaluate(() => window.plLive.run);
    await page.waitForFunction(() => window.plLive.state === 'idle', null, { timeout: 15000 });
    const ended = Date.now();
    await page.waitForFunction(r => window.plLive.verdictRun === r, run, { timeout: 20000 });
    const shown = Date.now() - ended;
    const link = page.locator('#verdict');
    const text = await link.textContent(), href = await link.getAttribute('href');
    console.log(`live_verdict: run ${run} ended; link '${text}' -> ${href} shown ${shown} ms after the page saw it end`);
    if (text !== `run ${run}: verdict ready` || href !== `/run/${run}`) fail(`the link: '${text}' -> ${href}`);
    await Promise.all([page.waitForURL(u => u.pathname === `/run/${run}`, { timeout: 10000 }), link.click()]);
    console.log(`live_verdict: the link opens ${new URL(page.url()).pathname}`);
    await page.screenshot({ path: path.join(os.tmpdir(), 'live-verdict-run.png') }).catch(() => {});
  } finally {
    await ctx.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  if (problems.length) fail(problems.join('; '));
}

main().catch(e => { console.error('live_verdict: ' + e.message); process.exit(1); });
