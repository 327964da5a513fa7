// The stack chart: the samples of a range in time order, one lane per CPU
// (or thread), each sample's stack hanging from its command, runs of a frame
// merged into one box; linked to the flame graph below it (hovering a frame
// outlines it in both, clicking a box zooms the graph to it).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { count, PEGGED } from './capture.mjs';
import { watch, shot, knownProfile, stopKnown } from './helpers.mjs';

let server, browser, id, records;

before(async () => ({ server, browser, id, records } = await knownProfile()));
after(() => stopKnown({ server, browser }));

async function openStacks(page, query) {
  await page.goto(`${server.url}/p/${id}/stacks?${query}`);
  await page.waitForSelector('#stacks[data-rendered="1"]', { timeout: 10_000 });
  await page.waitForSelector('body[data-rendered="1"]');
}

// inked counts the pixels of colour rgb (±tol) on a canvas within a css-px
// rectangle.
async function inked(page, selector, rect, rgb, tol = 0) {
  return page.$eval(
    selector,
    (c, [r, rgb, tol]) => {
      const dpr = c.width / c.getBoundingClientRect().width;
      const d = c.getContext('2d').getImageData(Math.floor(r.x * dpr), Math.floor(r.y * dpr), Math.max(1, Math.ceil(r.w * dpr)), Math.max(1, Math.ceil(r.h * dpr))).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - rgb[0]) <= tol && Math.abs(d[i + 1] - rgb[1]) <= tol && Math.abs(d[i + 2] - rgb[2]) <= tol && d[i + 3] > 0) n++;
      return n;
    },
    [rect, rgb, tol],
  );
}

const HIGHLIGHT = [0, 90, 255];
const MATCH = [220, 40, 220];

