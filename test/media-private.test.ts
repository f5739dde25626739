// Private categories over HTTP: hidden from public selectors and listings, opened by HTTP Basic,
// the X-Media-Password header or a signed token from /login; wrong, missing and repeated wrong
// passwords answer 403, 401 and 429.
import test from 'ava';
import { hashPassword } from '../api/media/password.ts';
import { call, type RunningApp } from './helpers/service.ts';
import { buildTestLibrary, removeTempDirs, startMedia, tempDir } from './helpers/media-library.ts';

const PASSWORD = 'open sesame';
const basic = (password: string, user = 'anyone') => ({ Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

let root: string;
let app: RunningApp;
const extra: RunningApp[] = [];

test.before(async () => {
  ({ root } = await buildTestLibrary());
  app = await startMedia({ MEDIA_DIR: root, DATA_DIR: await tempDir('media-data'), MEDIA_PASSWORD: PASSWORD });
});
test.after.always(async () => {
  await Promise.all([app, ...extra].map((a) => a?.stop()));
  await removeTempDirs();
});

async function startExtra(env: Record<string, string>): Promise<RunningApp> {
  const started = await startMedia({ MEDIA_DIR: root, DATA_DIR: await tempDir('media-data'), ...env });
  extra.push(started);
  return started;
}

const get = (query: string, headers: Record<string, string> = {}, base = app) => call(`${base.urls.media}/${query}`, { headers });

test('/health counts public categories and files only', async (t) => {
  const health = await get('health');
  const listed = (await get('categories')).json.totals;
  t.like(health.json, { status: 'ok', categories: listed.categories, files: listed.files });
  t.false(/secret/i.test(health.text));
});

test('no password: 401 password_required with a Basic challenge', async (t) => {
  for (const query of ['?sim=secret', '?smo=secret&format=json', '?sim=no-such-category']) {
    const res = await get(query);
    t.is(res.status, 401, query);
    t.like(res.json, { code: 'password_required', success: false, data: null });
    t.regex(res.headers.get('www-authenticate')!, /^Basic realm=/);
  }
});

test('wrong password: 403 wrong_password, by Basic and by header', async (t) => {
  const byBasic = await get('?sim=secret', basic('open says me'));
  t.is(byBasic.status, 403);
  t.like(byBasic.json, { code: 'wrong_password', success: false });
  const byHeader = await get('?sim=secret', { 'X-Media-Password': 'nope' });
  t.is(byHeader.status, 403);
  t.like(byHeader.json, { code: 'wrong_password' });
});

test('HTTP Basic (any user name) and X-Media-Password open private images and videos', async (t) => {
  const image = await get('?sim=secret&format=json', basic(PASSWORD, 'whoever'));
  t.is(image.status, 200, image.text);
  t.like(image.json, { alias: 'secret', category: 'Secret stash', file: 'hidden.png', type: 'image', private: true, orientation: 'landscape' });
  const video = await get('?smo=secret&format=json', { 'X-Media-Password': PASSWORD });
  t.like(video.json, { file: 'clip.mp4', type: 'video', orientation: 'portrait', width: 240, height: 320 });
  const bytes = await get('?sim=secret', basic(PASSWORD));
  t.is(bytes.status, 200);
  t.is(bytes.headers.get('content-type'), 'image/png');
  t.is(bytes.headers.get('cache-control'), 'no-store');
});

test('private selectors reach private categories only', async (t) => {
  const res = await get('?sim=photos', basic(PASSWORD));
  t.is(res.status, 404);
  t.like(res.json, { code: 'category_not_found' });
  t.regex(res.json.message, /private category/);
});

test('private media never appear in public listings; credentials add them to /categories', async (t) => {
  const landing = await get('');
  t.false(/secret/i.test(landing.text));
  const publicList = await get('categories');
  t.false(publicList.json.categories.some((c: { alias: string }) => c.alias === 'secret'));
  const withPassword = await get('categories', basic(PASSWORD));
  t.like(withPassword.json.categories.find((c: { alias: string }) => c.alias === 'secret'), { name: 'Secret stash', private: true, files: 2 });
});

test('the permanent address of a private file needs credentials; the JSON url carries a token', async (t) => {
  const { url } = (await get('?sim=secret&format=json', basic(PASSWORD))).json;
  t.regex(url, /\/f\/[0-9a-f]{24}\.png\?token=\d+\.[A-Za-z0-9_-]{43}$/);
  const withToken = await call(url);
  t.is(withToken.status, 200);
  t.is(withToken.headers.get('cache-control'), 'private, max-age=31536000, immutable');
  const bare = url.split('?')[0];
  t.is((await call(bare)).status, 401);
  t.is((await call(bare, { headers: basic(PASSWORD) })).status, 200);
  const forged = await call(`${bare}?token=${encodeURIComponent(url.split('token=')[1].replace(/^\d+/, '9999999999'))}`);
  t.is(forged.status, 403);
  t.like(forged.json, { code: 'wrong_password' });
  t.regex(forged.json.message, /token is not valid/);
});

test('login: the form posts the password and shows a token; JSON login too; tokens work in plain URLs', async (t) => {
  const form = await get('login');
  t.is(form.status, 200);
  t.regex(form.text, /<form method="post" action="\/login">/);
  t.regex(form.text, /type="password" name="password"/);

  const posted = await call(`${app.urls.media}/login`, { method: 'POST', body: new URLSearchParams({ password: PASSWORD }) });
  t.is(posted.status, 200);
  const token = /<code id="token">([^<]+)<\/code>/.exec(posted.text)![1];
  t.regex(posted.text, /\?sim=secret&amp;token=/);

  const json = await call(`${app.urls.media}/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) });
  t.is(json.status, 200);
  t.regex(json.json.token, /^\d+\.[A-Za-z0-9_-]{43}$/);
  t.true(json.json.expires_at > Date.now() / 1000 + 3600);
  t.deepEqual(json.json.categories, ['secret']);

  for (const candidate of [token, json.json.token]) {
    const res = await get(`?smo=secret&format=json&token=${encodeURIComponent(candidate)}`);
    t.is(res.status, 200);
    t.true(res.json.url.endsWith(`?token=${encodeURIComponent(candidate)}`));
  }

  const wrongForm = await call(`${app.urls.media}/login`, { method: 'POST', body: new URLSearchParams({ password: 'guess' }) });
  t.is(wrongForm.status, 403);
  t.regex(wrongForm.headers.get('content-type')!, /^text\/html/);
  t.regex(wrongForm.text, /class="error" role="alert">Wrong password</);
  const wrongJson = await call(`${app.urls.media}/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"password":"guess"}' });
  t.is(wrongJson.status, 403);
  t.like(wrongJson.json, { code: 'wrong_password' });
});

test('a password in the query string is refused', async (t) => {
  const res = await get(`?sim=secret&password=${encodeURIComponent(PASSWORD)}`);
  t.is(res.status, 400);
  t.regex(res.json.message, /never put the password in a URL/);
  t.false(app.rawLog.some((line) => line.includes(PASSWORD)));
});

test('password checks from one address: the budget of 10 ends in 429 for any password', async (t) => {
  const locked = await startExtra({ MEDIA_PASSWORD: PASSWORD });
  const token = (await call(`${locked.urls.media}/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) })).json.token;
  // The login above was one uncached password check; nine wrong ones fill the budget of 10.
  for (let i = 0; i < 9; i++) {
    const res = await get('?sim=secret', basic(`wrong-${i}`), locked);
    t.is(res.status, 403, `try ${i + 1}`);
  }
  const limited = await get('?sim=secret', basic('wrong-again'), locked);
  t.is(limited.status, 429);
  t.like(limited.json, { code: 'rate_limited', success: false });
  t.true(Number(limited.headers.get('retry-after')) > 0);
  // Locked out: even the password this address proved before is refused (a 200 would reveal it)...
  t.is((await get('?sim=secret', basic(PASSWORD), locked)).status, 429);
  t.is((await get('?sim=secret', { 'X-Media-Password': 'yet another guess' }, locked)).status, 429);
  // ...while a token minted earlier still opens private media.
  t.is((await get(`?sim=secret&token=${encodeURIComponent(token)}`, {}, locked)).status, 200);
});

test('ten wrong tries first: the eleventh check is 429 whatever the password', async (t) => {
  const locked = await startExtra({ MEDIA_PASSWORD: PASSWORD });
  for (let i = 0; i < 10; i++) t.is((await get('?sim=secret', basic(`wrong-${i}`), locked)).status, 403, `try ${i + 1}`);
  t.is((await get('?sim=secret', basic(PASSWORD), locked)).status, 429);
});

test('MEDIA_PASSWORD_HASH (scrypt) opens private media; the plain password is never needed', async (t) => {
  const hash = await hashPassword('hashed secret', { N: 1024, r: 8, p: 1 });
  const hashed = await startExtra({ MEDIA_PASSWORD_HASH: hash });
  t.is((await get('?sim=secret', basic('hashed secret'), hashed)).status, 200);
  t.is((await get('?sim=secret', basic('open sesame'), hashed)).status, 403);
});

test('an invalid MEDIA_PASSWORD_HASH stops start-up with a message that shows the format', async (t) => {
  const error = await t.throwsAsync(startExtra({ MEDIA_PASSWORD_HASH: 'md5:abc' }));
  t.regex(error!.message, /MEDIA_PASSWORD_HASH must look like scrypt:/);
});
