// Image churn against Redis with a memory bound, as an attacker with many addresses would make it:
// every distinct option set is a new cache entry. The cache lives in a Redis of its own
// (CACHE_REDIS_URL) that evicts freely, so sessions, search keys and rate-limit counters on
// REDIS_URL (which evicts nothing) survive, and a login after the churn still works.
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { createClient } from '@redis/client';
import { CookieJar } from './helpers/cookie-jar.ts';
import { redisUnavailableReason, startRedis, type TestRedis } from './helpers/redis.ts';
import { call, startApp } from './helpers/service.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

const skip = redisUnavailableReason();
if (skip) console.log(skip);
const maybe = skip ? test.skip : test;

const OAUTH = { clientId: 'skinfarm-churn', clientSecret: 'churn-secret-value', autoApprove: true };
const REDIRECT = 'http://127.0.0.1:1/oauth/external/callback';
const ADMIN = 'churnAdmin-Q7mZp2Lx9RkT4vWb8NcY';
const CACHE_BOUND = 2 * 1024 * 1024;

let state: TestRedis;
let cache: TestRedis;
let h: SkinsHarness;

test.before(async () => {
  if (skip) return;
  // State evicts nothing (a full one refuses writes); the cache evicts its least recently used.
  state = await startRedis(['--maxmemory', '16mb', '--maxmemory-policy', 'noeviction']);
  cache = await startRedis(['--maxmemory', String(CACHE_BOUND), '--maxmemory-policy', 'allkeys-lru']);
  h = await startSkins({
    SERVICES: 'skins,search', REDIS_URL: state.url, CACHE_REDIS_URL: cache.url, TRUST_PROXY: 'true', SEARCH_ADMIN_TOKEN: ADMIN,
    OAUTH_CLIENT_ID: OAUTH.clientId, OAUTH_CLIENT_SECRET: OAUTH.clientSecret, OAUTH_REDIRECT_URL: REDIRECT,
  }, { oauth: { ...OAUTH, redirectUris: [REDIRECT] } });
});
test.after.always(async () => {
  await h?.stop();
  await Promise.all([state?.stop(), cache?.stop()]);
});

async function redisInfo(url: string): Promise<{ info: string; keys: string[] }> {
  const client = createClient({ url });
  await client.connect();
  try {
    const keys: string[] = [];
    for await (const batch of client.scanIterator({ MATCH: '*', COUNT: 1000 })) keys.push(...batch);
    return { info: await client.info(), keys };
  } finally {
    await client.quit();
  }
}

const infoField = (info: string, name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1]);

maybe('sessions and search keys survive image churn past the cache Redis\'s memory bound', async (t) => {
  const browser = new CookieJar();
  t.is((await browser.login(h.base)).status, 302);
  const created = await call(`${h.app.urls.search}/v1/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` }, body: JSON.stringify({ name: 'churn' }) });
  t.is(created.status, 201, created.text);
  const key = created.json.key as string;

  // 2,000 distinct avatars from 20 addresses (each within its budgets): more than the bound holds.
  for (let client = 0; client < 20; client += 1) {
    for (let batch = 0; batch < 100; batch += 20) {
      const answers = await Promise.all(Array.from({ length: 20 }, () =>
        h.get(`/v1/avatar/gen_${client}/512?bg=${randomBytes(3).toString('hex')}`, { headers: { 'x-forwarded-for': `198.18.7.${client}` } })));
      t.deepEqual(answers.map((a) => a.status), answers.map(() => 200));
    }
  }
  const cached = await redisInfo(cache.url);
  t.true(infoField(cached.info, 'evicted_keys') > 0, 'the cache Redis evicted entries');
  t.true(infoField(cached.info, 'used_memory') <= CACHE_BOUND * 1.1);
  const held = await redisInfo(state.url);
  t.deepEqual(held.keys.filter((k) => /^skinfarm:(render|texture|profile|uuid)::/.test(k)), [], 'no cache entry in the state Redis');
  t.is(infoField(held.info, 'evicted_keys'), 0);

  // What lives on REDIS_URL still works: the session, the key, and a new login (a write).
  t.like((await browser.go(`${h.base}/v1/me`)).json.data, { logged_in: true });
  const search = await call(`${h.app.urls.search}/v1/search?query=192.0.2.1`, { headers: { 'x-api-key': key } });
  t.not(search.status, 401);
  t.not(search.status, 403);
  const later = new CookieJar();
  t.is((await later.login(h.base)).status, 302);
  t.like((await later.go(`${h.base}/v1/me`)).json.data, { logged_in: true });
});

maybe('one Redis that evicts any key and also holds the cache is named at start, as is a cache Redis without a bound', async (t) => {
  const shared = await startRedis(['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru']);
  const unbounded = await startRedis();
  t.teardown(() => Promise.all([shared.stop(), unbounded.stop()]));
  const one = await startApp({ SERVICES: 'search', REDIS_URL: shared.url });
  t.teardown(() => one.stop());
  t.truthy(one.logs.find((l) => l.level === 'warn' && /image churn can evict sessions, search keys and rate-limit counters; set CACHE_REDIS_URL/.test(String(l.msg))));
  const apart = await startApp({ SERVICES: 'search', REDIS_URL: shared.url, CACHE_REDIS_URL: unbounded.url });
  t.teardown(() => apart.stop());
  t.truthy(apart.logs.find((l) => l.level === 'warn' && /the cache Redis has no maxmemory/.test(String(l.msg))));
  t.falsy(apart.logs.find((l) => /image churn can evict/.test(String(l.msg))));
});
