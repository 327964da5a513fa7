// bench/night's page timing: loads URL (a host page) COUNT times in Debian's
// Chromium and prints, per load, the milliseconds until the night's map is
// drawn and the first hot spot listed.
import { chromium } from 'playwright-core';

const url = process.env.URL;
const count = Number(process.env.COUNT || 5);
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
for (let i = 0; i < count; i++) {
  const t0 = Date.now();
  await page.goto(url);
  await page.waitForSelector('#night-map[data-buckets]', { timeout: 60_000 });
  await page.waitForSelector('[data-testid=night-hotspot]', { timeout: 60_000 });
  console.log(Date.now() - t0);
}
await browser.close();
