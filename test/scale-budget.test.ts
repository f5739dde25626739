// Two instances on one Redis spend one outgoing budget together.
import test from 'ava';
import { startFakeUpstream } from '../scripts/fake-upstream/server.ts';
import { redisUnavailableReason, SHARED_COUNT_ENV, startRedis } from './helpers/redis.ts';
import { call, startApp } from './helpers/service.ts';

const skip = redisUnavailableReason();
if (skip) console.log(skip);

(skip ? test.skip : test)('the upstream budget is shared: two instances together stay under it', async (t) => {
  const redis = await startRedis();
  const fake = await startFakeUpstream();
  t.teardown(async () => {
    await fake.close();
    await redis.stop();
  });
  const env = {
    SERVICES: 'skins', REDIS_URL: redis.url, ...SHARED_COUNT_ENV, TRUST_PROXY: '1', ...fake.env,
    OFFICIAL_NAMES_BUDGET: '10/600:10', NAME_BATCH_WINDOW_MS: '0', EXTERNAL_ENABLED: 'false',
  };
  const [a, b] = await Promise.all([startApp(env), startApp(env)]);
  t.teardown(() => Promise.all([a.stop(), b.stop()]));
  const results = await Promise.all(Array.from({ length: 40 }, (_, i) =>
    call(`${(i % 2 ? a : b).urls.skins}/v1/uuid/ghost_${i}`, { headers: { 'x-forwarded-for': `192.0.2.${i + 1}` } })));
  const calls = fake.calls()['official.name'] ?? 0;
  t.true(calls <= 10, `${calls} upstream calls`);
  t.is(results.filter((r) => r.status === 404).length, calls, 'each call that was sent answered one lookup');
  t.is(results.filter((r) => r.json.code === 'upstream_busy').length, 40 - calls);
  t.true(calls >= 5, 'both instances drew from the same budget, not nothing');
});
