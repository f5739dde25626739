// The cross-instance refresh lock fails closed: when Redis cannot give it (refusing writes, or
// gone while an instance waits for another's refresh) the request is answered 503 and no
// refresh token goes upstream, so a rotating provider never sees a spent one and keeps the grant.
import { createClient } from '@redis/client';
import test from 'ava';
import { loggedIn, startInstancePair, type InstancePair, type OAuthServer } from './helpers/oauth-server.ts';
import { redisUnavailableReason, type TestRedis } from './helpers/redis.ts';
import type { RunningApp } from './helpers/service.ts';

const skip = redisUnavailableReason();
if (skip) console.log(skip);
const maybe = skip ? test.skip : test.serial;

const CLIENT = { clientId: 'skinfarm-refresh', clientSecret: 'refresh-secret-0123456789' };

let pair: InstancePair;
let redis: TestRedis;
let server: OAuthServer;
let a: RunningApp;
let b: RunningApp;

test.before(async () => {
  if (skip) return;
  pair = await startInstancePair(CLIENT, {
    // A token call the test holds must not time out on a loaded machine.
    UPSTREAM_TIMEOUT_MS: '30000',
  });
  ({ redis, server, a, b } = pair);
});
test.after.always(() => pair?.stop());

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
