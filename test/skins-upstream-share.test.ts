// Each client's share of the shared upstream budgets (issue #39): one client draining them with
// batches of unknown UUIDs cannot make another client's uncached lookup fail, it gets 429 for
// itself past its own budget of uncached lookups, and the search service's players source is
// charged to its key. Clients are told apart by X-Forwarded-For (TRUST_PROXY=true). Nothing here
// waits on time: the buckets only refill while a test runs, which can only help the other client,
// and every test file starts its own services.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startFakeUpstream } from '../scripts/fake-upstream/server.ts';
import { writeSyntheticData } from '../scripts/search-data.ts';
import { redisUnavailableReason, SHARED_COUNT_ENV, startRedis } from './helpers/redis.ts';
import { call, startApp } from './helpers/service.ts';
import { startSkins } from './helpers/skins.ts';
import { createSearchKey } from './helpers/search-keys.ts';

/** The production budgets (api/config.ts DEFAULT_BUDGETS): 60 calls of burst, one a second. */
const BUDGETS_ON = {
  OFFICIAL_NAMES_BUDGET: '600/600:60', OFFICIAL_PROFILES_BUDGET: '600/600:60',
  EXTERNAL_NAMES_BUDGET: '1200/600:60', EXTERNAL_PROFILES_BUDGET: '600/600:60',
};

const from = (ip: string) => ({ 'x-forwarded-for': ip });

/** `count` UUIDs no upstream knows, different for each `batch`. */
const unknownUuids = (batch: number, count = 100) =>
  Array.from({ length: count }, (_, i) => `${batch.toString(16).padStart(8, '0')}${'0'.repeat(16)}${i.toString(16).padStart(8, '0')}`);

const batchOf = (base: string, ip: string, uuids: string[]) =>
  call(`${base}/v1/batch`, { method: 'POST', headers: { ...from(ip), 'content-type': 'application/json' }, body: JSON.stringify({ uuids }) });

test('batches of unknown UUIDs from one client cannot make another client\'s uncached lookup fail', async (t) => {
  const skins = await startSkins({ TRUST_PROXY: 'true', ...BUDGETS_ON });
  t.teardown(() => skins.stop());
  // The three batches: 300 profile calls against 60 in each bucket.
  for (let batch = 1; batch <= 3; batch += 1) {
    const r = await batchOf(skins.base, '198.51.100.7', unknownUuids(batch));
    t.true([200, 429, 503].includes(r.status), `batch ${batch}: ${r.status} ${r.text.slice(0, 200)}`);
  }
  const other = await skins.get('/v1/player/Robot', { headers: from('198.51.100.8') });
  t.is(other.status, 200, other.text.slice(0, 300));
  t.is(other.json.data.name, 'Robot');
});

test('a heavy client refused at the reserve is refused alone: the same player is answered to another client', async (t) => {
  // Buckets that refill one call in 100 s: the reserve is all that is left once the batch is done.
  const slow = '60/6000:60';
  const skins = await startSkins({ TRUST_PROXY: 'true', OFFICIAL_NAMES_BUDGET: slow, OFFICIAL_PROFILES_BUDGET: slow, EXTERNAL_NAMES_BUDGET: slow, EXTERNAL_PROFILES_BUDGET: slow, UPSTREAM_CLIENT_LOOKUPS: '1000' });
  t.teardown(() => skins.stop());
  await batchOf(skins.base, '198.51.100.7', unknownUuids(1));
  const heavy = await skins.get('/v1/player/Robot', { headers: from('198.51.100.7') });
  t.is(heavy.status, 503, heavy.text.slice(0, 300));
  t.is(heavy.json.code, 'upstream_busy');
  t.true(Number(heavy.headers.get('retry-after')) >= 1);
  // Its refusal is not remembered as the player's failure (the error memo answers everyone).
  const other = await skins.get('/v1/player/Robot', { headers: from('198.51.100.8') });
  t.is(other.status, 200, other.text.slice(0, 300));
});

test('a client past its budget of uncached lookups gets 429 for itself alone', async (t) => {
  const skins = await startSkins({ TRUST_PROXY: 'true', ...BUDGETS_ON, UPSTREAM_CLIENT_LOOKUPS: '50' });
  t.teardown(() => skins.stop());
  // 100 unknown UUIDs ask both sources: 200 uncached lookups against a budget of 50.
  const first = await batchOf(skins.base, '198.51.100.7', unknownUuids(1));
  t.is(first.status, 429, first.text.slice(0, 300));
  t.is(first.json.code, 'rate_limited');
  t.true(Number(first.headers.get('retry-after')) >= 1);
  const again = await batchOf(skins.base, '198.51.100.7', unknownUuids(2, 10));
  t.is(again.status, 429);
  // Another client is not limited; once Robot is cached, the limited client gets it too (a cached lookup costs nothing).
  const other = await skins.get('/v1/player/Robot', { headers: from('198.51.100.8') });
  t.is(other.status, 200, other.text.slice(0, 300));
  const single = await skins.get('/v1/player/Robot', { headers: from('198.51.100.7') });
  t.is(single.status, 200, 'a cached lookup is not charged');
});

