// The landing page in headless Chromium: it renders every public category with its counts,
// the totals, no private category, no script from a category name, and no console errors.
// A screenshot is saved to test-artifacts/media/landing.png.
import test from 'ava';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { LaunchedBrowser } from '../renderer/browser.ts';
import { startBrowser } from './helpers/browser.ts';
import { ROOT, type RunningApp } from './helpers/service.ts';
import { buildTestLibrary, removeTempDirs, startMedia, tempDir } from './helpers/media-library.ts';

const SCREENSHOT = path.join(ROOT, 'test-artifacts/media/landing.png');

let app: RunningApp;
let launched: LaunchedBrowser;
let browser: LaunchedBrowser['browser'];

test.before(async () => {
  const { root } = await buildTestLibrary();
  app = await startMedia({ MEDIA_DIR: root, DATA_DIR: await tempDir('media-data') });
  launched = await startBrowser();
  browser = launched.browser;
});
test.after.always(async () => {
  await launched?.close();
  await app?.stop();
  await removeTempDirs();
});

test('the landing page renders the public categories, totals and usage without console errors', async (t) => {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warn') problems.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${(error as Error).message}`));
  page.on('requestfailed', (request) => problems.push(`requestfailed: ${request.url()}`));
  page.on('dialog', async (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    await dialog.dismiss();
  });
  await page.setViewport({ width: 1100, height: 800 });
  const response = await page.goto(`${app.urls.media}/`, { waitUntil: 'networkidle0' });
  t.is(response?.status(), 200);

  const rows = await page.$$eval('#categories tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())));
  t.deepEqual(rows.map((r) => r.slice(1, 5)), [
    ['empty', '0', '0', '0'],
    ['movies', '3', '1', '2'],
    ['photos', '6', '2', '3'],
    ['xss', '1', '1', '0'],
  ]);
  t.deepEqual(rows.map((r) => r[0]), ['empty', 'Movies', 'Photos', '<script>alert("x")</script> & <b>co</b>']);
  t.true(rows[2][5].endsWith('/?img=photos'));
  t.true(rows[1][5].endsWith('/?vid=movies'));
  const totals = await page.$$eval('.totals strong', (els) => els.map((e) => e.textContent));
  t.deepEqual(totals, ['4', '10', '0']);
  t.is(await page.$$eval('tbody b, tbody script', (els) => els.length), 0);
  t.false((await page.content()).toLowerCase().includes('secret'));
  t.is(await page.title(), 'Skinfarm random media');

  await fs.mkdir(path.dirname(SCREENSHOT), { recursive: true });
  await page.screenshot({ path: SCREENSHOT as `${string}.png`, fullPage: true });
  t.deepEqual(problems, []);
});
