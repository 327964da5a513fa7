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
