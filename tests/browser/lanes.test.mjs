// The host page's lanes: the host's series under the cores map, on its
// columns. A night with a burst in the kernel on CPU 2 and cpu.sys series
// at 1 s for every CPU (100% on CPU 2 during the burst, 2% elsewhere): the
// cpu.sys lane's hottest column for CPU 2 is the map's, at the same time
// within 10 ms, before and after a zoom; the memory cgroups line is drawn
// with its largest value labelled; the picker keeps the lanes in the URL;
// a host without series says how to record them; axe finds nothing
// serious in light or dark mode.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { AxeBuilder } from '@axe-core/playwright';
import { startServer, launch, watch, tempDir, upload, shot, copyToDocs, postMarker, nightCapture, contrast } from './helpers.mjs';

const HOST = 'lanes-node';
const BARE = 'bare-node';
const CPUS = 4;
const HZ = 3;
const T = (iso) => Date.parse(iso) / 1000; // Unix seconds
const T0 = T('2026-11-30T02:00:00Z');
const LENGTH = 900; // two captures back to back: 1,800 s, 2 s columns
const K = 2; // the CPU of the burst
const BURST = { cpu: K, start: T0 + 1000, end: T0 + 1020 };
const MARKER = T0 + 1024;
const MEM_TOP = 60000;

// postSeries stores series of host through the API.
async function postSeries(url, host, series) {
  const r = await fetch(`${url}/api/hosts/${host}/series`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ series }),
  });
  if (r.status !== 200) throw new Error(`POST series: ${r.status} ${await r.text()}`);
}

let server, browser;

