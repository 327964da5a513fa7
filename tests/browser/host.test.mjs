// The host page draws a night of captures as one cores × time map: a pause
// between captures is drawn as a gap, not as idle time; a core pegged in the
// kernel is red; the hot spots across the night list the planted burst with
// its marker; a click on a cell of the burst opens that capture's flame
// graph for the cell's CPU and time, and a drag zooms the map.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { startServer, launch, watch, tempDir, upload, shot, postMarker, nightCapture } from './helpers.mjs';

const HOST = 'node-7';
const START = Date.UTC(2026, 10, 30, 3, 0, 0) / 1000; // Unix seconds
const HZ = 49;
const CPUS = 4;
const LENGTH = 60; // seconds per capture
// Capture starts: two back to back, a 60 s pause, a third.
const CAPTURES = [START, START + 60, START + 180];
const BURST = { cpu: 2, start: START + 70, end: START + 80 }; // in the second capture
const MARKER = START + 84;

let server, browser;

before(async () => {
  server = await startServer();
  browser = await launch();
  const dir = tempDir();
  for (const [i, t0] of CAPTURES.entries()) {
    const path = join(dir, `c${i}.txt`);
    writeFileSync(path, nightCapture({ host: HOST, t0, length: LENGTH, hz: HZ, cpus: CPUS, burst: BURST }));
    await upload(server.url, path, `capture-${i}`);
  }
  await postMarker(server.url, HOST, MARKER, 'NETDEV WATCHDOG: eth0 transmit queue 3 timed out');
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

// pixel returns the RGB of the map's canvas at the centre of (cpu row, bucket).
async function pixel(page, row, bucket) {
  return page.evaluate(([row, bucket]) => {
    const map = document.querySelector('#night-map');
    const c = map.querySelector('canvas');
    const g = map.dataset;
    const dpr = c.width / c.getBoundingClientRect().width;
    const x = Math.floor((Number(g.left) + (bucket + 0.5) * Number(g.cellW)) * dpr);
    const y = Math.floor((Number(g.top) + (row + 0.5) * Number(g.rowH)) * dpr);
    const d = c.getContext('2d').getImageData(x, y, 1, 1).data;
    return [d[0], d[1], d[2]];
  }, [row, bucket]);
}

async function cellPoint(page, row, bucket) {
  return page.evaluate(([row, bucket]) => {
    const map = document.querySelector('#night-map');
    const r = map.querySelector('canvas').getBoundingClientRect();
    const g = map.dataset;
    return { x: r.left + Number(g.left) + (bucket + 0.5) * Number(g.cellW), y: r.top + Number(g.top) + (row + 0.5) * Number(g.rowH) };
  }, [row, bucket]);
}

test('the night: gaps as gaps, the pegged core red, hot spot and marker listed, click to the flame graph', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/hosts`);
  await page.click(`[data-testid=hosts] a:text("${HOST}")`);
  await page.waitForURL(`**/hosts/${HOST}`);
  await page.waitForSelector('#night-map[data-buckets]');
  const buckets = Number(await page.$eval('#night-map', (m) => m.dataset.buckets));
  // 240 s and one sample past the end, at the default of at least one
  // second per column: 241 one-second buckets.
  assert.equal(buckets, 241);

  await page.selectOption('#night-measure', 'system');
  const gap = await pixel(page, 0, 150); // 03:02:30, in the pause
  assert.deepEqual(gap, [228, 228, 232], `the pause is drawn ${gap}, not the gap colour`);
  const burst = await pixel(page, BURST.cpu, 75);
  assert.ok(burst[0] > 150 && burst[1] < 80 && burst[2] < 80, `CPU 2 at 03:01:15 is ${burst}; want system red`);
  const idle = await pixel(page, BURST.cpu, 30);
  assert.ok(Math.min(...idle) > 200, `CPU 2 at 03:00:30 is ${idle}; want near white (no system time)`);

  await page.waitForSelector('[data-testid=night-hotspot]');
  const first = await page.textContent('[data-testid=night-hotspot]');
  assert.match(first, /cpu 2 · 2026-11-30 03:01:10–03:01:20 UTC/);
  assert.match(first, /kubelet in mem_cgroup_nr_lru_pages/);
  assert.match(first, /4 s before: NETDEV WATCHDOG/);
  const before = await page.getAttribute('[data-testid=marker-before]', 'href');
  assert.equal(before, `/hosts/${HOST}/flame?from=2026-11-30T03%3A01%3A14Z&to=2026-11-30T03%3A01%3A24Z`);

  await page.waitForSelector('[data-testid=night-jump]');
  assert.match(await page.textContent('[data-testid=night-jump]'), /^kubelet/);
  await shot(page, 'host-night');

  // A click on a burst cell opens its capture's flame graph for that CPU and second.
  const p = await cellPoint(page, BURST.cpu, 72);
  await page.mouse.click(p.x, p.y);
  await page.waitForURL(/\/p\/[a-z2-7]{26}\/flame\?cpu=2&start=12&end=13$/);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('a drag zooms the night; the range goes into the URL', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/hosts/${HOST}`);
  await page.waitForSelector('#night-map[data-buckets]');
  const a = await cellPoint(page, 1, 60);
  const b = await cellPoint(page, 1, 90);
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, a.y);
  await page.mouse.move(b.x, b.y);
  await page.mouse.up();
  await page.waitForURL(/from=2026-11-30T03%3A01%3A00\.000Z&to=2026-11-30T03%3A01%3A31\.000Z/);
  await page.waitForFunction(() => Number(document.querySelector('#night-map').dataset.buckets) === 31);
  // Inside one capture at this zoom, the page offers the capture's own views.
  const open = await page.getAttribute('[data-testid=night-open]', 'href');
  assert.match(open, /^\/p\/[a-z2-7]{26}\?start=0&end=31$/);
  // There, the page says what range the night led to, and opens its views.
  await page.click('[data-testid=night-open]');
  await page.waitForSelector('body[data-rendered="1"]');
  assert.equal(
    (await page.innerText('[data-testid=linked-range]')).replace(/\s+/g, ' ').trim(),
    "The link's range: 0–31 s (31 s) 03:01:00–03:01:31 UTC — its flame graph, its stack chart",
  );
  // Both maps show that range as their selection, as if it had been
  // dragged: the heatmap's first 31 columns, every CPU of the cores map
  // over the same seconds.
  await page.waitForFunction(() => !document.querySelector('[data-testid=selection]').classList.contains('hint'));
  const id = new URL(page.url()).pathname.split('/')[2];
  const flame = await (await fetch(`${server.url}/api/profiles/${id}/flamegraph?start=0&end=31`)).json();
  const samples = flame.total.toLocaleString('en-US');
  assert.equal(await page.innerText('[data-testid=selection]'), `0–31 s (31 s) · 03:01:00–03:01:31 UTC · ${samples} samples`);
  await page.waitForFunction(() => !document.querySelector('[data-testid=cores-selection]').classList.contains('hint'));
  assert.equal(await page.innerText('[data-testid=cores-selection]'), `CPU 0-3 · 0–31 s (31 s) · 03:01:00–03:01:31 UTC · ${samples} samples`);
  const heatCols = Number(await page.getAttribute('#heatmap .grid-overlay', 'data-cols'));
  assert.equal(heatCols, 60);
  assert.deepEqual(await Promise.all([0, 15, 30, 31, 45].map((c) => overlayInk(page, '#heatmap', c, 25))), [true, true, true, false, false]);
  const coreCols = Number(await page.getAttribute('#cores .grid-overlay', 'data-cols'));
  const coreAt = (sec) => Math.floor((sec * coreCols) / LENGTH);
  assert.deepEqual(
    await Promise.all([[0, 0], [15, CPUS - 1], [30.5, 1], [31.5, 0], [45, 2]].map(([sec, row]) => overlayInk(page, '#cores', coreAt(sec), row))),
    [true, true, true, false, false],
  );
  await shot(page, 'profile-linked-range');
  await page.click('[data-testid=linked-flame]');
  await page.waitForURL(/\/flame\?end=31&start=0$/);
  assert.deepEqual(w.errors, []);
  await page.close();
});

