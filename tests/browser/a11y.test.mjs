// Accessibility: axe-core finds no serious or critical violation on any
// page; every canvas is focusable with a role and a name; the maps move a
// cursor cell with the arrow keys, extend a selection with Shift and open it
// with Enter; the flame graph's frames are reachable from the keyboard; a
// table view carries the maps' numbers for screen readers; the focus ring
// and the axis text stand out from their background. The host page and
// the capture's page are checked with their lanes (a heat and a line)
// drawn.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { AxeBuilder } from '@axe-core/playwright';
import { count, PEGGED } from './capture.mjs';
import { watch, knownProfile, stopKnown, contrast } from './helpers.mjs';

let server, browser, id, records;

before(async () => {
  ({ server, browser, id, records } = await knownProfile());
  // The lanes of the host page and the capture's page: cpu.sys per CPU
  // and a cgroups line over the capture's wall-clock span, so that axe
  // sees a heat and a line lane.
  const g = await (await fetch(`${server.url}/api/hosts/browser-test/timeline`)).json();
  const series = g.cpus.map((cpu) => ({ name: 'cpu.sys', cpu, points: [] }));
  const mem = { name: 'cgroups', cpu: -1, label: 'memory', points: [] };
  for (let t = Math.ceil(g.from_ns / 1e9) + 1; t * 1e9 <= g.to_ns; t++) {
    series.forEach((s) => s.points.push({ t: t * 1e9, v: (s.cpu * 13 + t) % 100 }));
    mem.points.push({ t: t * 1e9, v: 100 + t % 7 });
  }
  const r = await fetch(`${server.url}/api/hosts/browser-test/series`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ series: [...series, mem] }) });
  assert.equal(r.status, 200, await r.text());
});
after(() => stopKnown({ server, browser }));

