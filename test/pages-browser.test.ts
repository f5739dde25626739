// The HTML pages in a real headless Chromium: log in through the fake provider's consent page
// and come back logged in; the status page; the header from service to service; every page in
// English and in Chinese (its lang attribute, its words, the switch); no console errors anywhere.
// Screenshots go to test-artifacts/pages/.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import type { Lang } from '../api/http/i18n.ts';
import type { LaunchedBrowser } from '../renderer/browser.ts';
import { openPage, startBrowser } from './helpers/browser.ts';
import { removeTempDirs, tempDir } from './helpers/media-library.ts';
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
  const dir = await tempDir('pages');
  h = await startSkins({
    SKINS_PORT: String(port), PUBLIC_URL: base, DEMO_PLAYER: 'SlimAlex', RENDER_WORKERS: '1',
    SERVICES: 'skins,media,search', MEDIA_DIR: path.join(dir, 'media'), DATA_DIR: path.join(dir, 'data'), MEDIA_PASSWORD: 'pages-media-password',
    OAUTH_CLIENT_ID: 'pages', OAUTH_CLIENT_SECRET: 'pages-secret', OAUTH_REDIRECT_URL: redirect,
  }, { oauth: { clientId: 'pages', clientSecret: 'pages-secret', redirectUris: [redirect] } });
  browser = await startBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await h?.stop();
  await removeTempDirs();
});

const ACCEPT: Record<Lang, string> = { en: 'en-US,en;q=0.9', zh: 'zh-CN,zh;q=0.9,en;q=0.5' };

/** A page whose browser asks for `lang` (English unless told). */
async function open(lang: Lang = 'en') {
  const opened = await openPage(browser.browser, { width: 1000, height: 800 });
  await opened.page.setExtraHTTPHeaders({ 'Accept-Language': ACCEPT[lang] });
  return opened;
}

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
  for (const word of ['Skinfarm skins service', 'libvips', 'got', 'This response took', 'Server time', 'Hits', 'Misses']) t.true(text.includes(word), word);
  t.deepEqual(h.fake.calls(), {}, 'opening the page probes nothing');
  await page.click('#probe');
  await page.waitForFunction(() => /official: OK/.test(document.getElementById('probe-result')!.textContent ?? ''));
  await page.screenshot({ path: path.join(ARTIFACTS, 'status.png') });
  t.deepEqual(errors, []);
});

test.serial('the header leads from page to page across the three services and to the API docs', async (t) => {
  const { page, errors } = await open();
  await page.goto(`${h.base}/`, { waitUntil: 'networkidle0' });
  const follow = async (label: string) => {
    const link = (await page.$(`xpath///header//a[normalize-space() = "${label}"]`))!;
    const href = await link.evaluate((a) => (a as HTMLAnchorElement).href);
    await link.click();
    // Not waitForNavigation: on a click, the viewer first records its scroll position in the history.
    await page.waitForFunction((url) => location.href === url && document.readyState === 'complete', {}, href);
    return { origin: new URL(page.url()).origin, path: new URL(page.url()).pathname, current: await page.$eval('header [aria-current="page"]', (e) => e.textContent) };
  };
  t.deepEqual(await follow('Media'), { origin: h.app.urls.media, path: '/', current: 'Media' });
  await page.screenshot({ path: path.join(ARTIFACTS, 'header-media.png') });
  t.deepEqual(await follow('Search'), { origin: h.app.urls.search, path: '/', current: 'Search' });
  t.deepEqual(await follow('API docs'), { origin: h.base, path: '/docs', current: 'API docs' });
  await page.waitForSelector('.opblock');
  await page.screenshot({ path: path.join(ARTIFACTS, 'docs.png') });
  t.deepEqual(await follow('Skins'), { origin: h.base, path: '/', current: 'Skins' });
  t.deepEqual(errors, []);
});

// Per page: where it is, and a sentence only its English and only its Chinese version shows.
const PAGES: Array<{ name: string; url: () => string; words: Record<Lang, string> }> = [
  { name: 'landing', url: () => `${h.base}/`, words: { en: 'Player skin images', zh: '玩家皮肤图像服务' } },
  { name: 'status', url: () => `${h.base}/status`, words: { en: 'This response took', zh: '本次响应时间' } },
  { name: 'docs', url: () => `${h.base}/docs`, words: { en: 'Machine-readable', zh: '机器可读' } },
  { name: 'login-failed', url: () => `${h.base}/oauth/external/callback?code=x&state=forged`, words: { en: 'Login failed', zh: '登录失败' } },
  { name: 'media-landing', url: () => `${h.app.urls.media}/`, words: { en: 'public categories', zh: '个公开分类' } },
  { name: 'media-login', url: () => `${h.app.urls.media}/login`, words: { en: 'Get token', zh: '获取令牌' } },
  { name: 'search-front', url: () => `${h.app.urls.search}/`, words: { en: 'Get a key', zh: '获取密钥' } },
];
const HTML_LANG: Record<Lang, string> = { en: 'en', zh: 'zh-CN' };
const OTHER: Record<Lang, Lang> = { en: 'zh', zh: 'en' };
/** Han characters, outside the language switch (which names 中文 in itself). */
const HAN = /\p{Script=Han}/u;

for (const lang of ['en', 'zh'] as const) {
  test.serial(`every page follows Accept-Language: ${lang}`, async (t) => {
    const { page, errors } = await open(lang);
    for (const { name, url, words } of PAGES) {
      await page.goto(url(), { waitUntil: 'networkidle0' });
      t.is(await page.$eval('html', (e) => e.lang), HTML_LANG[lang], name);
      const text = await page.evaluate(() => {
        document.querySelector('.lang-switch')?.remove();
        return document.body.innerText;
      });
      t.true(text.includes(words[lang]), `${name}: ${words[lang]}`);
      t.false(text.includes(words[OTHER[lang]]), `${name}: not ${words[OTHER[lang]]}`);
      // The docs' endpoint descriptions are the OpenAPI document's English; the rest is one language.
      if (lang === 'en') t.false(HAN.test(text.replace(/Ext玩家/g, '')), `${name}: no Chinese on the English page`);
      await page.reload({ waitUntil: 'networkidle0' });
      await page.screenshot({ path: path.join(ARTIFACTS, `${name}-${lang}.png`), fullPage: name !== 'docs' });
    }
    // The forged login answers 400, which Chromium reports as a failed resource.
    t.deepEqual(errors.filter((e) => !/status of 400/.test(e)), []);
  });
}

test.serial('the switch on a page changes its language, and the choice holds on the next page', async (t) => {
  const { page, errors } = await open('en');
  await page.goto(`${h.base}/status`, { waitUntil: 'networkidle0' });
  await Promise.all([page.waitForNavigation({ waitUntil: 'networkidle0' }), page.click('#lang-zh')]);
  t.is(await page.$eval('html', (e) => e.lang), 'zh-CN');
  t.regex(await page.evaluate(() => document.body.innerText), /本次响应时间/);
  await page.goto(`${h.base}/`, { waitUntil: 'networkidle0' });
  t.is(await page.$eval('html', (e) => e.lang), 'zh-CN', 'the cookie outranks Accept-Language');
  await Promise.all([page.waitForNavigation({ waitUntil: 'networkidle0' }), page.click('#lang-en')]);
  t.is(await page.$eval('html', (e) => e.lang), 'en');
  t.regex(await page.evaluate(() => document.body.innerText), /Player skin images/);
  t.deepEqual(errors, []);
});
