// The login against a real OAuth 2.0 authorization server (oidc-provider): PKCE required, Basic
// client authentication only, rotating refresh tokens, a user API that answers per RFC 6750.
import test from 'ava';
import { CookieJar, type JarResponse } from './helpers/cookie-jar.ts';
import { answerConsent, startOAuthServer, type OAuthServer } from './helpers/oauth-server.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

const CLIENT = { clientId: 'skinfarm-real', clientSecret: 'real-secret-0123456789' };
const REDIRECT = 'http://127.0.0.1:1/oauth/external/callback';
const PREMIUM = '069a79f444e94726a5befca90e38aaf5';

/** Our service pointed at the authorization server (the fake upstream still answers Yggdrasil). */
function skinsFor(server: OAuthServer, env: Record<string, string> = {}): Promise<SkinsHarness> {
  return startSkins({
    EXTERNAL_URL: server.url,
    OAUTH_CLIENT_ID: CLIENT.clientId, OAUTH_CLIENT_SECRET: CLIENT.clientSecret, OAUTH_REDIRECT_URL: REDIRECT,
    ...env,
  });
}

/** The login a user makes: our redirect, the server's consent answered, our callback. */
async function login(browser: CookieJar, h: SkinsHarness, server: OAuthServer, decision: 'approve' | 'deny' = 'approve'): Promise<{ callback: URL; done: JarResponse }> {
  const start = await browser.go(`${h.base}/oauth/external`);
  const { consent, prompt, callback } = await answerConsent(browser, start.location!, decision);
  if (consent.origin !== server.url || prompt !== 'login') throw new Error(`the server did not ask who the user is (${consent})`);
  const done = await browser.go(`${h.base}/oauth/external/callback${callback.search}`, { headers: { accept: 'application/json' } });
  return { callback, done };
}

let server: OAuthServer;
let h: SkinsHarness;
test.before(async () => {
  // Access tokens live 20 s: inside the service's 30 s margin, so every account call refreshes.
  server = await startOAuthServer({ ...CLIENT, redirectUri: REDIRECT, accessTokenTtl: 20, players: ['ExternalOnly', 'BothSources'], premiumUuid: PREMIUM });
  h = await skinsFor(server);
});
test.after.always(async () => {
  await h?.stop();
  await server?.close();
});

test.serial('full login: PKCE and Basic accepted, iss checked, the user API read with the token', async (t) => {
  const browser = new CookieJar();
  const { callback, done } = await login(browser, h, server);
  t.is(callback.searchParams.get('iss'), server.url, 'the server names itself (RFC 9207)');
  t.truthy(callback.searchParams.get('code'));
  t.is(done.status, 302);
  t.like(server.grants.at(-1), { grantType: 'authorization_code', ok: true });

  t.like((await browser.go(`${h.base}/v1/me`)).json.data, { logged_in: true, user: { id: 7, name: 'user-7' } });
  const profiles = await browser.go(`${h.base}/v1/me/profiles`);
  t.is(profiles.status, 200);
  t.deepEqual(profiles.json.data.profiles.map((p: { name: string }) => p.name).sort(), ['BothSources', 'ExternalOnly']);
  const verification = await browser.go(`${h.base}/v1/me/verification`);
  t.like(verification.json.data, { verified: true, uuid: PREMIUM, logged_in: true });
  t.is((await browser.go(`${h.base}/oauth/logout`)).status, 302);
  t.like((await browser.go(`${h.base}/v1/me`)).json.data, { logged_in: false });
});

test.serial('three parallel calls after expiry never offer a spent refresh token: the rotating server keeps the user logged in', async (t) => {
  const browser = new CookieJar();
  t.is((await login(browser, h, server)).done.status, 302);
  const before = server.grants.length;
  const answers = await Promise.all([1, 2, 3].map(() => browser.go(`${h.base}/v1/me/verification`)));
  t.deepEqual(answers.map((a) => a.status), [200, 200, 200]);
  // Calls that overlap share one refresh; one that starts after it is done may refresh again
  // (every token is inside the margin here). A spent refresh token is never offered again.
  const refreshes = server.grants.slice(before);
  t.true(refreshes.length >= 1 && refreshes.every((g) => g.grantType === 'refresh_token' && g.ok), JSON.stringify(refreshes));
  // The session holds the rotated pair: later calls refresh with it and still work.
  t.is((await browser.go(`${h.base}/v1/me/verification`)).status, 200);
  t.like((await browser.go(`${h.base}/v1/me`)).json.data, { logged_in: true });
  t.false(server.grants.some((g) => !g.ok), JSON.stringify(server.grants.filter((g) => !g.ok)));
});

test.serial('the user\'s denial is oauth_denied', async (t) => {
  const { callback, done } = await login(new CookieJar(), h, server, 'deny');
  t.is(callback.searchParams.get('error'), 'access_denied');
  t.is(done.status, 403);
  t.is(done.json.code, 'oauth_denied');
});

test('a scope not granted: the API\'s 403 insufficient_scope is missing_scope and the user stays logged in', async (t) => {
  const narrow = await skinsFor(server, { OAUTH_SCOPES: 'User.Read Player.Read' });
  t.teardown(() => narrow.stop());
  const browser = new CookieJar();
  t.is((await login(browser, narrow, server)).done.status, 302);
  const r = await browser.go(`${narrow.base}/v1/me/verification`);
  t.is(r.status, 403);
  t.is(r.json.code, 'missing_scope');
  t.regex(r.json.message, /PremiumVerification\.Read/);
  t.like((await browser.go(`${narrow.base}/v1/me`)).json.data, { logged_in: true });
});

test('client_secret_post against a Basic-only server fails as oauth_failed naming invalid_client', async (t) => {
  const post = await skinsFor(server, { OAUTH_CLIENT_AUTH: 'client_secret_post' });
  t.teardown(() => post.stop());
  const browser = new CookieJar();
  const { done } = await login(browser, post, server);
  t.is(done.status, 502);
  t.is(done.json.code, 'oauth_failed');
  t.regex(done.json.message, /invalid_client/);
  t.like((await browser.go(`${post.base}/v1/me`)).json.data, { logged_in: false });
});
