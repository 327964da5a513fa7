// The flame graph's search: any case by default, "Aa" to match case, the
// share of samples and the number of frames matched, next and previous
// through the frames, all of it in the link.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { count } from './capture.mjs';
import { watch, knownProfile, stopKnown } from './helpers.mjs';

let server, browser, id, records;

before(async () => ({ server, browser, id, records } = await knownProfile()));
after(() => stopKnown({ server, browser }));

function pct(f) {
  const p = f * 100;
  if (p === 0) return '0%';
  if (p < 10) return p.toFixed(2) + '%';
  return p.toFixed(1) + '%';
}

const status = (page) => page.textContent('[data-testid=search-match]');

async function waitStatus(page, re) {
  await page.waitForFunction((src) => new RegExp(src).test(document.querySelector('[data-testid=search-match]').textContent), re.source, { timeout: 3000 });
  return status(page);
}

// amber counts the pixels of the current match's outline on the overlay.
const amber = (page) =>
  page.$eval('.flame-overlay', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] === 255 && d[i + 1] === 170 && d[i + 2] === 0 && d[i + 3] > 200) n++;
    return n;
  });

test('search ignores case unless asked, counts the frames and steps through them', async () => {
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(`${server.url}/p/${id}/flame?start=12&end=13`);
  await page.waitForSelector('body[data-rendered="1"]');
  const hot = count(records, 12, 13, (r) => r.kind === 'hot');
  const all = count(records, 12, 13);

  await page.fill('#search', 'HOT_LOOP');
  assert.equal(await waitStatus(page, /^Matched/), `Matched: ${pct(hot / all)} · 1 frame`);
  await page.click('[data-testid=search-case]');
  assert.equal(await waitStatus(page, /^No match$/), 'No match');
  assert.equal(new URL(page.url()).searchParams.get('match_case'), '1');
  assert.equal(await page.getAttribute('[data-testid=search-case]', 'aria-pressed'), 'true');
  assert.ok(await page.isDisabled('[data-testid=search-next]'));
  // The link reproduces it.
  const fresh = await browser.ctx.newPage();
  await fresh.goto(page.url());
  await fresh.waitForSelector('body[data-rendered="1"]');
  assert.equal(await status(fresh), 'No match');
  await fresh.close();
  await page.click('[data-testid=search-case]');
  assert.equal(await waitStatus(page, /^Matched/), `Matched: ${pct(hot / all)} · 1 frame`);
  assert.equal(new URL(page.url()).searchParams.get('match_case'), null);

  // "main" is a frame of webapp and of <b>evil</b>: step through them.
  await page.fill('#search', 'main');
  const first = await waitStatus(page, /frames$/);
  const n = Number(first.match(/· (\d+) frames$/)[1]);
  assert.ok(n >= 2, first);
  assert.equal(await amber(page), 0);
  await page.click('[data-testid=search-next]');
  assert.match(await status(page), new RegExp(`· 1 of ${n} frames$`));
  await page.waitForTimeout(50);
  assert.ok((await amber(page)) > 20, 'the current match is outlined');
  await page.click('[data-testid=search-next]');
  assert.match(await status(page), new RegExp(`· 2 of ${n} frames$`));
  await page.click('[data-testid=search-prev]');
  await page.click('[data-testid=search-prev]');
  assert.match(await status(page), new RegExp(`· ${n} of ${n} frames$`));
  // Enter in the box is next, Shift+Enter previous.
  await page.press('#search', 'Enter');
  assert.match(await status(page), new RegExp(`· 1 of ${n} frames$`));
  await page.press('#search', 'Shift+Enter');
  assert.match(await status(page), new RegExp(`· ${n} of ${n} frames$`));
  assert.deepEqual(w.errors, []);
  await page.close();
});
