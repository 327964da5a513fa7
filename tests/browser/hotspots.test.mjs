// Hot spots on the profile page, on a real capture of a core pegged mostly
// in the kernel (testdata/perf/dd-pegged-cpu1, see its MANIFEST): the
// cores map's measure selector switches the hot spots to system time, each
// episode shows its system share, and a filter that hides the pegged core
// says so beside the list.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startServer, launch, watch, upload, shot, ROOT } from './helpers.mjs';

let server, browser, id;

before(async () => {
  server = await startServer();
  browser = await launch();
  ({ profile: { id } } = await upload(server.url, join(ROOT, 'testdata', 'perf', 'dd-pegged-cpu1.perf.txt.zst'), 'dd pegged'));
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

async function openProfile(page, query = '') {
  await page.goto(`${server.url}/p/${id}${query}`);
  await page.waitForSelector('body[data-rendered="1"]', { timeout: 60_000 });
}

// items returns the hot-spot list's entries as text.
function items(page) {
  return page.$$eval('ol[data-testid=hotspots] li', (lis) => lis.map((li) => li.textContent.replace(/\s+/g, ' ').trim()));
}

test('measure=system from the cores map: the hot spots follow, CPU 1 alone', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await openProfile(page);
  assert.match(await page.textContent('[data-testid=hotspots-what]'), /≥ 70% busy for 1 s or more/);
  const busy = await items(page);
  const dd = busy.find((t) => t.startsWith('CPU 1,'));
  assert.ok(dd && /dd/.test(dd) && /\((7|8)\d\.\d% system\)/.test(dd), `busy hot spots: ${JSON.stringify(busy)}`);

  await page.selectOption('[data-testid=cores-measure]', 'system');
  await page.waitForFunction(() => /in the kernel/.test(document.querySelector('[data-testid=hotspots-what]').textContent));
  await page.waitForFunction(() => document.querySelectorAll('ol[data-testid=hotspots] li').length === 1);
  const sys = await items(page);
  assert.ok(sys[0].startsWith('CPU 1,') && / dd /.test(sys[0]), `system hot spots: ${JSON.stringify(sys)}`);
  assert.equal(new URL(page.url()).searchParams.get('measure'), 'system');
  await shot(page, 'hotspots-system');

  // The link reproduces the view, rendered by the server this time.
  const fresh = await browser.ctx.newPage();
  await openProfile(fresh, new URL(page.url()).search);
  assert.deepEqual(await items(fresh), sys);
  assert.match(await fresh.textContent('[data-testid=hotspots-what]'), /≥ 70% in the kernel \(system time\) for 1 s or more/);
  await fresh.close();
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('a filter that hides the pegged core says so, on load and after a change', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await openProfile(page, '?only=kernel&threshold=0.9');
  let note = await page.textContent('[data-testid=hotspots-note]');
  assert.match(note, /hidden by only=kernel: CPUs? [\d, ]*1\b/, note);
  assert.ok(!(await items(page)).some((t) => t.startsWith('CPU 1,')));

  // Back to all frames: the note goes, CPU 1 is listed; only=kernel again
  // brings the note back, from the script this time.
  await page.selectOption('select[name=only]', '');
  await page.waitForFunction(() => !document.querySelector('[data-testid=hotspots-note]'));
  await page.waitForFunction(() => [...document.querySelectorAll('ol[data-testid=hotspots] li')].some((li) => li.textContent.trim().startsWith('CPU 1,')));
  await page.selectOption('select[name=only]', 'kernel');
  await page.waitForSelector('[data-testid=hotspots-note]');
  note = await page.textContent('[data-testid=hotspots-note]');
  assert.match(note, /hidden by only=kernel/, note);
  await shot(page, 'hotspots-hidden-note');
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('a page opened on a range lists the hot spots of that range, on load and after a change', async () => {
  // The host page's "Open … in its own views" opens a capture this way.
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await openProfile(page, '?start=3&end=6');
  assert.match(await page.textContent('[data-testid=hotspots-what]'), /≥ 70% busy for 1 s or more in 3–6 s \(3 s\)/);
  let list = await items(page);
  assert.ok(list.some((t) => t.startsWith('CPU 1, 3–6 s') && / dd /.test(t)), `hot spots of [3, 6): ${JSON.stringify(list)}`);

  // The script's refresh keeps the range.
  await page.selectOption('[data-testid=cores-measure]', 'system');
  await page.waitForFunction(() => /in the kernel \(system time\) for 1 s or more in 3–6 s \(3 s\)/.test(document.querySelector('[data-testid=hotspots-what]').textContent));
  await page.waitForFunction(() => document.querySelectorAll('ol[data-testid=hotspots] li').length === 1);
  list = await items(page);
  assert.ok(list[0].startsWith('CPU 1, 3–6 s'), `system hot spots of [3, 6): ${JSON.stringify(list)}`);
  assert.deepEqual(w.errors, []);
  await page.close();
});
