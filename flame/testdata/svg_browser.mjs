// Drives a standalone flame graph SVG in Debian's chromium through
// playwright-core and prints what it saw as JSON, for TestSVGInBrowser.
// Usage: node svg_browser.mjs FILE.svg SEARCH
import { chromium } from 'playwright-core';

const [file, term] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});
const out = { errors: [], dialogs: [] };
try {
  const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
  page.on('pageerror', (e) => out.errors.push(String(e)));
  page.on('console', (m) => m.type() === 'error' && out.errors.push(m.text()));
  page.on('dialog', async (d) => {
    out.dialogs.push(d.type());
    if (d.type() === 'prompt') await d.accept(term);
    else await d.dismiss();
  });
  await page.goto('file://' + file);
  out.frames = await page.locator('#frames > g').count();

  // Click-zoom into the widest frame at depth 3.
  const target = await page.evaluate(() => {
    let best = null;
    for (const g of document.querySelectorAll('#frames > g[data-d="3"]')) {
      if (!best || +g.getAttribute('data-w') > +best.getAttribute('data-w')) best = g;
    }
    best.setAttribute('id', 'target');
    return { name: best.getAttribute('data-name'), w: +best.getAttribute('data-w') };
  });
  out.target = target;
  await page.locator('#target > rect').click();
  out.zoomed = await page.evaluate(() => ({
    width: +document.querySelector('#target > rect').getAttribute('width'),
    hidden: document.querySelectorAll('#frames > g.hidden').length,
    parents: document.querySelectorAll('#frames > g.parent').length,
    unzoomVisible: !document.getElementById('unzoom').classList.contains('hidden'),
  }));
  await page.locator('#unzoom').click();
  out.unzoomed = await page.evaluate(() => ({
    width: +document.querySelector('#target > rect').getAttribute('width'),
    hidden: document.querySelectorAll('#frames > g.hidden').length,
  }));

  // Search highlights matching frames and reports their share.
  await page.locator('#search').click();
  out.search = await page.evaluate(() => ({
    matched: document.getElementById('matched').textContent,
    highlighted: [...document.querySelectorAll('#frames > g')]
      .filter((g) => g.querySelector('rect').getAttribute('fill') === 'rgb(230,0,230)')
      .map((g) => g.getAttribute('data-name')),
    button: document.getElementById('search').textContent,
  }));
  // Hover shows the frame's details as text.
  await page.locator('#target > rect').hover();
  out.details = await page.evaluate(() => document.getElementById('details').textContent);
  out.names = await page.evaluate(() => [...document.querySelectorAll('#frames > g')].map((g) => g.getAttribute('data-name')));
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
