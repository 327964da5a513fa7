// Wall-clock time on every view of a capture recorded with -k
// CLOCK_REALTIME: the profile page's heatmap and cores-map axes, tooltips
// and range labels, the metadata, the flame page's heading and mini
// timeline, in UTC by default and in the browser's zone with the header's
// Times toggle, which the URL keeps (tz=local) from page to page and which
// the host page shares. An estimated time (from perf's "# captured on") is
// marked ≈. The browser runs in Asia/Kolkata (UTC+5:30, no summer time), so
// that local time differs from UTC by a known amount.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { startServer, launch, watch, tempDir, upload, gridPoint } from './helpers.mjs';

const HOST = 'node-9';
const START = Date.UTC(2026, 10, 30, 3, 0, 0) / 1000; // Unix seconds: 03:00:00 UTC, 08:30:00 in Kolkata
const HZ = 49;
const CPUS = 2;
const LENGTH = 20;

function capture(header, host = HOST) {
  let out = `# ========\n# captured on    : Mon Nov 30 03:00:20 2026\n# hostname : ${host}\n${header}# ========\n#\n`;
  for (let k = 0; k < LENGTH * HZ; k++) {
    for (let cpu = 0; cpu < CPUS; cpu++) {
      const t = (header ? START : 5000) + k / HZ + cpu * 1e-5;
      // CPU 1 is pegged from 5 s to 10 s: a hot spot.
      const busy = (k + cpu) % 2 === 0 || (cpu === 1 && k >= 5 * HZ && k < 10 * HZ);
      out += busy
        ? `webapp 300/301 [00${cpu}] ${t.toFixed(6)}: 20408163 cpu-clock:pppH: \n\t55d000001100 parse_json+0x10 (/usr/bin/webapp)\n\t55d000001300 main+0x10 (/usr/bin/webapp)\n\n`
        : `swapper 0/0 [00${cpu}] ${t.toFixed(6)}: 20408163 cpu-clock:pppH: \n\tffffffff81000010 native_safe_halt+0x6 ([kernel.kallsyms])\n\n`;
    }
  }
  return out;
}

let server, browser, id, approxID;

