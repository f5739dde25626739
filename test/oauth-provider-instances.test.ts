// Two instances on one Redis against a real authorization server that rotates refresh tokens:
// calls after expiry that land on both instances never offer a spent refresh token, also when
// the provider takes longer to answer than the first release's 5 s refresh lock lasted.
import { setTimeout as delay } from 'node:timers/promises';
import test from 'ava';
import { loggedIn, startInstancePair, type InstancePair, type OAuthServer } from './helpers/oauth-server.ts';
import { redisUnavailableReason } from './helpers/redis.ts';
import type { RunningApp } from './helpers/service.ts';

const skip = redisUnavailableReason();
if (skip) console.log(skip);
const maybe = skip ? test.skip : test.serial;

const CLIENT = { clientId: 'skinfarm-pair', clientSecret: 'pair-secret-0123456789' };
/** Longer than the 5 s the refresh lock used to last, well inside the upstream timeout set below. */
const SLOW_TOKEN_MS = 6000;

let pair: InstancePair;
let server: OAuthServer;
let a: RunningApp;
let b: RunningApp;

test.before(async () => {
  if (skip) return;
  pair = await startInstancePair(CLIENT, {
    // Room for a token call held SLOW_TOKEN_MS (the refresh lease follows: 2 x 10 s).
    UPSTREAM_TIMEOUT_MS: '10000', UPSTREAM_RETRIES: '0',
  });
  ({ server, a, b } = pair);
});
test.after.always(() => pair?.stop());

maybe('parallel calls after expiry on two instances never offer a spent refresh token; the user stays logged in', async (t) => {
  const browser = await loggedIn(a.urls.skins, 3);

  for (let round = 0; round < 3; round++) {
    const before = server.grants.length;
    const answers = await Promise.all([a, b, a, b].map((app) => browser.go(`${app.urls.skins}/v1/me/verification`)));
    t.deepEqual(answers.map((r) => r.status), [200, 200, 200, 200], `round ${round + 1}`);
    // A call that starts after another instance's refresh is done may refresh again (every token
    // is inside the margin here); what must never happen is a spent refresh token offered again.
    const grants = server.grants.slice(before);
    t.true(grants.length >= 1 && grants.every((g) => g.grantType === 'refresh_token' && g.ok), `round ${round + 1}: ${JSON.stringify(grants)}`);
  }
  t.like((await browser.go(`${b.urls.skins}/v1/me`)).json.data, { logged_in: true, user: { id: 3 } });
});

maybe('a token call slower than 5 s: two instances asking at once make one refresh, and the grant survives', async (t) => {
  const browser = await loggedIn(a.urls.skins, 4);
  server.holdToken = () => delay(SLOW_TOKEN_MS);
  t.teardown(() => { server.holdToken = null; });
  const before = server.grants.length;
  const answers = await Promise.all([a, b].map((app) => browser.go(`${app.urls.skins}/v1/me/verification`)));
  t.deepEqual(answers.map((r) => r.status), [200, 200], JSON.stringify(answers.map((r) => r.json?.code)));
  t.deepEqual(server.grants.slice(before), [{ grantType: 'refresh_token', ok: true }], 'one refresh, and no spent token offered');

  server.holdToken = null;
  t.is((await browser.go(`${b.urls.skins}/v1/me/verification`)).status, 200, 'the grant was not revoked');
  t.true(server.grants.slice(before).every((g) => g.ok));
});
