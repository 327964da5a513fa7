// The flame and diff pages say what they show and lead back where the user
// came from: the active filters in the heading and title, a range clamped to
// the capture and rounded for reading, a baseline that does not overlap the
// target, "← heatmaps" back to the exact view, and a top-functions table
// that follows the zoom.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { count, PEGGED } from './capture.mjs';
import { watch, tempDir, upload, cellCentre, gridPoint, knownProfile, stopKnown } from './helpers.mjs';

let server, browser, id, records;

before(async () => ({ server, browser, id, records } = await knownProfile()));
after(() => stopKnown({ server, browser }));

async function open(page, path) {
  await page.goto(server.url + path);
  await page.waitForSelector('body[data-rendered="1"]', { timeout: 10_000 });
}

test('the flame and diff pages name every active filter in the heading and title', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  const want = 'CPU 5 · pid 300 · comm gc · function mark · user frames only · idle included';
  await open(page, `/p/${id}/flame?cpu=5&start=4.5&end=7.25&comm=gc&pid=300&function=mark&only=user&idle=1`);
  assert.equal(await page.textContent('[data-testid=active-filters]'), want);
  assert.equal(await page.title(), `known · flame 4.5–7.25 s (2.75 s) · ${want} · Subsecond`);
  await open(page, `/p/${id}/diff?cpu=5&start=6&end=8&start2=4&end2=6`);
  assert.equal(await page.textContent('[data-testid=active-filters]'), 'CPU 5');
  assert.equal(await page.title(), 'known · diff 4–6 s (2 s) → 6–8 s (2 s) · CPU 5 · Subsecond');
  // Without filters the line is absent.
  await open(page, `/p/${id}/flame?start=4&end=8`);
  assert.equal(await page.$('[data-testid=active-filters]'), null);
  assert.equal(await page.title(), 'known · flame 4–8 s (4 s) · Subsecond');
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('a clamped range is what the URL and a copied link say, with a notice; every view writes it alike', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  // The last sample is at 19.989969 s: the whole capture ends 1 ns later.
  await browser.grantClipboard(server.url);
  await open(page, `/p/${id}/flame?start=-5&end=999&cpu=5`);
  const q = new URL(page.url()).searchParams;
  assert.deepEqual([q.get('start'), q.get('end'), q.get('cpu')], ['0', '19.989969001', '5']);
  assert.equal(
    await page.textContent('[role=status][data-testid=clamp-notice]'),
    'start -5 s is before the capture; showing from 0 s; end 999 s is past the end of the capture; showing to 19.99 s.',
  );
  await page.click('#copy-link');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), page.url());
  // The heading and the brush under it write the range the same way.
  const range = '0–19.99 s (19.99 s)';
  const heading = (await page.textContent('[data-testid=range]')).replace(/\s+/g, ' ');
  assert.ok(heading.includes(range), `heading ${heading}`);
  assert.ok((await page.textContent('[data-testid=timeline-label]')).startsWith(`${range} of 19.99 s`));
  // Reloaded, the canonical URL needs no notice.
  await page.reload();
  await page.waitForSelector('body[data-rendered="1"]');
  assert.equal(await page.$('[data-testid=clamp-notice]'), null);
  assert.equal(new URL(page.url()).searchParams.get('end'), '19.989969001');

  // The profile list and the profile page give the capture's duration as
  // the CLI does (first sample to one period after the last), written so.
  await page.goto(server.url + '/');
  const listed = (await page.textContent(`tr[data-id="${id}"] td:nth-child(3)`)).trim();
  assert.match(listed, /^\d+(\.\d{1,3})? s$/);
  await open(page, `/p/${id}`);
  assert.ok((await page.textContent('dl')).includes(`Duration${listed}, the first sample`), 'the profile page gives the same duration');
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('ranges are clamped to the capture and rounded for reading; the baseline comes just before', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  const range = () => page.$eval('[data-testid=range]', (p) => p.textContent.replace('← heatmaps', '').replace(/\s+/g, ' ').trim());
  // The last sample is at 19.989969 s: the whole capture ends 1 ns later.
  await open(page, `/p/${id}/flame?start=-5`);
  assert.equal(await range(), '0–19.99 s (19.99 s) ≈ 07:59:40.51–08:00:00.5 UTC');
  assert.equal(new URL(page.url()).searchParams.get('start'), '0', 'the URL says what the view shows');
  const total = count(records, 0, 20);
  assert.ok((await page.textContent('[data-testid=flame-summary]')).startsWith(`${total.toLocaleString('en-US')} samples`));
  await open(page, `/p/${id}/flame?start=19&end=99`);
  assert.equal(await range(), '19–19.99 s (0.99 s) ≈ 07:59:59.51–08:00:00.5 UTC');

  // The proposed baseline: the same length just before the target; what
  // fits before it when the target starts early; else just after it.
  for (const [q, want] of [
    ['start=12&end=13', ['11', '12']],
    ['start=0.5&end=2', ['0', '0.5']],
    ['start=0&end=5', ['5', '10']],
    ['start=17.5&end=19.25', ['15.75', '17.5']],
  ]) {
    await open(page, `/p/${id}/flame?${q}`);
    const got = [await page.inputValue('[data-testid=compare-start]'), await page.inputValue('[data-testid=compare-end]')];
    assert.deepEqual(got, want, q);
  }
  // Target the whole capture: nothing fits beside it, so nothing is proposed.
  await open(page, `/p/${id}/flame`);
  assert.deepEqual([await page.inputValue('[data-testid=compare-start]'), await page.inputValue('[data-testid=compare-end]')], ['', '']);
  assert.deepEqual(w.errors, []);
  await page.close();
});

