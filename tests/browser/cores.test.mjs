// The cores map colours busy time by where it runs: user blue, system red.
// On generated incidents, where training threads keep many cores ~100% busy
// in user mode while the kubelet pegs one core in the kernel, the pegged
// core's planted windows must be the only long runs of system-red cells,
// read back from the canvas pixels. measure=system shows system time alone.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { build, startServer, launch, watch, tempDir, upload, gridPoint, shot, copyToDocs, ROOT } from './helpers.mjs';

let server, browser, dir;

before(async () => {
  dir = tempDir();
  server = await startServer();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

// cellClasses reads the centre pixel of every cores-map cell and classifies
// it: 'S' hot system red (busy ≳ 85% and nearly all of it in the kernel),
// 'U' user blue, '.' near-white (idle or nearly), '-' anything else (mixed,
// pale orange of a lightly loaded core). Rows are CPUs in the map's order.
async function cellClasses(page) {
  return page.evaluate(() => {
    const base = document.querySelector('#cores [data-testid=cores-canvas]');
    const g = document.querySelector('#cores .grid-overlay').dataset;
    const cols = Number(g.cols);
    const rows = Number(g.rows);
    const cellW = Number(g.cellW);
    const cellH = Number(g.cellH);
    const top = Number(g.top);
    const dpr = base.width / base.getBoundingClientRect().width;
    const d = base.getContext('2d').getImageData(0, 0, base.width, base.height);
    const out = [];
    for (let r = 0; r < rows; r++) {
      let line = '';
      const y = Math.floor((top + r * cellH + Math.max(0, (cellH - 2) / 2)) * dpr);
      for (let c = 0; c < cols; c++) {
        const x = Math.floor((Math.round(c * cellW) + Math.round((c + 1) * cellW)) / 2 * dpr);
        const i = (y * d.width + x) * 4;
        const [R, G, B] = [d.data[i], d.data[i + 1], d.data[i + 2]];
        if (R - G > 150 && R - B > 150) line += 'S';
        else if (B - R > 60) line += 'U';
        else if (Math.min(R, G, B) > 215) line += '.';
        else line += '-';
      }
      out.push(line);
    }
    return out;
  });
}

function longestRun(line, ch) {
  let best = 0;
  let n = 0;
  for (const c of line) {
    n = c === ch ? n + 1 : 0;
    best = Math.max(best, n);
  }
  return best;
}

// checkIncident asserts the picture the cores map exists for: on the pegged
// CPU every cell wholly inside a planted window is system red, and no other
// CPU has a run of system-red cells half as long as the shortest window,
// while some other CPUs are busy in user mode (blue) for at least as long.
async function checkIncident(page, truth, cpus, label) {
  const geo = await page.$eval('#cores .grid-overlay', (c) => ({ ...c.dataset }));
  const bucketNs = Number(new URL(page.url()).searchParams.get('bucket')) * 1e9;
  assert.ok(bucketNs > 0, `no bucket in ${page.url()}`);
  assert.equal(Number(geo.rows), cpus.length);
  const classes = await cellClasses(page);
  const pegged = truth.config.incident_cpu;
  const row = cpus.indexOf(pegged);
  let shortest = Infinity;
  for (const w of truth.incidents) {
    const b1 = Math.ceil((w.start_ns - truth.t0_ns) / bucketNs);
    const b2 = Math.floor((w.end_ns - truth.t0_ns) / bucketNs); // exclusive
    const cells = classes[row].slice(b1, b2);
    shortest = Math.min(shortest, b2 - b1);
    assert.equal(cells, 'S'.repeat(b2 - b1), `${label}: CPU ${pegged} during [${w.start_s}, ${w.end_s}) s, buckets ${b1}..${b2 - 1}: ${cells}`);
  }
  assert.ok(shortest >= 4, `${label}: the shortest window spans ${shortest} buckets; too few to tell a bar from noise`);
  let userBars = 0;
  const runs = {};
  for (let r = 0; r < classes.length; r++) {
    if (r === row) continue;
    const s = longestRun(classes[r], 'S');
    runs[cpus[r]] = s;
    assert.ok(s < shortest / 2, `${label}: CPU ${cpus[r]} has ${s} system-red cells in a row (the pegged core's shortest window: ${shortest}):\n${classes[r]}`);
    if (longestRun(classes[r], 'U') >= shortest) userBars++;
  }
  assert.ok(userBars > 0, `${label}: no other CPU is drawn busy-in-user (blue) as long as a window; the test would not show that hue matters`);
  const worst = Math.max(...Object.values(runs));
  console.log(`# ${label}: CPU ${pegged} red through ${truth.incidents.length} windows (shortest ${shortest} buckets of ${bucketNs / 1e9} s); longest red run elsewhere ${worst}; ${userBars} other CPUs blue for ≥ ${shortest} buckets`);
  return { classes, row, shortest };
}

async function openProfile(page, id, query = '') {
  await page.goto(`${server.url}/p/${id}${query}`);
  await page.waitForSelector('body[data-rendered="1"]', { timeout: 60_000 });
  return page.evaluate(() => JSON.parse(document.getElementById('view-data').textContent).profile);
}

async function cpusOf(id) {
  const r = await fetch(`${server.url}/api/profiles/${id}/cpus?bucket=60`);
  return (await r.json()).cpus;
}

test('a generated 16-CPU incident: the pegged core is the system-red one; measure=system', async () => {
  const path = join(dir, 'small.perf.zst');
  const truthPath = join(dir, 'small.truth.json');
  execFileSync(build(), ['generate', '--cpus', '16', '--seconds', '30', '--incident-cpu', '5', '--incidents', '2', '--seed', '3', '-o', path, '--truth', truthPath], { stdio: 'ignore' });
  const truth = JSON.parse(readFileSync(truthPath, 'utf8'));
  assert.ok(truth.incidents.length >= 1 && truth.incidents.every((w) => w.cpu === 5), JSON.stringify(truth.incidents));
  const { profile } = await upload(server.url, path, 'small incident');
  const cpus = await cpusOf(profile.id);
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await openProfile(page, profile.id, '?bucket=0.5');
  assert.equal(await page.inputValue('[data-testid=cores-measure]'), 'busy');
  assert.equal(await page.getAttribute('[data-testid=cores-legend]', 'data-measure'), 'busy');
  const legend = await page.textContent('[data-testid=cores-legend]');
  assert.ok(legend.includes('busy, user') && legend.includes('busy, system'), legend);
  const { classes, row } = await checkIncident(page, truth, cpus, '16-CPU incident');

  // Hover and selection say busy and sys: drag along the pegged row through
  // the first window.
  const win = truth.incidents[0];
  const b1 = Math.ceil((win.start_ns - truth.t0_ns) / 0.5e9);
  const b2 = Math.floor((win.end_ns - truth.t0_ns) / 0.5e9) - 1;
  const a = await gridPoint(page, '#cores .grid-overlay', b1, row);
  const b = await gridPoint(page, '#cores .grid-overlay', b2, row);
  await page.mouse.move(a.x, a.y);
  const tip = await page.waitForFunction(() => {
    const t = [...document.querySelectorAll('[data-testid=tooltip]')].find((e) => !e.hidden && /sys \d/.test(e.textContent));
    return t ? t.textContent : null;
  });
  const tipText = await tip.jsonValue();
  assert.match(tipText, /busy (9\d|100)(\.\d)?% · sys (9\d|100)(\.\d)?%/, tipText);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, a.y);
  await page.mouse.move(b.x, b.y);
  await page.waitForFunction(() => /^busy [\d.]+% · sys [\d.]+%$/.test(document.querySelector('[data-testid=cores-selection-load]').textContent));
  const load = await page.textContent('[data-testid=cores-selection-load]');
  const [busy, sys] = load.match(/[\d.]+/g).map(Number);
  assert.ok(busy >= 95 && sys >= 95 && sys <= busy, `selection over the pegged window: ${load}`);
  const sel = await page.textContent('[data-testid=cores-selection]');
  assert.ok(sel.startsWith(`CPU 5 · `), sel);
  await shot(page, 'cores-incident-selecting');
  const nav = page.waitForURL(/\/flame\?/);
  await page.mouse.up();
  await nav;
  assert.equal(new URL(page.url()).searchParams.get('cpu'), '5');

  // measure=system: the URL says so, the legend changes, the pegged windows
  // stay red and cores busy in user mode turn near-white.
  await openProfile(page, profile.id, '?bucket=0.5');
  await page.selectOption('[data-testid=cores-measure]', 'system');
  await page.waitForFunction(() => document.querySelector('#cores .grid-overlay').dataset.measure === 'system');
  assert.equal(new URL(page.url()).searchParams.get('measure'), 'system');
  const sysLegend = await page.textContent('[data-testid=cores-legend]');
  assert.ok(sysLegend.includes('system') && !sysLegend.includes('user'), sysLegend);
  const sysClasses = await cellClasses(page);
  assert.ok(sysClasses[row].includes('S'.repeat(4)), `measure=system, CPU 5: ${sysClasses[row]}`);
  // Nothing is blue under measure=system, and cells drawn user blue under
  // measure=busy are not hot red (their system share is low).
  let blue = 0;
  for (let r = 0; r < classes.length; r++) {
    assert.ok(!sysClasses[r].includes('U'), `measure=system, CPU ${cpus[r]} has blue cells: ${sysClasses[r]}`);
    for (let c = 0; c < classes[r].length; c++) {
      if (classes[r][c] !== 'U') continue;
      blue++;
      assert.notEqual(sysClasses[r][c], 'S', `CPU ${cpus[r]} bucket ${c}: user blue, yet hot red under measure=system`);
    }
  }
  assert.ok(blue > 0, 'no user-blue cells under measure=busy');
  // The link reproduces the view; back returns to the combined colouring.
  const link = page.url();
  const fresh = await browser.ctx.newPage();
  await openProfile(fresh, profile.id, new URL(link).search);
  assert.equal(await fresh.inputValue('[data-testid=cores-measure]'), 'system');
  assert.deepEqual(await cellClasses(fresh), sysClasses);
  await fresh.close();
  await page.goBack();
  await page.waitForFunction(() => document.querySelector('#cores .grid-overlay').dataset.measure === 'busy');
  assert.equal(await page.inputValue('[data-testid=cores-measure]'), 'busy');
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('the bundled incident: CPU 39 windows are the only long system-red bars', async () => {
  const path = join(ROOT, 'sample-data', 'incident-96cpu-120s.perf.txt.zst');
  const truth = JSON.parse(readFileSync(join(ROOT, 'sample-data', 'incident-96cpu-120s.perf.txt.truth.json'), 'utf8'));
  const { profile } = await upload(server.url, path, 'bundled incident');
  const cpus = await cpusOf(profile.id);
  const page = await browser.ctx.newPage();
  const w = watch(page);
  // No bucket: the page fits the map to the screen, as a first visit does.
  await openProfile(page, profile.id);
  await checkIncident(page, truth, cpus, 'bundled 96-CPU incident');
  // The whole page is perf.test.mjs's docs/screenshots/profile.png; the
  // README's close-up of the cores map is this one.
  await shot(page, 'profile-cores-incident', { fullPage: true });
  const cores = await page.$('#cores');
  copyToDocs(await shot(page, 'cores-incident', { clip: await cores.boundingBox() }), 'cores-incident.png');
  assert.deepEqual(w.errors, []);
  await page.close();
});
