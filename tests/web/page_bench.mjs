// tests/web/page_bench.mjs - one cold look at a run page, for make bench
// (tests/bench/web_page_bench.sh starts the server and builds the run):
//   node tests/web/page_bench.mjs URL RUN
// A fresh headless chromium (empty profile and cache) opens URL/run/RUN
// and waits for the plots to be drawn (window.plRun.ready).  Prints one
// line: `page_bench: paint MS drawn MS sign 0|1`, both times from the
// navigation's start: the first contentful paint (when the page, with its
// loading sign, first shows) and the plots drawn; sign 1 when the loading
// sign was on screen at the first check after the navigation.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [url, run] = process.argv.slice(2);
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'prismlab-chromium-'));
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium', headless: true, viewport: { width: 1200, height: 900 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
});
try {
  const page = await ctx.newPage();
  await page.goto(url + 'run/' + run, { waitUntil: 'commit' });
  const sign = await page.locator('#loading').isVisible().catch(() => false);
  await page.waitForFunction(() => window.plRun && (window.plRun.ready || window.plRun.error),
                             null, { timeout: 120000, polling: 10 });
  const r = await page.evaluate(() => {
    const p = performance.getEntriesByType('paint').find(e => e.name === 'first-contentful-paint');
    return { paint: p ? p.startTime : NaN, drawn: window.plRun.drawnMs ?? performance.now(),
             error: window.plRun.error };
  });
  if (r.error) throw new Error(r.error);
  console.log(`page_bench: paint ${r.paint.toFixed(0)} drawn ${r.drawn.toFixed(0)} sign ${sign ? 1 : 0}`);
} finally {
  await ctx.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
