// The host page for every user, over recording sessions: a host whose
// first capture lies months before its night opens on the night, with a
// picker for the other session; the time axis falls on round times of the
// chosen zone and dates the ticks where the range crosses midnight; the
// map works from the keyboard; its labels and the hot spots' marker line
// are readable in dark mode; axis titles stay clear of the tick labels;
// the comm share line has the map's time axis; and a zoom leaves no
// tooltip of the range before.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { AxeBuilder } from '@axe-core/playwright';
import { startServer, launch, watch, tempDir, upload, shot, postMarker, contrast, nightCapture, busyWritten } from './helpers.mjs';

const HOST = 'gpu-node-17';
const HZ = 9;
const CPUS = 2;
const T = (iso) => Date.parse(iso) / 1000; // Unix seconds
const EARLY = { start: T('2026-07-01T12:00:00Z'), length: 20 };
// The night: four 10-minute captures back to back across midnight.
const NIGHT = T('2026-11-30T23:40:00Z');
const LENGTH = 600;
const BURST = { cpu: 1, start: T('2026-11-30T23:52:00Z'), end: T('2026-11-30T23:52:20Z') };
const MARKER = T('2026-11-30T23:52:25Z');

// A second host whose burst crosses a rotation point: two one-minute
// captures back to back at 49 Hz, a 3 s pause, a third; the burst runs
// from 2 s before the rotation point to 3 s after it, a marker 2 s after
// the burst, another 2 s into the third capture.
const ROT = 'node-rot';
const R = T('2026-11-30T03:00:00Z');
const ROT_HZ = 49;
const ROT_CAPTURES = [R, R + 60, R + 123];
const ROT_BURST = { cpu: 1, start: R + 58, end: R + 63 };
const ROT_MARKERS = [R + 65, R + 125];
// rotText holds the text of each of ROT's captures, for counting.
const rotText = [];

let server, browser;

