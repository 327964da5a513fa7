// Drag-select on the heatmap and the cores map, the flame graph of the
// selection, search, zoom, icicle view, top functions and callers, the
// differential view, shareable links, and hostile names staying text.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeCapture, count, HOSTILE_SYMBOL, HOSTILE_COMM, HOSTILE_CORE, PEGGED } from './capture.mjs';
import { startServer, launch, watch, shot, inkedPixels, tempDir, upload, cellCentre, gridPoint, timings } from './helpers.mjs';

let server, browser, id, records;

// pct formats a fraction as the page does (fmtPct in web/src/format.ts).
function pct(f) {
  const p = f * 100;
  if (p === 0) return '0%';
  if (p < 10) return p.toFixed(2) + '%';
  return p.toFixed(1) + '%';
}

before(async () => {
  const dir = tempDir();
  const path = join(dir, 'known.perf.txt');
  ({ records } = await writeCapture(path, { cpus: 8, seconds: 20 }));
  server = await startServer();
  const res = await upload(server.url, path, `known ${HOSTILE_SYMBOL}`);
  id = res.profile.id;
  browser = await launch();
  await browser.grantClipboard(server.url);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

// drag presses at a and moves to b without releasing, then waits until the
// label at labelSel reads want (pointer moves reach the page asynchronously)
// and returns what it last read.
async function drag(page, a, b, labelSel, want) {
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  const steps = 6;
  for (let i = 1; i <= steps; i++) await page.mouse.move(a.x + ((b.x - a.x) * i) / steps, a.y + ((b.y - a.y) * i) / steps);
  await page.waitForFunction(([sel, want]) => document.querySelector(sel).textContent === want, [labelSel, want], { timeout: 3000 }).catch(() => {});
  return page.textContent(labelSel);
}

async function topRows(page, n = 5) {
  return page.$$eval(
    '[data-testid=top-functions] tbody tr',
    (trs, n) => trs.slice(0, n).map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim())),
    n,
  );
}

async function flameState(page) {
  return page.evaluate(() => ({
    url: location.pathname + location.search,
    title: document.title,
    range: document.querySelector('[data-testid=range]')?.textContent.replace(/\s+/g, ' ').trim(),
    search: document.getElementById('search').value,
    matched: document.getElementById('search-match').textContent,
    zoom: document.querySelector('[data-testid=zoom-path]').textContent,
    icicle: document.querySelector('[data-testid=view-icicle]').getAttribute('aria-pressed'),
  }));
}

