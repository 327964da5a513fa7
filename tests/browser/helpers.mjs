// Shared set-up for the browser tests: build the real binary, run the real
// server on a free loopback port with a fresh database, drive Debian's
// chromium through playwright-core (no downloaded browser).

import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, existsSync, copyFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SCREENSHOTS = join(ROOT, 'test-results', 'screenshots');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

// tempDir returns a fresh directory removed when the process exits.
export function tempDir(prefix = 'subsecond-browser-') {
  const d = mkdtempSync(join(tmpdir(), prefix));
  process.on('exit', () => rmSync(d, { recursive: true, force: true }));
  return d;
}

let binary = null;
let production = null;

// build compiles ./cmd/subsecond once per test process with the test build
// of the front end embedded: `npm run build:test` writes it to
// web/teststatic (not committed) and the browsertest build tag embeds it in
// place of web/static. It differs from the production build only in the
// hooks tests read (window.__flame). SUBSECOND_BIN names a prebuilt binary
// to test instead (tests/browser/run.mjs builds one for the whole suite).
export function build() {
  if (binary) return binary;
  if (process.env.SUBSECOND_BIN) return (binary = process.env.SUBSECOND_BIN);
  execFileSync('npm', ['run', '--silent', 'build:test'], { cwd: ROOT, stdio: 'inherit' });
  const dir = tempDir('subsecond-bin-');
  binary = join(dir, 'subsecond');
  execFileSync('go', ['build', '-tags', 'browsertest', '-o', binary, './cmd/subsecond'], { cwd: ROOT, stdio: 'inherit' });
  return binary;
}

// buildProduction compiles ./cmd/subsecond as `go build` does, with the
// committed front end of web/static.
export function buildProduction() {
  if (production) return production;
  if (process.env.SUBSECOND_PROD_BIN) return (production = process.env.SUBSECOND_PROD_BIN);
  const dir = tempDir('subsecond-bin-');
  production = join(dir, 'subsecond');
  execFileSync('go', ['build', '-o', production, './cmd/subsecond'], { cwd: ROOT, stdio: 'inherit' });
  return production;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// startServer runs `subsecond serve` on a free port with a database in a
// fresh directory and resolves once it answers.
export async function startServer(extraArgs = [], bin = build()) {
  const dir = tempDir();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = spawn(bin, ['serve', '--addr', `127.0.0.1:${port}`, '--db', join(dir, 'x.db'), ...extraArgs], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  proc.stdout.on('data', (b) => (log += b));
  proc.stderr.on('data', (b) => (log += b));
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}:\n${log}`);
    try {
      const r = await fetch(url + '/');
      if (r.ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`server did not answer within 60 s:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    dir,
    log: () => log,
    async stop() {
      if (proc.exitCode === null) {
        proc.kill('SIGTERM');
        await exited;
      }
    },
  };
}

// upload posts a capture file as a raw body and returns the JSON answer.
export async function upload(url, path, name) {
  const { readFile } = await import('node:fs/promises');
  const body = await readFile(path);
  const r = await fetch(`${url}/api/profiles?name=${encodeURIComponent(name)}`, {
    method: 'POST',
    body,
    headers: { 'Content-Type': 'application/octet-stream' },
  });
  const j = await r.json();
  if (r.status !== 201 && r.status !== 200) throw new Error(`upload ${r.status}: ${JSON.stringify(j)}`);
  return j;
}

// launch starts chromium with a fresh user-data directory, and the
// context options opts (such as timezoneId). The context grants clipboard
// access so the copy-link button can be read back.
export async function launch(opts = {}) {
  const ctx = await chromium.launchPersistentContext(tempDir('subsecond-chromium-'), {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1440, height: 900 },
    deviceScaleFactor: 1,
    ...opts,
  });
  const origins = new Set();
  return {
    ctx,
    async grantClipboard(origin) {
      if (origins.has(origin)) return;
      origins.add(origin);
      await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    },
    close: () => ctx.close(),
  };
}

// watch records a page's console errors, page errors, dialogs and requests.
export function watch(page) {
  const w = { errors: [], dialogs: [], requests: [], logs: [] };
  page.on('pageerror', (e) => w.errors.push(String(e)));
  page.on('console', (m) => {
    // Failed loads are checked by status below, where the URL is known.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) w.errors.push(m.text());
    else w.logs.push(m.text());
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && new URL(r.url()).pathname !== '/favicon.ico') w.errors.push(`HTTP ${r.status()} ${r.url()}`);
  });
  page.on('dialog', (d) => {
    w.dialogs.push(d.message());
    d.dismiss().catch(() => {});
  });
  page.on('request', (r) => w.requests.push(r.url()));
  return w;
}

// timings returns the page's User Timing measures named subsecond:NAME, as
// {NAME: milliseconds}.
export async function timings(page) {
  return page.evaluate(() => {
    const out = {};
    for (const m of performance.getEntriesByType('measure')) {
      if (m.name.startsWith('subsecond:')) out[m.name.slice('subsecond:'.length)] = Math.round(m.duration * 10) / 10;
    }
    return out;
  });
}

// shot saves a screenshot under test-results/screenshots.
export async function shot(page, name, opts = {}) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, name + '.png');
  await page.screenshot({ path, ...opts });
  return path;
}

