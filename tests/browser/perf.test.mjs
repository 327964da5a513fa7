// Speed in the browser, measured and printed (targets: upload of the
// bundled-size sample to rendered heatmap within 1 s, from issue 10; drag
// release to rendered flame graph under 300 ms for a 10 s range of the
// 96-CPU capture, from issue 5), and a flame graph of 50k+ nodes that
// draws, zooms and searches.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { stat } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { writeWideCapture } from './capture.mjs';
import { build, startServer, launch, watch, tempDir, upload, cellCentre, shot, copyToDocs, timings } from './helpers.mjs';

let server, browser, dir, incident;

before(async () => {
  dir = tempDir();
  server = await startServer();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('the bundled-size incident sample: upload to heatmap, and drag release to flame graph for 10 s', async () => {
  // The generator's defaults are the bundled incident: 96 CPUs at 49 Hz for
  // 120 s, zstd-compressed as it ships.
  const path = join(dir, 'incident.perf.zst');
  execFileSync(build(), ['generate', '-o', path], { stdio: 'ignore' });
  const size = (await stat(path)).size;
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(server.url + '/');
  const landed = page.waitForURL(/\/p\/[^/?]+$/, { timeout: 300_000 });
  await page.setInputFiles('#upload-file', path);
  await landed;
  incident = new URL(page.url()).pathname.split('/')[2];
  await page.waitForSelector('body[data-rendered="1"]', { timeout: 60_000 });
  const t1 = await timings(page);
  assert.ok(t1['upload-to-heatmap'] > 0, JSON.stringify(t1));
  const cores = await page.$eval('#cores .grid-overlay', (c) => Number(c.dataset.rows));
  assert.equal(cores, 96);
  const samples = await page.evaluate(() => JSON.parse(document.getElementById('view-data').textContent).profile.samples);
  const parts = await uploadBreakdown(page, t1);
  console.log(`# upload-to-rendered-heatmap (bundled-size sample: 96 CPUs × 120 s at 49 Hz, ${samples} samples, ${(size / 1e6).toFixed(1)} MB zstd): ${t1['upload-to-heatmap']} ms (target ≤ 1000 ms): ` +
    `body sent ${t1['upload-send']} ms (the server parses as it reads), the import's answer ${t1['upload-ingest']} ms later; ` +
    `then the page's HTML requested after ${parts.open} ms and read in ${parts.html} ms, the heatmap's JSON in ${parts.json} ms beside it, drawn ${parts.draw} ms after both`);

  // Columns 5..14, all rows: [5, 15) s.
  const a = await cellCentre(page, '#heatmap .grid-overlay', 5, 0);
  const b = await cellCentre(page, '#heatmap .grid-overlay', 14, 49);
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2);
  await page.mouse.move(b.x, b.y);
  await page.waitForFunction(() => /^5–15 s \(10 s\) · ≈ [\d:.]+–[\d:.]+ UTC · [\d,]+ samples$/.test(document.querySelector('[data-testid=selection]').textContent));
  const label = await page.textContent('[data-testid=selection]');
  const inRange = label.match(/· ([\d,]+) samples$/)[1];
  copyToDocs(await shot(page, 'selecting-incident'), 'selecting.png');
  const nav = page.waitForURL(/\/flame\?/);
  await page.mouse.up();
  await nav;
  await page.waitForSelector('body[data-rendered="1"]');
  const url = new URL(page.url());
  assert.deepEqual([url.searchParams.get('start'), url.searchParams.get('end')], ['5', '15']);
  // The flame graph counts the same samples as the heatmap cells selected.
  const summary = await page.textContent('[data-testid=flame-summary]');
  assert.ok(summary.startsWith(`${inRange} samples`), `${summary} vs ${inRange}`);
  const t2 = await timings(page);
  console.log(`# drag-release-to-rendered-flame-graph (96 CPUs, 10 s, ${inRange} samples): ${t2['select-to-flame']} ms (target < 300 ms; JSON ready ${t2['flame-fetch']} ms after the page booted)`);
  assert.ok(t2['select-to-flame'] > 0);
  await page.waitForSelector('[data-testid=timeline-canvas][data-loaded]');
  copyToDocs(await shot(page, 'flame-incident', { fullPage: true }), 'flame-incident.png');
  // Move the range with the mini timeline's brush: [5, 15) to [15, 25).
  const tl = await page.$eval('[data-testid=timeline-canvas]', (c) => c.getBoundingClientRect().toJSON());
  const pxPerS = tl.width / ((await page.evaluate(() => { const p = JSON.parse(document.getElementById('view-data').textContent).profile; return p.end_ns + 1 - p.t0_ns; })) / 1e9);
  await page.mouse.move(tl.x + 10 * pxPerS, tl.y + tl.height / 2);
  await page.mouse.down();
  await page.mouse.move(tl.x + 15 * pxPerS, tl.y + tl.height / 2);
  await page.mouse.move(tl.x + 20 * pxPerS, tl.y + tl.height / 2);
  await page.mouse.up();
  await page.waitForFunction(() => new URLSearchParams(location.search).get('start') === '15' && document.body.dataset.rendered === '1', null, { timeout: 30_000 });
  const t3 = await timings(page);
  console.log(`# brush-release-to-rendered-flame-graph (96 CPUs, 10 s): ${t3['select-to-flame']} ms (target ≤ 150 ms; JSON ready ${t3['flame-fetch']} ms after the page booted)`);
  assert.deepEqual(w.errors, []);
  await page.goto(server.url + url.pathname.replace(/\/flame$/, ''));
  await page.waitForSelector('body[data-rendered="1"]');
  copyToDocs(await shot(page, 'profile-incident', { fullPage: true }), 'profile.png');
  await page.close();
});

// uploadBreakdown splits the time from the upload's answer to the drawn
// heatmap (t: the page's timings): until the profile page is requested, its
// HTML, the heatmap's JSON (fetched beside the HTML after an upload), and
// from the later of those two to the heatmap drawn. The page is opened in
// place, so its request is a resource of the upload page; after a full load
// it is the navigation itself.
async function uploadBreakdown(page, t) {
  const e = await page.evaluate(() => {
    const m = performance.getEntriesByName('subsecond:upload-to-heatmap').pop();
    const last = (re) => performance.getEntriesByType('resource').filter((r) => re.test(new URL(r.name).pathname)).pop();
    const span = (r) => r && { start: r.startTime, end: r.responseEnd };
    return {
      drawn: m.startTime + m.duration,
      page: span(last(/^\/p\/[^/]+$/)) || span(performance.getEntriesByType('navigation')[0]),
      json: span(last(/\/heatmap$/)),
    };
  });
  const answered = e.drawn - (t['upload-to-heatmap'] - t['upload-send'] - t['upload-ingest']);
  const ms = (v) => Math.round(v * 10) / 10;
  return {
    open: ms(e.page.start - answered),
    html: ms(e.page.end - e.page.start),
    json: ms(e.json.end - e.json.start),
    draw: ms(e.drawn - Math.max(e.page.end, e.json.end)),
  };
}

test('a flame graph of 50k+ nodes draws, zooms and searches', async () => {
  const path = join(dir, 'wide.perf.txt');
  await writeWideCapture(path, { samples: 6000 });
  const res = await upload(server.url, path, 'wide');
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/p/${res.profile.id}/flame`);
  await page.waitForSelector('body[data-rendered="1"]');
  const nodes = await page.evaluate(() => window.__flame.nodes);
  assert.ok(nodes >= 50_000, `nodes: ${nodes}`);
  const first = { ...(await timings(page)), ...(await page.evaluate(() => window.__flame.stats())) };
  // Only nodes at least half a pixel wide are drawn.
  assert.ok(first.drawn > 100 && first.drawn < nodes, JSON.stringify(first));

  // Zoom into the widest top-level function and back; search everything.
  const box = await page.$eval('[data-testid=flame-canvas]', (c) => c.getBoundingClientRect().toJSON());
  const rect = await page.evaluate(() => window.__flame.locate('fn_top_0'));
  await page.mouse.click(box.x + rect.x + rect.w / 2, box.y + rect.y + rect.h / 2);
  await page.waitForFunction(() => new URLSearchParams(location.search).has('zoom'));
  await page.waitForFunction(() => window.__flame.stats().drawn > 0);
  const zoomed = await page.evaluate(() => window.__flame.stats());
  await page.fill('#search', 'fn_deep_1\\d$');
  await page.waitForFunction(() => document.getElementById('search-match').textContent.startsWith('Matched'));
  await page.waitForTimeout(100);
  const searched = await page.evaluate(() => window.__flame.stats());
  console.log(`# flame graph of ${nodes} nodes: fetch ${first['flame-fetch']} ms, first render ${first['flame-render']} ms; frame draws: full ${first.drawMs.toFixed(1)} ms (${first.drawn} drawn), zoomed ${zoomed.drawMs.toFixed(1)} ms, search ${searched.drawMs.toFixed(1)} ms`);
  await shot(page, 'flame-wide', { fullPage: false });
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('the stack chart of 10 s on one CPU and on all 96 of the bundled-size sample', async () => {
  assert.ok(incident, 'the first test uploaded the sample');
  const page = await browser.ctx.newPage();
  const w = watch(page);
  const runs = [];
  for (const [label, query] of [['10 s × 1 CPU', 'start=5&end=15&cpu=39'], ['10 s × 96 CPUs', 'start=5&end=15']]) {
    await page.goto(`${server.url}/p/${incident}/stacks?${query}`);
    await page.waitForSelector('#stacks[data-rendered="1"]', { timeout: 60_000 });
    const t = await timings(page);
    const lanes = await page.evaluate(() => window.__stacks.lanes());
    const s = await page.evaluate(() => window.__stacks.stats());
    const samples = lanes.reduce((n, l) => n + l.samples, 0);
    assert.equal(lanes.length, label.includes('96') ? 96 : 1);
    assert.ok(samples > 0 && s.boxes > 0, JSON.stringify({ lanes: lanes.length, samples, s }));
    // Each figure counts from the navigation's start: the page's head asks
    // for the JSON before its script runs, which a count from the script's
    // start would leave out.
    assert.ok(t['stacks-script'] > 0 && t['stacks-fetch'] >= t['stacks-script'] && t['stacks-render'] > t['stacks-fetch'] && t['stacks-shown'] >= t['stacks-render'], JSON.stringify(t));
    runs.push(`${label} (${samples} samples, ${lanes.length} lanes): drawn ${t['stacks-render']} ms after the navigation started ` +
      `(${Math.round((t['stacks-render'] - t['stacks-script']) * 10) / 10} ms after the page's script did, at ${t['stacks-script']} ms; samples JSON in hand at ${t['stacks-fetch']} ms, ` +
      `lanes laid out in ${t['stacks-layout']} ms, first frame ${t['stacks-draw']} ms, ${s.boxes} boxes), on screen at ${t['stacks-shown']} ms`);
  }
  console.log(`# stack chart, ${runs.join('; ')} (targets: drawn within 100 ms for 1 CPU, 300 ms for 96)`);
  await shot(page, 'stacks-incident', { fullPage: true });
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('hover on a 4,000-node flame graph redraws only the outlines', async () => {
  const path = join(dir, 'hover.perf.txt');
  await writeWideCapture(path, { samples: 240, seed: 11 });
  const res = await upload(server.url, path, 'hover');
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/p/${res.profile.id}/flame`);
  await page.waitForSelector('body[data-rendered="1"]');
  const nodes = await page.evaluate(() => window.__flame.nodes);
  assert.ok(nodes >= 3500 && nodes <= 5000, `nodes: ${nodes}`);
  const box = await page.$eval('[data-testid=flame-canvas]', (c) => c.getBoundingClientRect().toJSON());
  const before = await page.evaluate(() => window.__flame.stats());
  // Sweep the pointer across the graph's rows and columns.
  for (let i = 0; i < 60; i++) {
    await page.mouse.move(box.x + ((i * 37) % 100) / 100 * box.width, box.y + box.height - 8 - (i % 12) * 17);
  }
  await page.waitForTimeout(50);
  const after = await page.evaluate(() => window.__flame.stats());
  assert.equal(after.draws, before.draws, 'hovering drew the frames again');
  assert.ok(after.overlayDraws - before.overlayDraws >= 20, JSON.stringify({ before, after }));
  console.log(`# hover on a ${nodes}-node flame graph: ${after.overlayDraws - before.overlayDraws} outline redraws, last ${after.overlayMs.toFixed(2)} ms each, against ${before.drawMs.toFixed(1)} ms for the whole graph (${before.drawn} frames), which hovering no longer redraws`);
  assert.deepEqual(w.errors, []);
  await page.close();
});
