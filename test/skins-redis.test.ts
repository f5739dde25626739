// The skins service on a real Redis: cache, rate-limit counters and their survival of a restart.
import test from 'ava';
import { createClient } from '@redis/client';
import { startFakeUpstream, type FakeUpstream } from '../scripts/fake-upstream/server.ts';
import { redisUnavailableReason, startRedis, type TestRedis } from './helpers/redis.ts';
import { call, startApp } from './helpers/service.ts';
import { startInOneWindow } from './helpers/rate-window.ts';

const skip = redisUnavailableReason();
if (skip) console.log(skip);
const maybe = skip ? test.skip : test.serial;

let redis: TestRedis;
let fake: FakeUpstream;
test.before(async () => {
  if (skip) return;
  redis = await startRedis();
  fake = await startFakeUpstream();
});
test.after.always(async () => {
  await fake?.close();
  await redis?.stop();
});

maybe('cache and rate limits live in Redis and survive a restart of the service', async (t) => {
  const env = { SERVICES: 'skins', REDIS_URL: redis.url, ...fake.env };
  const first = await startApp(env);
  // The restart takes a few seconds: the two requests must count into one window.
  await startInOneWindow(30_000);
  const r1 = await call(`${first.urls.skins}/v1/player/SlimAlex`);
  t.is(r1.status, 200);
  t.is(r1.headers.get('x-cache'), 'MISS');
  const remaining = Number(r1.headers.get('x-ratelimit-remaining'));
  await first.stop();

  const client = createClient({ url: redis.url });
  await client.connect();
  t.teardown(() => client.quit());
  const keys = await client.keys('skinfarm:*');
  t.true(keys.some((k) => k.startsWith('skinfarm:profile')), keys.join(','));
  t.true(keys.some((k) => k.startsWith('skinfarm:rl:normal:')), keys.join(','));

  fake.resetCalls();
  const second = await startApp(env);
  t.teardown(() => second.stop());
  const r2 = await call(`${second.urls.skins}/v1/player/SlimAlex`);
  t.is(r2.status, 200);
  t.is(r2.headers.get('x-cache'), 'HIT');
  t.deepEqual(r2.json.data.profile, r1.json.data.profile);
  t.is(fake.calls()['official.profile'] ?? 0, 0, 'served from Redis, no upstream call');
  // The counter continued across the restart.
  t.is(r2.headers.get('x-ratelimit-reset'), r1.headers.get('x-ratelimit-reset'), 'one window');
  t.is(Number(r2.headers.get('x-ratelimit-remaining')), remaining - 1);
  const status = await call(`${second.urls.skins}/v1/status`);
  t.is(status.json.data.cache.backend, 'redis');
  t.true(status.json.data.cache.entries > 0);
});

maybe('/v1/status counts cache entries only, not the rate limits, sessions and budgets beside them', async (t) => {
  const app = await startApp({ SERVICES: 'skins', REDIS_URL: redis.url, ...fake.env });
  t.teardown(() => app.stop());
  t.is((await call(`${app.urls.skins}/v1/player/ClassicSteve`)).status, 200);
  const client = createClient({ url: redis.url });
  await client.connect();
  t.teardown(() => client.quit());
  // Keys of the other users of the database, as they name them.
  for (let i = 0; i < 50; i += 1) {
    await client.set(`skinfarm:session:test-${i}`, '{}');
    await client.set(`skinfarm:budget:test-${i}`, '1');
  }
  const cacheKeys = (await client.keys('skinfarm:*')).filter((k) => /^skinfarm:(uuid|profile|texture|render|announcements|meta)::/.test(k));
  t.true(cacheKeys.length > 0);
  const status = await call(`${app.urls.skins}/v1/status`);
  t.is(status.json.data.cache.entries, cacheKeys.length);
  t.true(await client.dbSize() >= cacheKeys.length + 100);
});