// inkedPixels counts the pixels of a canvas that are neither transparent nor
// white, and how many distinct colours it holds.
export async function inkedPixels(page, selector) {
  return page.$eval(selector, (c) => {
    const ctx = c.getContext('2d');
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    let inked = 0;
    const colours = new Set();
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] === 0) continue;
      if (d[i] > 250 && d[i + 1] > 250 && d[i + 2] > 250) continue;
      inked++;
      if (colours.size < 1000) colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    }
    return { inked, colours: colours.size, total: c.width * c.height };
  });
}

// cellCentre returns page coordinates of heatmap cell (col, row), row 0
// being the start of each column (drawn at the bottom).
export async function cellCentre(page, overlaySelector, col, row) {
  return gridPoint(page, overlaySelector, col, row, true);
}

// gridPoint returns page coordinates of the centre of a grid cell; display
// rows count from the top unless flip is set.
export async function gridPoint(page, overlaySelector, col, row, flip = false) {
  const g = await page.$eval(overlaySelector, (c) => {
    const r = c.getBoundingClientRect();
    return { x: r.left, y: r.top, ...c.dataset };
  });
  const rows = Number(g.rows);
  const cellW = Number(g.cellW);
  const cellH = Number(g.cellH);
  return {
    x: g.x + (col + 0.5) * cellW,
    y: g.y + Number(g.top) + ((flip ? rows - 1 - row : row) + 0.5) * cellH,
  };
}

// copyToDocs copies a screenshot into docs/screenshots for the README when
// UPDATE_SCREENSHOTS=1, so ordinary runs leave the tree clean.
export function copyToDocs(path, name) {
  if (process.env.UPDATE_SCREENSHOTS !== '1' || !existsSync(path)) return;
  const dir = join(ROOT, 'docs', 'screenshots');
  mkdirSync(dir, { recursive: true });
  copyFileSync(path, join(dir, name));
}

// knownProfile starts a server holding the known capture of capture.mjs
// (8 CPUs, 20 s, uploaded as "known") and a browser; stopKnown ends both.
export async function knownProfile() {
  const { writeCapture } = await import('./capture.mjs');
  const path = join(tempDir(), 'known.perf.txt');
  const { records } = await writeCapture(path, { cpus: 8, seconds: 20 });
  const server = await startServer();
  const id = (await upload(server.url, path, 'known')).profile.id;
  return { server, browser: await launch(), id, records };
}

export async function stopKnown({ server, browser } = {}) {
  await browser?.close();
  await server?.stop();
}

// postMarker adds a marker of host at Unix seconds t, with text, through
// the API.
export async function postMarker(url, host, t, text) {
  const r = await fetch(`${url}/api/hosts/${host}/markers`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ markers: [{ time: new Date(t * 1000).toISOString(), text }] }),
  });
  if (r.status !== 200) throw new Error(`POST markers: ${r.status} ${await r.text()}`);
}

// contrast returns the WCAG contrast ratio of two CSS colours.
export function contrast(a, b) {
  const lum = (c) => {
    const [r, g, b2] = c.match(/[\d.]+/g).slice(0, 3).map(Number).map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b2;
  };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

// nightCapture writes one capture of a host's night as perf script text on
// the realtime clock: cpus CPUs sampled at hz for length seconds from Unix
// second t0, CPU burst.cpu running the kubelet in the kernel over [burst.start,
// burst.end), a third of the other samples busy in a trainer, the rest idle.
export function nightCapture({ host, t0, length, hz, cpus, burst }) {
  const period = Math.round(1e9 / hz);
  let out = `# ========\n# captured on    : Mon Nov 30 03:00:00 2026\n# hostname : ${host}\n# clockid: realtime (0)\n# ========\n#\n`;
  for (let k = 0; k < length * hz; k++) {
    for (let cpu = 0; cpu < cpus; cpu++) {
      const t = t0 + k / hz + cpu * 1e-5;
      const ts = t.toFixed(6);
      if (cpu === burst.cpu && t >= burst.start && t < burst.end) {
        out += `kubelet 2210/2245 [00${cpu}] ${ts}: ${period} cpu-clock:pppH: \n\tffffffff81201100 mem_cgroup_nr_lru_pages+0x1a ([kernel.kallsyms])\n\tffffffff81201200 memcg_stat_show+0x9c ([kernel.kallsyms])\n\n`;
      } else if ((k + cpu) % 3 === 0) {
        out += `trainer 4100/4101 [00${cpu}] ${ts}: ${period} cpu-clock:pppH: \n\t7f0000001000 run_model+0x10 (/usr/bin/trainer)\n\n`;
      } else {
        out += `swapper 0/0 [00${cpu}] ${ts}: ${period} cpu-clock:pppH: \n\tffffffff81000010 native_safe_halt+0x6 ([kernel.kallsyms])\n\tffffffff81000200 do_idle+0x1f ([kernel.kallsyms])\n\n`;
      }
    }
  }
  return out;
}

// busyWritten counts the samples of texts (perf script) at Unix seconds
// [from, to) whose command is not the idle swapper: what a flame graph
// counts by default.
export function busyWritten(texts, from, to) {
  let n = 0;
  for (const text of texts) {
    for (const m of text.matchAll(/^(\S+) \S+ \[\d+\] ([\d.]+):/gm)) {
      const t = Number(m[2]);
      if (m[1] !== 'swapper' && t >= from && t < to) n++;
    }
  }
  return n;
}