test('a client past its budget still gets a stale entry it asks for: its refetch is refused, not its answer', async (t) => {
  // TTL 0: every entry is stale as soon as it is stored, so each lookup of Robot wants a refetch.
  const skins = await startSkins({ TRUST_PROXY: 'true', ...BUDGETS_ON, UPSTREAM_CLIENT_LOOKUPS: '10', CACHE_TTL_UUID: '0', CACHE_TTL_PROFILE: '0' });
  t.teardown(() => skins.stop());
  const first = await skins.get('/v1/player/Robot', { headers: from('198.51.100.11') });
  t.is(first.status, 200, first.text.slice(0, 300));
  const spent = await batchOf(skins.base, '198.51.100.11', unknownUuids(5, 20));
  t.is(spent.status, 429, spent.text.slice(0, 300));
  const again = await skins.get('/v1/player/Robot', { headers: from('198.51.100.11') });
  t.is(again.status, 200, again.text.slice(0, 300));
  t.is(again.headers.get('x-cache'), 'STALE');
  t.deepEqual(again.json.data.profile, first.json.data.profile);
  // Without an entry to fall back on, the refusal stands.
  const unknown = await skins.get('/v1/player/NoSuchPlayer7', { headers: from('198.51.100.11') });
  t.is(unknown.status, 429);
});

test('an image route\'s lookup of its player is charged to the client too: images of unknown players cannot drain the budgets for others', async (t) => {
  const skins = await startSkins({ TRUST_PROXY: 'true', ...BUDGETS_ON, UPSTREAM_CLIENT_LOOKUPS: '6' });
  t.teardown(() => skins.stop());
  // Unknown names ask both sources (a name and a profile call each, at most): past 6 lookups the client is refused.
  const statuses: number[] = [];
  for (let i = 0; i < 8; i += 1) statuses.push((await skins.get(`/v1/avatar/NoSuchPlayer${i}/32`, { headers: from('198.51.100.9') })).status);
  t.true(statuses.includes(429), `statuses ${statuses.join(', ')}`);
  const limited = await skins.get('/v1/head/NoSuchPlayer99/32', { headers: from('198.51.100.9') });
  t.is(limited.status, 429, limited.text.slice(0, 200));
  t.is(limited.json.code, 'rate_limited');
  t.is((await skins.get('/v1/avatar/Robot/32', { headers: from('198.51.100.10') })).status, 200, 'another client is served');
});

test('the search players source is charged to the key', async (t) => {
  const fake = await startFakeUpstream();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-upstream-share-'));
  t.teardown(async () => {
    await fake.close();
    await fs.rm(dir, { recursive: true, force: true });
  });
  const dataFile = path.join(dir, 'people.jsonl');
  const dataDir = path.join(dir, 'state');
  await writeSyntheticData(dataFile, 50, { seed: 3 });
  const app = await startApp({ SERVICES: 'search', SEARCH_DATA: dataFile, DATA_DIR: dataDir, UPSTREAM_CLIENT_LOOKUPS: '4', ...BUDGETS_ON, ...fake.env });
  t.teardown(() => app.stop());
  const heavy = createSearchKey(dataDir, 'heavy');
  const light = createSearchKey(dataDir, 'light');
  const search = (query: string, key: string) =>
    call(`${app.urls.search}/v1/search?${new URLSearchParams({ query, type: 'network_user' })}`, { headers: { 'x-api-key': key } });
  // Each unknown name asks both sources: at least two uncached lookups a search, against 4.
  const first = await search('NobodyHere0', heavy);
  t.like(first.json.data.players, { outcome: 'completed', records: 0 });
  let refused: { outcome: string; error?: string } | undefined;
  for (let i = 1; i <= 4 && !refused; i += 1) {
    const r = await search(`NobodyHere${i}`, heavy);
    t.is(r.status, 200, r.text.slice(0, 300));
    if (r.json.data.players.outcome !== 'completed') refused = r.json.data.players;
  }
  t.like(refused, { outcome: 'failed', error: 'rate_limited' });
  // Another key has its own budget.
  const other = await search('Robot', light);
  t.like(other.json.data.players, { outcome: 'completed', records: 1 });
});

const noRedis = redisUnavailableReason();
(noRedis ? test.skip : test)('with Redis, two instances share the buckets and each client\'s count: draining through both still leaves the reserve', async (t) => {
  const redis = await startRedis();
  const env = { TRUST_PROXY: 'true', REDIS_URL: redis.url, ...SHARED_COUNT_ENV, ...BUDGETS_ON, UPSTREAM_CLIENT_LOOKUPS: '250' };
  const [one, two] = await Promise.all([startSkins(env), startSkins(env)]);
  t.teardown(async () => {
    await Promise.all([one.stop(), two.stop()]);
    await redis.stop();
  });
  // 200 lookups a batch (both sources): 250 in all from one client, counted across instances.
  t.not((await batchOf(one.base, '198.51.100.7', unknownUuids(1))).status, 429);
  const second = await batchOf(two.base, '198.51.100.7', unknownUuids(2));
  t.is(second.status, 429, 'the count is shared: the second instance knows the first one\'s 200');
  for (const instance of [one, two]) {
    const other = await instance.get('/v1/player/Robot', { headers: from('198.51.100.8') });
    t.is(other.status, 200, other.text.slice(0, 300));
  }
});
