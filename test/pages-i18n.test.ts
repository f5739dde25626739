// The pages' language over plain HTTP: Accept-Language with q-values, the `lang` query and its
// cookie, hostile values of all three, and a failed media login explained in each language.
import path from 'node:path';
import test from 'ava';
import { removeTempDirs, tempDir } from './helpers/media-library.ts';
import { call } from './helpers/service.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let h: SkinsHarness;
test.before(async () => {
  const dir = await tempDir('pages-i18n');
  h = await startSkins({ SERVICES: 'skins,media', MEDIA_DIR: path.join(dir, 'media'), DATA_DIR: path.join(dir, 'data'), MEDIA_PASSWORD: 'i18n-media-password' });
});
test.after.always(async () => {
  await h?.stop();
  await removeTempDirs();
});

const htmlLang = (text: string) => /<html lang="([^"]+)"/.exec(text)?.[1];

test('Accept-Language picks the page language by q-value; anything else is English', async (t) => {
  const cases: Array<[string | null, string]> = [
    [null, 'en'],
    ['*', 'en'],
    ['zh-CN,zh;q=0.9', 'zh-CN'],
    ['ZH-hant-TW', 'zh-CN'],
    ['fr-FR, zh;q=0.8, en;q=0.7', 'zh-CN'],
    ['en;q=0.5, zh-TW;q=0.6', 'zh-CN'],
    ['zh;q=0, en', 'en'],
    ['de, fr;q=0.5', 'en'],
    ['zh;q=abc', 'en'],
    ['zh;q=2', 'en'],
    ['zh;q=-1', 'en'],
    [`${'x-'.repeat(3000)}zh`, 'en'],
    [`${'de;q=0.1,'.repeat(500)}zh`, 'en'],
  ];
  for (const [header, expected] of cases) {
    const r = await h.get('/status', header === null ? {} : { headers: { 'accept-language': header } });
    const label = String(header).slice(0, 40);
    t.is(r.status, 200, label);
    t.is(htmlLang(r.text), expected, label);
    t.is(r.headers.get('content-language'), expected, label);
    t.regex(r.headers.get('vary') ?? '', /Accept-Language/i, label);
  }
});

test('?lang= switches the language and a cookie keeps it; hostile values are ignored', async (t) => {
  const switched = await h.get('/docs?lang=zh', { headers: { 'accept-language': 'en' } });
  t.is(htmlLang(switched.text), 'zh-CN');
  const cookie = switched.headers.get('set-cookie') ?? '';
  t.regex(cookie, /^lang=zh; path=\/; expires=[^;]+; samesite=lax; httponly$/);
  const next = await h.get('/', { headers: { 'accept-language': 'en', cookie: 'lang=zh' } });
  t.is(htmlLang(next.text), 'zh-CN', 'the cookie outranks Accept-Language');
  t.true(next.text.includes('<a href="?lang=en" hreflang="en" lang="en" id="lang-en">English</a>'), 'the switch leads back');

  for (const query of ['lang=%3Cimg%20src%3Dx%3E', 'lang=fr', 'lang=', 'lang[]=zh']) {
    const r = await h.get(`/status?${query}`, { headers: { 'accept-language': 'en' } });
    t.is(r.status, 200, query);
    t.is(htmlLang(r.text), 'en', query);
    t.is(r.headers.get('set-cookie'), null, `${query} sets no cookie`);
    t.false(r.text.includes('<img src=x>'), query);
  }
  const evilCookie = await h.get('/', { headers: { cookie: 'lang=<b>zh' } });
  t.is(htmlLang(evilCookie.text), 'en');
  const twice = await h.get('/?lang=zh&lang=en');
  t.is(twice.status, 400, 'a repeated parameter is refused, on pages too');
});

test('the media pages and a failed media login are in the reader\'s language', async (t) => {
  const media = h.app.urls.media;
  const landing = await call(`${media}/`, { headers: { 'accept-language': 'zh' } });
  t.is(htmlLang(landing.text), 'zh-CN');
  t.regex(landing.text, /个公开分类/);
  const wrong = (lang: string) => call(`${media}/login`, {
    method: 'POST', body: 'password=nope', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', 'accept-language': lang },
  });
  const zh = await wrong('zh-CN');
  t.is(zh.status, 403);
  t.is(htmlLang(zh.text), 'zh-CN');
  t.regex(zh.text, /role="alert">密码错误</);
  const en = await wrong('en');
  t.is(en.status, 403);
  t.regex(en.text, /role="alert">Wrong password</);
  t.false(/\p{Script=Han}/u.test(en.text.replace('中文', '')), 'no Chinese on the English page but the switch');
});
