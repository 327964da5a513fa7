// First contact: a skip link on every page leads past the header and the
// controls to the page's main view; the maps take a wide window's width
// while prose keeps a readable measure.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { watch, knownProfile, stopKnown } from './helpers.mjs';

let server, browser, id;

before(async () => ({ server, browser, id } = await knownProfile()));
after(() => stopKnown({ server, browser }));

// open loads path and waits until its script has drawn the page.
async function open(page, path) {
  await page.goto(server.url + path);
  if (path.startsWith('/p/')) await page.waitForSelector('body[data-rendered="1"]');
  else await page.waitForLoadState('networkidle');
  if (path.includes('/stacks')) await page.waitForSelector('#stacks[data-rendered="1"]');
}

test('the first Tab shows a skip link, and Enter moves the focus to the main view', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  const pages = [
    [`/p/${id}`, 'the heatmap', '#heatmap .grid-overlay'],
    ['/hosts/browser-test', "the night's map", '#night-map'],
    [`/p/${id}/flame?start=12&end=13`, 'the flame graph', '#flame .flame-canvas'],
    [`/p/${id}/diff?start=12&end=13&start2=11&end2=12`, 'the differential flame graph', '#flame .flame-canvas'],
    [`/p/${id}/stacks?start=4&end=5&cpu=5`, 'the stack chart', '[data-testid=stacks-canvas]'],
    ['/', 'the content', 'main'],
    ['/hosts', 'the content', 'main'],
  ];
  for (const [path, label, target] of pages) {
    await open(page, path);
    const link = page.locator('[data-testid=skip-link]');
    const hiddenBox = await link.boundingBox();
    assert.ok(hiddenBox.y + hiddenBox.height <= 0, `${path}: the skip link is out of sight before it has the focus`);
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), 'skip-link', `${path}: the first Tab reaches the skip link`);
    assert.equal(await link.textContent(), `Skip to ${label}`);
    const box = await link.boundingBox();
    assert.ok(box.y >= 0 && box.x >= 0 && box.width > 40, `${path}: the focused skip link is in view: ${JSON.stringify(box)}`);
    await page.keyboard.press('Enter');
    assert.ok(await page.evaluate((sel) => document.activeElement === document.querySelector(sel), target), `${path}: Enter moves the focus to ${target}`);
    assert.ok(!new URL(page.url()).hash, `${path}: the URL keeps no fragment`);
  }
  // From the profile page's heatmap, the arrows move its cursor at once.
  await open(page, `/p/${id}`);
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await page.keyboard.press('ArrowRight');
  assert.match(await page.textContent('[data-testid=selection]'), /· column 1, /);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('on wide windows the maps take the width and prose keeps its measure', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  for (const width of [1920, 2560]) {
    await page.setViewportSize({ width, height: 1080 });
    const spans = {};
    for (const [path, sels] of [
      [`/p/${id}`, ['#heatmap', '#cores']],
      ['/hosts/browser-test', ['#night-map']],
      [`/p/${id}/flame?start=12&end=13`, ['#flame']],
      [`/p/${id}/stacks?start=4&end=5`, ['#stacks', '#flame']],
    ]) {
      await open(page, path);
      const [left, right] = await page.evaluate((sels) => {
        const rs = sels.map((s) => document.querySelector(s).getBoundingClientRect());
        return [Math.min(...rs.map((r) => r.left)), Math.max(...rs.map((r) => r.right))];
      }, sels);
      spans[path] = (right - left) / width;
      assert.ok(spans[path] >= 0.9, `${width} px: the maps of ${path} span ${(100 * spans[path]).toFixed(1)}% of the window`);
    }
    // A paragraph of prose stays within about 90 characters.
    await open(page, '/hosts/browser-test');
    const prose = await page.$eval('.night-markers p', (p) => ({ w: p.getBoundingClientRect().width, ch: parseFloat(getComputedStyle(p).fontSize) }));
    assert.ok(prose.w <= 90 * prose.ch, `${width} px: the markers' paragraph is ${prose.w} px wide`);
  }
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('a host none of whose captures has a wall clock says so, in place of empty panels', async () => {
  // perf script output without its header: the host is "unknown", and
  // the capture has no wall-clock time.
  const { writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tempDir, upload } = await import('./helpers.mjs');
  let text = '';
  for (let k = 0; k < 200; k++) text += `app 10/10 [000] ${(5000 + k / 100).toFixed(6)}: 10101010 cpu-clock:pppH: \n\t55d000001300 main+0x10 (/usr/bin/app)\n\n`;
  const path = join(tempDir(), 'noheader.perf.txt');
  writeFileSync(path, text);
  assert.equal((await upload(server.url, path, 'no header')).profile.host, 'unknown');

  const page = await browser.ctx.newPage();
  const w = watch(page);
  await open(page, '/hosts/unknown');
  assert.equal((await page.textContent('[data-testid=night-none]')).replace(/\s+/g, ' ').trim(), 'No captures of host "unknown" with a wall-clock time, so there is no night to show — see Hosts.');
  assert.equal(await page.getAttribute('[data-testid=night-none-hosts]', 'href'), '/hosts');
  assert.doesNotMatch(await page.textContent('main'), /HTTP \d+/);
  for (const panel of ['night-map', 'night-lanes', 'night-compare', 'night-hotspots', 'night-markers', 'night-commline']) {
    assert.equal(await page.locator(`[data-testid=${panel}]`).count(), 0, `no empty ${panel} panel`);
  }
  assert.deepEqual(w.errors, [], 'the page asks the APIs for nothing it cannot show');
  await page.click('[data-testid=night-none-hosts]');
  await page.waitForURL(/\/hosts$/);
  await page.close();
});

test('the profile list\'s order is in the URL: kept on reload, restored by Back', async () => {
  const { join } = await import('node:path');
  const { writeCapture } = await import('./capture.mjs');
  const { tempDir, upload } = await import('./helpers.mjs');
  const path = join(tempDir(), 'small.perf.txt');
  await writeCapture(path, { cpus: 2, seconds: 3, seed: 7 });
  await upload(server.url, path, 'small');

  const page = await browser.ctx.newPage();
  const w = watch(page);
  const order = () => page.$$eval('table[data-testid=profiles] tbody tr', (rs) => rs.map((r) => Number(r.dataset.samples)));
  const sorted = (xs, desc) => [...xs].sort((a, b) => (desc ? b - a : a - b));
  const sortParam = () => new URL(page.url()).searchParams.get('sort');
  await open(page, '/');
  const samples = page.locator('th[data-sort=samples] button');
  await samples.click();
  assert.equal(sortParam(), 'samples-desc');
  assert.deepEqual(await order(), sorted(await order(), true));
  await samples.click();
  assert.equal(sortParam(), 'samples');
  const ascending = await order();
  assert.deepEqual(ascending, sorted(ascending, false));
  assert.notDeepEqual(ascending, sorted(ascending, true), 'the profiles differ in samples');
  await page.reload();
  await page.waitForLoadState('networkidle');
  assert.deepEqual(await order(), ascending, 'a reload keeps the order');
  assert.equal(await page.getAttribute('th[data-sort=samples]', 'aria-sort'), 'ascending');
  await page.goBack();
  await page.waitForFunction(() => new URLSearchParams(location.search).get('sort') === 'samples-desc');
  assert.deepEqual(await order(), sorted(ascending, true), 'Back restores the order before');
  assert.equal(await page.getAttribute('th[data-sort=samples]', 'aria-sort'), 'descending');
  await page.goBack();
  await page.waitForFunction(() => !new URLSearchParams(location.search).has('sort'));
  assert.equal(await page.getAttribute('th[data-sort=uploaded]', 'aria-sort'), 'descending');
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('the sandwich\'s function is in the URL: kept on reload, restored by Back', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  const shown = async () => ((await page.$('[data-testid=sandwich-head] code')) ? page.textContent('[data-testid=sandwich-head] code') : null);
  const pick = async (name) => {
    await page.click(`[data-testid=top-functions] tbody tr:has(.fn-name:text-is("${name}"))`);
    await page.waitForFunction((n) => new URLSearchParams(location.search).get('sandwich') === n, name);
  };
  await open(page, `/p/${id}/flame?start=12&end=13`);
  assert.equal(await shown(), null);
  await pick('hot_loop');
  assert.equal(await shown(), 'hot_loop');
  await pick('serve_request');
  assert.equal(await shown(), 'serve_request');
  await page.reload();
  await page.waitForSelector('body[data-rendered="1"]');
  assert.equal(await shown(), 'serve_request', 'a reload keeps the sandwich');
  assert.equal(await page.textContent('[data-testid=top-functions] tr.picked .fn-name'), 'serve_request');
  await page.goBack();
  await page.waitForFunction(() => new URLSearchParams(location.search).get('sandwich') === 'hot_loop');
  await page.waitForFunction(() => document.querySelector('[data-testid=sandwich-head] code')?.textContent === 'hot_loop');
  await page.goBack();
  await page.waitForFunction(() => !new URLSearchParams(location.search).has('sandwich'));
  await page.waitForFunction(() => !document.querySelector('[data-testid=sandwich-head]'));
  // A link with a sandwich opens with it.
  await open(page, `/p/${id}/flame?start=12&end=13&sandwich=hot_loop`);
  assert.equal(await shown(), 'hot_loop');
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('the diff page\'s strip draws the baseline; the heading follows the brush from the keyboard', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await open(page, `/p/${id}/diff?start=12&end=13&start2=4&end2=6`);
  await page.waitForSelector('[data-testid=timeline-canvas][data-base-x0]');
  assert.equal(await page.textContent('[data-testid=timeline-base]'), 'baseline 4–6 s');
  // The baseline's dashed outline, in its colour, over the strip's 4–6 s.
  const ink = await page.$eval('[data-testid=timeline-canvas]', (c) => {
    const dpr = c.width / c.getBoundingClientRect().width;
    const want = getComputedStyle(c).getPropertyValue('--timeline-base').trim().match(/[\da-f]{2}/gi).map((x) => parseInt(x, 16));
    const x0 = Number(c.dataset.baseX0);
    const x1 = Number(c.dataset.baseX1);
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let inside = 0;
    let outside = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (Math.abs(d[i] - want[0]) > 12 || Math.abs(d[i + 1] - want[1]) > 12 || Math.abs(d[i + 2] - want[2]) > 12 || d[i + 3] < 200) continue;
      const x = ((i / 4) % c.width) / dpr;
      if (x >= x0 - 1 && x <= x1 + 1) inside++;
      else outside++;
    }
    return { inside, outside, x0, x1, width: c.getBoundingClientRect().width };
  });
  const dur = 19.99 + 1e-9;
  assert.ok(Math.abs(ink.x0 - (4 / dur) * ink.width) < 2 && Math.abs(ink.x1 - (6 / dur) * ink.width) < 2, JSON.stringify(ink));
  assert.ok(ink.inside > 100 && ink.outside === 0, `baseline ink: ${JSON.stringify(ink)}`);

  // Arrows move the target: its row in the heading follows as the label
  // does, Escape puts both back.
  const target = () => page.textContent('[data-testid=diff-target-range]');
  const before = await target();
  assert.equal(before, '12–13 s (1 s)');
  await page.focus('[data-testid=timeline-canvas]');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  const label = await page.textContent('[data-testid=timeline-label]');
  assert.equal(label, '12.2–13.2 s (1 s) of 19.99 s · ≈ 07:59:52.71–07:59:53.71 UTC');
  assert.equal(await target(), '12.2–13.2 s (1 s) · ≈ 07:59:52.71–07:59:53.71 UTC');
  assert.equal(await page.isVisible('[data-testid=diff-target] [data-testid=range-wall]'), false, 'the page\'s own times give way');
  await page.keyboard.press('Escape');
  assert.equal(await target(), before);
  assert.equal(await page.isVisible('[data-testid=diff-target] [data-testid=range-wall]'), true);

  // On the flame page the heading's range does the same, and Enter opens it.
  await open(page, `/p/${id}/flame?start=10&end=12`);
  await page.focus('[data-testid=timeline-canvas]');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Shift+ArrowRight');
  assert.equal(await page.textContent('[data-testid=range-text]'), '10.4–12.6 s (2.2 s) · ≈ 07:59:50.91–07:59:53.11 UTC');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('end') === '12.6' && document.body.dataset.rendered === '1');
  assert.equal(await page.textContent('[data-testid=range-text]'), '10.4–12.6 s (2.2 s)');
  assert.deepEqual(w.errors, []);
  await page.close();
});
