// The skins service's pages in a real headless Chromium: log in through the fake provider's
// consent page and come back logged in; the status page; no console errors anywhere.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import type { LaunchedBrowser } from '../renderer/browser.ts';
import { openPage, startBrowser } from './helpers/browser.ts';
import { freePort } from './helpers/redis.ts';
import { ROOT } from './helpers/service.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

const ARTIFACTS = path.join(ROOT, 'test-artifacts/pages');
mkdirSync(ARTIFACTS, { recursive: true });

let h: SkinsHarness;
let browser: LaunchedBrowser;
test.before(async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const redirect = `${base}/oauth/external/callback`;
  h = await startSkins({
    SKINS_PORT: String(port), PUBLIC_URL: base, DEMO_PLAYER: 'SlimAlex', RENDER_WORKERS: '1',
    OAUTH_CLIENT_ID: 'pages', OAUTH_CLIENT_SECRET: 'pages-secret', OAUTH_REDIRECT_URL: redirect,
  }, { oauth: { clientId: 'pages', clientSecret: 'pages-secret', redirectUris: [redirect] } });
  browser = await startBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await h?.stop();
});

const open = () => openPage(browser.browser, { width: 1000, height: 800 });

test.serial('log in from the landing page through the consent page and come back logged in', async (t) => {
  const { page, errors } = await open();
  await page.goto(`${h.base}/`, { waitUntil: 'networkidle0' });
  t.true(await page.$eval('#example-render', (img) => (img as HTMLImageElement).naturalWidth > 0), 'the live 3D example loaded');
  await page.screenshot({ path: path.join(ARTIFACTS, 'landing.png') });
  await Promise.all([page.waitForNavigation(), page.click('#login')]);
  t.regex(await page.content(), /Fake LittleSkin/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'consent.png') });
  await Promise.all([page.waitForNavigation({ waitUntil: 'networkidle0' }), page.click('#approve')]);
  t.is(new URL(page.url()).pathname, '/');
  t.is(await page.$eval('#user-name', (e) => e.textContent), 'demo');
  await page.waitForFunction(() => document.querySelectorAll('#profiles li img').length === 2);
  await page.screenshot({ path: path.join(ARTIFACTS, 'landing-logged-in.png') });
  t.deepEqual(errors, []);
});

test.serial('the status page shows the service and probes upstreams only on demand', async (t) => {
  const { page, errors } = await open();
  h.fake.resetCalls();
  await page.goto(`${h.base}/status`, { waitUntil: 'networkidle0' });
  const text = await page.evaluate(() => document.body.innerText);
  for (const word of ['Skinfarm skins service', 'libvips', 'got', '本次响应时间', '服务器时间', '命中', '未命中']) t.true(text.includes(word), word);
  t.deepEqual(h.fake.calls(), {}, 'opening the page probes nothing');
  await page.click('#probe');
  await page.waitForFunction(() => /official: OK/.test(document.getElementById('probe-result')!.textContent ?? ''));
  await page.screenshot({ path: path.join(ARTIFACTS, 'status.png') });
  t.deepEqual(errors, []);
});

test.serial('the docs page: a try-it form calls the endpoint and shows the answer', async (t) => {
  const { page, errors } = await open();
  await page.goto(`${h.base}/docs`, { waitUntil: 'networkidle0' });
  const form = await page.$('form.try[data-path="/v1/uuid/{name}"]');
  t.truthy(form);
  await form!.$eval('button', (b) => (b as HTMLButtonElement).click());
  await page.waitForFunction((el) => el?.querySelector('pre.answer')?.textContent?.includes('"dashed"'), {}, form);
  await page.screenshot({ path: path.join(ARTIFACTS, 'docs.png') });
  t.deepEqual(errors, []);
});
