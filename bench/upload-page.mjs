// bench/flamescope's browser timing: in Debian's Chromium, opens URL's index
// page, puts FILE into the page's upload form (#upload-file, as a user picking
// it does) and waits until the profile page has drawn the heatmap, COUNT
// times; the profile is deleted after each, so that every upload is stored
// anew. Prints one line per upload: the milliseconds from choosing the file
// to the page's "subsecond:upload-to-heatmap" measure as seen from outside
// (node's clock), the page's own measure, and its parts (body sent, then
// until the answer). Fails if the heatmap canvas is blank.
import { chromium } from 'playwright-core';

const url = process.env.URL;
const file = process.env.FILE;
const count = Number(process.env.COUNT || 5);
if (!url || !file) {
  console.error('usage: URL=http://HOST:PORT FILE=capture.perf.txt.zst [COUNT=5] node bench/upload-page.mjs');
  process.exit(2);
}
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  for (let i = 0; i < count; i++) {
    await page.goto(url + '/');
    await page.waitForSelector('#upload-file');
    const landed = page.waitForURL(/\/p\/[^/?]+$/, { timeout: 120_000 });
    const t0 = Date.now();
    await page.setInputFiles('#upload-file', file);
    await landed;
    await page.waitForFunction(() => performance.getEntriesByName('subsecond:upload-to-heatmap').length > 0,
      null, { timeout: 120_000, polling: 'raf' });
    const outside = Date.now() - t0;
    const m = await page.evaluate(() => Object.fromEntries(performance.getEntriesByType('measure')
      .filter((e) => e.name.startsWith('subsecond:upload'))
      .map((e) => [e.name.slice('subsecond:'.length), Math.round(e.duration)])));
    const inked = await page.$eval('[data-testid=heatmap-canvas]', (c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let j = 0; j < d.length; j += 4) if (d[j + 3] !== 0 && !(d[j] > 250 && d[j + 1] > 250 && d[j + 2] > 250)) n++;
      return n / (c.width * c.height);
    });
    if (!(inked > 0.2)) throw new Error(`upload ${i + 1}: the heatmap canvas is ${Math.round(inked * 100)}% inked`);
    console.log(`${outside} ${m['upload-to-heatmap']} ${m['upload-send']} ${m['upload-ingest']}`);
    const id = new URL(page.url()).pathname.split('/')[2];
    const res = await fetch(`${url}/api/profiles/${id}`, { method: 'DELETE' });
    if (!res.ok) throw new Error(`DELETE /api/profiles/${id}: ${res.status} ${await res.text()}`);
  }
} finally {
  await browser.close();
}
