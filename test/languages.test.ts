// Every page and error of the three services in the reader's language: Chinese for a client that
// prefers it (Accept-Language, or the `lang` cookie the page switch sets), English otherwise.
// Media and search errors are in that one language (the code stays the same); the skins envelope
// keeps its Chinese `message` (the contract) beside `message_en` whatever the client prefers.
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { removeTempDirs, tempDir, writeCategory, writeImage } from './helpers/media-library.ts';
import { call } from './helpers/service.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

const ZH = 'zh-CN,zh;q=0.9';
const ADMIN = 'languages-Qm4Vt8Zp2Lx6Rw1Ks9Jd';

let h: SkinsHarness;
let media: string;
let search: string;
test.before(async () => {
  const dir = await tempDir('languages');
  const root = path.join(dir, 'media');
  await writeImage(path.join(await writeCategory(root, 'photos'), 'a.png'), { width: 20, height: 10 });
  await writeImage(path.join(await writeCategory(root, 'vault', { private: true }), 'b.png'), { width: 10, height: 20 });
  h = await startSkins({
    SERVICES: 'skins,media,search', MEDIA_DIR: root, DATA_DIR: path.join(dir, 'data'), MEDIA_PASSWORD: 'languages-media-password',
    MEDIA_FILE_RATE_LIMIT: '3', SEARCH_ADMIN_TOKEN: ADMIN,
  });
  await h.app.waitForLog((line) => line.msg === 'media library indexed', 60_000);
  ({ media, search } = h.app.urls as { media: string; search: string });
});
test.after.always(async () => {
  await h?.stop();
  await removeTempDirs();
});

const han = /\p{Script=Han}/u;
const htmlLang = (text: string) => /<html lang="([^"]+)"/.exec(text)?.[1];
type Answer = Awaited<ReturnType<typeof call>>;

/** The answer is in `lang`: its header, its Vary, and Chinese characters only in Chinese. */
function inLanguage(t: ExecutionContext, r: Answer, lang: 'zh' | 'en', text: string, label: string) {
  t.is(r.headers.get('content-language'), lang === 'zh' ? 'zh-CN' : 'en', `${label}: Content-Language`);
  t.regex(r.headers.get('vary') ?? '', /Accept-Language/i, `${label}: Vary`);
  if (lang === 'zh') t.true(han.test(text), `${label}: Chinese: ${text}`);
  else t.false(han.test(text), `${label}: English: ${text}`);
}

// Each case: a request, its status and code, and a word of the message in each language.
const MEDIA_ERRORS: Array<{ label: string; path: string; init?: RequestInit; status: number; code: string; zh: RegExp; en: RegExp }> = [
  { label: 'unknown category', path: '/?img=nope', status: 404, code: 'category_not_found', zh: /^未知的分类: 没有名为 "nope" 的公开分类$/, en: /^Unknown category: no public category "nope"$/ },
  { label: 'no route', path: '/nowhere', status: 404, code: 'route_not_found', zh: /^接口不存在/, en: /^No such endpoint/ },
  { label: 'method', path: '/categories', init: { method: 'DELETE' }, status: 405, code: 'method_not_allowed', zh: /^不支持的请求方法/, en: /^Method not allowed/ },
  { label: 'password needed', path: '/?sim=vault', status: 401, code: 'password_required', zh: /^该分类需要密码: /, en: /^This category needs a password: send HTTP Basic/ },
  { label: 'password in URL', path: '/?sim=vault&password=x', status: 400, code: 'bad_request', zh: /^请求参数无效: /, en: /^Invalid request: never put the password in a URL/ },
  {
    label: 'wrong password', path: '/login', status: 403, code: 'wrong_password', zh: /^密码错误$/, en: /^Wrong password$/,
    init: { method: 'POST', body: JSON.stringify({ password: 'nope' }), headers: { 'content-type': 'application/json' } },
  },
  {
    label: 'body too large', path: '/login', status: 413, code: 'payload_too_large', zh: /^上传的文件过大: 登录表单最多/, en: /^The request body is too large: the login form is at most/,
    init: { method: 'POST', body: JSON.stringify({ password: 'x'.repeat(10_000) }), headers: { 'content-type': 'application/json' } },
  },
];

for (const e of MEDIA_ERRORS) {
  test(`media error in both languages: ${e.label}`, async (t) => {
    for (const lang of ['zh', 'en'] as const) {
      const headers = { ...(e.init?.headers as Record<string, string>), 'accept-language': lang === 'zh' ? ZH : 'en' };
      const r = await call(`${media}${e.path}`, { ...e.init, headers });
      t.is(r.status, e.status, `${e.label} ${lang}`);
      t.like(r.json, { code: e.code, success: false }, `${e.label} ${lang}`);
      t.regex(r.json.message, e[lang], `${e.label} ${lang}`);
      t.is(r.json.message_en, undefined, 'media sends one language');
      inLanguage(t, r, lang, r.json.message, `${e.label} ${lang}`);
    }
  });
}

