// The mini timeline on the flame, diff and stack-chart pages: the capture's
// sample counts with the page's range as a brush that moves and resizes in
// place, from the pointer or the keyboard.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { count } from './capture.mjs';
import { watch, timings, knownProfile, stopKnown } from './helpers.mjs';

let server, browser, id, records;

before(async () => ({ server, browser, id, records } = await knownProfile()));
after(() => stopKnown({ server, browser }));

async function open(page, path) {
  await page.goto(server.url + path);
  await page.waitForSelector('body[data-rendered="1"]');
}

// strip returns the timeline canvas's box and its scale (px per second).
async function strip(page) {
  const b = await page.$eval('[data-testid=timeline-canvas]', (c) => c.getBoundingClientRect().toJSON());
  // The capture runs from T0 to just after its last sample at 19.99 s.
  const dur = await page.evaluate(() => {
    const p = JSON.parse(document.getElementById('view-data').textContent).profile;
    return (p.end_ns + 1 - p.t0_ns) / 1e9;
  });
  return { ...b, pxPerS: b.width / dur };
}

async function dragBy(page, x0, y, dx) {
  await page.mouse.move(x0, y);
  await page.mouse.down();
  for (let i = 1; i <= 5; i++) await page.mouse.move(x0 + (dx * i) / 5, y);
  await page.mouse.up();
}

async function rendered(page, start, end) {
  await page.waitForFunction(([s, e]) => {
    const q = new URLSearchParams(location.search);
    return q.get('start') === s && q.get('end') === e && document.body.dataset.rendered === '1';
  }, [start, end], { timeout: 10_000 });
}

test('the brush moves and resizes the flame graph\'s range in place', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await open(page, `/p/${id}/flame?start=4&end=6&search=mark`);
  assert.equal(await page.textContent('[data-testid=timeline-label]'), '4–6 s (2 s) of 19.99 s · ≈ 07:59:44.51–07:59:46.51 UTC');
  await page.waitForFunction(() => document.querySelector('[data-testid=timeline-canvas]').dataset.start === '4000000000');
  const s = await strip(page);
  const y = s.y + s.height / 2;

  // Drag the brush's body 7 s to the right: [11, 13).
  await dragBy(page, s.x + 5 * s.pxPerS, y, 7 * s.pxPerS);
  await rendered(page, '11', '13');
  const q = new URL(page.url()).searchParams;
  assert.equal(q.get('search'), 'mark', 'the rest of the view stays');
  assert.ok((await page.textContent('[data-testid=flame-summary]')).startsWith(`${count(records, 11, 13).toLocaleString('en-US')} samples`));
  assert.equal(await page.textContent('[data-testid=range]').then((t) => t.replace(/\s+/g, ' ').includes('11–13 s (2 s)')), true);
  const t = await timings(page);
  assert.ok(t['select-to-flame'] > 0, JSON.stringify(t));
  console.log(`# brush release to drawn flame graph (8 CPUs, 2 s): ${t['select-to-flame']} ms`);

  // Drag its right edge to 15 s: [11, 15). Back returns to [11, 13).
  await dragBy(page, s.x + 13 * s.pxPerS - 1, y, 2 * s.pxPerS);
  await rendered(page, '11', '15');
  await page.goBack();
  await page.waitForFunction(() => new URLSearchParams(location.search).get('end') === '13');

  // From the keyboard: Right moves by a tenth of the range, Shift+Right
  // moves the end, Enter opens it.
  await open(page, `/p/${id}/flame?start=10&end=12`);
  await page.focus('[data-testid=timeline-canvas]');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Shift+ArrowRight');
  assert.equal(await page.textContent('[data-testid=timeline-label]'), '10.4–12.6 s (2.2 s) of 19.99 s · ≈ 07:59:50.91–07:59:53.11 UTC');
  await page.keyboard.press('Escape');
  assert.equal(await page.textContent('[data-testid=timeline-label]'), '10–12 s (2 s) of 19.99 s · ≈ 07:59:50.51–07:59:52.51 UTC');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('Enter');
  await rendered(page, '9.8', '11.8');
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('on the diff and stack-chart pages the brush moves the range shown', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await open(page, `/p/${id}/diff?start=12&end=13&start2=11&end2=12`);
  let s = await strip(page);
  await dragBy(page, s.x + 12.5 * s.pxPerS, s.y + s.height / 2, -8 * s.pxPerS);
  await rendered(page, '4', '5');
  const q = new URL(page.url()).searchParams;
  assert.deepEqual([q.get('start2'), q.get('end2')], ['11', '12'], 'the base stays');

  await open(page, `/p/${id}/stacks?start=4&end=5&cpu=5`);
  await page.waitForSelector('#stacks[data-rendered="1"]');
  s = await strip(page);
  await dragBy(page, s.x + 4.5 * s.pxPerS, s.y + s.height / 2, 3 * s.pxPerS);
  await rendered(page, '7', '8');
  await page.waitForSelector('#stacks[data-rendered="1"]');
  const lanes = await page.evaluate(() => window.__stacks.lanes());
  assert.deepEqual(lanes.map((l) => [l.label, l.samples]), [['CPU 5', count(records, 7, 8, (r) => r.cpu === 5 && r.kind !== 'idle')]]);
  assert.deepEqual(w.errors, []);
  await page.close();
});
