// Two service processes on one Redis: one rate limit, one cache, one session store, one back-off
// after a 429; Redis going away degrades to the in-process layer and comes back by itself.
import test from 'ava';
import { startFakeUpstream, type FakeUpstream } from '../scripts/fake-upstream/server.ts';
import { redisUnavailableReason, SHARED_COUNT_ENV, startRedis, type TestRedis } from './helpers/redis.ts';
import { call, startApp, type RunningApp } from './helpers/service.ts';
import { startInOneWindow } from './helpers/rate-window.ts';

const skip = redisUnavailableReason();
if (skip) console.log(skip);
const maybe = skip ? test.skip : test.serial;

let redis: TestRedis;
let fake: FakeUpstream;
let a: RunningApp;
let b: RunningApp;
const redirect = 'http://127.0.0.1:1/oauth/external/callback';

test.before(async () => {
  if (skip) return;
  redis = await startRedis();
  fake = await startFakeUpstream({ oauth: { clientId: 'scale', clientSecret: 'scale-secret', redirectUris: [redirect], autoApprove: true } });
  const env = {
    SERVICES: 'skins', REDIS_URL: redis.url, ...SHARED_COUNT_ENV, TRUST_PROXY: '1', RENDER_WORKERS: '1', ...fake.env,
    OAUTH_CLIENT_ID: 'scale', OAUTH_CLIENT_SECRET: 'scale-secret', OAUTH_REDIRECT_URL: redirect,
  };
  [a, b] = await Promise.all([startApp(env), startApp(env)]);
});
test.after.always(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await fake?.close();
  await redis?.stop();
});

maybe('the rate limit is shared: 120 in total per window across both instances', async (t) => {
  const headers = { 'x-forwarded-for': '203.0.113.77' };
  await startInOneWindow();
  const results = await Promise.all(Array.from({ length: 140 }, (_, i) => call(`${(i % 2 ? a : b).urls.skins}/v1/decode?value=e30=`, { headers })));
  t.is(new Set(results.map((r) => r.headers.get('x-ratelimit-reset'))).size, 1, 'one window');
  t.is(results.filter((r) => r.status === 200).length, 120);
  t.is(results.filter((r) => r.status === 429).length, 20);
});

maybe('a profile cached by one instance is a hit on the other, with no upstream call', async (t) => {
  const first = await call(`${a.urls.skins}/v1/player/SlimAlex`);
  t.is(first.headers.get('x-cache'), 'MISS');
  fake.resetCalls();
  const second = await call(`${b.urls.skins}/v1/player/SlimAlex`);
  t.is(second.headers.get('x-cache'), 'HIT');
  t.deepEqual(second.json.data.profile, first.json.data.profile);
  t.deepEqual(fake.calls(), {});
});

maybe('two concurrent identical cold renders on the two instances render once', async (t) => {
  const renders = async (app: RunningApp) =>
    Number(/skinfarm_render_duration_seconds_count\{kind="render"\} (\d+)/.exec((await call(`${app.urls.skins}/metrics`)).text)?.[1] ?? 0);
  const before = (await renders(a)) + (await renders(b));
  const path = '/v1/render/SlimAlex/96?yaw=77&pitch=12';
  const [x, y] = await Promise.all([call(`${a.urls.skins}${path}`), call(`${b.urls.skins}${path}`)]);
  t.is(x.status, 200);
  t.is(y.status, 200);
  t.true(x.bytes.equals(y.bytes));
  t.is((await renders(a)) + (await renders(b)) - before, 1);
});

maybe('a session created on one instance is valid on the other; logout ends it on both', async (t) => {
  const jar = new Map<string, string>();
  const go = async (url: string) => {
    const response = await fetch(url, { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const line of response.headers.getSetCookie()) {
      const [name, value] = line.split(';')[0].split('=');
      if (value) jar.set(name, value);
      else jar.delete(name);
    }
    return response;
  };
  const start = await go(`${a.urls.skins}/oauth/external`);
  const provider = await go(start.headers.get('location')!);
  await go(`${a.urls.skins}/oauth/external/callback${new URL(provider.headers.get('location')!).search}`);
  const onB = (await (await go(`${b.urls.skins}/v1/me`)).json()) as { data: unknown };
  t.like(onB.data, { logged_in: true, user: { name: 'demo' } });
  await go(`${b.urls.skins}/oauth/logout`);
  t.like(((await (await go(`${a.urls.skins}/v1/me`)).json()) as { data: unknown }).data, { logged_in: false });
});

/** Whether the instance says it is on Redis again within 20 s. */
async function reconnected(app: RunningApp): Promise<boolean> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (!(await call(`${app.urls.skins}/v1/status`)).json.data.cache.degraded) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

maybe('with Redis gone requests keep working from the process; it reconnects by itself', async (t) => {
  await call(`${a.urls.skins}/v1/player/ClassicSteve`);
  await redis.stop();
  const cached = await call(`${a.urls.skins}/v1/player/ClassicSteve`);
  t.is(cached.status, 200);
  t.is(cached.headers.get('x-cache'), 'HIT');
  const uncached = await call(`${a.urls.skins}/v1/player/HdPlayer`);
  t.is(uncached.status, 200, 'an upstream lookup still works without Redis');
  const limited = await call(`${a.urls.skins}/v1/decode?value=e30=`, { headers: { 'x-forwarded-for': '203.0.113.90' } });
  t.is(limited.status, 200);
  t.is(limited.headers.get('x-ratelimit-limit'), '120', 'limits fall back to the process');
  const status = await call(`${a.urls.skins}/v1/status`);
  t.true(status.json.data.cache.degraded);
  t.is(a.process.exitCode, null, 'nothing crashed');

  redis = await startRedis.onPort(redis.port);
  t.true(await reconnected(a), 'reconnected to Redis');
});

const officialCalls = () => Object.entries(fake.calls()).filter(([k]) => k.startsWith('official.')).reduce((n, [, v]) => n + v, 0);

maybe('a 429 met by one instance makes the other back off without calling that upstream', async (t) => {
  // The case before this one restarted Redis: both instances must be back on it.
  t.true((await reconnected(a)) && (await reconnected(b)));
  fake.control({ officialBudget: 0 });
  t.teardown(() => fake.control({ officialBudget: null }));
  fake.resetCalls();
  const first = await call(`${a.urls.skins}/v1/uuid/circuit_a?source=official`);
  t.is(first.status, 503);
  t.is(first.json.code, 'upstream_busy');
  t.is(officialCalls(), 1, 'instance a met the 429');

  const second = await call(`${b.urls.skins}/v1/uuid/circuit_b?source=official`);
  t.is(second.status, 503);
  t.is(second.json.code, 'upstream_busy');
  t.true(Number(second.headers.get('retry-after')) > 0);
  t.is(officialCalls(), 1, 'instance b sent nothing to the official upstream');
  const status = await call(`${b.urls.skins}/v1/status`);
  t.is(status.json.data.sources.official.circuit.state, 'open');
  t.false(status.json.data.sources.official.ok);
  t.is((await call(`${b.urls.skins}/v1/player/ExternalOnly`)).status, 200, 'the other upstream is still called');
});