test('a media 429 is in the reader\'s language, and the page switch\'s cookie outranks Accept-Language', async (t) => {
  const file = `${media}/f/${'0'.repeat(24)}.png`;
  let limited: Answer | undefined;
  // The file group allows 3 a minute: the window may turn once, so 8 tries surely meet the limit.
  for (let i = 0; i < 8 && !limited; i++) {
    const r = await call(file, { headers: { 'accept-language': 'en', cookie: 'lang=zh' } });
    if (r.status === 429) limited = r;
    else t.like(r.json, { code: 'route_not_found', message: '接口不存在: 此地址没有媒体文件' });
  }
  t.like(limited?.json, { code: 'rate_limited', message: '请求过于频繁，请稍后再试' });
  inLanguage(t, limited!, 'zh', limited!.json.message, '429');
  t.regex(limited!.headers.get('vary') ?? '', /Cookie/i);
});

test('search errors in both languages, from its routes and from the shared shell', async (t) => {
  const cases: Array<{ label: string; path: string; init?: RequestInit; status: number; code: string; zh: RegExp; en: RegExp }> = [
    { label: 'no key', path: '/v1/search?query=ada%40example.org', status: 401, code: 'missing_key', zh: /^需要 API 密钥/, en: /^An API key is required/ },
    { label: 'unknown key', path: '/v1/search?query=ada%40example.org', init: { headers: { 'x-api-key': 'sk_nope' } }, status: 401, code: 'invalid_key', zh: /^未知的 API 密钥$/, en: /^Unknown API key$/ },
    { label: 'admin token', path: '/v1/admin/keys', status: 401, code: 'unauthorized', zh: /^需要管理令牌/, en: /^Admin token required/ },
    { label: 'no route', path: '/nowhere', status: 404, code: 'route_not_found', zh: /^接口不存在/, en: /^No such endpoint/ },
    { label: 'front page for JSON', path: '/', init: { headers: { accept: 'application/json' } }, status: 404, code: 'route_not_found', zh: /^接口不存在$/, en: /^No such endpoint$/ },
    { label: 'method', path: '/v1/types', init: { method: 'DELETE' }, status: 405, code: 'method_not_allowed', zh: /^不支持的请求方法/, en: /^Method not allowed/ },
    { label: 'repeated parameter', path: '/v1/types?pretty=1&pretty=0', status: 400, code: 'bad_request', zh: /^请求参数无效: pretty 只能出现一次$/, en: /^Invalid request: pretty is given more than once$/ },
  ];
  for (const e of cases) {
    for (const lang of ['zh', 'en'] as const) {
      const headers = { ...(e.init?.headers as Record<string, string>), 'accept-language': lang === 'zh' ? ZH : 'en' };
      const r = await call(`${search}${e.path}`, { ...e.init, headers });
      const label = `${e.label} ${lang}`;
      t.is(r.status, e.status, label);
      t.like(r.json, { status: 'error', error: { code: e.code } }, label);
      t.regex(r.json.error.message, e[lang], label);
      inLanguage(t, r, lang, r.json.error.message, label);
    }
  }
});

test('skins errors keep the Chinese message and its English twin whatever the client prefers', async (t) => {
  for (const lang of [ZH, 'en']) {
    const r = await h.get('/v1/player/Knight?pretty=1&pretty=0', { headers: { 'accept-language': lang } });
    t.is(r.status, 400);
    t.like(r.json, { code: 'bad_request', message: '请求参数无效: pretty 只能出现一次', message_en: 'Invalid request: pretty is given more than once' });
  }
});

test('a page of each service in both languages, with the switch', async (t) => {
  const pages: Array<[string, string, RegExp, RegExp]> = [
    ['skins status', `${h.base}/status`, /<h1>[^<]*\p{Script=Han}/u, /<h1>[A-Za-z]/],
    ['media landing', `${media}/`, /个公开分类/, /public categories/],
    ['media login', `${media}/login`, /获取令牌/, /Get token/],
    ['search front', `${search}/`, /获取密钥/, /Get a key/],
  ];
  for (const [label, url, zh, en] of pages) {
    for (const lang of ['zh', 'en'] as const) {
      const r = await call(url, { headers: { accept: 'text/html', 'accept-language': lang === 'zh' ? ZH : 'en' } });
      t.is(r.status, 200, `${label} ${lang}`);
      t.is(htmlLang(r.text), lang === 'zh' ? 'zh-CN' : 'en', `${label} ${lang}`);
      t.regex(r.text, lang === 'zh' ? zh : en, `${label} ${lang}`);
      // The switch leads to the other language, named in itself.
      t.true(r.text.includes(lang === 'zh' ? 'id="lang-en">English</a>' : 'id="lang-zh">中文</a>'), `${label} ${lang}: switch`);
      inLanguage(t, r, lang, r.text.replace('中文', ''), `${label} ${lang}`);
    }
  }
});