test('drag across heatmap cells, read the flame graph, search, zoom and share the link', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/p/${id}`);
  await page.waitForSelector('body[data-rendered="1"]');

  // Column 12, rows 0..49: the second [12, 13), holding the all-CPU burst.
  const a = await cellCentre(page, '#heatmap .grid-overlay', 12, 0);
  const b = await cellCentre(page, '#heatmap .grid-overlay', 12, 49);
  const want = count(records, 12, 13);
  const wantLabel = `12–13 s (1 s) · ≈ 07:59:52.51–07:59:53.51 UTC · ${want.toLocaleString('en-US')} samples`;
  assert.equal(await drag(page, a, b, '[data-testid=selection]', wantLabel), wantLabel);
  await shot(page, 'heatmap-selecting');
  const nav = page.waitForURL(/\/flame\?/);
  await page.mouse.up();
  await nav;
  const url = new URL(page.url());
  assert.equal(url.pathname, `/p/${id}/flame`);
  assert.equal(url.searchParams.get('start'), '12');
  assert.equal(url.searchParams.get('end'), '13');
  await page.waitForSelector('body[data-rendered="1"]');

  // Top functions by self: hot_loop first with exactly the burst's samples.
  const rows = await topRows(page);
  const hot = count(records, 12, 13, (r) => r.kind === 'hot');
  assert.equal(rows[0][0], 'hot_loop /usr/bin/webapp');
  assert.equal(rows[0][1], hot.toLocaleString('en-US'));
  await shot(page, 'flame', { fullPage: true });
  const tm = await timings(page);
  assert.ok(tm['select-to-flame'] > 0, JSON.stringify(tm));

  // Export links reach the API with the same range.
  for (const [testid, type, needle] of [['export-svg', 'image/svg+xml', 'hot_loop'], ['export-folded', 'text/plain', 'hot_loop'], ['export-pprof', 'application/vnd.google.protobuf', null]]) {
    const href = await page.getAttribute(`[data-testid=${testid}]`, 'href');
    assert.match(href, /start=12&end=13|end=13&.*start=12/, href);
    const r = await fetch(new URL(href, server.url));
    assert.equal(r.status, 200, href);
    assert.ok(r.headers.get('content-type').startsWith(type), `${href}: ${r.headers.get('content-type')}`);
    const body = Buffer.from(await r.arrayBuffer());
    if (needle) assert.ok(body.toString().includes(needle), href);
    else assert.ok(body.length > 50 && body[0] === 0x1f && body[1] === 0x8b, 'pprof is gzipped');
  }
  console.log(`# drag-release-to-rendered-flame-graph (8 CPUs, 1 s): ${tm['select-to-flame']} ms`);
  const ink = await inkedPixels(page, '[data-testid=flame-canvas]');
  assert.ok(ink.inked > 1000 && ink.colours > 5, JSON.stringify(ink));

  // Search: the matched share counts nested matches once.
  await page.fill('#search', 'hot_loop|compute');
  await page.waitForFunction(() => document.getElementById('search-match').textContent.startsWith('Matched'));
  assert.ok((await page.textContent('#search-match')).startsWith(`Matched: ${pct(hot / want)} · `));
  await page.waitForFunction(() => new URLSearchParams(location.search).get('search') === 'hot_loop|compute');
  const magenta = await page.$eval('[data-testid=flame-canvas]', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] === 220 && d[i + 1] === 40 && d[i + 2] === 220) n++;
    return n;
  });
  assert.ok(magenta > 500, `highlighted pixels: ${magenta}`);
  await shot(page, 'flame-search', { fullPage: true });

  // Click zooms: the clicked frame fills the width and the URL records it.
  const box = await page.$eval('[data-testid=flame-canvas]', (c) => {
    const r = c.getBoundingClientRect();
    return { x: r.left, y: r.top };
  });
  const rect = await page.evaluate(() => window.__flame.locate('compute'));
  assert.ok(rect && rect.w > 50, JSON.stringify(rect));
  await page.mouse.move(box.x + rect.x + rect.w / 2, box.y + rect.y + rect.h / 2);
  assert.equal(await page.textContent('[data-testid=tooltip] .tt-title'), 'compute');
  await page.mouse.click(box.x + rect.x + rect.w / 2, box.y + rect.y + rect.h / 2);
  await page.waitForFunction(() => (new URLSearchParams(location.search).get('zoom') || '').endsWith('main;compute'));
  assert.equal(await page.textContent('[data-testid=zoom-path]'), 'Zoomed: compute');
  const zoomed = await page.evaluate(() => window.__flame.locate('hot_loop'));
  assert.ok(Math.abs(zoomed.w - (await page.$eval('[data-testid=flame-canvas]', (c) => c.clientWidth))) < 2, 'hot_loop fills the zoomed width');
  assert.ok((await page.textContent('#search-match')).startsWith(`Matched: ${pct(1)} · `));
  await page.click('[data-testid=view-icicle]');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('view') === 'icicle');

  // Copy the link and open it in a fresh browser: the same view.
  await page.click('#copy-link');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(copied, page.url());
  const before = await flameState(page);
  const fresh = await launch();
  try {
    const p2 = await fresh.ctx.newPage();
    await p2.goto(copied);
    await p2.waitForSelector('body[data-rendered="1"]');
    assert.deepEqual(await flameState(p2), before);
    const z2 = await p2.evaluate(() => window.__flame.locate('hot_loop'));
    assert.deepEqual(z2, zoomed === null ? null : { ...zoomed, y: z2.y });
  } finally {
    await fresh.close();
  }

  // Reset zoom, back to the whole graph.
  await page.click('[data-testid=reset-zoom]');
  await page.waitForFunction(() => !new URLSearchParams(location.search).has('zoom'));
  assert.ok((await page.textContent('#search-match')).startsWith(`Matched: ${pct(hot / want)} · `));
  // Escape zooms out too; back returns to the zoomed view.
  const again = await page.evaluate(() => window.__flame.locate('compute'));
  await page.mouse.click(box.x + again.x + again.w / 2, box.y + again.y + again.h / 2);
  await page.waitForFunction(() => new URLSearchParams(location.search).has('zoom'));
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !new URLSearchParams(location.search).has('zoom'));
  await page.goBack();
  await page.waitForFunction(() => new URLSearchParams(location.search).has('zoom'));
  assert.equal(await page.textContent('[data-testid=zoom-path]'), 'Zoomed: compute');
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('click one cell, then another: the range between them, in time order', async () => {
  const page = await browser.ctx.newPage();
  await page.goto(`${server.url}/p/${id}`);
  await page.waitForSelector('body[data-rendered="1"]');
  // Second click first in time: the range still runs from the earlier cell.
  const later = await cellCentre(page, '#heatmap .grid-overlay', 12, 24);
  const earlier = await cellCentre(page, '#heatmap .grid-overlay', 12, 0);
  await page.mouse.click(later.x, later.y);
  const n = count(records, 12.48, 12.5);
  await page.waitForFunction(() => document.querySelector('[data-testid=selection]').textContent.includes('click the last cell'));
  assert.equal(await page.textContent('[data-testid=selection]'), `Start 12.48–12.5 s (0.02 s) · ≈ 07:59:52.99–07:59:53.01 UTC · ${n} samples — click the last cell`);
  const nav = page.waitForURL(/\/flame\?/);
  await page.mouse.click(earlier.x, earlier.y);
  await nav;
  const url = new URL(page.url());
  assert.deepEqual([url.searchParams.get('start'), url.searchParams.get('end')], ['12', '12.5']);
  await page.waitForSelector('body[data-rendered="1"]');
  const rows = await topRows(page, 1);
  assert.equal(rows[0][1], count(records, 12, 12.5, (r) => r.kind === 'hot').toLocaleString('en-US'));
  await page.close();
});

