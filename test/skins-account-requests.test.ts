// Account requests a hostile page could make, and what the provider says on the callback:
// JSON and same origin for state-changing requests, provider errors told apart, `iss` checked,
// a refresh answer without a refresh token, the client authentication method.
import test from 'ava';
import { CookieJar } from './helpers/cookie-jar.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

const REDIRECT = 'http://127.0.0.1:1/oauth/external/callback';
const oauthEnv = { OAUTH_CLIENT_ID: 'guard', OAUTH_CLIENT_SECRET: 'guard-secret', OAUTH_REDIRECT_URL: REDIRECT };
const fakeOauth = (extra: object = {}) => ({ oauth: { clientId: 'guard', clientSecret: 'guard-secret', redirectUris: [REDIRECT], autoApprove: true, ...extra } });

let h: SkinsHarness;
test.before(async () => {
  h = await startSkins(oauthEnv, fakeOauth());
});
test.after.always(async () => {
  await h?.stop();
});

/** A logged-in browser and the UUID of one of its profiles. */
async function loggedIn() {
  const browser = new CookieJar();
  await browser.login(h.base);
  const profiles = await browser.go(`${h.base}/v1/me/profiles`);
  return { browser, uuid: profiles.json.data.profiles[0].id as string };
}

const gameTokenCalls = () => h.fake.requests().filter((r) => r.route === 'ygg.oauth').length;

test.serial('a text/plain form (what another port of this host can send) mints no game token', async (t) => {
  const { browser, uuid } = await loggedIn();
  const before = gameTokenCalls();
  const form = await browser.go(`${h.base}/v1/me/token`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ uuid }) });
  t.is(form.status, 415);
  t.is(form.json.code, 'unsupported_media_type');
  const urlencoded = await browser.go(`${h.base}/v1/me/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `uuid=${uuid}` });
  t.is(urlencoded.status, 415);
  t.is(gameTokenCalls(), before, 'the provider was never asked');
});

test.serial('a JSON request the browser marks as coming from another origin is refused', async (t) => {
  const { browser, uuid } = await loggedIn();
  const otherPort = `http://127.0.0.1:${Number(new URL(h.base).port) + 1}`;
  const before = gameTokenCalls();
  const refused: Record<string, string>[] = [{ origin: otherPort }, { origin: 'null' }, { 'sec-fetch-site': 'same-site' }, { 'sec-fetch-site': 'cross-site' }, { origin: h.base, 'sec-fetch-site': 'same-site' }];
  for (const headers of refused) {
    const r = await browser.postJson(`${h.base}/v1/me/token`, { uuid }, headers);
    t.is(r.status, 403, JSON.stringify(headers));
    t.is(r.json.code, 'cross_site_request', JSON.stringify(headers));
  }
  t.is(gameTokenCalls(), before);
  const own = await browser.postJson(`${h.base}/v1/me/token`, { uuid }, { origin: h.base, 'sec-fetch-site': 'same-origin' });
  t.is(own.status, 200, 'the service\'s own page may');
  t.is(own.json.data.selectedProfile.id, uuid);
});

test('another site cannot log the user out; the user can', async (t) => {
  const { browser } = await loggedIn();
  const forged = await browser.go(`${h.base}/oauth/logout`, { headers: { 'sec-fetch-site': 'cross-site' } });
  t.is(forged.status, 403);
  t.is(forged.json.code, 'cross_site_request');
  t.like((await browser.go(`${h.base}/v1/me`)).json.data, { logged_in: true });
  const own = await browser.go(`${h.base}/oauth/logout`, { headers: { 'sec-fetch-site': 'same-origin' } });
  t.is(own.status, 302);
  t.like((await browser.go(`${h.base}/v1/me`)).json.data, { logged_in: false });
});

test('a provider error other than access_denied is oauth_failed naming it, not a denial', async (t) => {
  const browser = new CookieJar();
  const start = await browser.go(`${h.base}/oauth/external`);
  // The provider itself refuses an unknown scope and says so on the redirect.
  const authorize = new URL(start.location!);
  authorize.searchParams.set('scope', `${authorize.searchParams.get('scope')} No.Such.Scope`);
  const provider = await browser.go(authorize.href);
  t.is(new URL(provider.location!).searchParams.get('error'), 'invalid_scope');
  const r = await browser.go(`${h.base}/oauth/external/callback${new URL(provider.location!).search}`, { headers: { accept: 'application/json' } });
  t.is(r.status, 502);
  t.is(r.json.code, 'oauth_failed');
  t.regex(r.json.message, /invalid_scope/);
  t.like((await browser.go(`${h.base}/v1/me`)).json.data, { logged_in: false });
});

