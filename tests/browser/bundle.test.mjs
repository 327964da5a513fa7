// The production build, as `go build` embeds it: no test hooks on window,
// nothing written to the console, no source-map link in app.js, and the map
// served only to whoever asks for it. Timings are User Timing measures
// (performance.getEntriesByType('measure')), which the browser's own tools
// read.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeCapture } from './capture.mjs';
import { buildProduction, startServer, launch, watch, tempDir, upload, timings } from './helpers.mjs';

let server, browser, id;

before(async () => {
  const dir = tempDir();
  const path = join(dir, 'known.perf.txt');
  await writeCapture(path, { cpus: 4, seconds: 5 });
  server = await startServer([], buildProduction());
  id = (await upload(server.url, path, 'known')).profile.id;
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('the production bundle carries no test hooks and links no source map', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  const html = await (await fetch(`${server.url}/p/${id}/flame?start=1&end=3`)).text();
  const src = html.match(/<script type="module" src="([^"]+)"/)[1];
  const js = await (await fetch(server.url + src)).text();
  assert.ok(!js.includes('__flame') && !js.includes('__timings') && !js.includes('console.log'), 'app.js holds test hooks');
  assert.ok(!/sourceMappingURL/.test(js), 'app.js links its source map');
  const res = await fetch(`${server.url}/static/app.js`);
  assert.equal(res.headers.get('sourcemap'), null);
  assert.equal(res.headers.get('x-sourcemap'), null);

  // The map is there for whoever asks.
  const map = await fetch(`${server.url}/static/app.js.map`);
  assert.equal(map.status, 200);
  const body = await map.json();
  assert.ok(body.sources.some((s) => s.endsWith('src/flame.ts')), JSON.stringify(body.sources));

  await page.goto(`${server.url}/p/${id}/flame?start=1&end=3`);
  await page.waitForSelector('body[data-rendered="1"]');
  assert.deepEqual(await page.evaluate(() => [typeof window.__flame, typeof window.__timings]), ['undefined', 'undefined']);
  const t = await timings(page);
  assert.ok(t['flame-render'] > 0 && t['flame-fetch'] > 0, JSON.stringify(t));
  assert.deepEqual(w.logs, [], 'nothing written to the console');
  assert.deepEqual(w.errors, []);
  await page.close();
});