test('without clipboard access, copy-link shows the link selected in a field', async () => {
  const page = await browser.ctx.newPage();
  await page.addInitScript(() => Object.defineProperty(navigator, 'clipboard', { value: undefined }));
  await page.goto(`${server.url}/p/${id}/flame?start=12&end=13&view=icicle`);
  await page.waitForSelector('body[data-rendered="1"]');
  await page.click('#copy-link');
  const field = page.locator('[data-testid=copy-link-fallback]');
  await field.waitFor();
  assert.equal(await field.inputValue(), page.url());
  const selected = await page.evaluate(() => {
    const f = document.getElementById('copy-link-fallback');
    return document.activeElement === f && f.selectionStart === 0 && f.selectionEnd === f.value.length;
  });
  assert.ok(selected, 'the link is focused and selected');
  await page.close();
});

test('top functions sort by total and list a function\'s callers', async () => {
  const page = await browser.ctx.newPage();
  await page.goto(`${server.url}/p/${id}/flame?start=12&end=13`);
  await page.waitForSelector('body[data-rendered="1"]');
  await page.click('[data-testid=top-functions] th[data-sort=total]');
  const rows = await topRows(page, 1);
  const all = count(records, 12, 13);
  const want = count(records, 12, 13, (r) => r.kind !== 'idle' && r.kind !== 'evil');
  // Every webapp sample runs webapp's _start and main; ties sort by name.
  assert.equal(rows[0][0], '_start /usr/bin/webapp');
  assert.equal(rows[0][3], want.toLocaleString('en-US'));
  assert.equal(rows[0][4], pct(want / all));
  await page.click('[data-testid=top-functions] tbody tr:has-text("hot_loop")');
  const callers = await page.$$eval('[data-testid=callers-tree] .cn', (els) => els.map((e) => e.textContent));
  assert.deepEqual(callers.slice(0, 4), ['hot_loop', 'compute', 'main', '_start']);
  await page.close();
});

test('drag on the cores map selects CPUs and a time range', async () => {
  const page = await browser.ctx.newPage();
  await page.goto(`${server.url}/p/${id}`);
  await page.waitForSelector('body[data-rendered="1"]');
  // Buckets are 0.1 s: 40..79 is [4, 8) s; row 5 is CPU 5, pegged then.
  const a = await gridPoint(page, '#cores .grid-overlay', 40, PEGGED.cpu);
  const b = await gridPoint(page, '#cores .grid-overlay', 79, PEGGED.cpu);
  const want = count(records, PEGGED.start, PEGGED.end, (r) => r.cpu === PEGGED.cpu && r.kind !== 'idle');
  const wantLabel = `CPU 5 · 4–8 s (4 s) · ≈ 07:59:44.51–07:59:48.51 UTC · ${want.toLocaleString('en-US')} samples`;
  assert.equal(await drag(page, a, b, '[data-testid=cores-selection]', wantLabel), wantLabel);
  await shot(page, 'cores-selecting');
  const nav = page.waitForURL(/\/flame\?/);
  await page.mouse.up();
  await nav;
  const url = new URL(page.url());
  assert.equal(url.searchParams.get('cpu'), '5');
  assert.equal(url.searchParams.get('start'), '4');
  assert.equal(url.searchParams.get('end'), '8');
  await page.waitForSelector('body[data-rendered="1"]');
  const rows = await topRows(page, 1);
  assert.equal(rows[0][0], 'mark_object /usr/bin/gc');
  assert.equal(rows[0][1], want.toLocaleString('en-US'));
  await page.close();
});