test('the stack chart shows what ran on a CPU in time order, linked to the flame graph', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  // From the flame graph of CPU 5 over [7.5, 8.5) s: gc until 8 s, then the
  // background load.
  await page.goto(`${server.url}/p/${id}/flame?start=7.5&end=8.5&cpu=5`);
  await page.waitForSelector('body[data-rendered="1"]');
  const nav = page.waitForURL(/\/stacks\?/);
  await page.click('[data-testid=open-stacks]');
  await nav;
  await page.waitForSelector('#stacks[data-rendered="1"]', { timeout: 10_000 });
  assert.deepEqual(Object.fromEntries(new URL(page.url()).searchParams), { start: '7.5', end: '8.5', cpu: '5' });
  assert.match(await page.title(), /stack chart 7\.5–8\.5 s \(1 s\) · CPU 5/);

  const lanes = await page.evaluate(() => window.__stacks.lanes());
  const want = count(records, 7.5, 8.5, (r) => r.cpu === PEGGED.cpu && r.kind !== 'idle');
  assert.deepEqual(lanes.map((l) => [l.label, l.samples]), [['CPU 5', want]]);
  const width = await page.$eval('[data-testid=stacks-canvas]', (c) => c.getBoundingClientRect().width);
  // gc ran without a break until 8 s: one box from the first sample (within
  // a 99 Hz period of the left edge) to the middle.
  const gc = await page.evaluate(() => window.__stacks.boxes('CPU 5', 'mark_object'));
  const period = width / 99;
  assert.equal(gc.length, 1, JSON.stringify(gc));
  assert.ok(gc[0].x < period && Math.abs(gc[0].x + gc[0].w - width / 2) < period, `mark_object spans ${JSON.stringify(gc[0])} of ${width} px`);
  // What came after it starts in the second half.
  const after = await page.evaluate(() => window.__stacks.boxes('CPU 5', 'main'));
  assert.ok(after.length > 0 && after.every((b) => b.x >= width / 2 - 1), JSON.stringify(after));
  await shot(page, 'stacks', { fullPage: true });

  // Hover a box: the same node is outlined in the flame graph.
  const canvas = await page.$eval('[data-testid=stacks-canvas]', (c) => c.getBoundingClientRect().toJSON());
  await page.mouse.move(canvas.x + gc[0].x + gc[0].w / 2, canvas.y + gc[0].y + 5);
  const tip = await page.$$eval('[data-testid=tooltip]:not([hidden]) div', (ds) => ds.map((d) => d.textContent));
  assert.equal(tip[0], 'mark_object');
  assert.match(tip[2], /^7\.5\d\d–8\.0\d\d s \(.*\) · ≈ 07:59:48\.0\d+–07:59:48\.5\d+ UTC on CPU 5$/, tip[2]);
  const frame = await page.evaluate(() => window.__flame.locate('mark_object'));
  const ring = (r) => ({ x: r.x, y: r.y, w: r.w, h: r.h });
  assert.ok((await inked(page, '.flame-overlay', ring(frame), HIGHLIGHT, 10)) > 20, 'the flame graph outlines the hovered frame');

  // Hover the flame graph's frame: its box is outlined in the stack chart.
  const flame = await page.$eval('[data-testid=flame-canvas]', (c) => c.getBoundingClientRect().toJSON());
  const main = await page.evaluate(() => window.__flame.locate('serve_request'));
  await page.mouse.move(flame.x + main.x + main.w / 2, flame.y + main.y + main.h / 2);
  const boxes = await page.evaluate(() => window.__stacks.boxes('CPU 5', 'serve_request'));
  assert.ok(boxes.length > 0);
  let outlined = 0;
  for (const b of boxes) outlined += await inked(page, '.stacks-overlay', { x: b.x, y: b.y, w: b.w, h: 14 }, HIGHLIGHT, 10);
  assert.ok(outlined > 10 * boxes.length, `serve_request outlined in the stack chart: ${outlined} px over ${boxes.length} boxes`);

  // Search colours boxes in both views; clicking a box zooms the graph.
  await page.fill('#search', 'mark_object');
  await page.waitForFunction(() => document.getElementById('search-match').textContent.startsWith('Matched'));
  await page.waitForTimeout(100);
  assert.ok((await inked(page, '[data-testid=stacks-canvas]', { x: gc[0].x, y: gc[0].y, w: gc[0].w, h: 13 }, MATCH)) > 100);
  await page.mouse.click(canvas.x + gc[0].x + gc[0].w / 2, canvas.y + gc[0].y + 5);
  await page.waitForFunction(() => (new URLSearchParams(location.search).get('zoom') || '').endsWith('gc_mark;mark_object'));
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('one lane per thread; the samples API refuses a range past its limit', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await openStacks(page, 'start=12&end=13&cpu=0-1&lanes=thread');
  assert.equal(await page.inputValue('[data-testid=stacks-group]'), 'thread');
  const lanes = await page.evaluate(() => window.__stacks.lanes());
  const labels = lanes.map((l) => l.label).sort();
  // Threads of the range on CPUs 0 and 1: webapp 1234 and maybe <b>evil</b> 666.
  assert.ok(labels.includes('webapp 1234'), JSON.stringify(labels));
  const total = lanes.reduce((n, l) => n + l.samples, 0);
  assert.equal(total, count(records, 12, 13, (r) => r.cpu <= 1 && r.kind !== 'idle'));
  assert.deepEqual(w.errors, []);

  // The API refuses more samples than its limit; the page says why.
  const res = await fetch(`${server.url}/api/profiles/${id}/samples?max_samples=100`);
  assert.equal(res.status, 400);
  assert.match((await res.json()).error, /^end: the range 0–.* s \(.* s\) holds \d+ samples of these filters, more than the stack chart's limit of 100/);
  await page.close();
});

test('the page asks for its JSON from its head and the script takes those answers: one request each', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  // A function filter whose every odd character the URL must escape: the
  // script writes the API's URLs as the server does, or the browser fetches
  // each twice.
  const fn = "^(mark_object|hot_loop)[^!' ~*]*$";
  await openStacks(page, `start=7.5&end=12.5&function=${encodeURIComponent(fn)}`);
  const api = (re) => w.requests.filter((u) => re.test(new URL(u).pathname));
  const flame = api(/\/flamegraph$/);
  const samples = api(/\/samples$/);
  assert.equal(flame.length, 1, `flame graph requests: ${flame.join(' ')}`);
  assert.equal(samples.length, 1, `samples requests: ${samples.join(' ')}`);
  const preloads = await page.$$eval('head link[rel=preload][as=fetch]', (ls) => ls.map((l) => [l.href, l.crossOrigin]));
  assert.deepEqual(preloads, [[flame[0], 'anonymous'], [samples[0], 'anonymous']]);
  assert.equal(new URL(samples[0]).searchParams.get('function'), fn);
  const lanes = await page.evaluate(() => window.__stacks.lanes());
  const total = lanes.reduce((n, l) => n + l.samples, 0);
  assert.equal(total, count(records, 7.5, 12.5, (r) => r.kind === 'gc' || r.kind === 'hot'));
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('the page passes max_samples on to the samples it asks for; a refusal leaves the flame graph', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/p/${id}/stacks?start=0&end=20&max_samples=100`);
  await page.waitForSelector('body[data-rendered="1"]');
  assert.match(await page.textContent('#stacks .flame-status.error'), /holds \d+ samples of these filters, more than the stack chart's limit of 100;/);
  assert.equal(await page.$('[data-testid=stacks-canvas]'), null);
  assert.match(await page.textContent('[data-testid=flame-summary]'), /^[\d,]+ samples/);
  assert.deepEqual(w.errors.map((e) => e.replace(/\?.*/, '')), [`HTTP 400 ${server.url}/api/profiles/${id}/samples`]);
  await page.close();
});

test('the stack chart stands the way the flame graph below it does, and its time labels never collide', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  // order returns the stack chart's and the flame graph's tops of gc's
  // leaf and of its command's frame on CPU 5.
  const order = () => page.evaluate(() => {
    const top = (name) => window.__stacks.boxes('CPU 5', name)[0].y;
    return { leaf: top('mark_object'), root: top('gc'), flameLeaf: window.__flame.locate('mark_object').y, flameRoot: window.__flame.locate('gc').y };
  });
  await openStacks(page, 'start=4&end=5&cpu=5');
  let o = await order();
  assert.ok(o.flameLeaf < o.flameRoot, 'a flame graph by default');
  assert.ok(o.leaf < o.root, `root at the bottom, as the flame graph: ${JSON.stringify(o)}`);
  // The box under the pointer is the one drawn there.
  const canvas = await page.$eval('[data-testid=stacks-canvas]', (c) => c.getBoundingClientRect().toJSON());
  const root = (await page.evaluate(() => window.__stacks.boxes('CPU 5', 'gc')))[0];
  await page.mouse.move(canvas.x + root.x + root.w / 2, canvas.y + root.y + 5);
  assert.equal(await page.textContent('[data-testid=tooltip]:not([hidden]) div'), 'gc');
  await page.mouse.move(0, 0);

  // The view's toggle turns both; the URL keeps it, and a reload honours it.
  await page.click('[data-testid=view-icicle]');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('view') === 'icicle');
  await page.waitForTimeout(100);
  o = await order();
  assert.ok(o.flameLeaf > o.flameRoot && o.leaf > o.root, `root on top, as the icicle: ${JSON.stringify(o)}`);
  await page.reload();
  await page.waitForSelector('#stacks[data-rendered="1"]');
  await page.waitForSelector('body[data-rendered="1"]');
  o = await order();
  assert.ok(o.flameLeaf > o.flameRoot && o.leaf > o.root, `root on top after a reload: ${JSON.stringify(o)}`);

  // The axis's labels, as drawn, at many widths, in times of day and in
  // seconds: inside the chart, none overlapping the next.
  const seen = [];
  for (const [query, tz] of [['start=4&end=5&cpu=5', ''], ['start=0.5&end=13.3&cpu=5', ''], ['start=4&end=5&cpu=5', '&tz=offset']]) {
    await openStacks(page, query + tz);
    for (let width = 700; width <= 1440; width += 37) {
      await page.setViewportSize({ width, height: 900 });
      await page.waitForFunction((w) => { const a = window.__stacks.axis(); return a.length && Math.abs(a[0].width - (document.querySelector('[data-testid=stacks-canvas]').getBoundingClientRect().width)) < 1; }, width);
      const labels = await page.evaluate(() => window.__stacks.axis());
      assert.ok(labels.length >= 2, `${query}${tz} at ${width} px: ${JSON.stringify(labels)}`);
      for (const [i, l] of labels.entries()) {
        assert.ok(l.x >= 0 && l.x + l.w <= l.width, `${query}${tz} at ${width} px: "${l.text}" [${l.x}, ${l.x + l.w}] leaves the chart of ${l.width} px`);
        if (i) assert.ok(labels[i - 1].x + labels[i - 1].w + 4 <= l.x, `${query}${tz} at ${width} px: "${labels[i - 1].text}" and "${l.text}" collide: ${JSON.stringify(labels)}`);
      }
      seen.push(labels.length);
    }
  }
  console.log(`# stack chart axis labels per width: ${seen.join(' ')}`);
  assert.deepEqual(w.errors, []);
  await page.close();
});