before(async () => {
  server = await startServer();
  browser = await launch();
  const dir = tempDir();
  const caps = [[EARLY.start, EARLY.length], ...[0, 1, 2, 3].map((i) => [NIGHT + i * LENGTH, LENGTH])];
  for (const [i, [t0, length]] of caps.entries()) {
    const path = join(dir, `c${i}.txt`);
    writeFileSync(path, nightCapture({ host: HOST, t0, length, hz: HZ, cpus: CPUS, burst: BURST }));
    await upload(server.url, path, `capture-${i}`);
  }
  await postMarker(server.url, HOST, MARKER, 'NETDEV WATCHDOG: eth0 transmit queue 3 timed out');
  for (const [i, t0] of ROT_CAPTURES.entries()) {
    const path = join(dir, `rot${i}.txt`);
    rotText.push(nightCapture({ host: ROT, t0, length: 60, hz: ROT_HZ, cpus: CPUS, burst: ROT_BURST }));
    writeFileSync(path, rotText[i]);
    await upload(server.url, path, `rot-${i}`);
  }
  await postMarker(server.url, ROT, ROT_MARKERS[0], 'NETDEV WATCHDOG: eth0 transmit queue 3 timed out');
  await postMarker(server.url, ROT, ROT_MARKERS[1], 'eth0: link up');
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

// ticks returns the labels of an axis (its testid): time, date and Unix ns.
function ticks(page, testid = 'night-xaxis') {
  return page.$$eval(`[data-testid=${testid}] .tick`, (els) =>
    els.map((e) => ({ label: e.children[0].textContent, date: e.children[1]?.textContent ?? null, ns: Number(e.dataset.ns) })),
  );
}

const buckets = (page) => page.$eval('#night-map', (m) => Number(m.dataset.buckets || 0));

test('sessions: the host opens on its latest session, the picker moves to the other; ticks round, dated across midnight', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  const list = await (await fetch(`${server.url}/api/hosts/${HOST}/sessions`)).json();
  assert.deepEqual(list.sessions.map((s) => [s.number, s.captures]), [[1, 1], [2, 4]]);

  await page.goto(`${server.url}/hosts/${HOST}`);
  await page.waitForSelector('#night-map[data-buckets]');
  assert.match(await page.textContent('[data-testid=night-range]'), /^2026-11-30 23:40:00 UTC – 2026-12-01 00:20:00(\.\d+)? UTC · 3 s per column$/);
  assert.equal(await page.inputValue('[data-testid=night-session]'), '2');
  const opts = await page.$$eval('[data-testid=night-session] option', (os) => os.map((o) => o.textContent.trim()));
  assert.match(opts[0], /^1: 2026-07-01 12:00:00–12:00:20(\.\d+)? UTC, 1 capture$/);
  assert.match(opts[1], /^2: 2026-11-30 23:40:00–2026-12-01 00:20:00(\.\d+)? UTC, 4 captures$/);

  // Ticks every 5 minutes on the round ones, the first and the one at
  // midnight with their dates.
  let got = await ticks(page);
  assert.deepEqual(got.map((t) => t.label), ['23:40', '23:45', '23:50', '23:55', '00:00', '00:05', '00:10', '00:15', '00:20']);
  assert.deepEqual(got.filter((t) => t.date).map((t) => `${t.label} ${t.date}`), ['23:40 2026-11-30', '00:00 2026-12-01']);
  assert.ok(got.every((t) => t.ns % 300e9 === 0), `ticks off the round minutes: ${got.map((t) => t.ns)}`);
  await shot(page, 'host-sessions');

  // The picker: session 1, the capture months earlier, in one-second columns.
  await page.selectOption('[data-testid=night-session]', '1');
  await page.waitForURL(/\?session=1$/);
  await page.waitForFunction(() => Number(document.querySelector('#night-map').dataset.buckets) === 21);
  assert.match(await page.textContent('[data-testid=night-range]'), /^2026-07-01 12:00:00 UTC – 2026-07-01 12:00:20(\.\d+)? UTC · 1 s per column$/);
  got = await ticks(page);
  assert.ok(got.length >= 3 && got.every((t) => t.ns % 2e9 === 0 && !t.date), `session 1's ticks: ${JSON.stringify(got)}`);
  // Back goes back to the night.
  await page.goBack();
  await page.waitForFunction(() => Number(document.querySelector('#night-map').dataset.buckets) === 801);
  assert.equal(await page.inputValue('[data-testid=night-session]'), '2');
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('ticks on round times of the chosen zone: tz=local in Kathmandu (UTC+5:45)', async () => {
  const b = await launch({ timezoneId: 'Asia/Kathmandu' });
  try {
    const page = await b.ctx.newPage();
    await page.goto(`${server.url}/hosts/${HOST}?from=2026-11-30T20:00:00Z&to=2026-12-01T02:00:00Z&tz=local`);
    await page.waitForSelector('#night-map[data-buckets]');
    const got = await ticks(page);
    // Every half hour of Kathmandu's clock: 02:00 there is 20:15 UTC.
    assert.equal(got[0].label, '02:00');
    assert.equal(got[0].ns, Date.parse('2026-11-30T20:15:00Z') * 1e6);
    assert.ok(got.every((t) => /:(00|30)$/.test(t.label) && !t.date), `ticks: ${JSON.stringify(got)}`);
    assert.match(await page.textContent('[data-testid=night-xaxis] .axis-title'), /GMT\+5:45|\+0545/);
  } finally {
    await b.close();
  }
});

test('the night map from the keyboard: arrows, Enter to a cell, Shift+arrows and Enter to zoom, + and −', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/hosts/${HOST}`);
  await page.waitForSelector('#night-map[data-buckets]');
  const said = () => page.textContent('[data-testid=night-cursor]');
  await page.focus('#night-map');
  assert.match(await said(), /^cpu 0 · 2026-11-30 23:40:00 UTC \+ 3 s · busy /);
  // 801 columns of 3 s: PageDown moves 80; the burst begins at column 240.
  for (let i = 0; i < 3; i++) await page.keyboard.press('PageDown');
  await page.keyboard.press('ArrowDown');
  assert.match(await said(), /^cpu 1 · 2026-11-30 23:52:00 UTC \+ 3 s · busy 100\.0%, system 100\.0%, 27 samples · capture capture-2/);
  let nav = page.waitForURL(/\/flame\?/);
  await page.keyboard.press('Enter');
  await nav;
  let q = new URL(page.url()).searchParams;
  assert.deepEqual([q.get('cpu'), q.get('start'), q.get('end')], ['1', '120', '123']);

  await page.goBack();
  await page.waitForSelector('#night-map[data-buckets]');
  await page.focus('#night-map');
  await page.keyboard.press('Home');
  for (let i = 0; i < 3; i++) await page.keyboard.press('PageDown');
  await page.keyboard.press('ArrowDown');
  for (let i = 0; i < 6; i++) await page.keyboard.press('Shift+ArrowRight');
  assert.match(await said(), /^2026-11-30 23:52:00 UTC – 23:52:21 \(21 s\) selected/);
  await page.keyboard.press('Enter');
  await page.waitForURL(/from=2026-11-30T23%3A52%3A00\.000Z&to=2026-11-30T23%3A52%3A21\.000Z/);
  await page.waitForFunction(() => Number(document.querySelector('#night-map').dataset.buckets) === 21);
  // The cursor stays on its CPU and time.
  assert.match(await said(), /^cpu 1 · 2026-11-30 23:52:19 UTC \+ 1 s/);
  await page.keyboard.press('-');
  await page.waitForURL(/from=2026-11-30T23%3A51%3A28\.000Z&to=2026-11-30T23%3A52%3A53\.000Z/);
  await page.waitForFunction(() => Number(document.querySelector('#night-map').dataset.buckets) === 85);
  await page.keyboard.press('+');
  await page.waitForURL(/from=2026-11-30T23%3A52%3A1\d\.000Z&to=2026-11-30T23%3A52%3A[23]\d\.000Z/);
  // The URL changes before the zoomed map is drawn: wait for it.
  await page.waitForFunction(() => Number(document.querySelector('#night-map').dataset.buckets) < 85);
  assert.ok((await buckets(page)) < 85);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('dark mode: axe-core finds nothing serious; the axes and the marker line 4.5:1', async () => {
  const page = await browser.ctx.newPage();
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.goto(`${server.url}/hosts/${HOST}`);
  await page.waitForSelector('[data-testid=night-hotspot] .near');
  await page.waitForSelector('[data-testid=night-commcanvas]');
  await page.waitForLoadState('networkidle');
  const r = await new AxeBuilder({ page }).analyze();
  const bad = r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ') + ' ' + (n.any[0]?.message || '')).join(' | ')}`);
  assert.deepEqual(bad, []);
  const bg = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  for (const sel of ['[data-testid=night-xaxis] .tick', '[data-testid=night-yaxis] span', '[data-testid=night-commaxis] .tick', '[data-testid=night-hotspot] .near']) {
    const c = await page.$eval(sel, (e) => getComputedStyle(e).color);
    assert.ok(contrast(c, bg) >= 4.5, `${sel}: ${contrast(c, bg).toFixed(2)}:1 against the page`);
  }
  await shot(page, 'host-dark');
  await page.close();
});

test('axis titles clear of the tick labels; the comm share line on the map\'s time axis', async () => {
  const page = await browser.ctx.newPage();
  await page.setViewportSize({ width: 700, height: 900 });
  await page.goto(`${server.url}/hosts/${HOST}`);
  await page.waitForSelector('[data-testid=night-commaxis] .tick');
  const boxes = (sel) => page.$$eval(sel, (els) => els.map((e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }));
  const meet = (a, b) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
  for (const axis of ['night-xaxis', 'night-commaxis']) {
    const labels = await boxes(`[data-testid=${axis}] .tick`);
    const titles = await boxes(`[data-testid=${axis}] .axis-title, [data-testid=night-yaxis] span`);
    assert.ok(labels.length >= 3, `${axis}: ${labels.length} ticks`);
    for (const [i, l] of labels.entries()) {
      for (const t of titles) assert.ok(!meet(l, t), `${axis}: tick ${i} ${l} meets a title or label ${t}`);
      if (i > 0) assert.ok(!meet(l, labels[i - 1]), `${axis}: ticks ${i - 1} and ${i} overlap`);
    }
  }
  // The same times at the same places on both axes.
  const map = await ticks(page);
  const comm = await ticks(page, 'night-commaxis');
  assert.deepEqual(comm.map((t) => t.ns), map.map((t) => t.ns));
  const xs = (id) => page.$$eval(`[data-testid=${id}] .tick`, (els) => els.map((e) => Math.round(e.getBoundingClientRect().left)));
  const [cx, mx] = [await xs('night-commaxis'), await xs('night-xaxis')];
  assert.ok(cx.length === mx.length && cx.every((x, i) => Math.abs(x - mx[i]) <= 1), `comm axis at ${cx}; the map's at ${mx}`);
  await page.close();
});

test('a zoom leaves no tooltip of the range before', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/hosts/${HOST}`);
  await page.waitForSelector('#night-map[data-buckets]');
  const at = (row, bucket) =>
    page.evaluate(([row, bucket]) => {
      const map = document.querySelector('#night-map');
      const r = map.querySelector('canvas').getBoundingClientRect();
      const g = map.dataset;
      return { x: r.left + Number(g.left) + (bucket + 0.5) * Number(g.cellW), y: r.top + Number(g.top) + (row + 0.5) * Number(g.rowH) };
    }, [row, bucket]);
  const tips = () => page.$$eval('[data-testid=tooltip]', (els) => els.filter((e) => !e.hidden).map((e) => e.textContent));
  const a = await at(1, 200);
  const b = await at(1, 300);
  await page.mouse.move(a.x, a.y);
  assert.match((await tips()).join(), /cpu 1 · 2026-11-30 23:50:00 UTC/);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, a.y);
  await page.mouse.move(b.x, b.y);
  await page.mouse.up();
  await page.waitForURL(/from=2026-11-30T23%3A50%3A00\.000Z/);
  await page.waitForFunction(() => Number(document.querySelector('#night-map').dataset.buckets) < 801);
  assert.deepEqual(await tips(), []);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('the hot spots of the session shown: none in the capture months earlier, the burst in the night', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/hosts/${HOST}?session=1`);
  await page.waitForSelector('[data-testid=night-hotspots] li');
  assert.equal(await page.textContent('[data-testid=night-hotspots] li'), 'No CPU stayed busy long enough.');
  assert.ok(w.requests.some((u) => /\/hotspots\?.*session=1/.test(u)), `hot spots asked for: ${w.requests.filter((u) => /hotspots/.test(u))}`);
  await page.selectOption('[data-testid=night-session]', '2');
  await page.waitForSelector('[data-testid=night-hotspot]');
  assert.match(await page.textContent('[data-testid=night-hotspot]'), /^cpu 1 · 2026-11-30 23:5(1:59|2:00)(\.\d)?–23:52:2\d/);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('across a rotation point: a hot spot says its measure and opens its host range; a marker\'s 10 s before opens one flame graph of both captures', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  const rep = await (await fetch(`${server.url}/api/hosts/${ROT}/hotspots?measure=busy&limit=20`)).json();
  assert.equal(rep.found, 1, `hot spots: ${JSON.stringify(rep.hotspots)}`);
  const spot = rep.hotspots[0];
  assert.ok(Math.abs(spot.start_ns / 1e9 - ROT_BURST.start) <= 0.1 && Math.abs(spot.end_ns / 1e9 - ROT_BURST.end) <= 0.1, `spot ${spot.start_ns}–${spot.end_ns}`);
  await page.goto(`${server.url}/hosts/${ROT}`);
  await page.waitForSelector('[data-testid=night-hotspot]');
  const li = await page.textContent('[data-testid=night-hotspot]');
  assert.match(li, /found on busy time/);
  assert.match(li, /2 s before: NETDEV WATCHDOG/);
  assert.equal(await page.getAttribute('[data-testid=night-hotspot] a', 'href'), spot.flame_url);
  assert.match(spot.flame_url, /^\/hosts\/node-rot\/flame\?cpu=1&from=2026-11-30T03%3A00%3A58/);
  // Its comparison is one link: the host's ranges, from the same place in
  // the capture before.
  assert.equal(await page.textContent('[data-testid=night-hotspot] [data-testid=night-compare]'), 'compare with the capture before');
  const cmp = new URL(await page.getAttribute('[data-testid=night-hotspot] [data-testid=night-compare]', 'href'), server.url);
  assert.equal(cmp.pathname, `/hosts/${ROT}/diff`);
  assert.equal(Date.parse(cmp.searchParams.get('from')) - Date.parse(cmp.searchParams.get('from2')), 60e3);
  await page.selectOption('#night-measure', 'system');
  await page.waitForFunction(() => /found on system time/.test(document.querySelector('[data-testid=night-hotspot]')?.textContent));

  // The markers: the first's window crosses the rotation point, all of it
  // recorded; the second's crosses the pause, 3 s of it not.
  const marks = await page.$$eval('[data-testid=night-marker]', (els) => els.map((e) => e.querySelector('[data-testid=marker-missing]')?.textContent ?? null));
  assert.deepEqual(marks, [null, '3 s of this window were not recorded']);
  await shot(page, 'host-rotation');
  await page.click('[data-testid=marker-before]');
  await page.waitForURL(/\/hosts\/node-rot\/flame\?/);
  await page.waitForSelector('body[data-rendered="1"]');
  assert.match(await page.textContent('h1'), / · 2 captures/);
  assert.equal(await page.$('[data-testid=unrecorded]'), null, 'a window across a rotation point lost nothing');
  const want = busyWritten(rotText.slice(0, 2), ROT_MARKERS[0] - 10, ROT_MARKERS[0]);
  assert.ok(want > 5 * ROT_HZ, `${want} busy samples written in the window`);
  const summary = await page.textContent('[data-testid=flame-summary]');
  assert.match(summary, new RegExp(`^${want.toLocaleString('en-US')} samples`), `summary ${summary}; ${want} busy samples written across both files`);
  assert.deepEqual(w.errors, []);
  await page.close();
});
