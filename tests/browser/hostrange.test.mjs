// A host's wall-clock range across its captures opens as a capture's flame
// graph, stack chart and differential pages: the 10 s before a marker, across
// the rotation point a burst crossed, counts every sample of both files in
// that window, and a range over a pause between captures says how much of it
// was not recorded.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { startServer, launch, watch, tempDir, upload, shot, nightCapture, busyWritten } from './helpers.mjs';

const HOST = 'node-9';
const START = Date.UTC(2026, 10, 30, 3, 0, 0) / 1000; // Unix seconds
const HZ = 49;
const CPUS = 4;
const LENGTH = 60; // seconds per capture
// Capture starts: two back to back, a 3 s pause, a third.
const CAPTURES = [START, START + 60, START + 123];
// A burst across the first rotation point: 2 s before it, 3 s after.
const BURST = { cpu: 2, start: START + 58, end: START + 63 };
const MARKER = START + 65;

// busy counts the samples written in the 10 s before the marker that are
// not idle, what a flame graph counts by default.
const busy = { from: MARKER - 10, to: MARKER, n: 0 };

let server, browser;

before(async () => {
  server = await startServer();
  browser = await launch();
  const dir = tempDir();
  const texts = CAPTURES.map((t0) => nightCapture({ host: HOST, t0, length: LENGTH, hz: HZ, cpus: CPUS, burst: BURST }));
  busy.n = busyWritten(texts, busy.from, busy.to);
  for (const [i, text] of texts.entries()) {
    const path = join(dir, `c${i}.txt`);
    writeFileSync(path, text);
    await upload(server.url, path, `capture-${i}`);
  }
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const iso = (s) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');

test('the 10 s before a marker, across a rotation point, is one flame graph of both captures', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/hosts/${HOST}/flame?from=${iso(MARKER - 10)}&to=${iso(MARKER)}`);
  await page.waitForSelector('body[data-rendered="1"]');
  const heading = await page.textContent('h1');
  assert.match(heading, new RegExp(`^${HOST} · 2026-11-30T03:00:55Z – 2026-11-30T03:01:05Z \\(10s\\) · 2 captures`));
  assert.equal(await page.$('[data-testid=unrecorded]'), null, 'a range across a rotation point lost nothing');
  const summary = await page.textContent('[data-testid=flame-summary]');
  assert.ok(busy.n > 0);
  assert.match(summary, new RegExp(`^${busy.n.toLocaleString('en-US')} samples`), `summary ${summary}; ${busy.n} busy samples written in the window`);
  const api = await (await fetch(`${server.url}/api/hosts/${HOST}/flamegraph?from=${iso(MARKER - 10)}&to=${iso(MARKER)}`)).json();
  assert.equal(api.total, busy.n);
  assert.ok(await page.evaluate(() => window.__flame?.locate('mem_cgroup_nr_lru_pages')), 'the burst is drawn');
  // The stack chart of the same range, from its link.
  await page.click('[data-testid=open-stacks]');
  await page.waitForSelector('[data-testid=stack-chart][data-rendered="1"]');
  assert.match(await page.textContent('[data-testid=stacks-summary]'), new RegExp(`^${busy.n.toLocaleString('en-US')} samples`));
  await shot(page, 'host-range-stacks');
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('a range over the pause between captures says what was not recorded', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/hosts/${HOST}/flame?from=${iso(START + 115)}&to=${iso(START + 130)}`);
  await page.waitForSelector('body[data-rendered="1"]');
  assert.equal(await page.textContent('[data-testid=unrecorded]'), '3 s of this range were not recorded');
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('the diff of the 10 s before the marker against the minute before is one link', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/hosts/${HOST}/diff?from=${iso(MARKER - 10)}&to=${iso(MARKER)}&from2=${iso(MARKER - 70)}&to2=${iso(MARKER - 60)}`);
  await page.waitForSelector('body[data-rendered="1"]');
  assert.match(await page.textContent('[data-testid=diff-base]'), /1 capture/);
  assert.match(await page.textContent('[data-testid=diff-target]'), /2 captures/);
  await page.waitForSelector('[data-testid=changes][data-rendered="1"]');
  assert.deepEqual(w.errors, []);
  await page.close();
});
