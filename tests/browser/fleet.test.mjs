// The fleet page: a row per host with its labels (a hostile one shown as
// text, never run), a search that ranks the hosts and reorders the map,
// and a click on a cell that opens the host's night at that time.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launch, watch, shot, nightCapture } from './helpers.mjs';

const T = (iso) => Date.parse(iso) / 1000; // Unix seconds
const START = T('2026-11-30T03:00:00Z');
const HOSTS = [
  { host: 'node-a', labels: ['zone=east', 'owner=<script>alert(1)</script> "q" ü'], burst: null },
  { host: 'node-b', labels: ['zone=east'], burst: null },
  { host: 'node-c', labels: ['zone=west'], burst: { cpu: 1, start: START + 120, end: START + 150 } },
];
const NONE = { cpu: -1, start: 0, end: 0 };

let server, browser;

before(async () => {
  server = await startServer();
  browser = await launch();
  for (const h of HOSTS) {
    for (let i = 0; i < 3; i++) {
      const body = nightCapture({ host: h.host, t0: START + i * 60, length: 60, hz: 19, cpus: 2, burst: h.burst || NONE });
      const q = new URLSearchParams({ name: `${h.host}-${i}`, boot: String(START - 86400) });
      for (const l of h.labels) q.append('label', l);
      const r = await fetch(`${server.url}/api/profiles?${q}`, { method: 'POST', body });
      if (r.status !== 201) throw new Error(`upload ${r.status}: ${await r.text()}`);
    }
  }
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const tableHosts = (page, testid) => page.$$eval(`[data-testid=${testid}] tbody tr`, (rows) => rows.map((r) => r.dataset.host));

test('the fleet page draws a row per host, labels as text', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/fleet?group=zone`);
  await page.waitForSelector('[data-testid=fleet-table] tbody tr');
  assert.deepEqual(await tableHosts(page, 'fleet-table'), ['node-a', 'node-b', 'node-c']);
  assert.match(await page.textContent('[data-testid=fleet-status]'), /busiest core's system share/);
  const labels = await page.textContent('[data-testid=fleet-table] tbody tr[data-host=node-a]');
  assert.ok(labels.includes('owner=<script>alert(1)</script> "q" ü'), labels);
  assert.equal(await page.$$eval('[data-testid=fleet-table] script', (s) => s.length), 0);
  const box = await page.$eval('[data-testid=fleet-canvas]', (c) => [c.clientWidth, c.clientHeight]);
  assert.ok(box[0] > 200 && box[1] >= 3 * 2, `canvas ${box}`);
  // The hosts page shows the labels and links to the fleet.
  await page.goto(`${server.url}/hosts`);
  assert.ok((await page.textContent('[data-host=node-a]')).includes('owner=<script>alert(1)</script>'));
  assert.ok(await page.$('[data-testid=hosts-fleet]'));
  await shot(page, 'fleet-hosts');
  assert.deepEqual(w.dialogs, []);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('a search ranks the hosts and reorders the map; a click opens the host night at that time', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/fleet`);
  await page.waitForSelector('[data-testid=fleet-table] tbody tr');
  await page.selectOption('[data-testid=fleet-kind]', 'comm');
  await page.fill('[data-testid=fleet-search]', 'kubelet');
  await page.click('[data-testid=fleet-show]');
  await page.waitForURL(/comm=kubelet/);
  await page.waitForSelector('[data-testid=fleet-hit-table] tbody tr[data-host]');
  assert.equal((await tableHosts(page, 'fleet-hit-table'))[0], 'node-c');
  await page.waitForFunction(() => document.querySelector('[data-testid=fleet-table] tbody tr')?.dataset.host === 'node-c');
  await shot(page, 'fleet-search');

  // The burst's column in node-c's row, now the first.
  const m = await (await fetch(`${server.url}/api/fleet?comm=kubelet`)).json();
  const n = m.rows[0].values.length;
  const t = (START + 135) * 1e9;
  const col = Math.floor((t - m.from_ns) / m.bucket_ns);
  const c = await page.$eval('[data-testid=fleet-canvas]', (el) => {
    const r = el.getBoundingClientRect();
    return { x: r.left, y: r.top, w: r.width };
  });
  await page.mouse.move(c.x + ((col + 0.5) / n) * c.w, c.y + 4);
  const tip = await page.textContent('[data-testid=tooltip]');
  assert.ok(tip.startsWith('node-c'), tip);
  await page.mouse.click(c.x + ((col + 0.5) / n) * c.w, c.y + 4);
  await page.waitForURL(/\/hosts\/node-c\?/);
  const u = new URL(page.url());
  const from = Date.parse(u.searchParams.get('from')) * 1e6;
  const to = Date.parse(u.searchParams.get('to')) * 1e6;
  assert.ok(from <= t && t < to, `the night ${u.search} holds the clicked time`);
  assert.deepEqual(w.errors, []);
  await page.close();
});
