// A capture's lanes: its host's series under its cores map, on the map's
// time axis. A one-minute capture on the realtime clock with a burst in the
// kernel on CPU 2 and cpu.sys series at 1 s for every CPU (100% on CPU 2
// during the burst): the cpu.sys lane's hottest column for CPU 2 lies under
// the map's hottest cells of CPU 2, at the same wall-clock second within
// 10 ms and at the same x within a pixel, at the map's own bucket and after
// the filter form changes it to 0.1 s; state=none shows no lanes; a host
// without series shows none and no error; axe finds nothing serious.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { AxeBuilder } from '@axe-core/playwright';
import { startServer, launch, watch, tempDir, upload, nightCapture } from './helpers.mjs';

const HOST = 'caplanes-node';
const BARE = 'caplanes-bare';
const CPUS = 4;
const HZ = 49;
const T0 = Date.parse('2026-11-30T02:00:00Z') / 1000; // Unix seconds
const LENGTH = 60;
const K = 2; // the CPU of the burst
const BURST = { cpu: K, start: T0 + 20, end: T0 + 30 };

let server, browser, id, bare;

before(async () => {
  server = await startServer();
  browser = await launch();
  const dir = tempDir();
  const path = join(dir, 'c.txt');
  writeFileSync(path, nightCapture({ host: HOST, t0: T0, length: LENGTH, hz: HZ, cpus: CPUS, burst: BURST }));
  id = (await upload(server.url, path, 'caplanes')).profile.id;
  const barePath = join(dir, 'bare.txt');
  writeFileSync(barePath, nightCapture({ host: BARE, t0: T0, length: 20, hz: HZ, cpus: 2, burst: { cpu: 0, start: 0, end: 0 } }));
  bare = (await upload(server.url, barePath, 'bare')).profile.id;

  // cpu.sys at 1 s: the point at t covers [t − 1, t); a memory cgroups
  // line beside it.
  const series = [];
  for (let cpu = 0; cpu < CPUS; cpu++) {
    const points = [];
    for (let t = T0 + 1; t <= T0 + LENGTH; t++) {
      const burst = cpu === K && t - 1 >= BURST.start && t - 1 < BURST.end;
      points.push({ t: t * 1e9, v: burst ? 100 : 2 + ((t + cpu) % 3) * 0.5 });
    }
    series.push({ name: 'cpu.sys', cpu, points });
  }
  const mem = [];
  for (let t = T0 + 5; t <= T0 + LENGTH; t += 5) mem.push({ t: t * 1e9, v: 200 + t - T0 });
  series.push({ name: 'cgroups', cpu: -1, label: 'memory', points: mem });
  const r = await fetch(`${server.url}/api/hosts/${HOST}/series`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ series }) });
  assert.equal(r.status, 200, await r.text());
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

// aligned reads the cores map and the cpu.sys lane as drawn (the test
// build's hooks, the lanes' data attributes and the canvases' places) and
// returns, for CPU k, the wall-clock time and client x of the map's first
// hottest cell and of the lane's first hottest column, and the wall-clock
// seconds each holds at least half busy in the kernel.
function aligned(page, k = K) {
  return page.evaluate((k) => {
    const d = window.__cores;
    const l = window.__lanes['cpu.sys'];
    const mapFrom = Number(document.querySelector('#profile-lanes').dataset.mapFromNs);
    const argmax = (row) => row.reduce((best, v, b) => (v !== null && v > row[best] ? b : best), 0);
    const mapRow = d.system[d.cpus.indexOf(k)];
    const laneRow = l.rows[l.cpus.indexOf(k)];
    const mb = argmax(mapRow);
    const lb = argmax(laneRow);
    const cellW = Number(document.querySelector('#cores .grid-overlay').dataset.cellW);
    const base = document.querySelector('#cores .grid-base').getBoundingClientRect().left;
    const lane = document.querySelector('#profile-lanes [data-kind="cpu.sys"] [data-testid=lane-canvas]').getBoundingClientRect().left;
    const second = (ns) => Math.floor(ns / 1e9);
    return {
      map: { ns: mapFrom + mb * d.bucket_ns, x: base + mb * cellW, cellW, bucket: d.bucket_ns, seconds: [...new Set(mapRow.flatMap((v, b) => (v >= 0.5 ? [second(mapFrom + b * d.bucket_ns)] : [])))] },
      lane: {
        ns: l.lane.from_ns + lb * l.lane.bucket_ns,
        x: lane + l.edges[lb],
        right: lane + l.edges[lb + 1],
        bucket: l.lane.bucket_ns,
        seconds: laneRow.flatMap((v, b) => (v !== null && v >= 50 ? [second(l.lane.from_ns + b * l.lane.bucket_ns)] : [])),
      },
      rows: { map: d.cpus, lane: l.cpus },
    };
  }, k);
}