test('a hot spot links to its flame graph', async () => {
  const page = await browser.ctx.newPage();
  await page.goto(`${server.url}/p/${id}`);
  await page.waitForSelector('body[data-rendered="1"]');
  // CPU 5 pegged in gc during [4, 8) s is the capture's one hot spot.
  const link = page.locator('ol[data-testid=hotspots] li a').first();
  assert.match(await link.textContent(), /CPU 5/);
  await link.click();
  await page.waitForURL(/\/flame\?/);
  await page.waitForSelector('body[data-rendered="1"]');
  const url = new URL(page.url());
  assert.equal(url.searchParams.get('cpu'), '5');
  const rows = await topRows(page, 1);
  assert.equal(rows[0][0], 'mark_object /usr/bin/gc');
  await page.close();
});

test('the flame page\'s speedscope link downloads a speedscope file with samples', async () => {
  const page = await browser.ctx.newPage();
  await page.goto(`${server.url}/p/${id}/flame?start=12&end=13`);
  await page.waitForSelector('body[data-rendered="1"]');
  const link = page.locator('[data-testid=export-speedscope]');
  assert.equal(await link.textContent(), 'speedscope');
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  assert.match(download.suggestedFilename(), /\.speedscope\.json$/);
  const file = JSON.parse(readFileSync(await download.path(), 'utf8'));
  assert.equal(file.$schema, 'https://www.speedscope.app/file-format-schema.json');
  assert.ok(Array.isArray(file.profiles) && file.profiles.some((p) => p.samples?.length > 0), JSON.stringify(file.profiles?.map((p) => [p.name, p.samples?.length])));
  await page.close();
});

test('compare with a baseline range: the differential view colours growth red', async () => {
  const page = await browser.ctx.newPage();
  await page.goto(`${server.url}/p/${id}/flame?start=12&end=13`);
  await page.waitForSelector('body[data-rendered="1"]');
  assert.equal(await page.inputValue('[data-testid=compare-start]'), '11');
  assert.equal(await page.inputValue('[data-testid=compare-end]'), '12');
  const nav = page.waitForURL(/\/diff\?/);
  await page.click('[data-testid=compare] button[type=submit]');
  await nav;
  const url = new URL(page.url());
  assert.deepEqual(
    ['start', 'end', 'start2', 'end2'].map((k) => url.searchParams.get(k)),
    ['12', '13', '11', '12'],
  );
  await page.waitForSelector('body[data-rendered="1"]');
  const colours = await page.$eval('[data-testid=flame-canvas]', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let red = 0, blue = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i] === 250 && d[i + 1] < 200 && d[i + 1] === d[i + 2]) red++;
      if (d[i + 2] === 250 && d[i] < 200 && d[i] === d[i + 1]) blue++;
    }
    return { red, blue };
  });
  // hot_loop appears only in [12, 13): it grew. The background shrank as a share.
  assert.ok(colours.red > 500, JSON.stringify(colours));
  assert.ok(colours.blue > 50, JSON.stringify(colours));
  const rect = await page.evaluate(() => window.__flame.locate('hot_loop'));
  const box = await page.$eval('[data-testid=flame-canvas]', (c) => c.getBoundingClientRect().toJSON());
  await page.mouse.move(box.x + rect.x + rect.w / 2, box.y + rect.y + rect.h / 2);
  const tip = await page.$$eval('[data-testid=tooltip] div', (ds) => ds.map((d) => d.textContent));
  assert.equal(tip[0], 'hot_loop');
  assert.ok(tip.some((t) => t.startsWith('baseline 0% → ')), tip.join(' | '));
  await shot(page, 'diff', { fullPage: true });
  await page.close();
});

