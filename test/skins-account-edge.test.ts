// Account edge cases: OAuth not configured, a scope not granted, token refresh and a provider
// that forgot our tokens, and the Secure cookie behind https.
import test from 'ava';
import { startFakeUpstream } from '../scripts/fake-upstream/server.ts';
import { CookieJar } from './helpers/cookie-jar.ts';
import { startSkins } from './helpers/skins.ts';

const REDIRECT = 'http://127.0.0.1:1/oauth/external/callback';
const oauthEnv = { OAUTH_CLIENT_ID: 'edge', OAUTH_CLIENT_SECRET: 'edge-secret', OAUTH_REDIRECT_URL: REDIRECT };
const fakeOauth = (extra: object = {}) => ({ oauth: { clientId: 'edge', clientSecret: 'edge-secret', redirectUris: [REDIRECT], autoApprove: true, ...extra } });

test('without OAuth settings the login answers oauth_not_configured and /v1/me still works', async (t) => {
  const h = await startSkins();
  t.teardown(() => h.stop());
  const r = await h.get('/oauth/external');
  t.is(r.status, 503);
  t.is(r.json.code, 'oauth_not_configured');
  t.like((await h.get('/v1/me')).json.data, { logged_in: false });
});

test('a permission not granted at login is missing_scope, not a crash', async (t) => {
  const h = await startSkins({ ...oauthEnv, OAUTH_SCOPES: 'User.Read Player.Read' }, fakeOauth());
  t.teardown(() => h.stop());
  const browser = new CookieJar();
  t.is((await browser.login(h.base)).status, 302);
  const r = await browser.go(`${h.base}/v1/me/verification`);
  t.is(r.status, 403);
  t.is(r.json.code, 'missing_scope');
});

// Tokens live 20 s: inside the 30 s margin, so every account call refreshes first.
test('an expiring token is refreshed; when the provider no longer knows it the user is logged out', async (t) => {
  const h = await startSkins(oauthEnv, fakeOauth({ tokenTtlSeconds: 20 }));
  t.teardown(() => h.stop());
  const browser = new CookieJar();
  await browser.login(h.base);
  const tokenCalls = () => h.fake.requests().filter((r) => r.route === 'oauth.token').length;
  const before = tokenCalls();
  const profiles = await browser.go(`${h.base}/v1/me/profiles`);
  t.is(profiles.status, 200);
  t.like(profiles.json, { data: { logged_in: true } });
  t.true(tokenCalls() > before, 'the refresh grant was used');
  t.true(h.fake.requests().some((r) => r.route === 'oauth.token' && (r.body ?? '').includes('grant_type=refresh_token')));

  // The provider restarts and forgets every token: the refresh fails and the session ends.
  const port = Number(new URL(h.fake.baseUrl).port);
  await h.fake.close();
  const fresh = await startFakeUpstream({ port, ...fakeOauth({ tokenTtlSeconds: 20 }) });
  t.teardown(() => fresh.close());
  const after = await browser.go(`${h.base}/v1/me/profiles`);
  t.is(after.status, 401);
  t.is(after.json.code, 'not_logged_in');
  t.like((await browser.go(`${h.base}/v1/me`)).json.data, { logged_in: false });
});

test('behind https (PUBLIC_URL) the login cookie is Secure', async (t) => {
  const h = await startSkins({ ...oauthEnv, PUBLIC_URL: 'https://skins.example.org' }, fakeOauth());
  t.teardown(() => h.stop());
  const r = await fetch(`${h.base}/oauth/external`, { redirect: 'manual' });
  const cookie = r.headers.getSetCookie().find((c) => c.startsWith('skinfarm.login='))!;
  t.regex(cookie, /;\s*secure/i);
  t.regex(cookie, /httponly/i);
});