before(async () => {
  server = await startServer();
  browser = await launch({ timezoneId: 'Asia/Kolkata' });
  const dir = tempDir();
  writeFileSync(join(dir, 'rt.txt'), capture('# clockid: realtime (0)\n'));
  id = (await upload(server.url, join(dir, 'rt.txt'), 'realtime')).profile.id;
  // Uptime timestamps: placed by "# captured on", an estimate.
  writeFileSync(join(dir, 'est.txt'), capture('', 'node-10'));
  approxID = (await upload(server.url, join(dir, 'est.txt'), 'estimated')).profile.id;
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

// pageTest is a test run on a new page, which it closes after checking
// that the page logged no errors.
function pageTest(name, body) {
  test(name, async () => {
    const page = await browser.ctx.newPage();
    const w = watch(page);
    await body(page);
    assert.deepEqual(w.errors, []);
    await page.close();
  });
}

async function open(page, path) {
  await page.goto(server.url + path);
  await page.waitForSelector('body[data-rendered="1"]');
}

// axes returns the x-axis labels and the y-axis title of the heatmap and
// the cores map.
async function axes(page) {
  return page.evaluate(() =>
    ['#heatmap', '#cores'].map((sel) => ({
      x: [...document.querySelectorAll(`${sel} .grid-xaxis span`)].map((s) => s.textContent),
      title: document.querySelector(`${sel} .grid-yaxis .ytitle`)?.textContent || '',
    })),
  );
}

const text = (page, sel) => page.textContent(sel).then((t) => t.replace(/\s+/g, ' ').trim());

// tooltip returns the text of the tooltip shown, once one matching re is.
async function tooltip(page, re) {
  const h = await page.waitForFunction(
    (src) => [...document.querySelectorAll('[data-testid=tooltip]')].find((e) => !e.hidden && new RegExp(src).test(e.textContent))?.textContent,
    re.source,
  );
  return h.jsonValue();
}

// dragCores drags across the cores map's columns 2 to 4 of CPU 0, [2, 5) s
// at one-second buckets, and holds the button.
async function dragCores(page) {
  const a = await gridPoint(page, '#cores .grid-overlay', 2, 0);
  const b = await gridPoint(page, '#cores .grid-overlay', 4, 0);
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, a.y);
  await page.mouse.move(b.x, b.y);
}

pageTest('the profile page shows times of day in UTC, then in the browser\'s zone', async (page) => {
  await open(page, `/p/${id}?bucket=1`);
  for (const a of await axes(page)) {
    assert.equal(a.x[0], '03:00:00', `x labels ${a.x}`);
    assert.ok(a.x.every((t) => /^03:00:\d\d$/.test(t)), `x labels ${a.x}`);
    assert.match(a.title, /UTC →$/);
  }
  assert.equal(await text(page, '[data-testid=profile-wall]'), '2026-11-30 03:00:00–03:00:19.98 UTC (realtime)');
  assert.match(await text(page, 'ol[data-testid=hotspots] li'), /^CPU 1, 5–10 s \(5 s\) 03:00:05–03:00:10 UTC 100\.0% busy/);

  // A cell's tooltip and a selection's label give both clocks.
  const cell = await gridPoint(page, '#heatmap .grid-overlay', 0, 0, true);
  const next = await gridPoint(page, '#heatmap .grid-overlay', 1, 0, true);
  await page.mouse.move(cell.x, cell.y);
  assert.match(await tooltip(page, /UTC/), /^0–0\.\d+ s \(0\.\d+ s\) · 03:00:00–03:00:00\.\d+ UTC/);

  // The toggle: local time, kept in the URL.
  await page.selectOption('[data-testid=tz]', 'local');
  assert.equal(new URL(page.url()).searchParams.get('tz'), 'local');
  for (const a of await axes(page)) {
    assert.equal(a.x[0], '08:30:00', `x labels ${a.x}`);
    assert.match(a.title, /GMT\+5:30 →$/);
  }
  assert.equal(await text(page, '[data-testid=profile-wall]'), '2026-11-30 08:30:00–08:30:19.98 GMT+5:30 (realtime)');
  assert.match(await text(page, 'ol[data-testid=hotspots] li'), /^CPU 1, 5–10 s \(5 s\) 08:30:05–08:30:10 GMT\+5:30 100\.0% busy/);
  await page.mouse.move(next.x, next.y);
  await page.mouse.move(cell.x, cell.y);
  assert.match(await tooltip(page, /GMT/), /· 08:30:00–08:30:00\.\d+ GMT\+5:30/);

  // A reload keeps it, and a link to the host's night carries it.
  await open(page, `/p/${id}?bucket=1&tz=local`);
  assert.equal(await page.$eval('[data-testid=tz]', (s) => s.value), 'local');
  assert.equal((await axes(page))[0].x[0], '08:30:00');
  await page.click('[data-testid=profile-host]');
  await page.waitForURL(`**/hosts/${HOST}?tz=local`);
  await page.waitForSelector('#night-map[data-buckets]');
  assert.equal(await page.$eval('[data-testid=tz]', (s) => s.value), 'local');
  assert.match(await text(page, '[data-testid=host-wall]'), /^2026-11-30 08:30:00–08:30:20(\.\d+)? GMT\+5:30$/);
  await page.waitForFunction(() => /08:30:00/.test(document.querySelector('[data-testid=night-range]').textContent));
  // The host page's toggle is the same: back to UTC.
  await page.selectOption('[data-testid=tz]', 'utc');
  assert.equal(new URL(page.url()).searchParams.get('tz'), null);
  assert.match(await text(page, '[data-testid=night-range]'), /^2026-11-30 03:00:00 UTC/);
  assert.match(await text(page, '[data-testid=host-wall]'), /^2026-11-30 03:00:00–03:00:20(\.\d+)? UTC$/);
});

pageTest('a selection opens a flame page that gives its range on the wall clock', async (page) => {
  await open(page, `/p/${id}?bucket=1&tz=local`);
  await dragCores(page);
  assert.match(await text(page, '[data-testid=cores-selection]'), /2(\.0+)?–5(\.0+)? s \(3 s\) · 08:30:02–08:30:05 GMT\+5:30/);
  await page.mouse.up();
  await page.waitForURL(/\/flame\?.*start=2&end=5.*tz=local|\/flame\?.*tz=local.*start=2&end=5/);
  await page.waitForSelector('body[data-rendered="1"]');
  assert.equal(await text(page, '[data-testid=range-wall]'), '08:30:02–08:30:05 GMT+5:30');
  assert.match(await text(page, '[data-testid=timeline-label]'), /^2–5 s \(3 s\) of 19\.98 s · 08:30:02–08:30:05 GMT\+5:30$/);
  // UTC from the toggle, in place.
  await page.selectOption('[data-testid=tz]', 'utc');
  assert.equal(await text(page, '[data-testid=range-wall]'), '03:00:02–03:00:05 UTC');
  assert.match(await text(page, '[data-testid=timeline-label]'), /· 03:00:02–03:00:05 UTC$/);
});

pageTest('an estimated wall clock is marked ≈ on every view', async (page) => {
  await open(page, `/p/${approxID}?bucket=1`);
  for (const a of await axes(page)) {
    assert.match(a.title, /≈ UTC →$/);
    assert.match(a.x[0], /^03:00:0\d(\.\d+)?$/);
  }
  assert.match(await text(page, '[data-testid=profile-wall]'), /^≈ 2026-11-30 03:00:0\d(\.\d+)?–03:00:\d\d(\.\d+)? UTC \(captured-on, approximate\)$/);
  await open(page, `/p/${approxID}/flame?start=2&end=5`);
  assert.match(await text(page, '[data-testid=range-wall]'), /^≈ 03:00:0\d(\.\d+)?–03:00:0\d(\.\d+)? UTC$/);
  assert.match(await text(page, '[data-testid=timeline-label]'), /· ≈ 03:00:0/);
});

pageTest('seconds from the start alone, on a capture\'s views; the choice follows back and forward', async (page) => {
  await open(page, `/p/${id}?bucket=1&tz=local`);
  assert.equal((await axes(page))[0].x[0], '08:30:00');
  // Seconds from the start: FlameScope's axes, labels without times of day.
  await page.selectOption('[data-testid=tz]', 'offset');
  assert.equal(new URL(page.url()).searchParams.get('tz'), 'offset');
  for (const a of await axes(page)) {
    assert.equal(a.x[0], '0', `x labels ${a.x}`);
    assert.ok(a.x.every((t) => /^\d+$/.test(t)), `x labels ${a.x}`);
    assert.match(a.title, /s →$/);
  }
  assert.ok(!(await page.isVisible('[data-testid=hotspot-wall]')), 'the hot spots\' times of day are hidden');
  await dragCores(page);
  assert.match(await text(page, '[data-testid=cores-selection]'), /^CPU 0 · 2(\.0+)?–5(\.0+)? s \(3 s\) · [\d,]+ samples$/);
  await page.mouse.up();
  await page.waitForURL(/\/flame\?.*tz=offset/);
  await page.waitForSelector('body[data-rendered="1"]');
  assert.equal(await page.$eval('[data-testid=tz]', (s) => s.value), 'offset');
  assert.equal(await text(page, '[data-testid=timeline-label]'), '2–5 s (3 s) of 19.98 s');
  assert.ok(!(await page.isVisible('[data-testid=range-wall]')), 'the heading\'s times of day are hidden');

  // Local time chosen on the flame page comes back to the heatmaps with the
  // back button, and with the page's own way back.
  await page.selectOption('[data-testid=tz]', 'local');
  assert.equal(await text(page, '[data-testid=range-wall]'), '08:30:02–08:30:05 GMT+5:30');
  await page.goBack();
  await page.waitForURL((u) => u.pathname === `/p/${id}`);
  await page.waitForSelector('body[data-rendered="1"]');
  assert.equal(new URL(page.url()).searchParams.get('tz'), 'local');
  assert.equal(await page.$eval('[data-testid=tz]', (s) => s.value), 'local');
  assert.equal((await axes(page))[1].x[0], '08:30:00');
  await page.goForward();
  await page.waitForURL(/\/flame\?/);
  await page.waitForSelector('body[data-rendered="1"]');
  await page.selectOption('[data-testid=tz]', 'utc');
  await page.click('[data-testid=range] a');
  await page.waitForURL((u) => u.pathname === `/p/${id}`);
  await page.waitForSelector('body[data-rendered="1"]');
  assert.equal(new URL(page.url()).searchParams.get('tz'), null);
  assert.equal((await axes(page))[0].x[0], '03:00:00');

  // A host's night has no one start: with tz=offset it is in UTC, and the
  // choice goes on to the captures.
  await page.goto(`${server.url}/hosts/${HOST}?tz=offset`);
  await page.waitForSelector('#night-map[data-buckets]');
  assert.equal(await page.$eval('[data-testid=tz]', (s) => s.value), 'utc');
  assert.deepEqual(await page.$$eval('[data-testid=tz] option', (os) => os.map((o) => o.value)), ['utc', 'local']);
  assert.match(await text(page, '[data-testid=night-range]'), /^2026-11-30 03:00:00 UTC/);
});
