// Profile management on the index page: search and sort the list by name,
// host, date and size; rename and delete in place, with the token when the
// server wants one, and neither in read-only mode.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { writeCapture } from './capture.mjs';
import { startServer, launch, watch, tempDir } from './helpers.mjs';

let browser, dir;
const servers = [];

before(async () => {
  dir = tempDir();
  // Three captures of different sizes on different hosts.
  for (const [name, seconds] of [['a', 2], ['b', 4], ['c', 3]]) await writeCapture(join(dir, `${name}.perf.txt`), { cpus: 2, seconds, seed: seconds });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  for (const s of servers) await s.stop();
});

async function serve(args = []) {
  const s = await startServer(args);
  servers.push(s);
  const uploads = [['a', 'alpha web-1', 'web-1'], ['b', 'beta db-2', 'db-2'], ['c', 'gamma web-3', 'web-3']];
  for (const [file, name, host] of uploads) {
    const headers = { 'Content-Type': 'application/octet-stream' };
    if (args.includes('--token')) headers.Authorization = 'Bearer s3cret';
    const r = await fetch(`${s.url}/api/profiles?name=${encodeURIComponent(name)}&host=${host}`, { method: 'POST', body: await readFile(join(dir, `${file}.perf.txt`)), headers });
    assert.ok(r.status === 201, `upload ${name}: ${r.status} ${await r.text()}`);
  }
  return s;
}

const names = (page) => page.$$eval('table[data-testid=profiles] tbody tr:not([hidden]) td.name', (tds) => tds.map((td) => td.textContent.trim()));

test('search and sort the profiles by name, host, date and size', async () => {
  const server = await serve();
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(server.url + '/');
  // Newest first, as uploaded.
  assert.deepEqual(await names(page), ['gamma web-3', 'beta db-2', 'alpha web-1']);
  assert.equal(await page.textContent('[data-testid=profiles-status]'), '3 profiles');
  await page.fill('[data-testid=profiles-search]', 'WEB');
  assert.deepEqual(await names(page), ['gamma web-3', 'alpha web-1']);
  assert.equal(await page.textContent('[data-testid=profiles-status]'), '2 of 3 profiles');
  await page.fill('[data-testid=profiles-search]', 'db-2 beta');
  assert.deepEqual(await names(page), ['beta db-2']);
  await page.fill('[data-testid=profiles-search]', '');

  const sortBy = async (col) => page.click(`table[data-testid=profiles] th[data-sort=${col}] button`);
  await sortBy('name');
  assert.deepEqual(await names(page), ['alpha web-1', 'beta db-2', 'gamma web-3']);
  assert.equal(await page.getAttribute('th[data-sort=name]', 'aria-sort'), 'ascending');
  await sortBy('name');
  assert.deepEqual(await names(page), ['gamma web-3', 'beta db-2', 'alpha web-1']);
  // Size: largest first (4 s, 3 s, 2 s of samples).
  await sortBy('size');
  assert.deepEqual(await names(page), ['beta db-2', 'gamma web-3', 'alpha web-1']);
  assert.equal(await page.getAttribute('th[data-sort=size]', 'aria-sort'), 'descending');
  await sortBy('host');
  assert.deepEqual(await names(page), ['beta db-2', 'alpha web-1', 'gamma web-3']);
  await sortBy('uploaded');
  assert.deepEqual(await names(page), ['gamma web-3', 'beta db-2', 'alpha web-1']);
  // The sort buttons are reachable from the keyboard.
  await page.focus('th[data-sort=name] button');
  await page.keyboard.press('Enter');
  assert.deepEqual(await names(page), ['alpha web-1', 'beta db-2', 'gamma web-3']);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('rename and delete in place; the list and the store agree', async () => {
  const server = await serve();
  const page = await browser.ctx.newPage();
  const w = watch(page);
  await page.goto(server.url + '/');
  const row = (name) => page.locator(`table[data-testid=profiles] tbody tr[data-name="${name}"]`);
  const id = await row('beta db-2').getAttribute('data-id');
  await row('beta db-2').locator('[data-testid=rename]').click();
  assert.equal(await page.inputValue('[data-testid=rename-input]'), 'beta db-2');
  await page.keyboard.press('Escape');
  assert.deepEqual((await names(page)).sort(), ['alpha web-1', 'beta db-2', 'gamma web-3']);
  await row('beta db-2').locator('[data-testid=rename]').click();
  await page.fill('[data-testid=rename-input]', 'beta <b>renamed</b>');
  await page.press('[data-testid=rename-input]', 'Enter');
  await page.waitForSelector('tr[data-name="beta <b>renamed</b>"] td.name a');
  assert.equal(await page.$$eval('main b', (b) => b.length), 0, 'the name stays text');
  const p = await (await fetch(`${server.url}/api/profiles/${id}`)).json();
  assert.equal(p.name, 'beta <b>renamed</b>');
  await page.fill('[data-testid=profiles-search]', 'renamed');
  assert.deepEqual(await names(page), ['beta <b>renamed</b>']);
  await page.fill('[data-testid=profiles-search]', '');

  // Delete asks first; "Keep" keeps it.
  const gamma = await row('gamma web-3').getAttribute('data-id');
  await row('gamma web-3').locator('[data-testid=delete]').click();
  await page.click('text=Keep');
  assert.equal((await fetch(`${server.url}/api/profiles/${gamma}`)).status, 200);
  await row('gamma web-3').locator('[data-testid=delete]').click();
  await page.click('[data-testid=delete-confirm]');
  await page.waitForFunction(() => document.querySelectorAll('table[data-testid=profiles] tbody tr').length === 2);
  assert.equal(await page.textContent('[data-testid=profiles-status]'), '2 profiles');
  assert.equal((await fetch(`${server.url}/api/profiles/${gamma}`)).status, 404);
  await page.reload();
  assert.deepEqual((await names(page)).sort(), ['alpha web-1', 'beta <b>renamed</b>']);
  assert.deepEqual(w.dialogs, []);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('with a token, changes need it; read-only, there is nothing to change', async () => {
  const server = await serve(['--token', 's3cret']);
  const page = await browser.ctx.newPage();
  await page.goto(server.url + '/');
  const first = page.locator('table[data-testid=profiles] tbody tr').first();
  await first.locator('[data-testid=rename]').click();
  await page.fill('[data-testid=rename-input]', 'renamed');
  await page.press('[data-testid=rename-input]', 'Enter');
  await page.waitForSelector('.row-note:has-text("token")');
  assert.match(await first.locator('.row-note').textContent(), /token.*HTTP 401/);
  await page.fill('#upload-token', 's3cret');
  await page.press('[data-testid=rename-input]', 'Enter');
  await page.waitForSelector('tr[data-name="renamed"] td.name a');

  const ro = await startServer(['--read-only']);
  servers.push(ro);
  await page.goto(ro.url + '/');
  assert.equal(await page.$$eval('[data-testid=rename], [data-testid=delete], td.actions', (e) => e.length), 0);
  assert.ok(await page.isVisible('[data-testid=profiles-search]'));
  await page.close();
});