// overlayInk reports whether the selection overlay of a map (#heatmap or
// #cores) is drawn over the centre of its cell (col, display row).
function overlayInk(page, map, col, row) {
  return page.$eval(
    `${map} .grid-overlay`,
    (c, [col, row]) => {
      const g = c.dataset;
      const dpr = c.width / c.getBoundingClientRect().width;
      const x = Math.floor((col + 0.5) * Number(g.cellW) * dpr);
      const y = Math.floor((Number(g.top) + (row + 0.5) * Number(g.cellH)) * dpr);
      return c.getContext('2d').getImageData(x, y, 1, 1).data[3] > 0;
    },
    [col, row],
  );
}

// shiftDrag drags with Shift held from (row a, bucket a) to (row b, bucket
// b) of the night's map: a range to compare.
async function shiftDrag(page, [ra, ba], [rb, bb]) {
  const a = await cellPoint(page, ra, ba);
  const b = await cellPoint(page, rb, bb);
  await page.keyboard.down('Shift');
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2);
  await page.mouse.move(b.x, b.y);
  await page.mouse.up();
  await page.keyboard.up('Shift');
}

const panel = (page, id) => page.innerText(`[data-testid=${id}]`).then((t) => t.replace(/\s+/g, ' ').trim());

test('compare across captures: a Shift+dragged burst against the previous capture, a hot spot against a picked range', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  const ids = Object.fromEntries((await (await fetch(`${server.url}/api/hosts/${HOST}/captures`)).json()).captures.map((c) => [c.name, c.id]));
  assert.deepEqual(Object.keys(ids), ['capture-0', 'capture-1', 'capture-2']);
  await page.goto(`${server.url}/hosts/${HOST}`);
  await page.waitForSelector('#night-map[data-buckets]');
  assert.equal(await page.getAttribute('[data-testid=compare-open]', 'aria-disabled'), 'true');

  // The burst's seconds on CPU 2: the target; by default its baseline is
  // the same place in the capture before.
  await shiftDrag(page, [BURST.cpu, 70], [BURST.cpu, 79]);
  await page.waitForFunction(() => document.querySelector('[data-testid=compare-target]').textContent !== 'none yet');
  assert.equal(await panel(page, 'compare-target'), '2026-11-30 03:01:10–03:01:20 UTC in capture-1, 10–20 s (10 s)');
  await page.waitForFunction(() => /capture-0/.test(document.querySelector('[data-testid=compare-base]').textContent));
  assert.equal(await panel(page, 'compare-base'), '2026-11-30 03:00:10–03:00:20 UTC in capture-0, 10–20 s (10 s)');
  assert.equal(await page.inputValue('[data-testid=compare-cpu]'), '2');
  assert.ok(await page.isVisible('[data-testid=pick-target]') && (await page.isVisible('[data-testid=pick-base]')));
  await shot(page, 'host-compare', { fullPage: true });
  // The choices are in the URL: a reload brings back the panel, both
  // marks in the same places, and the same link.
  const firstDiff = await page.getAttribute('[data-testid=compare-open]', 'href');
  assert.equal(new URL(page.url()).search, '?compare_from=2026-11-30T03%3A01%3A10Z&compare_to=2026-11-30T03%3A01%3A20Z&compare_cpu=2');
  await samePanelAfterReload(page, firstDiff);
  await page.click('[data-testid=compare-open]');
  await page.waitForURL(/\/diff\?/);
  const u = new URL(page.url());
  assert.equal(u.pathname, `/hosts/${HOST}/diff`);
  assert.deepEqual(['cpu', 'from', 'to', 'from2', 'to2'].map((k) => u.searchParams.get(k)), ['2', '2026-11-30T03:01:10Z', '2026-11-30T03:01:20Z', '2026-11-30T03:00:10Z', '2026-11-30T03:00:20Z']);
  await page.waitForSelector('body[data-rendered="1"]');

  // The diff page says which range of the host each side is.
  assert.equal(await panel(page, 'diff-base'), 'Baseline node-7 1 capture 10 s 2026-11-30 03:00:10–03:00:20 UTC');
  assert.equal(await panel(page, 'diff-target'), 'Target node-7 1 capture 10 s 2026-11-30 03:01:10–03:01:20 UTC');
  assert.equal(await page.getAttribute('[data-testid=diff-base] a', 'href'), `/hosts/${HOST}`);
  await shot(page, 'diff-across-captures');
  // The burst's function grew: it is new in the target, 0 samples before.
  await page.waitForSelector('#changes[data-rendered="1"]');
  const row = await page.$$eval('[data-testid=diff-functions] tbody tr', (trs) =>
    trs.map((tr) => ({ change: tr.dataset.change, cells: [...tr.querySelectorAll('td')].map((td) => td.textContent.trim()) })).find((r) => r.cells[0].startsWith('mem_cgroup_nr_lru_pages')),
  );
  assert.ok(row, 'mem_cgroup_nr_lru_pages is not in the table of changes');
  assert.equal(row.change, 'new');
  assert.deepEqual(row.cells.slice(4, 6), ['0', String(10 * HZ)]);
  // Back on the night, the comparison is still set up.
  await page.goBack();
  await page.waitForSelector('#night-map[data-buckets]');
  await page.waitForFunction(() => !document.querySelector('[data-testid=pick-base]').hidden);
  assert.equal(await panel(page, 'compare-target'), '2026-11-30 03:01:10–03:01:20 UTC in capture-1, 10–20 s (10 s)');
  assert.equal(await page.getAttribute('[data-testid=compare-open]', 'href'), firstDiff);

  // Back on the night: the hot spot as the target, against 2 minutes
  // earlier (a time no capture holds), then against a range picked on the
  // third capture.
  await page.goto(`${server.url}/hosts/${HOST}`);
  await page.waitForSelector('[data-testid=night-hotspot-compare]');
  await page.click('[data-testid=night-hotspot-compare]');
  await page.waitForFunction(() => document.querySelector('[data-testid=compare-target]').textContent !== 'none yet');
  assert.equal(await panel(page, 'compare-target'), '2026-11-30 03:01:10–03:01:20 UTC in capture-1, 10–20 s (10 s)');
  await page.selectOption('[data-testid=compare-mode]', 'earlier');
  await page.fill('[data-testid=compare-minutes]', '2');
  await page.waitForFunction(() => /no capture/.test(document.querySelector('[data-testid=compare-base]').textContent));
  assert.equal(await panel(page, 'compare-base'), 'no capture holds 02:59:10–02:59:20 UTC: choose another baseline');
  assert.equal(await page.getAttribute('[data-testid=compare-open]', 'href'), null);
  await page.selectOption('[data-testid=compare-mode]', 'pick');
  await shiftDrag(page, [0, 200], [CPUS - 1, 209]);
  await page.waitForFunction(() => /capture-2/.test(document.querySelector('[data-testid=compare-base]').textContent));
  assert.equal(await panel(page, 'compare-base'), '2026-11-30 03:03:20–03:03:30 UTC in capture-2, 20–30 s (10 s)');
  assert.equal(await panel(page, 'compare-target'), '2026-11-30 03:01:10–03:01:20 UTC in capture-1, 10–20 s (10 s)');
  const href = new URL(await page.getAttribute('[data-testid=compare-open]', 'href'), server.url);
  assert.equal(href.pathname, `/hosts/${HOST}/diff`);
  assert.deepEqual(['cpu', 'from', 'to', 'from2', 'to2'].map((k) => href.searchParams.get(k)), ['2', '2026-11-30T03:01:10Z', '2026-11-30T03:01:20Z', '2026-11-30T03:03:20Z', '2026-11-30T03:03:30Z']);
  const q = new URL(page.url()).searchParams;
  assert.deepEqual(
    ['compare_from', 'compare_to', 'compare_cpu', 'compare_with', 'compare_from2', 'compare_to2'].map((k) => q.get(k)),
    ['2026-11-30T03:01:10Z', '2026-11-30T03:01:20Z', '2', 'pick', '2026-11-30T03:03:20Z', '2026-11-30T03:03:30Z'],
  );
  await samePanelAfterReload(page, href.pathname + href.search);

  // So is a baseline some minutes earlier.
  await page.selectOption('[data-testid=compare-mode]', 'earlier');
  await page.fill('[data-testid=compare-minutes]', '0.5');
  await page.waitForFunction(() => /capture-0/.test(document.querySelector('[data-testid=compare-base]').textContent));
  assert.equal(await panel(page, 'compare-base'), '2026-11-30 03:00:40–03:00:50 UTC in capture-0, 40–50 s (10 s)');
  assert.equal(new URL(page.url()).searchParams.get('compare_earlier'), '30');
  assert.equal(new URL(page.url()).searchParams.get('compare_from2'), null);
  await samePanelAfterReload(page, await page.getAttribute('[data-testid=compare-open]', 'href'));
  assert.equal(await page.inputValue('[data-testid=compare-minutes]'), '0.5');
  assert.deepEqual(w.errors, []);
  await page.close();
});