// params returns a URL's path and sorted query parameters.
function params(u) {
  const url = new URL(u);
  return url.pathname + '?' + [...url.searchParams].map(([k, v]) => `${k}=${v}`).sort().join('&');
}

test('"← heatmaps" returns to the view the selection was made in', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  // min=2 is a hot-spot parameter (the gc core's 4 s episode stays listed;
  // measure=system would list no episode here, since gc runs in user space).
  const view = `/p/${id}?bucket=0.5&scale=log&rows=25&min=2&comm_regex=.`;
  const back = async () => {
    const nav = page.waitForURL((u) => new URL(u).pathname === `/p/${id}`);
    await page.click('[data-testid=range] a');
    await nav;
    await page.waitForSelector('body[data-rendered="1"]');
    assert.equal(params(page.url()), params(server.url + view));
  };

  // A block of the cores map: CPU 5 during [4, 8) s.
  await open(page, view);
  const a = await gridPoint(page, '#cores .grid-overlay', 8, PEGGED.cpu);
  const b = await gridPoint(page, '#cores .grid-overlay', 15, PEGGED.cpu);
  let nav = page.waitForURL(/\/flame\?/);
  await page.mouse.click(a.x, a.y);
  await page.mouse.click(b.x, b.y);
  await nav;
  await page.waitForSelector('body[data-rendered="1"]');
  assert.equal(new URL(page.url()).searchParams.get('cpu'), '5');
  await back();

  // Heatmap cells: [12, 13) s.
  const h1 = await cellCentre(page, '#heatmap .grid-overlay', 12, 0);
  const h2 = await cellCentre(page, '#heatmap .grid-overlay', 12, 24);
  nav = page.waitForURL(/\/flame\?/);
  await page.mouse.click(h1.x, h1.y);
  await page.mouse.click(h2.x, h2.y);
  await nav;
  await page.waitForSelector('body[data-rendered="1"]');
  // Zoom and search change the flame page's URL; the way back stays.
  await page.fill('#search', 'hot');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('search') === 'hot');
  await back();

  // A hot spot, then the compare form: the diff page leads back too, and so
  // does a reload of it.
  nav = page.waitForURL(/\/flame\?/);
  await page.click('ol[data-testid=hotspots] li a');
  await nav;
  await page.waitForSelector('body[data-rendered="1"]');
  nav = page.waitForURL(/\/diff\?/);
  await page.click('[data-testid=compare] button[type=submit]');
  await nav;
  await page.waitForSelector('body[data-rendered="1"]');
  await page.reload();
  await page.waitForSelector('body[data-rendered="1"]');
  await back();
  assert.deepEqual(w.errors, []);
  await page.close();
});

