// The profile page as a user works it: hovering either map says what a cell
// holds, both maps select the same way (drag, or click then click; Esc
// cancels), a filter that matches nothing says so, and the page keeps its
// axes and lists readable at common window sizes.

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

async function openProfile(page, query = '') {
  await page.goto(`${server.url}/p/${id}${query}`);
  await page.waitForSelector('body[data-rendered="1"]');
}

// tooltip returns the lines of the visible tooltip, waiting up to 3 s for one.
async function tooltip(page) {
  const h = await page.waitForFunction(
    () => {
      const t = [...document.querySelectorAll('[data-testid=tooltip]')].find((e) => !e.hidden);
      return t ? [...t.children].map((d) => d.textContent) : null;
    },
    null,
    { timeout: 3000 },
  );
  return h.jsonValue();
}

test('hovering an offset-heatmap cell shows what it holds', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await openProfile(page);
  // Column 12, row 3 of 50: [12.06, 12.08) s, inside the all-CPU burst.
  const a = await cellCentre(page, '#heatmap .grid-overlay', 12, 3);
  await page.mouse.move(a.x, a.y);
  const lines = await tooltip(page);
  assert.deepEqual(lines, ['12.060–12.080 s', 'column 12, +60 ms', `${count(records, 12.06, 12.08)} samples`]);
  assert.deepEqual(w.errors, []);
  await page.close();
});