test('hostile symbol and command names stay text on every page', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  for (const path of [`/`, `/p/${id}`, `/p/${id}/flame?start=0&end=20`, `/p/${id}/flame?start=0&end=20&search=img`, `/p/${id}/diff?start=10&end=20&start2=0&end2=10`]) {
    await page.goto(server.url + path);
    if (path !== '/') await page.waitForSelector('body[data-rendered="1"]');
    const got = await page.evaluate(() => ({ xss: window.__xss, imgs: document.querySelectorAll('img').length, bold: document.querySelectorAll('main b').length }));
    assert.deepEqual(got, { xss: undefined, imgs: 0, bold: 0 }, path);
  }
  await page.goto(`${server.url}/p/${id}/flame?start=0&end=20`);
  await page.waitForSelector('body[data-rendered="1"]');
  // The profile's name is hostile too: the heading shows it as text.
  assert.equal(await page.textContent('main h1'), `known ${HOSTILE_SYMBOL}`);
  const names = await page.$$eval('[data-testid=top-functions] .fn-name', (s) => s.map((e) => e.textContent));
  const hostile = names.find((n) => n.includes(HOSTILE_CORE));
  assert.ok(hostile, names.join(', '));
  const box = await page.$eval('[data-testid=flame-canvas]', (c) => c.getBoundingClientRect().toJSON());
  for (const name of [hostile, HOSTILE_COMM]) {
    const rect = await page.evaluate((n) => window.__flame.locate(n), name);
    assert.ok(rect && rect.w > 10, `${name}: ${JSON.stringify(rect)}`);
    await page.mouse.move(box.x + rect.x + rect.w / 2, box.y + rect.y + rect.h / 2);
    assert.equal(await page.textContent('[data-testid=tooltip] .tt-title'), name);
  }
  // Searching for the tag's text highlights without creating elements.
  await page.fill('#search', '<b>');
  await page.waitForFunction(() => document.getElementById('search-match').textContent.startsWith('Matched'));
  assert.equal(await page.evaluate(() => document.querySelectorAll('main b, img').length), 0);
  assert.deepEqual(w.dialogs, []);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('filters and scale redraw everything through the URL', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/p/${id}`);
  await page.waitForSelector('body[data-rendered="1"]');
  const before = await page.textContent('#heatmap .legend');
  const cell = (col, row) =>
    page.$eval(
      '#cores [data-testid=cores-canvas]',
      (c, [col, row]) => {
        const o = c.parentElement.querySelector('.grid-overlay').dataset;
        const x = Math.floor((col + 0.5) * Number(o.cellW));
        const y = Math.floor(Number(o.top) + (row + 0.5) * Number(o.cellH));
        return [...c.getContext('2d').getImageData(x, y, 1, 1).data.slice(0, 3)];
      },
      [col, row],
    );
  const EMPTY = [0xf4, 0xf5, 0xf7];
  const burst = await cell(120, 0);
  assert.ok(burst[0] < 60, `CPU 0 at 12 s before filtering: ${burst}`);
  await page.fill('#filters input[name=comm]', 'gc');
  await page.press('#filters input[name=comm]', 'Enter');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('comm') === 'gc');
  await page.waitForFunction((b) => document.querySelector('#heatmap .legend').textContent !== b, before);
  assert.ok(w.requests.some((u) => u.includes('/heatmap?') && u.includes('comm=gc')), 'heatmap refetched with comm=gc');
  assert.ok(w.requests.some((u) => u.includes('/cpus?') && u.includes('comm=gc')), 'cores map refetched with comm=gc');
  await page.waitForSelector('body[data-rendered="1"]');
  // Only CPU 5 ran gc (user code), during [4, 8) s: its row is the full
  // user blue then; the all-CPU burst at 12 s is gone from CPU 0's row.
  assert.deepEqual(await cell(120, 0), EMPTY);
  assert.deepEqual(await cell(50, 0), EMPTY);
  const pegged = await cell(50, 5);
  assert.ok(pegged[0] < 60 && pegged[2] - pegged[0] > 100, `CPU 5 at 5 s: ${pegged}`);
  await page.selectOption('#filters select[name=scale]', 'log');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('scale') === 'log');
  await page.waitForFunction(() => document.querySelector('#heatmap .legend').textContent.includes('enhanced'));
  // Back restores the previous filters and view.
  await page.goBack();
  await page.waitForFunction(() => !new URLSearchParams(location.search).has('scale'));
  assert.equal(await page.inputValue('#filters input[name=comm]'), 'gc');
  assert.ok(!(await page.textContent('#heatmap .legend')).includes('enhanced'));
  assert.deepEqual(w.errors, []);
  await page.close();
});
