// /v1/status counts the cache's Redis entries without walking the keyspace (issue #39): the
// count comes from a ledger kept as entries are written and deleted, expiry-aware, and no SCAN
// runs however often /v1/status is asked.
import test from 'ava';
import { createClient, type RedisClientType } from '@redis/client';
import { Cache, LEDGER_KEY } from '../api/cache.ts';
import { DEFAULT_TTLS } from '../api/config.ts';
import { silentLogger } from '../shared/log.ts';
import { startFakeUpstream, type FakeUpstream } from '../scripts/fake-upstream/server.ts';
import { redisUnavailableReason, startRedis, type TestRedis } from './helpers/redis.ts';
import { until } from './helpers/poll.ts';
import { call, startApp } from './helpers/service.ts';

const skip = redisUnavailableReason();
if (skip) console.log(skip);
const maybe = skip ? test.skip : test.serial;

let redis: TestRedis;
let fake: FakeUpstream;
let client: RedisClientType;
test.before(async () => {
  if (skip) return;
  redis = await startRedis();
  fake = await startFakeUpstream();
  client = createClient({ url: redis.url }) as RedisClientType;
  await client.connect();
});
test.after.always(async () => {
  await client?.quit();
  await fake?.close();
  await redis?.stop();
});

/** How many SCAN commands this Redis has run. */
async function scans(): Promise<number> {
  const info = await client.info('commandstats');
  return Number(/cmdstat_scan:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

const cacheKeys = async () => (await client.keys('skinfarm:*')).filter((k) => /^skinfarm:(uuid|profile|texture|render|announcements|meta)::/.test(k));

maybe('/v1/status answers its cache figures without a SCAN, however often it is asked', async (t) => {
  const app = await startApp({ SERVICES: 'skins', REDIS_URL: redis.url, ...fake.env });
  t.teardown(() => app.stop());
  t.is((await call(`${app.urls.skins}/v1/player/SlimAlex`)).status, 200);
  const before = await scans();
  let status = await call(`${app.urls.skins}/v1/status`);
  for (let i = 0; i < 30; i += 1) status = await call(`${app.urls.skins}/v1/status`);
  t.is(status.status, 200);
  t.is(await scans(), before, 'no SCAN on /v1/status');
  const keys = await cacheKeys();
  t.true(keys.length > 0);
  t.is(status.json.data.cache.backend, 'redis');
  t.is(status.json.data.cache.entries, keys.length);
});

maybe('the ledger follows writes, deletes and expiry, and another instance\'s writes', async (t) => {
  await client.flushDb();
  const cache = (c: RedisClientType) => new Cache({ maxEntries: 100, staleSeconds: 0, ttl: DEFAULT_TTLS, redis: c, log: silentLogger });
  const one = cache(client);
  const other = createClient({ url: redis.url }) as RedisClientType;
  await other.connect();
  t.teardown(() => other.quit());
  const two = cache(other);
  const short = one.namespace<string>('brief', 1, 0);
  await short.set('a', 'x');
  await one.namespace<string>('long', 600, 0).set('b', 'y');
  await two.namespace<string>('long', 600, 0).set('c', 'z');
  await two.namespace<string>('long', 600, 0).set('b', 'y2');
  t.is((await one.stats()).entries, 3);
  await two.namespace<string>('long', 600, 0).delete('c');
  await new Promise((resolve) => setTimeout(resolve, 1200));
  // 'a' expired, 'c' deleted by the other instance: 'b' is left.
  t.is((await one.stats()).entries, 1);
  t.is((await two.stats()).entries, 1);
  // A key Redis dropped itself (evicted) stops counting once the database holds fewer keys.
  t.is(await client.del('skinfarm:long::b'), 1);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  t.is((await one.stats()).entries, 0);
});

maybe('the ledger drops members of expired keys as entries are written, at most once a minute', async (t) => {
  await client.flushDb();
  const cache = new Cache({ maxEntries: 100, staleSeconds: 0, ttl: DEFAULT_TTLS, redis: client, log: silentLogger });
  const ns = cache.namespace<string>('long', 600, 0);
  const expired = (tag: string) => Array.from({ length: 100 }, (_, i) => ({ score: Date.now() - 1000, value: `gone::${tag}${i}` }));
  const gone = async () => (await client.zRangeByScore(LEDGER_KEY, '-inf', Date.now())).length;
  // A first write may prune or not (the minute counts from this process's start): what follows does not depend on it.
  await ns.set('first', 'x');
  await client.zAdd(LEDGER_KEY, expired('a'));
  // Past the minute, the next write prunes: no member of an expired key is left, live ones stay.
  await new Promise((resolve) => setTimeout(resolve, 61_000));
  await ns.set('second', 'y');
  await until('the expired members dropped', gone, (n) => n === 0);
  t.is(await client.zScore(LEDGER_KEY, 'long::first') !== null, true);
  t.is(await client.zScore(LEDGER_KEY, 'long::second') !== null, true);
  // Within the minute, writes do not prune again: one ZREMRANGEBYSCORE a minute, not one a write.
  await client.zAdd(LEDGER_KEY, expired('b'));
  for (let i = 0; i < 20; i += 1) await ns.set(`more${i}`, 'z');
  t.is(await gone(), 100);
});
