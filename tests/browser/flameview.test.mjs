// The flame and diff pages say what they show and lead back where the user
// came from: the active filters in the heading and title, a range clamped to
// the capture and rounded for reading, a baseline that does not overlap the
// target, "← heatmaps" back to the exact view, and a top-functions table
// that follows the zoom.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeCapture, count, PEGGED } from './capture.mjs';
import { startServer, launch, watch, tempDir, upload, cellCentre, gridPoint } from './helpers.mjs';

let server, browser, id, records;

before(async () => {
  const dir = tempDir();
  const path = join(dir, 'known.perf.txt');
  ({ records } = await writeCapture(path, { cpus: 8, seconds: 20 }));
  server = await startServer();
  id = (await upload(server.url, path, 'known')).profile.id;
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

async function open(page, path) {
  await page.goto(server.url + path);
  await page.waitForSelector('body[data-rendered="1"]', { timeout: 10_000 });
}

test('the flame and diff pages name every active filter in the heading and title', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  const want = 'CPU 5 · pid 300 · comm gc · function mark · user frames only · idle included';
  await open(page, `/p/${id}/flame?cpu=5&start=4.5&end=7.25&comm=gc&pid=300&function=mark&only=user&idle=1`);
  assert.equal(await page.textContent('[data-testid=active-filters]'), want);
  assert.equal(await page.title(), `known · flame 4.5–7.25 s · ${want} · Subsecond`);
  await open(page, `/p/${id}/diff?cpu=5&start=6&end=8&start2=4&end2=6`);
  assert.equal(await page.textContent('[data-testid=active-filters]'), 'CPU 5');
  assert.equal(await page.title(), 'known · diff 4–6 s → 6–8 s · CPU 5 · Subsecond');
  // Without filters the line is absent.
  await open(page, `/p/${id}/flame?start=4&end=8`);
  assert.equal(await page.$('[data-testid=active-filters]'), null);
  assert.equal(await page.title(), 'known · flame 4–8 s · Subsecond');
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('ranges are clamped to the capture and rounded for reading; the baseline comes just before', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  const range = () => page.$eval('[data-testid=range]', (p) => p.textContent.replace('← heatmaps', '').replace(/\s+/g, ' ').trim());
  // The last sample is at 19.989969 s: the whole capture ends 1 ns later.
  await open(page, `/p/${id}/flame?start=-5`);
  assert.equal(await range(), '0 s – 19.989969 s (19.99s)');
  assert.equal(new URL(page.url()).searchParams.get('start'), '-5', 'the URL keeps what was asked');
  const total = count(records, 0, 20);
  assert.ok((await page.textContent('[data-testid=flame-summary]')).startsWith(`${total.toLocaleString('en-US')} samples`));
  await open(page, `/p/${id}/flame?start=19&end=99`);
  assert.equal(await range(), '19 s – 19.989969 s (990ms)');

  // The proposed baseline: the same length just before the target; what
  // fits before it when the target starts early; else just after it.
  for (const [q, want] of [
    ['start=12&end=13', ['11', '12']],
    ['start=0.5&end=2', ['0', '0.5']],
    ['start=0&end=5', ['5', '10']],
    ['start=17.5&end=19.25', ['15.75', '17.5']],
  ]) {
    await open(page, `/p/${id}/flame?${q}`);
    const got = [await page.inputValue('[data-testid=compare-start]'), await page.inputValue('[data-testid=compare-end]')];
    assert.deepEqual(got, want, q);
  }
  // Target the whole capture: nothing fits beside it, so nothing is proposed.
  await open(page, `/p/${id}/flame`);
  assert.deepEqual([await page.inputValue('[data-testid=compare-start]'), await page.inputValue('[data-testid=compare-end]')], ['', '']);
  assert.deepEqual(w.errors, []);
  await page.close();
});

// params returns a URL's path and sorted query parameters.
function params(u) {
  const url = new URL(u);
  return url.pathname + '?' + [...url.searchParams].map(([k, v]) => `${k}=${v}`).sort().join('&');
}

test('"← heatmaps" returns to the view the selection was made in', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  const view = `/p/${id}?bucket=0.5&scale=log&rows=25&measure=system&comm_regex=.`;
  const back = async () => {
    const nav = page.waitForURL((u) => new URL(u).pathname === `/p/${id}`);
    await page.click('[data-testid=range] a');
    await nav;
    await page.waitForSelector('body[data-rendered="1"]');
    assert.equal(params(page.url()), params(server.url + view));
  };

  // A block of the cores map: CPU 5 during [4, 8) s.
  await open(page, view);
  const a = await gridPoint(page, '#cores .grid-overlay', 8, PEGGED.cpu);
  const b = await gridPoint(page, '#cores .grid-overlay', 15, PEGGED.cpu);
  let nav = page.waitForURL(/\/flame\?/);
  await page.mouse.click(a.x, a.y);
  await page.mouse.click(b.x, b.y);
  await nav;
  await page.waitForSelector('body[data-rendered="1"]');
  assert.equal(new URL(page.url()).searchParams.get('cpu'), '5');
  await back();

  // Heatmap cells: [12, 13) s.
  const h1 = await cellCentre(page, '#heatmap .grid-overlay', 12, 0);
  const h2 = await cellCentre(page, '#heatmap .grid-overlay', 12, 24);
  nav = page.waitForURL(/\/flame\?/);
  await page.mouse.click(h1.x, h1.y);
  await page.mouse.click(h2.x, h2.y);
  await nav;
  await page.waitForSelector('body[data-rendered="1"]');
  // Zoom and search change the flame page's URL; the way back stays.
  await page.fill('#search', 'hot');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('search') === 'hot');
  await back();

  // A hot spot, then the compare form: the diff page leads back too, and so
  // does a reload of it.
  nav = page.waitForURL(/\/flame\?/);
  await page.click('ol[data-testid=hotspots] li a');
  await nav;
  await page.waitForSelector('body[data-rendered="1"]');
  nav = page.waitForURL(/\/diff\?/);
  await page.click('[data-testid=compare] button[type=submit]');
  await nav;
  await page.waitForSelector('body[data-rendered="1"]');
  await page.reload();
  await page.waitForSelector('body[data-rendered="1"]');
  await back();
  assert.deepEqual(w.errors, []);
  await page.close();
});
