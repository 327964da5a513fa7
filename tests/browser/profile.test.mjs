// The profile page as a user works it: hovering either map says what a cell
// holds, both maps select the same way (drag, or click then click; Esc
// cancels), a filter that matches nothing says so, and the page keeps its
// axes and lists readable at common window sizes.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { count, PEGGED } from './capture.mjs';
import { watch, cellCentre, gridPoint, knownProfile, stopKnown } from './helpers.mjs';

let server, browser, id, records;

before(async () => ({ server, browser, id, records } = await knownProfile()));
after(() => stopKnown({ server, browser }));

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
  assert.deepEqual(lines, ['12.06–12.08 s (0.02 s) · ≈ 07:59:52.57–07:59:52.59 UTC', 'column 12, +0.06 s', `${count(records, 12.06, 12.08)} samples`]);
  assert.deepEqual(w.errors, []);
  await page.close();
});

// apiRefusals drops the 400s of the JSON API from a watch's errors: a filter
// the server refuses is shown on the page, which is what these tests check.
function pageErrors(w) {
  return w.errors.filter((e) => !/^HTTP 400 .*\/api\//.test(e));
}

// emptyState reads what each map shows: its message, or its canvas rows.
async function mapState(page) {
  return page.evaluate(() => {
    const one = (sel) => {
      const el = document.querySelector(sel);
      const grid = el.querySelector('.grid');
      const canvas = grid && grid.querySelector('canvas.grid-base');
      return {
        message: (el.querySelector('.grid p') || { textContent: '' }).textContent,
        rows: canvas ? Number(grid.querySelector('.grid-overlay').dataset.rows) : 0,
      };
    };
    return { heatmap: one('#heatmap'), cores: one('#cores') };
  });
}

test('a CPU filter that matches no CPU says so in both maps, loaded or applied', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/p/${id}?cpu=999`);
  await page.waitForSelector('body[data-rendered="1"]', { timeout: 5000 });
  let s = await mapState(page);
  assert.match(s.cores.message, /999/, JSON.stringify(s));
  assert.match(s.heatmap.message, /999/, JSON.stringify(s));
  assert.deepEqual([s.cores.rows, s.heatmap.rows], [0, 0], JSON.stringify(s));
  assert.deepEqual(pageErrors(w), []);

  // Applied over a drawn map: the old map goes, the message comes; a filter
  // that matches brings the map back.
  await openProfile(page);
  s = await mapState(page);
  assert.deepEqual([s.cores.rows, s.heatmap.rows], [8, 50]);
  await page.fill('#filters input[name=cpu]', '999');
  await page.press('#filters input[name=cpu]', 'Enter');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('cpu') === '999');
  await page.waitForSelector('body[data-rendered="1"]', { timeout: 5000 });
  s = await mapState(page);
  assert.match(s.cores.message, /999/, JSON.stringify(s));
  assert.match(s.heatmap.message, /999/, JSON.stringify(s));
  assert.deepEqual([s.cores.rows, s.heatmap.rows], [0, 0], JSON.stringify(s));
  await page.fill('#filters input[name=cpu]', '3');
  await page.press('#filters input[name=cpu]', 'Enter');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('cpu') === '3');
  await page.waitForSelector('body[data-rendered="1"]', { timeout: 5000 });
  s = await mapState(page);
  assert.deepEqual([s.cores.rows, s.heatmap.rows, s.cores.message, s.heatmap.message], [1, 50, '', '']);
  assert.deepEqual(pageErrors(w), []);
  await page.close();
});

const HEAT_HINT = 'Drag across cells, or click the first and then the last, to open a flame graph.';
const CORES_HINT = HEAT_HINT;

test('both maps select alike: click, then click; Esc restores the hint', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await openProfile(page);
  const label = (sel) => page.textContent(sel);

  // Heatmap: one click starts a selection, Esc cancels it and the hint returns.
  assert.equal(await label('[data-testid=selection]'), HEAT_HINT);
  const h1 = await cellCentre(page, '#heatmap .grid-overlay', 3, 10);
  await page.mouse.click(h1.x, h1.y);
  assert.match(await label('[data-testid=selection]'), /click the last cell$/);
  await page.keyboard.press('Escape');
  assert.equal(await label('[data-testid=selection]'), HEAT_HINT);

  // Cores map: a single click does not open anything; it starts a selection.
  assert.equal(await label('[data-testid=cores-selection]'), CORES_HINT);
  const c1 = await gridPoint(page, '#cores .grid-overlay', 40, PEGGED.cpu);
  await page.mouse.click(c1.x, c1.y);
  await page.waitForTimeout(300);
  assert.equal(new URL(page.url()).pathname, `/p/${id}`);
  assert.match(await label('[data-testid=cores-selection]'), /^CPU 5 · 4–4\.1 s .* — click the last cell$/);
  await page.keyboard.press('Escape');
  assert.equal(await label('[data-testid=cores-selection]'), CORES_HINT);

  // Click, then click a later cell of another CPU: CPUs 4–5, [4, 8) s.
  await page.mouse.click(c1.x, c1.y);
  const c2 = await gridPoint(page, '#cores .grid-overlay', 79, PEGGED.cpu - 1);
  const want = count(records, PEGGED.start, PEGGED.end, (r) => (r.cpu === 4 || r.cpu === 5) && r.kind !== 'idle');
  await page.mouse.move(c2.x, c2.y);
  assert.equal(await label('[data-testid=cores-selection]'), `CPU 4-5 · 4–8 s (4 s) · ≈ 07:59:44.51–07:59:48.51 UTC · ${want.toLocaleString('en-US')} samples — click the last cell`);
  const nav = page.waitForURL(/\/flame\?/);
  await page.mouse.click(c2.x, c2.y);
  await nav;
  const q = new URL(page.url()).searchParams;
  assert.deepEqual([q.get('cpu'), q.get('start'), q.get('end')], ['4-5', '4', '8']);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('a hot spot reads the same on load and after Apply', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await openProfile(page);
  const items = () => page.$$eval('ol[data-testid=hotspots] li', (lis) => lis.map((li) => li.textContent.replace(/\s+/g, ' ').trim()));
  const first = await items();
  assert.ok(first.length > 0 && first[0].startsWith('CPU 5, 4–8 s'), JSON.stringify(first));
  // The percentages as the page formats them everywhere (fmtPct).
  assert.match(first[0], /\d+\.\d% busy .*\(\d+\.\d%\)/, first[0]);
  await page.$eval('ol[data-testid=hotspots] li', (li) => (li.dataset.old = '1'));
  await page.click('#filters button[type=submit]');
  await page.waitForSelector('ol[data-testid=hotspots] li:not([data-old])', { timeout: 5000 });
  assert.deepEqual(await items(), first);
  assert.deepEqual(w.errors, []);
  await page.close();
});

// axisLabels returns each map's x-axis labels (text, left and right edges)
// and the right edge of its cells, in page pixels.
async function axisLabels(page) {
  return page.evaluate(() =>
    ['#heatmap', '#cores'].map((sel) => {
      const grid = document.querySelector(`${sel} .grid`);
      const cells = grid.querySelector('.grid-overlay').getBoundingClientRect();
      const labels = [...grid.querySelectorAll('.grid-xaxis span')].map((s) => {
        const r = s.getBoundingClientRect();
        return { text: s.textContent, left: r.left, right: r.right };
      });
      const ys = [...grid.querySelectorAll('.grid-yaxis .ylabel')].map((s) => s.textContent);
      return { sel, right: cells.right, labels, ys };
    }),
  );
}

test('axis labels are whole at every width; the hot spots are in the first screen at 1280×800', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  for (const [width, height] of [[800, 800], [1280, 800], [1440, 900], [1920, 1080]]) {
    await page.setViewportSize({ width, height });
    // Times of day (the capture's clock is estimated from its header, its
    // T0 ≈ 07:59:40.51 UTC), and seconds from the start with tz=offset.
    for (const [query, first, shape] of [['', '07:59:40.51', /^\d\d:\d\d:\d\d(\.\d+)?$/], ['?tz=offset', '0', /^\d+(\.\d+)?$/]]) {
      // No bucket in the URL: the cores map fits itself to the width.
      await openProfile(page, query);
      for (const g of await axisLabels(page)) {
        const at = `${g.sel} at ${width} px ${query}`;
        assert.ok(g.labels.length >= 2, `${at}: x labels ${JSON.stringify(g.labels)}`);
        assert.ok(g.ys.length >= 2, `${at}: y labels ${JSON.stringify(g.ys)}`);
        assert.equal(g.labels[0].text, first, at);
        let prev = -Infinity;
        for (const l of g.labels) {
          assert.match(l.text, shape, at);
          assert.ok(l.right <= g.right + 0.5, `${at}: label ${l.text} ends at ${l.right}, past the cells' edge ${g.right}`);
          assert.ok(l.left >= prev, `${at}: label ${l.text} overlaps the one before`);
          prev = l.right;
        }
      }
    }
    if (width === 1280) {
      const tops = await page.evaluate(() => ({
        hotspot: document.querySelector('ol[data-testid=hotspots] li a').getBoundingClientRect().bottom,
        heatmap: document.querySelector('#heatmap canvas').getBoundingClientRect().top,
        cores: document.querySelector('#cores canvas').getBoundingClientRect().top,
      }));
      assert.ok(tops.hotspot <= height && tops.heatmap < height && tops.cores < height, `at 1280×800: ${JSON.stringify(tops)}`);
    }
  }
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('a filter that leaves at most one sample per cell says so and offers fewer rows', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  // One CPU at 99 Hz in 10 ms rows: never two samples in a cell.
  await openProfile(page, '?cpu=5&rows=100');
  assert.ok(await page.isVisible('[data-testid=sparse-note]'));
  const total = count(records, 0, 20, (r) => r.cpu === 5 && r.kind !== 'idle');
  assert.equal(
    await page.textContent('[data-testid=sparse-note]'),
    `No cell holds more than one sample: these filters leave ${total.toLocaleString('en-US')} samples over 2,000 cells, too few to shade. Use 10 rows`,
  );
  await page.click('[data-testid=fewer-rows]');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('rows') === '10');
  await page.waitForSelector('body[data-rendered="1"]');
  assert.equal(await page.$eval('#heatmap .grid-overlay', (c) => c.dataset.rows), '10');
  assert.equal(await page.inputValue('#filters input[name=rows]'), '10');
  assert.ok(!(await page.isVisible('[data-testid=sparse-note]')));
  // Back returns to the sparse view, and a dense one has no note.
  await page.goBack();
  await page.waitForFunction(() => new URLSearchParams(location.search).get('rows') === '100');
  await openProfile(page);
  assert.ok(!(await page.isVisible('[data-testid=sparse-note]')));
  assert.deepEqual(w.errors, []);
  await page.close();
});
