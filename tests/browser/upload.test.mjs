// Upload through the index page: the progress bar finishes, the browser lands
// on the profile page, and the heatmap and cores map render from the API.
// Bad input gets a clear error on the page.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeCapture } from './capture.mjs';
import { startServer, launch, watch, shot, inkedPixels, tempDir, copyToDocs, timings } from './helpers.mjs';

let server, browser, dir, capture, small;

before(async () => {
  dir = tempDir();
  capture = join(dir, 'incident.perf.txt');
  await writeCapture(capture, { cpus: 8, seconds: 20 });
  small = join(dir, 'small.perf.txt');
  await writeCapture(small, { cpus: 2, seconds: 3, seed: 3 });
  server = await startServer();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('upload a capture, watch the progress bar finish and land on the heatmaps', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(server.url + '/');
  assert.equal(await page.getAttribute('body', 'data-page'), 'index');
  await page.fill('#upload-form input[name=name]', 'browser upload');

  // Log what the progress bar and status line show on the way; the log sits
  // in sessionStorage so that it survives the navigation to the profile.
  await page.evaluate(() => {
    const log = (k, v) => {
      const a = JSON.parse(sessionStorage.getItem(k) || '[]');
      a.push(v);
      sessionStorage.setItem(k, JSON.stringify(a));
    };
    const p = document.getElementById('upload-progress');
    new MutationObserver(() => log('t.progress', [p.value, getComputedStyle(p).visibility])).observe(p, { attributes: true });
    const s = document.getElementById('upload-status');
    new MutationObserver(() => log('t.status', s.textContent)).observe(s, { childList: true, characterData: true, subtree: true });
  });
  const landed = page.waitForURL(/\/p\/[^/?]+$/, { timeout: 30_000 });
  await page.setInputFiles('#upload-file', capture);
  await landed;
  const progress = await page.evaluate(() => JSON.parse(sessionStorage.getItem('t.progress') || '[]'));
  const status = await page.evaluate(() => JSON.parse(sessionStorage.getItem('t.status') || '[]'));
  assert.ok(progress.some(([v, vis]) => v === 100 && vis === 'visible'), `progress values: ${JSON.stringify(progress)}`);
  assert.ok(status.some((t) => /^Uploading incident\.perf\.txt/.test(t)), `status texts: ${JSON.stringify(status)}`);
  assert.ok(status.includes('Parsing…'), `status texts: ${JSON.stringify(status)}`);

  await page.waitForSelector('body[data-rendered="1"]', { timeout: 30_000 });
  assert.equal(await page.getAttribute('body', 'data-page'), 'profile');
  const id = new URL(page.url()).pathname.split('/')[2];
  assert.ok(w.requests.some((u) => u.includes(`/api/profiles/${id}/heatmap`)), 'heatmap API called');
  assert.ok(w.requests.some((u) => u.includes(`/api/profiles/${id}/cpus`)), 'cores API called');

  const heat = await inkedPixels(page, '[data-testid=heatmap-canvas]');
  assert.ok(heat.inked > heat.total * 0.2, `heatmap canvas mostly blank: ${JSON.stringify(heat)}`);
  assert.ok(heat.colours > 5, `heatmap has too few colours: ${JSON.stringify(heat)}`);
  const cores = await inkedPixels(page, '[data-testid=cores-canvas]');
  assert.ok(cores.inked > cores.total * 0.2, `cores canvas mostly blank: ${JSON.stringify(cores)}`);

  // 8 CPUs → 8 rows in the cores map, labelled on the axis; 20 s → 20 columns.
  const geo = await page.$eval('#heatmap .grid-overlay', (c) => ({ ...c.dataset }));
  assert.equal(Number(geo.cols), 20);
  assert.equal(Number(geo.rows), 50);
  const cgeo = await page.$eval('#cores .grid-overlay', (c) => ({ ...c.dataset }));
  assert.equal(Number(cgeo.rows), 8);

  const tm = await timings(page);
  assert.ok(tm['upload-to-heatmap'] > 0, `timings: ${JSON.stringify(tm)}`);
  console.log(`# upload-to-rendered-heatmap (8 CPUs × 20 s, ${(await (await import('node:fs/promises')).stat(capture)).size} bytes): ${tm['upload-to-heatmap']} ms (body read and parsed: ${tm['upload-send']} ms, then until the answer: ${tm['upload-ingest']} ms)`);
  assert.deepEqual(w.errors, []);
  await shot(page, 'profile', { fullPage: true });

  // The flame graph around the burst, with a frame's details, for the docs.
  await page.goto(`${server.url}/p/${id}/flame?start=11&end=13`);
  await page.waitForSelector('body[data-rendered="1"]');
  const box = await page.$eval('[data-testid=flame-canvas]', (c) => c.getBoundingClientRect().toJSON());
  const rect = await page.evaluate(() => window.__flame.locate('hot_loop'));
  await page.mouse.move(box.x + rect.x + rect.w * 0.3, box.y + rect.y + rect.h / 2);
  await page.waitForSelector('[data-testid=tooltip]:not([hidden])');
  copyToDocs(await shot(page, 'flame-hover'), 'flame.png');
  await page.goto(server.url + '/');
  assert.equal(await page.textContent('table[data-testid=profiles] tbody tr td a'), 'browser upload');
  copyToDocs(await shot(page, 'index'), 'index.png');
  await page.close();
});

test('drop a capture onto the drop zone', async () => {
  const page = await browser.ctx.newPage();
  await page.goto(server.url + '/');
  const text = await readFile(small, 'utf8');
  const landed = page.waitForURL(/\/p\/[^/?]+$/, { timeout: 30_000 });
  // A real drop carries a DataTransfer holding the file.
  const dt = await page.evaluateHandle((text) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], 'dropped.perf.txt', { type: 'text/plain' }));
    return dt;
  }, text);
  await page.dispatchEvent('#upload-drop', 'dragover', { dataTransfer: dt });
  assert.match(await page.getAttribute('#upload-drop', 'class'), /\bover\b/);
  await page.dispatchEvent('#upload-drop', 'drop', { dataTransfer: dt });
  await landed;
  await page.waitForSelector('body[data-rendered="1"]');
  assert.equal(await page.textContent('main h1'), 'dropped.perf.txt');
  const cores = await page.$eval('#cores .grid-overlay', (c) => Number(c.dataset.rows));
  assert.equal(cores, 2);
  await page.close();
});

