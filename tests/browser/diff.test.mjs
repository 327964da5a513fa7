// The README's step 5 on the bundled incident: the differential flame graph
// of CPU 39 from the seconds before the second window to the window shows
// what the kubelet pushed aside (the data-loader worker pt_data_worker and
// the NIC's receive polling mlx5e_napi_poll) as gone, drawn at their
// baseline width in the shrink colour, findable by search, and listed in
// the table of changes; the baseline shape toggles and stays in the URL.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { build, startServer, launch, watch, upload, shot, tempDir, ROOT } from './helpers.mjs';

let server, browser, id;

before(async () => {
  server = await startServer();
  const { profile } = await upload(server.url, join(ROOT, 'sample-data', 'incident-96cpu-120s.perf.txt.zst'), 'bundled incident');
  id = profile.id;
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

// pixelAt returns the canvas colour at the centre of rect (css px).
async function pixelAt(page, rect) {
  return page.$eval(
    '[data-testid=flame-canvas]',
    (c, r) => {
      const dpr = c.width / c.getBoundingClientRect().width;
      const d = c.getContext('2d').getImageData(Math.floor((r.x + r.w / 2) * dpr), Math.floor((r.y + 4) * dpr), 1, 1).data;
      return [d[0], d[1], d[2]];
    },
    rect,
  );
}

test("README step 5: pt_data_worker and mlx5e_napi_poll are gone from CPU 39's diff", async () => {
  const page = await browser.ctx.newPage();
  // Tall enough for the whole graph, so the pointer can reach every frame.
  await page.setViewportSize({ width: 1440, height: 1600 });
  const w = watch(page);
  await page.goto(`${server.url}/p/${id}/diff?cpu=39&start2=50&end2=56&start=56.4&end=62.1`);
  await page.waitForSelector('body[data-rendered="1"]');
  const canvas = await page.$eval('[data-testid=flame-canvas]', (c) => c.getBoundingClientRect().toJSON());

  // Gone frames are drawn at their baseline width (114 and 103 of the
  // baseline's 239 samples), in the shrink colour.
  for (const [name, base] of [['pt_data_worker', 114], ['mlx5e_napi_poll', 103]]) {
    const r = await page.evaluate((n) => window.__flame.locate(n), name);
    assert.ok(r, `${name} is not drawn`);
    const share = r.w / canvas.width;
    // The target shape spans the target (280 samples) plus what is gone.
    assert.ok(share > 0.1, `${name} is ${r.w} px of ${canvas.width}: want its baseline share of ${base} samples`);
    const [red, green, blue] = await pixelAt(page, r);
    assert.ok(blue === 250 && red < 200 && red === green, `${name} is drawn rgb(${red},${green},${blue}); want the shrink colour`);
    await page.mouse.move(canvas.x + r.x + r.w / 2, canvas.y + r.y + r.h / 2);
    const tip = await page.$$eval('[data-testid=tooltip] div', (ds) => ds.map((d) => d.textContent));
    // The process is one frame; the polling runs under several callers, the
    // widest of which is the one located.
    const want = name === 'pt_data_worker' ? `baseline samples ${base} · gone: only in the baseline` : /^baseline samples \d+ · gone: only in the baseline$/;
    assert.ok(tip.some((t) => (typeof want === 'string' ? t === want : want.test(t))), tip.join(' | '));
    assert.ok(tip.some((t) => t.startsWith('significant change (z -')), tip.join(' | '));
  }

  // A search finds them: they are not zero-width.
  await page.fill('[data-testid=search]', 'mlx5e_napi_poll');
  await page.waitForFunction(() => /^Matched: [1-9]/.test(document.querySelector('[data-testid=search-match]').textContent));
  assert.match(await page.textContent('[data-testid=search-match]'), /^Matched: (2\d|3\d)\./);

  // The table of changes lists the polling as gone, significantly.
  await page.waitForSelector('#changes[data-rendered="1"]');
  const row = await page.$$eval('[data-testid=diff-functions] tbody tr', (trs) =>
    trs.map((tr) => ({ change: tr.dataset.change, cells: [...tr.querySelectorAll('td')].map((td) => td.textContent.trim()) })).find((r) => r.cells[0].startsWith('mlx5e_napi_poll')),
  );
  assert.ok(row, 'mlx5e_napi_poll is not in the table of changes');
  assert.equal(row.change, 'gone');
  assert.deepEqual(row.cells.slice(4, 7), ['103', '0', '-43.10']);
  assert.ok(!row.cells[7].includes('noise'), row.cells.join(' | '));
  const summary = await page.textContent('[data-testid=diff-functions-summary]');
  assert.match(summary, /baseline 239 samples, target 280/);

  // The baseline's shape: the shrunk frames keep their width, the window's
  // kubelet walk (new in the target) keeps its target width; in the URL.
  await page.click('[data-testid=shape-base]');
  assert.equal(new URL(page.url()).searchParams.get('shape'), 'base');
  await page.waitForFunction(() => window.__flame.locate('pt_data_worker').w > 0);
  const inBase = await page.evaluate(() => window.__flame.locate('pt_data_worker'));
  // 114/239 of the baseline, which in this shape is the whole width save
  // the kubelet's 280/280 of the target drawn beside it: about a quarter.
  const share = inBase.w / canvas.width;
  assert.ok(share > 0.2 && share < 0.3, `pt_data_worker in the baseline shape: ${share} of the width`);
  await shot(page, 'diff-incident-cpu39', { fullPage: true });
  await page.reload();
  await page.waitForSelector('body[data-rendered="1"]');
  assert.equal(await page.getAttribute('[data-testid=shape-base]', 'aria-pressed'), 'true');
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('compare with another profile: the form takes a baseline profile, its whole capture by default', async () => {
  const path = join(tempDir(), 'small.perf.txt');
  execFileSync(build(), ['generate', '--cpus', '4', '--seconds', '6', '--incident-cpu', '2', '--incidents', '1', '--seed', '7', '-o', path], { stdio: 'ignore' });
  const small = (await upload(server.url, path, 'small capture')).profile;
  const whole = await (await fetch(`${server.url}/api/profiles/${id}/flamegraph`)).json();
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/p/${small.id}/flame?start=1&end=3`);
  await page.waitForSelector('body[data-rendered="1"]');
  await page.waitForSelector(`[data-testid=compare-profile] option[value="${id}"]`, { state: 'attached' });
  await page.selectOption('[data-testid=compare-profile]', id);
  assert.equal(await page.inputValue('[data-testid=compare-start]'), '');
  const nav = page.waitForURL(/\/diff\?/);
  await page.click('[data-testid=compare] button[type=submit]');
  await nav;
  const url = new URL(page.url());
  assert.deepEqual(['base', 'start', 'end', 'start2', 'end2'].map((k) => url.searchParams.get(k)), [id, '1', '3', null, null]);
  await page.waitForSelector('body[data-rendered="1"]');
  const summary = await page.textContent('[data-testid=flame-summary]');
  assert.ok(summary.includes(`vs ${whole.total.toLocaleString('en-US')} baseline`), `${summary}; want the incident's ${whole.total} samples as the baseline`);
  // The sides: the other profile's whole capture, this one's 1–3 s.
  assert.match(await page.innerText('[data-testid=diff-base]'), /^Baseline\t[^\t]+\tbundled incident\t0–1(19|20)[.\d]* s /);
  assert.match(await page.innerText('[data-testid=diff-target]'), /^Target\t[^\t]+\tsmall capture\t1–3 s \(2 s\)\t≈ 2026-01-01 02:00:01\.509–02:00:03\.509 UTC$/);
  assert.deepEqual(w.errors, []);
  await page.close();
});