// samePanelAfterReload reloads the host page and checks that the Compare
// panel comes back as it was: its sides, CPUs, baseline mode, both marks
// where they were, and the link to the differential graph, diff.
async function samePanelAfterReload(page, diff) {
  const state = () =>
    page.evaluate(() => {
      const box = (id) => {
        const el = document.querySelector(`[data-testid=${id}]`);
        return el.hidden ? 'hidden' : `${el.style.left} ${el.style.width}`;
      };
      const text = (id) => document.querySelector(`[data-testid=${id}]`).textContent.replace(/\s+/g, ' ').trim();
      return {
        target: text('compare-target'),
        base: text('compare-base'),
        cpu: document.querySelector('[data-testid=compare-cpu]').value,
        mode: document.querySelector('[data-testid=compare-mode]').value,
        marks: [box('pick-target'), box('pick-base')],
        open: document.querySelector('[data-testid=compare-open]').getAttribute('href'),
      };
    });
  const before = await state();
  assert.equal(before.open, diff);
  assert.ok(!before.marks.includes('hidden'), `marks ${before.marks}`);
  const url = page.url();
  await page.reload();
  await page.waitForSelector('#night-map[data-buckets]');
  await page.waitForFunction(() => document.querySelector('[data-testid=compare-open]').getAttribute('href') !== null);
  await page.waitForFunction(() => !document.querySelector('[data-testid=pick-base]').hidden);
  assert.deepEqual(await state(), before);
  assert.equal(page.url(), url);
}
