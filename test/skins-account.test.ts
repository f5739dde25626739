// OAuth login against the fake provider, the account endpoints, and what must never leak.
import test from 'ava';
import { CookieJar } from './helpers/cookie-jar.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

const OAUTH = { clientId: 'skinfarm-test', clientSecret: 'test-secret-value', autoApprove: true };

let h: SkinsHarness;
test.before(async () => {
  h = await startSkins({
    OAUTH_CLIENT_ID: OAUTH.clientId,
    OAUTH_CLIENT_SECRET: OAUTH.clientSecret,
    OAUTH_REDIRECT_URL: 'http://127.0.0.1:1/oauth/external/callback',
  }, { oauth: { ...OAUTH, redirectUris: ['http://127.0.0.1:1/oauth/external/callback'] } });
});
test.after.always(async () => {
  await h?.stop();
});

test('the authorize redirect asks for the real scopes with a state, PKCE S256 and no-store, and stores no session', async (t) => {
  const browser = new CookieJar();
  const r = await browser.go(`${h.base}/oauth/external`);
  t.is(r.status, 302);
  t.is(r.headers.get('cache-control'), 'no-store');
  const url = new URL(r.location!);
  t.is(url.pathname.endsWith('/oauth/authorize'), true);
  t.is(url.searchParams.get('client_id'), OAUTH.clientId);
  t.is(url.searchParams.get('response_type'), 'code');
  t.is(url.searchParams.get('redirect_uri'), 'http://127.0.0.1:1/oauth/external/callback');
  t.deepEqual(url.searchParams.get('scope')!.split(' ').sort(), ['Player.Read', 'PremiumVerification.Read', 'User.Read', 'Yggdrasil.MinecraftToken.Create']);
  t.true(url.searchParams.get('state')!.length >= 32);
  t.is(url.searchParams.get('code_challenge_method'), 'S256');
  t.regex(url.searchParams.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
  t.false(browser.setCookies.some((c) => c.startsWith('skinfarm.sid=')), 'no session for an anonymous visitor');
  const cookie = browser.setCookies.find((c) => c.startsWith('skinfarm.login='))!;
  t.truthy(cookie);
  t.regex(cookie, /httponly/i);
  t.regex(cookie, /samesite=lax/i);
  t.regex(cookie, /path=\/oauth\/external/i);
  t.notRegex(cookie, /secure/i, 'not Secure on a plain-http PUBLIC_URL');
  t.false(cookie.includes(url.searchParams.get('state')!), 'the cookie is not the bare state');
});

test('full login, account endpoints, game token that is never logged, logout', async (t) => {
  const browser = new CookieJar();
  const planted = 'planted-before-login';
  browser.cookies.set('skinfarm.sid', planted);
  const done = await browser.login(h.base);
  t.is(done.status, 302);
  t.is(done.location, '/');
  t.not(browser.cookies.get('skinfarm.sid'), planted, 'a new session id at login');
  t.false(browser.cookies.has('skinfarm.login'), 'the pending login is used up');

  const me = await browser.go(`${h.base}/v1/me`);
  t.like(me.json.data, { logged_in: true, user: { id: 1, name: 'demo' } });
  t.regex(me.json.data.user.avatar, /^https?:\/\//);

  const profiles = await browser.go(`${h.base}/v1/me/profiles`);
  const names = profiles.json.data.profiles.map((p: { name: string }) => p.name).sort();
  t.deepEqual(names, ['BothSources', 'ExternalOnly']);
  for (const p of profiles.json.data.profiles) t.regex(p.id, /^[0-9a-f]{32}$/);

  for (const path of ['/v1/me/verification', '/v1/me/premium']) {
    const v = await browser.go(`${h.base}${path}`);
    t.like(v.json.data, { verified: true, checked: true, logged_in: true }, path);
    t.regex(v.json.data.uuid, /^[0-9a-f]{32}$/);
  }

  const target = profiles.json.data.profiles[0];
  const token = await browser.go(`${h.base}/v1/me/token`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ uuid: target.id }),
  });
  t.is(token.status, 200);
  const record = token.json.data;
  t.is(typeof record.accessToken, 'string');
  t.true(record.accessToken.length >= 16);
  t.is(typeof record.clientToken, 'string');
  t.is(record.selectedProfile.id, target.id);
  t.true(Array.isArray(record.availableProfiles));
  t.regex(record.created_at, /[+-]\d\d:\d\d$/);
  t.is(typeof record.note, 'string');
  t.is(token.headers.get('cache-control'), 'no-store');
  const log = h.app.rawLog.join('\n');
  t.false(log.includes(record.accessToken), 'the game token is never logged');
  t.false(log.includes(browser.cookies.get('skinfarm.sid')!), 'nor the session cookie');

  const other = await browser.go(`${h.base}/v1/me/token`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ uuid: '0123456789abcdef0123456789abcdef' }),
  });
  t.is(other.status, 403, 'a profile of someone else');
  t.is((await browser.go(`${h.base}/v1/me/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"uuid":"xyz"}' })).json.code, 'invalid_uuid');

  const out = await browser.go(`${h.base}/oauth/logout`);
  t.is(out.status, 302);
  t.is(out.location, '/');
  t.like((await browser.go(`${h.base}/v1/me`)).json.data, { logged_in: false });
});

test('a valid session planted before the login (someone else\'s) is destroyed by it and worth nothing after it', async (t) => {
  const attacker = new CookieJar();
  t.is((await attacker.login(h.base)).status, 302);
  const victim = new CookieJar();
  for (const [name, value] of attacker.cookies) victim.cookies.set(name, value);
  t.like((await victim.go(`${h.base}/v1/me`)).json.data, { logged_in: true }, 'the planted cookie works before');
  t.is((await victim.login(h.base)).status, 302);
  t.not(victim.cookies.get('skinfarm.sid'), attacker.cookies.get('skinfarm.sid'), 'a new id at login');
  t.like((await victim.go(`${h.base}/v1/me`)).json.data, { logged_in: true });
  t.like((await attacker.go(`${h.base}/v1/me`)).json.data, { logged_in: false }, 'the planted id is worth nothing');
});

test('anonymous account calls', async (t) => {
  const me = await h.get('/v1/me');
  t.is(me.status, 200);
  t.deepEqual(me.json.data, { logged_in: false });
  const profiles = await h.get('/v1/me/profiles');
  t.deepEqual(profiles.json.data, { logged_in: false, profiles: [] });
  for (const [path, init] of [['/v1/me/verification', {}], ['/v1/me/premium', {}], ['/v1/me/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"uuid":"0123456789abcdef0123456789abcdef"}' }]] as const) {
    const r = await h.get(path, init);
    t.is(r.status, 401, path);
    t.is(r.json.code, 'not_logged_in', path);
  }
});

test('a forged state never logs in: JSON for clients, HTML for browsers', async (t) => {
  const browser = new CookieJar();
  await browser.go(`${h.base}/oauth/external`);
  const json = await browser.go(`${h.base}/oauth/external/callback?code=abc&state=forged`, { headers: { accept: 'application/json' } });
  t.is(json.status, 400);
  t.is(json.json.code, 'oauth_state_mismatch');
  const html = await new CookieJar().go(`${h.base}/oauth/external/callback?code=abc&state=forged`, { headers: { accept: 'text/html', 'accept-language': 'zh-CN' } });
  t.is(html.status, 400);
  t.regex(html.headers.get('content-type')!, /html/);
  t.regex(html.text, /登录失败/);
  t.like((await browser.go(`${h.base}/v1/me`)).json.data, { logged_in: false });
});

test('a provider denial never logs in', async (t) => {
  const browser = new CookieJar();
  const start = await browser.go(`${h.base}/oauth/external`);
  const state = new URL(start.location!).searchParams.get('state')!;
  const r = await browser.go(`${h.base}/oauth/external/callback?error=access_denied&state=${state}`, { headers: { accept: 'application/json' } });
  t.is(r.status, 403);
  t.is(r.json.code, 'oauth_denied');
  t.like((await browser.go(`${h.base}/v1/me`)).json.data, { logged_in: false });
});

test('a bad code is a failed exchange, not a login', async (t) => {
  const browser = new CookieJar();
  const start = await browser.go(`${h.base}/oauth/external`);
  const state = new URL(start.location!).searchParams.get('state')!;
  const r = await browser.go(`${h.base}/oauth/external/callback?code=not-a-real-code&state=${state}`, { headers: { accept: 'application/json' } });
  t.is(r.status, 502);
  t.is(r.json.code, 'oauth_failed');
});