test('the upload form shows the server error for input that is not perf text', async () => {
  const page = await browser.ctx.newPage();
  await page.goto(server.url + '/');
  const bad = join(dir, 'page.html');
  writeFileSync(bad, '<!DOCTYPE html><html><body>not a capture</body></html>\n');
  await page.setInputFiles('#upload-file', bad);
  const err = page.locator('#upload-error');
  await err.waitFor({ state: 'visible', timeout: 15_000 });
  const text = await err.textContent();
  assert.match(text, /415/);
  assert.match(text, /perf/i);
  assert.match(new URL(page.url()).pathname, /^\/$/);
  await page.close();
});

test('with --token, the upload form sends the token it is given', async () => {
  const guarded = await startServer(['--token', 's3cret-token']);
  try {
    const page = await browser.ctx.newPage();
    await page.goto(guarded.url + '/');
    // Without the token: the server's refusal, shown on the page.
    await page.setInputFiles('#upload-file', small);
    const err = page.locator('#upload-error');
    await err.waitFor({ state: 'visible', timeout: 15_000 });
    assert.match(await err.textContent(), /HTTP 401/);
    // With it: on to the profile.
    await page.fill('#upload-form input[name=token]', 's3cret-token');
    const landed = page.waitForURL(/\/p\/[^/?]+$/, { timeout: 30_000 });
    await page.setInputFiles('#upload-file', []);
    await page.setInputFiles('#upload-file', small);
    await landed;
    await page.waitForSelector('body[data-rendered="1"]');
    await page.close();
  } finally {
    await guarded.stop();
  }
});

test('an upload answered 503 (the database restarting) is retried after its Retry-After, saying so, and lands', async () => {
  const fresh = join(dir, 'retried.perf.txt');
  await writeCapture(fresh, { cpus: 2, seconds: 3, seed: 7 });
  const page = await browser.ctx.newPage();
  await page.goto(server.url + '/');
  // The server's answer while its database is down, twice; then the
  // request goes through to the real server.
  const refused = [];
  await page.route('**/api/profiles?*', async (route) => {
    if (route.request().method() !== 'POST' || refused.length === 2) return route.continue();
    refused.push(Date.now());
    await route.fulfill({
      status: 503,
      headers: { 'Retry-After': '1', 'Content-Type': 'application/json' },
      body: JSON.stringify({ error: 'the database is unavailable (unreachable or restarting), so nothing was changed: retry in a few seconds' }),
    });
  });
  // The status line's texts, kept in sessionStorage past the navigation.
  await page.evaluate(() => {
    const s = document.getElementById('upload-status');
    new MutationObserver(() => {
      const a = JSON.parse(sessionStorage.getItem('t.retry') || '[]');
      a.push(s.textContent);
      sessionStorage.setItem('t.retry', JSON.stringify(a));
    }).observe(s, { childList: true, characterData: true, subtree: true });
  });
  const landed = page.waitForURL(/\/p\/[^/?]+$/, { timeout: 30_000 });
  const sent = Date.now();
  await page.setInputFiles('#upload-file', fresh);
  await landed;
  const done = Date.now();
  const status = await page.evaluate(() => JSON.parse(sessionStorage.getItem('t.retry') || '[]'));
  assert.equal(refused.length, 2, 'the upload was sent three times');
  // Waits of at least Retry-After (1 s), then 2 s: the second attempt's
  // floor doubles.
  assert.ok(refused[1] - refused[0] >= 950, `second attempt ${refused[1] - refused[0]} ms after the first`);
  assert.ok(done - refused[1] >= 1950, `third attempt ${done - refused[1]} ms after the second`);
  assert.ok(status.some((t) => /database is unavailable.*retrying in 1 s \(1 of 4\)/.test(t)), `status texts: ${JSON.stringify(status)}`);
  assert.ok(status.some((t) => /retrying in 2 s \(2 of 4\)/.test(t)), `status texts: ${JSON.stringify(status)}`);
  await page.waitForSelector('body[data-rendered="1"]');
  assert.equal(await page.textContent('main h1'), 'retried.perf.txt');
  assert.ok(done - sent < 15_000);
  await page.close();
});