async function topRows(page) {
  return page.$$eval('[data-testid=top-functions] tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim())));
}

async function hoverFrame(page, name) {
  const box = await page.$eval('[data-testid=flame-canvas]', (c) => c.getBoundingClientRect().toJSON());
  const r = await page.evaluate((n) => window.__flame.locate(n), name);
  assert.ok(r, `${name} is drawn`);
  const at = { x: box.x + r.x + r.w / 2, y: box.y + r.y + r.h / 2 };
  await page.mouse.move(at.x, at.y);
  return at;
}

const tipLines = (page) => page.$$eval('[data-testid=tooltip]:not([hidden]) div', (ds) => ds.map((d) => d.textContent));

test('the top functions and callers follow the zoom; the zoomed frame offers no zoom', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await open(page, `/p/${id}/flame?start=12&end=13`);
  const all = await topRows(page);
  assert.ok(all.length > 5, JSON.stringify(all));
  const at = await hoverFrame(page, 'compute');
  assert.equal((await tipLines(page)).at(-1), 'click to zoom');
  await page.mouse.click(at.x, at.y);
  await page.waitForFunction(() => (new URLSearchParams(location.search).get('zoom') || '').endsWith(';compute'));
  // The pointer has not moved: the tooltip now describes the zoomed frame.
  await page.waitForFunction(() => ![...document.querySelectorAll('[data-testid=tooltip]:not([hidden]) div')].some((d) => d.textContent === 'click to zoom'), null, { timeout: 3000 });
  assert.equal((await tipLines(page))[0], 'compute');

  // Only what the zoomed frame holds, shares of it.
  const hot = count(records, 12, 13, (r) => r.kind === 'hot');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=top-functions] tbody tr').length === 2, null, { timeout: 3000 });
  assert.deepEqual(await topRows(page), [
    ['hot_loop /usr/bin/webapp', hot.toLocaleString('en-US'), '100.0%', hot.toLocaleString('en-US'), '100.0%'],
    ['compute /usr/bin/webapp', '0', '0%', hot.toLocaleString('en-US'), '100.0%'],
  ]);
  assert.match(await page.textContent('[data-testid=top-scope]'), /^within compute /);
  await page.click('[data-testid=top-functions] tbody tr:has-text("hot_loop")');
  assert.deepEqual(await page.$$eval('[data-testid=callers-tree] .cn', (els) => els.map((e) => e.textContent)), ['hot_loop', 'compute', 'main', '_start', 'webapp']);

  await page.click('[data-testid=reset-zoom]');
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=top-functions] tbody tr').length === n, all.length, { timeout: 3000 });
  assert.deepEqual(await topRows(page), all);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('at 800 px the top-functions table shows every column, even beside long C++ names', async () => {
  // A C++ symbol as long as real ones get: the name must give way, not the numbers.
  const long = 'std::_Function_handler<void (std::shared_ptr<arrow::Buffer> const&), arrow::ipc::RecordBatchStreamReaderImpl::ReadNext(std::shared_ptr<arrow::RecordBatch>*)::{lambda(std::shared_ptr<arrow::Buffer> const&)#1}>::_M_invoke';
  const dir = tempDir();
  const path = join(dir, 'long.perf.txt');
  let text = '';
  for (let i = 0; i < 200; i++) {
    const t = (5000 + i / 100).toFixed(6);
    text += `reader 77/77 [000] ${t}: 10101010 cpu-clock:pppH: \n\t55d000001000 ${i % 2 ? long : 'decode'}+0x10 (/usr/lib/libarrow.so)\n\t55d000002000 main+0x10 (/usr/bin/reader)\n\n`;
  }
  writeFileSync(path, text);
  const longID = (await upload(server.url, path, 'long names')).profile.id;
  const page = await browser.ctx.newPage();
  await page.setViewportSize({ width: 800, height: 800 });
  await open(page, `/p/${longID}/flame`);
  const fit = await page.evaluate(() => {
    const box = document.querySelector('.top-scroll');
    const last = document.querySelector('[data-testid=top-functions] thead th:last-child').getBoundingClientRect();
    return { scroll: box.scrollWidth, client: box.clientWidth, last: last.right, edge: box.getBoundingClientRect().right };
  });
  assert.ok(fit.scroll <= fit.client && fit.last <= fit.edge, JSON.stringify(fit));
  await page.close();
});

test('the sandwich of a function: callers above, callees below, following the zoom and the search', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await open(page, `/p/${id}/flame?start=0&end=20`);
  await page.click('[data-testid=top-functions] tbody tr:has-text("serve_request")');
  const total = Number((await page.$eval('[data-testid=top-functions] tbody tr.picked', (tr) => tr.children[3].textContent)).replace(/,/g, ''));
  let s = await page.evaluate(() => window.__flame.sandwich());
  // Callers: serve_request, main, _start, webapp; callees: at least
  // parse_json, memcpy, the hostile frame, write and its kernel frames.
  assert.deepEqual([s.callers, s.total], [4, total]);
  assert.ok(s.callees >= 8, JSON.stringify(s));
  assert.match(await page.textContent('[data-testid=sandwich-head]'), new RegExp(`^serve_request ${total.toLocaleString('en-US')} samples`));
  // The search marks the sandwich's frames too.
  await page.fill('#search', 'parse_json');
  await page.waitForFunction(() => document.getElementById('search-match').textContent.startsWith('Matched'));
  await page.waitForTimeout(50);
  const magenta = await page.$eval('[data-testid=sandwich-callees]', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] === 220 && d[i + 1] === 40 && d[i + 2] === 220) n++;
    return n;
  });
  assert.ok(magenta > 100, `parse_json marked in the callees: ${magenta} px`);

  // Zoomed into compute at [12, 13): hot_loop's sandwich holds the burst alone.
  await open(page, `/p/${id}/flame?start=12&end=13`);
  const box = await page.$eval('[data-testid=flame-canvas]', (c) => c.getBoundingClientRect().toJSON());
  const r = await page.evaluate(() => window.__flame.locate('compute'));
  await page.mouse.click(box.x + r.x + r.w / 2, box.y + r.y + r.h / 2);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=top-functions] tbody tr').length === 2);
  await page.click('[data-testid=top-functions] tbody tr:has-text("hot_loop")');
  s = await page.evaluate(() => window.__flame.sandwich());
  assert.deepEqual(s, { callers: 5, callees: 1, total: count(records, 12, 13, (x) => x.kind === 'hot') });
  assert.deepEqual(w.errors, []);
  await page.close();
});