before(async () => {
  server = await startServer();
  browser = await launch();
  const dir = tempDir();
  for (const i of [0, 1]) {
    const path = join(dir, `c${i}.txt`);
    writeFileSync(path, nightCapture({ host: HOST, t0: T0 + i * LENGTH, length: LENGTH, hz: HZ, cpus: CPUS, burst: BURST }));
    await upload(server.url, path, `night-${i}`);
  }
  const bare = join(dir, 'bare.txt');
  writeFileSync(bare, nightCapture({ host: BARE, t0: T0, length: 30, hz: HZ, cpus: 2, burst: { cpu: 0, start: 0, end: 0 } }));
  await upload(server.url, bare, 'bare');
  await postMarker(server.url, HOST, MARKER, 'NETDEV WATCHDOG: eth0 transmit queue 3 timed out');

  // cpu.sys at 1 s: the point at t covers [t − 1, t).
  const series = [];
  for (let cpu = 0; cpu < CPUS; cpu++) {
    const points = [];
    for (let t = T0 + 1; t <= T0 + 2 * LENGTH; t++) {
      const burst = cpu === K && t - 1 >= BURST.start && t - 1 < BURST.end;
      points.push({ t: t * 1e9, v: burst ? 100 : 2 + ((t + cpu) % 3) * 0.5 });
    }
    series.push({ name: 'cpu.sys', cpu, points });
  }
  // Memory cgroups piling up from 200 to 60,000, a point every 10 s.
  const mem = [];
  const n = (2 * LENGTH - 10) / 10;
  for (let i = 0; i < n; i++) mem.push({ t: (T0 + 10 + i * 10) * 1e9, v: Math.round(200 + (MEM_TOP - 200) * (i / (n - 1)) ** 2) });
  series.push({ name: 'cgroups', cpu: -1, label: 'memory', points: mem });
  series.push({ name: 'cgroups', cpu: -1, label: 'cpu', points: mem.map((p) => ({ t: p.t, v: 40 })) });
  await postSeries(server.url, HOST, series);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

// aligned reads the map's grid and the cpu.sys lane as drawn (the test
// build's hooks) and returns, for CPU k, the hottest column of each (the
// first of the largest), the columns at least half busy in each, and the
// time each puts at its hottest column.
function aligned(page, k = K) {
  return page.evaluate((k) => {
    const g = window.__night;
    const d = window.__lanes['cpu.sys'];
    const argmax = (row) => row.reduce((best, v, b) => (v !== null && v > row[best] ? b : best), 0);
    const mapRow = g.system[g.cpus.indexOf(k)];
    const laneRow = d.rows[d.cpus.indexOf(k)];
    const mb = argmax(mapRow);
    const lb = argmax(laneRow);
    return {
      map: { col: mb, ns: g.from_ns + mb * g.bucket_ns, hot: mapRow.flatMap((v, b) => (v >= 0.5 ? [b] : [])), buckets: g.buckets, from: g.from_ns, bucket: g.bucket_ns },
      lane: { col: lb, ns: d.lane.from_ns + lb * d.lane.bucket_ns, hot: laneRow.flatMap((v, b) => (v !== null && v >= 50 ? [b] : [])), buckets: laneRow.length, from: d.lane.from_ns, bucket: d.lane.bucket_ns },
      rows: { map: g.cpus, lane: d.cpus },
    };
  }, k);
}

// sameQuery checks that each lane was asked for with the map's very query.
function sameQuery(requests, from) {
  const q = (u) => {
    const p = new URL(u).searchParams;
    p.delete('name');
    p.sort();
    return p.toString();
  };
  const grids = requests.filter((u) => u.includes('/timeline')).map(q);
  const lanes = requests.filter((u) => u.includes('/series?') && new URL(u).searchParams.get('from') === from).map(q);
  assert.ok(lanes.length >= 1, `no lane asked for from=${from}: ${requests.filter((u) => u.includes('/series'))}`);
  for (const l of lanes) assert.ok(grids.includes(l), `lane query ${l}; the map's ${grids}`);
}

test('the cpu.sys lane lights the map\'s core in the map\'s column, before and after a zoom; the memory line; the picker', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/hosts/${HOST}`);
  await page.waitForSelector('[data-testid=lane][data-kind="cpu.sys"] [data-testid=lane-canvas]');
  await page.waitForFunction(() => window.__lanes && window.__night);

  // (a) The same rows and columns, the same hottest column for CPU 2, at
  // the same time: the burst's first second.
  let a = await aligned(page);
  assert.deepEqual(a.rows.lane, a.rows.map);
  assert.equal(a.map.buckets, 901);
  assert.deepEqual([a.lane.buckets, a.lane.from, a.lane.bucket], [a.map.buckets, a.map.from, a.map.bucket]);
  assert.equal(a.lane.col, a.map.col, `lane's hottest column ${a.lane.col}; the map's ${a.map.col}`);
  assert.ok(Math.abs(a.lane.ns - a.map.ns) <= 10e6, `lane at ${a.lane.ns}, map at ${a.map.ns}`);
  assert.equal(a.map.ns, BURST.start * 1e9);
  assert.deepEqual(a.lane.hot, a.map.hot);
  assert.equal(a.map.hot.length, 10);
  assert.equal(await page.getAttribute('[data-testid=lane][data-kind="cpu.sys"]', 'data-aligned'), 'true');
  assert.match(await page.getAttribute('[data-testid=lane][data-kind="cpu.sys"] [data-testid=lane-plot]', 'aria-label'), /^cpu\.sys \(% of a CPU\) per CPU, 4 CPUs: highest 100\.0% on CPU 2 at 2026-11-30 02:16:40 UTC$/);
  sameQuery(w.requests, null);
  // The tooltip of CPU 2's hottest cell: its CPU, its time, its value.
  const cell = await page.$eval('[data-testid=lane][data-kind="cpu.sys"] [data-testid=lane-plot]', (p, col) => {
    const r = p.getBoundingClientRect();
    const map = document.querySelector('#night-map').dataset;
    return { x: r.left + Number(p.dataset.left) + (col + 0.5) * Number(map.cellW), y: r.top + (p.dataset.cpus.split(',').indexOf('2') + 0.5) * Number(p.dataset.rowH) };
  }, a.lane.col);
  await page.mouse.move(cell.x, cell.y);
  assert.deepEqual(await page.$$eval('[data-testid=tooltip]:not([hidden]) div', (ds) => ds.map((d) => d.textContent)), [
    'cpu 2 · 2026-11-30 02:16:40 UTC – 02:16:42 (2 s)',
    'cpu.sys 100.0%',
  ]);
  await page.mouse.move(0, 0);

  // (b) The memory cgroups line, its largest value labelled; kinds with
  // nothing recorded say so in a line.
  const cg = '[data-testid=lane][data-kind=cgroups]';
  assert.equal(await page.textContent(`${cg} [data-testid=lane-max]`), String(MEM_TOP));
  assert.deepEqual(await page.$$eval(`${cg} [data-testid=lane-key]`, (ks) => ks.map((k) => k.textContent)), ['cpu · max 40', `memory · max ${MEM_TOP}`]);
  const d = await page.getAttribute(`${cg} path[data-label=memory]`, 'd');
  assert.ok(d && (d.match(/L/g) || []).length > 100, `memory line: ${d?.slice(0, 80)}`);
  assert.match(await page.getAttribute(`${cg} [data-testid=lane-plot]`, 'aria-label'), /memory from 200 to 60000, max 60000 at /);
  assert.equal(await page.textContent('[data-testid=lane][data-kind="cgroup.dying"]'), 'no cgroup.dying recorded in this range');
  assert.equal(await page.isHidden('[data-testid=lanes-hint]'), true);

  // (c) The picker, from the keyboard: cgroup.dying off puts state in the
  // URL; a reload keeps it, and so does Back from another page.
  await page.focus('input[name=lane][value="cgroup.dying"]');
  await page.keyboard.press('Space');
  await page.waitForFunction(() => !document.querySelector('[data-testid=lane][data-kind="cgroup.dying"]'));
  assert.equal(new URL(page.url()).searchParams.get('state'), 'cpu.sys,cgroups,net.errors');
  await page.reload();
  await page.waitForSelector('[data-testid=lane][data-kind="cpu.sys"] [data-testid=lane-canvas]');
  assert.equal(await page.isChecked('input[name=lane][value="cgroup.dying"]'), false);
  assert.equal(await page.isChecked('input[name=lane][value="cgroups"]'), true);
  assert.deepEqual(await page.$$eval('[data-testid=lane]', (ls) => ls.map((l) => l.dataset.kind)), ['cpu.sys', 'cgroups', 'net.errors']);
  await page.goto(`${server.url}/hosts`);
  await page.goBack();
  await page.waitForSelector('[data-testid=lane][data-kind="cpu.sys"] [data-testid=lane-canvas]');
  assert.deepEqual(await page.$$eval('[data-testid=lane]', (ls) => ls.map((l) => l.dataset.kind)), ['cpu.sys', 'cgroups', 'net.errors']);
  assert.equal(await page.isChecked('input[name=lane][value="cgroup.dying"]'), false);
  // A kind checked comes last.
  await page.focus('input[name=lane][value=irq]');
  await page.keyboard.press('Space');
  await page.waitForSelector('[data-testid=lane][data-kind=irq] [data-testid=lane-none]');
  assert.equal(new URL(page.url()).searchParams.get('state'), 'cpu.sys,cgroups,net.errors,irq');
  assert.deepEqual(await page.$$eval('[data-testid=lane]', (ls) => ls.map((l) => l.dataset.kind)), ['cpu.sys', 'cgroups', 'net.errors', 'irq']);

  // (d) A zoom from the keyboard to the burst's columns: the lanes are
  // asked for the new range and still line up, now at 1 s.
  await page.waitForFunction(() => window.__lanes?.['cpu.sys']);
  await page.focus('#night-map');
  await page.keyboard.press('Home');
  for (let i = 0; i < 5; i++) await page.keyboard.press('PageDown'); // 450
  for (let i = 0; i < 45; i++) await page.keyboard.press('ArrowRight'); // 495
  for (let i = 0; i < 19; i++) await page.keyboard.press('Shift+ArrowRight'); // to 514
  await page.keyboard.press('Enter');
  await page.waitForURL(/from=2026-11-30T02%3A16%3A30\.000Z&to=2026-11-30T02%3A17%3A10\.000Z/);
  await page.waitForFunction(() => {
    const g = window.__night;
    const l = window.__lanes?.['cpu.sys']?.lane;
    return g.buckets === 40 && l && l.from_ns === g.from_ns && l.bucket_ns === g.bucket_ns;
  });
  a = await aligned(page);
  assert.equal(a.map.bucket, 1e9);
  assert.equal(a.lane.col, a.map.col);
  assert.ok(Math.abs(a.lane.ns - a.map.ns) <= 10e6, `after the zoom: lane at ${a.lane.ns}, map at ${a.map.ns}`);
  assert.equal(a.map.ns, BURST.start * 1e9);
  assert.deepEqual(a.lane.hot, a.map.hot);
  assert.equal(a.map.hot.length, 20);
  sameQuery(w.requests, '2026-11-30T02:16:30.000Z');
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('a host without series: no lanes, a hint how to record them', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/hosts/${BARE}`);
  await page.waitForSelector('[data-testid=lanes-hint]:not([hidden])');
  assert.match(await page.textContent('[data-testid=lanes-hint]'), /subsecond record.*subsecond state import/);
  assert.equal(await page.$('[data-testid=lane]'), null);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('axe-core finds nothing serious on the lanes, light or dark; the screenshot', async () => {
  const found = [];
  for (const scheme of ['light', 'dark']) {
    const page = await browser.ctx.newPage();
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(`${server.url}/hosts/${HOST}?from=2026-11-30T02:14:00Z&to=2026-11-30T02:19:00Z`);
    await page.waitForSelector('[data-testid=lane][data-kind=cgroups] [data-testid=lane-max]');
    await page.waitForLoadState('networkidle');
    const r = await new AxeBuilder({ page }).analyze();
    for (const v of r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')) {
      found.push(`${scheme}: ${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
    }
    // The lines 3:1 against the page, the labels 4.5:1.
    const bg = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    const colours = await page.$$eval('[data-testid=lane] path.lane-line, [data-testid=lane-max], [data-testid=lane-key], .lane-help, [data-testid=lane-none]', (els) =>
      els.map((e) => [e.getAttribute('class') || e.dataset.testid, e.tagName === 'path' ? getComputedStyle(e).stroke : e.tagName === 'text' ? getComputedStyle(e).fill : getComputedStyle(e).color, e.tagName === 'path' ? 3 : 4.5]),
    );
    assert.ok(colours.length >= 6, `${colours.length} lane colours`);
    for (const [what, c, want] of colours) assert.ok(contrast(c, bg) >= want, `${scheme} ${what}: ${c} has ${contrast(c, bg).toFixed(2)}:1 against the page`);
    if (scheme === 'light') {
      const top = await page.$eval('[data-testid=night-controls], .night-controls', (e) => e.getBoundingClientRect().top + window.scrollY);
      const bottom = await page.$eval('[data-testid=night-lanes]', (e) => e.getBoundingClientRect().bottom + window.scrollY);
      const path = await shot(page, 'host-lanes', { clip: { x: 0, y: top - 8, width: 1440, height: bottom - top + 16 }, fullPage: true });
      copyToDocs(path, 'host-lanes.png');
    }
    await page.close();
  }
  assert.deepEqual(found, []);
});