// check asserts that the lane's hottest column lies under the map's
// hottest cells: the same second, the same x, the same burst.
function check(a, when) {
  assert.deepEqual(a.rows.lane, a.rows.map, `${when}: rows`);
  assert.equal(a.lane.bucket, 1e9, `${when}: lane bucket`);
  assert.ok(Math.abs(a.lane.ns - a.map.ns) <= 10e6, `${when}: lane's hottest column at ${a.lane.ns}, the map's hottest cell at ${a.map.ns}`);
  assert.equal(a.map.ns, BURST.start * 1e9, `${when}: the map's hottest cell`);
  assert.ok(Math.abs(a.lane.x - a.map.x) <= 1, `${when}: lane's hottest column at x ${a.lane.x}, the map's hottest cell at ${a.map.x}`);
  // The column ends where the map's cell one second later begins.
  const end = a.map.x + (1e9 / a.map.bucket) * a.map.cellW;
  assert.ok(Math.abs(a.lane.right - end) <= 1, `${when}: lane's hottest column ends at x ${a.lane.right}, the map's second at ${end}`);
  assert.deepEqual(a.lane.seconds, a.map.seconds, `${when}: the burst's seconds`);
  assert.equal(a.map.seconds.length, BURST.end - BURST.start);
}

test("the cpu.sys lane's hottest column lies under the cores map's hottest cells, at the map's bucket and at 0.1 s", async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/p/${id}`);
  await page.waitForSelector('#profile-lanes [data-testid=lane][data-kind="cpu.sys"] [data-testid=lane-canvas]');
  await page.waitForFunction(() => window.__lanes?.['cpu.sys'] && window.__cores);
  assert.equal(await page.isVisible('[data-testid=profile-lanes]'), true);
  const first = await aligned(page);
  check(first, 'auto bucket');
  assert.ok(first.map.bucket > 1e8, `auto bucket ${first.map.bucket}`);
  // The lanes were asked for the capture's wall-clock span at 1 s.
  const asked = w.requests.filter((u) => u.includes(`/api/hosts/${HOST}/series?`)).map((u) => new URL(u).searchParams);
  assert.ok(asked.length >= 1);
  for (const q of asked) assert.deepEqual([q.get('from'), q.get('to'), q.get('bucket')], ['2026-11-30T02:00:00Z', '2026-11-30T02:01:00Z', '1']);
  assert.match(await page.getAttribute('#profile-lanes [data-kind="cpu.sys"] [data-testid=lane-plot]', 'aria-label'), /^cpu\.sys \(% of a CPU\) per CPU, 4 CPUs: highest 100\.0% on CPU 2 at 2026-11-30 02:00:20 UTC$/);
  assert.equal(await page.textContent('#profile-lanes [data-kind=cgroups] [data-testid=lane-max]'), '260');

  // The filter form's bucket: the map is drawn again at 0.1 s, the lanes
  // follow it.
  await page.fill('form#filters input[name=bucket]', '0.1');
  await page.click('form#filters button[type=submit]');
  await page.waitForFunction(() => window.__cores?.bucket_ns === 1e8);
  await page.waitForSelector('body[data-rendered="1"]');
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  check(await aligned(page), 'bucket 0.1 s');
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('state=none shows no lanes; a host without series shows none and no error', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/p/${id}?state=none`);
  await page.waitForSelector('body[data-rendered="1"]');
  await page.waitForLoadState('networkidle');
  assert.equal(await page.$('[data-testid=lane]'), null);
  assert.equal(await page.isChecked('#profile-lanes input[name=lane][value="cpu.sys"]'), false);

  await page.goto(`${server.url}/p/${bare}`);
  await page.waitForSelector('body[data-rendered="1"]');
  await page.waitForLoadState('networkidle');
  assert.equal(await page.$('[data-testid=lane]'), null);
  assert.equal(await page.isHidden('[data-testid=profile-lanes]'), true);
  assert.equal(await page.$('#profile-lanes .error'), null);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('axe-core finds nothing serious on a capture page with its lanes, light or dark', async () => {
  const found = [];
  for (const scheme of ['light', 'dark']) {
    const page = await browser.ctx.newPage();
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(`${server.url}/p/${id}`);
    await page.waitForSelector('#profile-lanes [data-testid=lane][data-kind=cgroups] [data-testid=lane-max]');
    await page.waitForLoadState('networkidle');
    const r = await new AxeBuilder({ page }).analyze();
    for (const v of r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')) {
      found.push(`${scheme}: ${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
    }
    await page.close();
  }
  assert.deepEqual(found, []);
});