// serious runs axe-core on the page and returns its serious and critical
// violations, each with the first few offending elements.
async function serious(page) {
  const r = await new AxeBuilder({ page }).analyze();
  return r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

test('axe-core: no serious or critical violations on any page, light or dark', async () => {
  const pages = [
    '/',
    `/p/${id}`,
    `/p/${id}?cpu=999`,
    `/p/${id}/flame?start=12&end=13`,
    `/p/${id}/flame?start=12&end=13&search=main`,
    `/p/${id}/diff?start=12&end=13&start2=11&end2=12`,
    `/p/${id}/stacks?start=4&end=5&cpu=4-5`,
    '/hosts',
    '/hosts/browser-test',
    '/p/nosuchprofile',
  ];
  const found = [];
  for (const scheme of ['light', 'dark']) {
    const page = await browser.ctx.newPage();
    await page.emulateMedia({ colorScheme: scheme });
    for (const path of pages) {
      await page.goto(server.url + path);
      if (path.startsWith('/p/' + id)) await page.waitForSelector('body[data-rendered="1"]');
      else await page.waitForLoadState('networkidle');
      if (path.includes('/stacks')) await page.waitForSelector('#stacks[data-rendered="1"]');
      if (path.startsWith('/hosts/')) await page.waitForSelector('[data-testid=lane][data-kind=cgroups] [data-testid=lane-max]');
      // The capture's page draws the same lanes under its cores map.
      if (path === `/p/${id}`) await page.waitForSelector('#profile-lanes [data-testid=lane][data-kind=cgroups] [data-testid=lane-max]');
      // A picked function shows its sandwich: check it too.
      if (path.includes('search=main')) await page.click('[data-testid=top-functions] tbody tr:has-text("main")');
      for (const v of await serious(page)) found.push(`${scheme} ${path}: ${v}`);
    }
    await page.close();
  }
  assert.deepEqual(found, []);
});

test('every canvas can take the focus and has a role and a name', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  const missing = [];
  for (const path of [`/p/${id}`, `/p/${id}/flame?start=12&end=13`, `/p/${id}/stacks?start=4&end=5&cpu=5`]) {
    await page.goto(server.url + path);
    await page.waitForSelector('body[data-rendered="1"]');
    if (path.includes('stacks')) await page.waitForSelector('#stacks[data-rendered="1"]');
    // Canvases that take input are focusable; those drawn under them are
    // covered by the one on top.
    const bad = await page.$$eval('canvas', (cs) =>
      cs
        .filter((c) => c.getAttribute('aria-hidden') !== 'true' && !c.classList.contains('grid-base') && !c.closest('.legend'))
        .filter((c) => c.tabIndex < 0 || !c.getAttribute('role') || !c.getAttribute('aria-label'))
        .map((c) => c.outerHTML.slice(0, 120)),
    );
    missing.push(...bad.map((b) => `${path}: ${b}`));
  }
  assert.deepEqual(missing, []);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('the maps from the keyboard: a cursor cell, Shift+arrows to select, Enter to open', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/p/${id}?bucket=0.1`);
  await page.waitForSelector('body[data-rendered="1"]');
  // Heatmap: the cursor starts at the top left (column 0, +0.98 s).
  await page.focus('#heatmap .grid-overlay');
  assert.equal(await page.textContent('[data-testid=selection]'), `0.98–1 s (0.02 s) · ≈ 07:59:41.49–07:59:41.51 UTC · column 0, +0.98 s · ${count(records, 0.98, 1)} samples`);
  for (let i = 0; i < 12; i++) await page.keyboard.press('ArrowRight');
  assert.match(await page.textContent('[data-testid=selection]'), /^12\.98–13 s \(0\.02 s\) · ≈ 07:59:53\.49–07:59:53\.51 UTC · column 12/);
  // Shift+Down to the bottom of the column: the whole second [12, 13).
  for (let i = 0; i < 49; i++) await page.keyboard.press('Shift+ArrowDown');
  assert.equal(await page.textContent('[data-testid=selection]'), `12–13 s (1 s) · ≈ 07:59:52.51–07:59:53.51 UTC · ${count(records, 12, 13).toLocaleString('en-US')} samples`);
  let nav = page.waitForURL(/\/flame\?/);
  await page.keyboard.press('Enter');
  await nav;
  let q = new URL(page.url()).searchParams;
  assert.deepEqual([q.get('start'), q.get('end')], ['12', '13']);

  // Cores map: down to CPU 5, PageDown twice to 4 s, Shift+Right to 8 s.
  await page.goto(`${server.url}/p/${id}?bucket=0.1`);
  await page.waitForSelector('body[data-rendered="1"]');
  await page.focus('#cores .grid-overlay');
  for (let i = 0; i < PEGGED.cpu; i++) await page.keyboard.press('ArrowDown');
  await page.keyboard.press('PageDown');
  await page.keyboard.press('PageDown');
  assert.match(await page.textContent('[data-testid=cores-selection]'), /^CPU 5 · 4–4\.1 s \(0\.1 s\) · ≈ 07:59:44\.51–07:59:44\.61 UTC · busy 100\.0% /);
  // A plain arrow leaves a keyboard selection; Shift starts another.
  await page.keyboard.press('Shift+ArrowRight');
  await page.keyboard.press('ArrowLeft');
  assert.match(await page.textContent('[data-testid=cores-selection]'), /^CPU 5 · 4–4\.1 s \(0\.1 s\) · ≈ 07:59:44\.51–07:59:44\.61 UTC · busy/);
  for (let i = 0; i < 39; i++) await page.keyboard.press('Shift+ArrowRight');
  const want = count(records, PEGGED.start, PEGGED.end, (r) => r.cpu === PEGGED.cpu && r.kind !== 'idle');
  assert.equal(await page.textContent('[data-testid=cores-selection]'), `CPU 5 · 4–8 s (4 s) · ≈ 07:59:44.51–07:59:48.51 UTC · ${want.toLocaleString('en-US')} samples`);
  nav = page.waitForURL(/\/flame\?/);
  await page.keyboard.press('Enter');
  await nav;
  q = new URL(page.url()).searchParams;
  assert.deepEqual([q.get('cpu'), q.get('start'), q.get('end')], ['5', '4', '8']);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test("the flame graph's frames from the keyboard, and as a table", async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/p/${id}/flame?start=12&end=13`);
  await page.waitForSelector('body[data-rendered="1"]');
  const said = () => page.textContent('[data-testid=flame-focus]');
  await page.focus('[data-testid=flame-canvas]');
  assert.match(await said(), /^all, /);
  // Up walks to the widest callee: webapp, _start, main, compute.
  for (const name of ['webapp', '_start', 'main', 'compute']) {
    await page.keyboard.press('ArrowUp');
    assert.match(await said(), new RegExp(`^${name}, `));
  }
  await page.keyboard.press('ArrowRight');
  assert.match(await said(), /^serve_request, /, 'the next sibling');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowDown');
  assert.match(await said(), /^main, /, 'the caller');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => (new URLSearchParams(location.search).get('zoom') || '').endsWith(';compute'));

  // The table view lists the zoomed frame's subtree with its numbers.
  await page.click('[data-testid=frame-table] summary');
  // The table is built on the details' toggle event, a task after the click.
  await page.waitForSelector('[data-testid=frame-table-rows] tbody tr');
  const rows = await page.$$eval('[data-testid=frame-table-rows] tbody tr', (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
  const hot = count(records, 12, 13, (r) => r.kind === 'hot').toLocaleString('en-US');
  assert.deepEqual(rows, [['compute', '0', hot, '0', '100.0%'], ['hot_loop', '1', hot, hot, '100.0%']]);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('focus ring 3:1, axis text 4.5:1, colour scales distinct from the page, light and dark', async () => {
  const report = [];
  for (const scheme of ['light', 'dark']) {
    const page = await browser.ctx.newPage();
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(`${server.url}/p/${id}`);
    await page.waitForSelector('body[data-rendered="1"]');
    const bg = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    await page.focus('#heatmap .grid-overlay');
    const ring = await page.$eval('#heatmap .grid-overlay', (c) => getComputedStyle(c).outlineColor);
    const axis = await page.$eval('#heatmap .grid-xaxis span', (s) => getComputedStyle(s).color);
    // The scales' strongest colour against the page and the empty cell,
    // read off the legends; and the empty cell, from a cell without samples.
    const ends = await page.$$eval('[data-testid=legend] canvas', (cs) =>
      cs.map((c) => {
        const d = c.getContext('2d').getImageData(c.width - 2, c.height >> 1, 1, 1).data;
        return `rgb(${d[0]},${d[1]},${d[2]})`;
      }),
    );
    const checks = [
      ['focus ring', contrast(ring, bg), 3],
      ['axis text', contrast(axis, bg), 4.5],
      ...ends.map((e, i) => [`scale ${i} at its top`, contrast(e, bg), 3]),
    ];
    for (const [what, got, want] of checks) {
      report.push(`${scheme} ${what}: ${got.toFixed(2)}:1`);
      assert.ok(got >= want, `${scheme}: ${what} has contrast ${got.toFixed(2)}:1 against the page; want ${want}:1`);
    }
    await page.close();
  }
  console.log(`# contrast: ${report.join('; ')}`);
});
