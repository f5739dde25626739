// The cross-instance refresh lock fails closed: when Redis cannot give it (refusing writes, or
// gone while an instance waits for another's refresh) the request is answered 503 and no
// refresh token goes upstream, so a rotating provider never sees a spent one and keeps the grant.
import { createClient } from '@redis/client';
import test from 'ava';
import { startFakeUpstream, type FakeUpstream } from '../scripts/fake-upstream/server.ts';
import { loggedIn, startOAuthServer, type OAuthServer } from './helpers/oauth-server.ts';
import { redisUnavailableReason, startRedis, type TestRedis } from './helpers/redis.ts';
import { startApp, type RunningApp } from './helpers/service.ts';

const skip = redisUnavailableReason();
if (skip) console.log(skip);
const maybe = skip ? test.skip : test.serial;

const CLIENT = { clientId: 'skinfarm-refresh', clientSecret: 'refresh-secret-0123456789' };
const REDIRECT = 'http://127.0.0.1:1/oauth/external/callback';

let redis: TestRedis;
let fake: FakeUpstream;
let server: OAuthServer;
let a: RunningApp;
let b: RunningApp;

test.before(async () => {
  if (skip) return;
  redis = await startRedis();
  fake = await startFakeUpstream();
  // 20 s access tokens: inside the 30 s margin, so every account call refreshes first.
  server = await startOAuthServer({ ...CLIENT, redirectUri: REDIRECT, accessTokenTtl: 20, premiumUuid: '069a79f444e94726a5befca90e38aaf5' });
  const env = {
    SERVICES: 'skins', REDIS_URL: redis.url, ...fake.env, EXTERNAL_URL: server.url,
    OAUTH_CLIENT_ID: CLIENT.clientId, OAUTH_CLIENT_SECRET: CLIENT.clientSecret, OAUTH_REDIRECT_URL: REDIRECT,
    // A token call the test holds must not time out on a loaded machine.
    UPSTREAM_TIMEOUT_MS: '30000',
  };
  [a, b] = await Promise.all([startApp(env), startApp(env)]);
});
test.after.always(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await server?.close();
  await fake?.close();
  await redis?.stop();
});

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let step = 0; !(await condition()); step++) {
    if (step > 1500) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

maybe('Redis refusing writes: a call that needs a refresh is 503 overloaded and sends none; once Redis is back the user is still logged in', async (t) => {
  const browser = await loggedIn(a.urls.skins, 5);
  const admin = createClient({ url: redis.url });
  await admin.connect();
  t.teardown(async () => {
    await admin.configSet('maxmemory', '0');
    await admin.quit();
  });
  // Full under noeviction: every write (the lock) is refused, reads (the session) still work.
  await admin.configSet('maxmemory', '1');
  const calls = server.tokenCalls;
  const refused = await browser.go(`${a.urls.skins}/v1/me/verification`);
  t.is(refused.status, 503);
  t.is(refused.json.code, 'overloaded');
  t.truthy(refused.headers.get('retry-after'));
  t.is(server.tokenCalls, calls, 'no refresh without the lock');

  await admin.configSet('maxmemory', '0');
  const after = await browser.go(`${a.urls.skins}/v1/me/verification`);
  t.is(after.status, 200, 'the refresh token was not spent while Redis refused writes');
  t.true(server.grants.every((g) => g.ok), JSON.stringify(server.grants));
});

// Last: it stops Redis.
maybe('Redis gone while one instance refreshes and the other waits: the waiter answers 503 and sends no second refresh', async (t) => {
  const browser = await loggedIn(a.urls.skins, 6);
  const admin = createClient({ url: redis.url });
  await admin.connect();
  // Only an instance waiting for a lock sends EXISTS: Redis's count of them says one waits.
  const lockPolls = async () => Number(/cmdstat_exists:calls=(\d+)/.exec(await admin.info('commandstats'))?.[1] ?? 0);
  const polled = await lockPolls();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => { release = resolve; });
  server.holdToken = () => gate;
  t.teardown(() => { server.holdToken = null; release(); });
  const calls = server.tokenCalls;
  const grants = server.grants.length;

  const answers = Promise.all([a, b].map((app) => browser.go(`${app.urls.skins}/v1/me/verification`)));
  // One instance holds the lock and its refresh is at the provider; the other polls the lock.
  await until(async () => server.tokenCalls === calls + 1, 'the holder sent its refresh');
  await until(async () => (await lockPolls()) > polled, 'the other instance waits for the lock');
  await admin.quit();
  await redis.stop();
  release();

  const statuses = (await answers).map((r) => [r.status, r.json?.code]);
  t.deepEqual(statuses, [[503, 'overloaded'], [503, 'overloaded']]);
  t.is(server.tokenCalls, calls + 1, 'the waiter did not refresh on its own');
  t.deepEqual(server.grants.slice(grants), [{ grantType: 'refresh_token', ok: true }], 'no spent refresh token offered: the grant stands');
});
