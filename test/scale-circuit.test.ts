// Two service processes on one Redis: the back-off after an upstream 429 is shared, so a 429 met
// by one instance stops the other from calling that upstream too.
import test from 'ava';
import { startFakeUpstream, type FakeUpstream } from '../scripts/fake-upstream/server.ts';
import { redisUnavailableReason, startRedis, type TestRedis } from './helpers/redis.ts';
import { call, startApp, type RunningApp } from './helpers/service.ts';

const skip = redisUnavailableReason();
if (skip) console.log(skip);
const maybe = skip ? test.skip : test.serial;

let redis: TestRedis;
let fake: FakeUpstream;
let a: RunningApp;
let b: RunningApp;

test.before(async () => {
  if (skip) return;
  redis = await startRedis();
  fake = await startFakeUpstream();
  const env = { SERVICES: 'skins', REDIS_URL: redis.url, ...fake.env };
  [a, b] = await Promise.all([startApp(env), startApp(env)]);
});
test.after.always(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await fake?.close();
  await redis?.stop();
});

const officialCalls = () => Object.entries(fake.calls()).filter(([k]) => k.startsWith('official.')).reduce((n, [, v]) => n + v, 0);

maybe('a 429 met by one instance makes the other back off without calling that upstream', async (t) => {
  fake.control({ officialBudget: 0 });
  t.teardown(() => fake.control({ officialBudget: null }));
  fake.resetCalls();
  const first = await call(`${a.urls.skins}/v1/player/SlimAlex?source=official`);
  t.is(first.status, 503);
  t.is(first.json.code, 'upstream_busy');
  t.is(officialCalls(), 1, 'instance a met the 429');

  const second = await call(`${b.urls.skins}/v1/player/ClassicSteve?source=official`);
  t.is(second.status, 503);
  t.is(second.json.code, 'upstream_busy');
  t.true(Number(second.headers.get('retry-after')) > 0);
  t.is(officialCalls(), 1, 'instance b sent nothing to the official upstream');
  const status = await call(`${b.urls.skins}/v1/status`);
  t.is(status.json.data.sources.official.circuit.state, 'open');
  t.false(status.json.data.sources.official.ok);

  const external = await call(`${b.urls.skins}/v1/player/ExternalOnly`);
  t.is(external.status, 200, 'the other upstream is still called');
});
