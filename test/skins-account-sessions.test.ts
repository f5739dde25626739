// Sessions outlive cache churn and anonymous traffic; pending logins are bounded per browser.
import test from 'ava';
import { CookieJar } from './helpers/cookie-jar.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

const REDIRECT = 'http://127.0.0.1:1/oauth/external/callback';

let h: SkinsHarness;
test.before(async () => {
  // TRUST_PROXY and a client address per request: 400 visitors, each far below its rate limit.
  h = await startSkins({
    OAUTH_CLIENT_ID: 'churn', OAUTH_CLIENT_SECRET: 'churn-secret', OAUTH_REDIRECT_URL: REDIRECT,
    CACHE_MAX_ENTRIES: '300', TRUST_PROXY: '1',
  }, { oauth: { clientId: 'churn', clientSecret: 'churn-secret', redirectUris: [REDIRECT], autoApprove: true } });
});
test.after.always(async () => {
  await h?.stop();
});

test('400 anonymous GET /oauth/external with CACHE_MAX_ENTRIES=300 do not log a signed-in user out', async (t) => {
  const user = new CookieJar();
  t.is((await user.login(h.base)).status, 302);
  t.like((await user.go(`${h.base}/v1/me`)).json.data, { logged_in: true });
  for (let i = 0; i < 400; i++) {
    const r = await fetch(`${h.base}/oauth/external`, { redirect: 'manual', headers: { 'x-forwarded-for': `10.0.${i >> 8}.${i & 255}` } });
    t.is(r.status, 302);
    await r.arrayBuffer();
  }
  t.like((await user.go(`${h.base}/v1/me`)).json.data, { logged_in: true, user: { id: 1 } });
  const profiles = await user.go(`${h.base}/v1/me/profiles`);
  t.is(profiles.status, 200);
  t.true(profiles.json.data.profiles.length > 0);
});

test('a browser holds at most three pending logins: the newest three finish, an older one is gone', async (t) => {
  const browser = new CookieJar();
  const answers: URLSearchParams[] = [];
  for (let i = 0; i < 4; i++) {
    const start = await browser.go(`${h.base}/oauth/external`);
    answers.push(new URL((await browser.go(start.location!)).location!).searchParams);
  }
  t.true((browser.cookies.get('skinfarm.login') ?? '').length < 1024, 'the cookie stays small');
  const oldest = await browser.go(`${h.base}/oauth/external/callback?${answers[0]}`, { headers: { accept: 'application/json' } });
  t.is(oldest.status, 400);
  t.is(oldest.json.code, 'oauth_state_mismatch');
  const newest = await browser.go(`${h.base}/oauth/external/callback?${answers[3]}`);
  t.is(newest.status, 302);
  t.like((await browser.go(`${h.base}/v1/me`)).json.data, { logged_in: true });
  const replay = await browser.go(`${h.base}/oauth/external/callback?${answers[3]}`, { headers: { accept: 'application/json' } });
  t.is(replay.json.code, 'oauth_state_mismatch', 'a state is used once');
});