test('an authorization response naming another issuer (RFC 9207) never logs in; the right one does', async (t) => {
  const browser = new CookieJar();
  const start = await browser.go(`${h.base}/oauth/external`);
  const provider = await browser.go(start.location!);
  const answer = new URL(provider.location!).searchParams;
  const forged = await browser.go(`${h.base}/oauth/external/callback?${answer}&iss=${encodeURIComponent('https://evil.example')}`, { headers: { accept: 'application/json' } });
  t.is(forged.status, 400);
  t.is(forged.json.code, 'oauth_issuer_mismatch');
  t.like((await browser.go(`${h.base}/v1/me`)).json.data, { logged_in: false });

  const again = await browser.go(`${h.base}/oauth/external`);
  const second = new URL((await browser.go(again.location!)).location!).searchParams;
  second.set('iss', h.fake.env.EXTERNAL_URL);
  t.is((await browser.go(`${h.base}/oauth/external/callback?${second}`)).status, 302);
  t.like((await browser.go(`${h.base}/v1/me`)).json.data, { logged_in: true });
});

test('the client authenticates with HTTP Basic by default and in the form with OAUTH_CLIENT_AUTH=client_secret_post', async (t) => {
  const exchanges = (harness: SkinsHarness) => harness.fake.requests().filter((r) => r.route === 'oauth.token').map((r) => new URLSearchParams(r.body));
  const browser = new CookieJar();
  t.is((await browser.login(h.base)).status, 302);
  const basic = exchanges(h).at(-1)!;
  t.false(basic.has('client_secret'), 'no secret in the body');
  t.regex(basic.get('code_verifier') ?? '', /^[A-Za-z0-9_-]{43,128}$/, 'the PKCE verifier is sent');

  const post = await startSkins({ ...oauthEnv, OAUTH_CLIENT_AUTH: 'client_secret_post' }, fakeOauth());
  t.teardown(() => post.stop());
  t.is((await new CookieJar().login(post.base)).status, 302);
  const form = exchanges(post).at(-1)!;
  t.is(form.get('client_id'), 'guard');
  t.is(form.get('client_secret'), 'guard-secret');
});

// Tokens live 20 s, inside the 30 s margin: every account call refreshes first.
test('a refresh answer without a refresh token keeps the one the session has', async (t) => {
  const kept = await startSkins(oauthEnv, fakeOauth({ tokenTtlSeconds: 20, keepRefreshTokens: true }));
  t.teardown(() => kept.stop());
  const browser = new CookieJar();
  await browser.login(kept.base);
  for (let i = 0; i < 3; i++) {
    const r = await browser.go(`${kept.base}/v1/me/verification`);
    t.is(r.status, 200, `call ${i + 1}`);
  }
  t.true(kept.fake.requests().filter((r) => (r.body ?? '').includes('grant_type=refresh_token')).length >= 3);
});

test('hostile callbacks: a crafted login cookie, markup in the provider error, repeated parameters', async (t) => {
  // A login cookie written by the attacker (not signed by us) holds no usable state.
  const crafted = new CookieJar();
  const value = Buffer.from(JSON.stringify([{ state: 'attacker-state', verifier: 'v'.repeat(43), at: Date.now() }])).toString('base64url');
  crafted.cookies.set('skinfarm.login', value);
  const forged = await crafted.go(`${h.base}/oauth/external/callback?state=attacker-state&code=abc`, { headers: { accept: 'application/json' } });
  t.is(forged.status, 400);
  t.is(forged.json.code, 'oauth_state_mismatch');

  const browser = new CookieJar();
  const start = await browser.go(`${h.base}/oauth/external`);
  const state = new URL(start.location!).searchParams.get('state')!;
  const markup = encodeURIComponent('<script>alert(1)</script>');
  const page = await browser.go(`${h.base}/oauth/external/callback?state=${state}&error=${markup}`, { headers: { accept: 'text/html' } });
  t.is(page.status, 502);
  t.regex(page.headers.get('content-type')!, /html/);
  t.false(page.text.includes('<script>alert'), 'the provider\'s text is escaped');

  const again = await browser.go(`${h.base}/oauth/external`);
  const second = new URL(again.location!).searchParams.get('state')!;
  const doubled = await browser.go(`${h.base}/oauth/external/callback?state=${second}&state=x&iss=a&iss=b`, { headers: { accept: 'application/json' } });
  t.is(doubled.status, 400);
  t.is(doubled.json.code, 'bad_request', 'repeated parameters are refused before the callback reads any');
  t.like((await browser.go(`${h.base}/v1/me`)).json.data, { logged_in: false });
});
