// tests/web/harness.mjs - what the browser checks of the web view share
// (tests/web/view.mjs, tests/web/runpage.mjs): Debian's chromium driven by
// playwright-core, every uPlot a page makes caught as it is made
// (window.__plots), and the checks run one after the other, each whatever
// the others gave, with the pages' console errors and uncaught exceptions
// collected.  A failure prints "NAME: FAIL ..." and the process exits 1.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Every uPlot a page makes, caught as it is made (an init script wraps
// the constructor), so that what a check reads is what was drawn,
// whatever the page's own code keeps.
export function catchPlots() {
  let real = null;
  window.__plots = [];
  Object.defineProperty(window, 'uPlot', {
    configurable: true,
    get() { return real; },
    set(v) {
      real = function (opts, data, el) { const u = new v(opts, data, el); window.__plots.push(u); return u; };
      Object.assign(real, v);
    },
  });
}

// A session of checks called name: fail(msg) says what failed and throws;
// problems collects what the pages reported (a check's watchers push to
// it); ctx is the browser's context once run(checks) has started it.
// run() runs each check (an async function), then fails when any failed
// or a page reported a problem, and always closes the browser.
export function session(name) {
  const s = { problems: [], ctx: null };
  s.fail = msg => {
    console.error(`${name}: FAIL ${msg}`);
    throw new Error(`${name}: ${msg}`);
  };
  s.run = async checks => {
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'prismlab-chromium-'));
    try {
      s.ctx = await chromium.launchPersistentContext(profile, {
        executablePath: '/usr/bin/chromium', headless: true, viewport: { width: 1200, height: 900 },
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
               '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
      });
      await s.ctx.addInitScript(catchPlots);
      let failed = 0;
      for (const check of checks) {
        try {
          await check();
        } catch (e) {
          if (!String(e.message).startsWith(name + ':'))
            console.error(`${name}: FAIL (${check.name}) ${e.message.split('\n')[0]}`);
          failed++;
        }
      }
      if (s.problems.length) s.fail(s.problems.join('; '));
      if (failed) s.fail(`${failed} of ${checks.length} checks failed`);
      console.log(`${name}: no console errors`);
    } catch (e) {
      if (!String(e.message).startsWith(name + ':')) console.error(`${name}: FAIL ${e.message}`);
      process.exitCode = 1;
    } finally {
      if (s.ctx) await s.ctx.close();
      fs.rmSync(profile, { recursive: true, force: true });
    }
  };
  return s;
}
