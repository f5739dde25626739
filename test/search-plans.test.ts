// Plans that change something, and a key holder seeing their own key: GET /v1/key, the per-key
// rate (SEARCH_PLANS and a key's own figures), the X-Key-* headers of a search, and counting
// several uses at once in both key stores. Real services, a real Redis where the store is Redis.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { createClient, type RedisClientType } from '@redis/client';
import { ConfigError, loadConfig } from '../api/config.ts';
import { FileKeyStore } from '../api/search/keys/file-store.ts';
import { generateKey, hashKey, publicKey, type KeyRecord } from '../api/search/keys/model.ts';
import { RedisKeyStore } from '../api/search/keys/redis-store.ts';
import type { KeyStore } from '../api/search/keys/store.ts';
import { DEFAULT_PLAN_FIGURES, planFigures } from '../api/search/plans.ts';
import { writeSyntheticData } from '../scripts/search-data.ts';
import { redisUnavailableReason, SHARED_COUNT_ENV, startRedis, type TestRedis } from './helpers/redis.ts';
import { createSearchKey } from './helpers/search-keys.ts';
import { call, ROOT, startApp, type RunningApp } from './helpers/service.ts';

const ADMIN = 'searchPlans-Q7wZr2Lx9KvN4mTb8Hc';
const redisSkip = redisUnavailableReason();
if (redisSkip) console.log(redisSkip);
const withRedis = redisSkip ? test.skip : test;

let dir: string;
let dataFile: string;
/** The file store, plan defaults. */
let app: RunningApp;
let dataDir: string;
/** SEARCH_PLANS set. */
let planned: RunningApp;
let redis: TestRedis | undefined;
/** Two instances sharing `redis`. */
let shared: RunningApp[] = [];

const BASE = { SERVICES: 'search', SEARCH_ADMIN_TOKEN: ADMIN, OFFICIAL_ENABLED: 'false', EXTERNAL_ENABLED: 'false' };

test.before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-search-plans-'));
  dataFile = path.join(dir, 'people.jsonl');
  dataDir = path.join(dir, 'state');
  await writeSyntheticData(dataFile, 50, { seed: 5 });
  const starts: Array<Promise<unknown>> = [
    startApp({ ...BASE, SEARCH_DATA: dataFile, DATA_DIR: dataDir }).then((a) => { app = a; }),
    startApp({ ...BASE, SEARCH_DATA: dataFile, DATA_DIR: path.join(dir, 'planned'), SEARCH_PLANS: 'basic:searches_per_minute=7,page_rows=20;premium:export_rows=0' }).then((a) => { planned = a; }),
  ];
  if (!redisSkip) {
    starts.push(startRedis().then(async (r) => {
      redis = r;
      shared = await Promise.all(['a', 'b'].map((n) => startApp({ ...BASE, ...SHARED_COUNT_ENV, REDIS_URL: r.url, SEARCH_DATA: dataFile, DATA_DIR: path.join(dir, `shared-${n}`) })));
    }));
  }
  await Promise.all(starts);
});
test.after.always(async () => {
  await Promise.all([app?.stop(), planned?.stop(), ...shared.map((a) => a.stop())]);
  await redis?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const on = (service: RunningApp, p: string) => `${service.urls.search}${p}`;
const admin = (method: string, p: string, body?: unknown, service = app) =>
  call(on(service, p), { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
const keyInfo = (key: string | null, service = app) => call(on(service, '/v1/key'), { headers: key === null ? {} : { 'x-api-key': key } });
const search = (key: string, service = app) => call(on(service, '/v1/search?query=nobody%40example.org'), { headers: { 'x-api-key': key } });

async function newKey(body: Record<string, unknown>, service = app): Promise<{ id: string; key: string }> {
  const created = await admin('POST', '/v1/admin/keys', { name: 'plans', ...body }, service);
  if (created.status !== 201) throw new Error(`key not created: ${created.status} ${created.text}`);
  return created.json;
}

const cli = (...args: string[]) => spawnSync(process.execPath, ['scripts/search-keys.ts', ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir }, encoding: 'utf8' });

/**
 * Searches with a fresh key from `makeKey` until one past `limit`, all in one rate window: the
 * windows are the clock's minutes, so a run that crossed one is made again with a new key.
 */
async function pastTheRate(makeKey: () => Promise<string>, limit: number, services: RunningApp[] = [app]) {
  for (let attempt = 1; ; attempt++) {
    const key = await makeKey();
    const answers = [];
    for (let i = 0; i <= limit; i++) answers.push(await search(key, services[i % services.length]));
    const windows = new Set(answers.map((a) => a.headers.get('x-key-ratelimit-reset')));
    if (windows.size === 1 || attempt === 3) return { key, answers };
  }
}

test('SEARCH_PLANS replaces the figures it names; a wrong plan, figure or value stops the start', (t) => {
  const plans = loadConfig({ SEARCH_PLANS: ' basic: searches_per_minute=60 ; premium:page_rows=1000,export_rows=0 ' }).search.plans;
  t.deepEqual(plans.basic, { ...DEFAULT_PLAN_FIGURES.basic, searches_per_minute: 60 });
  t.deepEqual(plans.premium, { ...DEFAULT_PLAN_FIGURES.premium, page_rows: 1000, export_rows: 0 });
  t.deepEqual(loadConfig({}).search.plans, DEFAULT_PLAN_FIGURES);
  for (const bad of ['gold:page_rows=10', 'basic:rows=10', 'basic:page_rows=5000', 'premium:bulk_size=101', 'basic:bulk_size=0', 'basic:page_rows=x', 'basic:page_rows=-1',
    'basic:page_rows=10=2', 'basic page_rows=10', 'basic:searches_per_minute=1000000000000']) {
    const error = t.throws(() => loadConfig({ SEARCH_PLANS: bad }), { instanceOf: ConfigError }, bad);
    t.regex(error.message, /SEARCH_PLANS must be/, bad);
  }
});

test('GET /v1/key: a basic and a premium key with the plans\' default figures', async (t) => {
  const basic = await newKey({ request_limit: 50 });
  const answer = await keyInfo(basic.key);
  t.is(answer.status, 200);
  t.is(answer.headers.get('cache-control'), 'no-store');
  t.like(answer.json, {
    status: 'success', id: basic.id, name: 'plans', plan: 'basic', state: 'active', expires_at: null, request_limit: 50, used: 0, remaining: 50,
    rate_limit: { limit: 120, remaining: 120 }, figures: { searches_per_minute: 120, page_rows: 100, bulk_size: 10, export_rows: 0, export: false },
  });
  t.true(Date.parse(answer.json.rate_limit.reset) > Date.now() - 1000);
  t.false('hash' in answer.json);

  const premium = await newKey({ plan: 'premium', duration: '2m' });
  t.like((await keyInfo(premium.key)).json, {
    plan: 'premium', request_limit: null, remaining: null,
    figures: { searches_per_minute: 1200, page_rows: 500, bulk_size: 100, export_rows: 100_000, export: true },
  });
});

test('GET /v1/key counts no use; each search answer carries the key\'s figures, one less each time', async (t) => {
  const { key, answers } = await pastTheRate(async () => {
    const made = await newKey({ request_limit: 10 });
    for (let i = 0; i < 3; i++) t.is((await keyInfo(made.key)).json.used, 0);
    return made.key;
  }, 2);
  t.deepEqual(answers.map((a) => a.status), [200, 200, 200]);
  t.deepEqual(answers.map((a) => a.headers.get('x-key-requests-remaining')), ['9', '8', '7']);
  t.deepEqual(answers.map((a) => a.headers.get('x-key-ratelimit-limit')), ['120', '120', '120']);
  const remaining = answers.map((a) => Number(a.headers.get('x-key-ratelimit-remaining')));
  t.deepEqual(remaining, [remaining[0], remaining[0] - 1, remaining[0] - 2]);
  t.true(Number(answers[0].headers.get('x-key-ratelimit-reset')) * 1000 > Date.now() - 1000);
  // The address's own limit stays under its own names.
  t.truthy(answers[0].headers.get('x-ratelimit-limit'));
  t.like((await keyInfo(key)).json, { used: 3, remaining: 7 });

  const unlimited = await newKey({});
  t.is((await search(unlimited.key)).headers.get('x-key-requests-remaining'), 'unlimited');
});

test('GET /v1/key refuses as a search does: 401 without a known key, 403 disabled, expired or exhausted', async (t) => {
  t.like((await keyInfo(null)).json, { error: { code: 'missing_key' } });
  t.is((await keyInfo(generateKey())).status, 401);
  t.like((await keyInfo(generateKey())).json, { error: { code: 'invalid_key' } });
  const disabled = await newKey({});
  await admin('PATCH', `/v1/admin/keys/${disabled.id}`, { disabled: true });
  const expired = await newKey({ expires_at: '2020-01-01T00:00:00Z' });
  const exhausted = await newKey({ request_limit: 1 });
  t.is((await search(exhausted.key)).status, 200);
  for (const [key, code] of [[disabled.key, 'key_disabled'], [expired.key, 'key_expired'], [exhausted.key, 'key_exhausted']]) {
    const answer = await keyInfo(key);
    t.is(answer.status, 403, code);
    t.is(answer.json.error.code, code);
  }
});

test('a key\'s own searches_per_minute from the CLI: the 4th search is 429 with Retry-After and costs no use; another key from the address still searches', async (t) => {
  const makeKey = async () => createSearchKey(dataDir, 'three', '--searches-per-minute', '3', '--limit', '100');
  const { key, answers } = await pastTheRate(makeKey, 3);
  t.like((await keyInfo(key)).json, { rate_limit: { limit: 3 }, figures: { searches_per_minute: 3, page_rows: 100 } });
  t.deepEqual(answers.map((a) => a.status), [200, 200, 200, 429]);
  t.deepEqual(answers.map((a) => a.headers.get('x-key-ratelimit-remaining')), ['2', '1', '0', '0']);
  const refused = answers[3];
  t.is(refused.json.error.code, 'rate_limited');
  t.regex(refused.json.error.message, /3 searches a minute/);
  t.true(Number(refused.headers.get('retry-after')) >= 1 && Number(refused.headers.get('retry-after')) <= 60);
  t.like((await keyInfo(key)).json, { used: 3, remaining: 97, rate_limit: { remaining: 0 } });
  t.is((await search(createSearchKey(dataDir, 'other'))).status, 200);
});

test('a key\'s own figures by the admin API, at creation and by PATCH, and back to the plan\'s with null', async (t) => {
  let id = '';
  const { key, answers } = await pastTheRate(async () => {
    const created = await admin('POST', '/v1/admin/keys', { name: 'own', searches_per_minute: 2, page_rows: 1000, bulk_size: 100, export_rows: 0 });
    t.is(created.status, 201);
    t.like(created.json, { plan: 'basic', searches_per_minute: 2, page_rows: 1000, bulk_size: 100, export_rows: 0 });
    // A bulk request counts each query in the rate: bulk_size is held to searches_per_minute.
    t.like((await keyInfo(created.json.key)).json, { figures: { searches_per_minute: 2, page_rows: 1000, bulk_size: 2, export_rows: 0, export: false } });
    id = created.json.id;
    return created.json.key as string;
  }, 2);
  t.deepEqual(answers.map((a) => a.status), [200, 200, 429]);

  const patched = await admin('PATCH', `/v1/admin/keys/${id}`, { plan: 'premium', searches_per_minute: null, page_rows: 50 });
  t.is(patched.status, 200);
  t.like(patched.json, { plan: 'premium', searches_per_minute: null, page_rows: 50, bulk_size: 100 });
  t.like((await keyInfo(key)).json, { plan: 'premium', figures: { searches_per_minute: 1200, page_rows: 50, bulk_size: 100, export_rows: 0 } });
  t.is((await search(key)).status, 200, 'the premium rate applies at once');
  const listed = (await admin('GET', '/v1/admin/keys')).json.keys.find((k: { id: string }) => k.id === id);
  t.like(listed, { plan: 'premium', searches_per_minute: null, page_rows: 50, bulk_size: 100, export_rows: 0 });
});

test('the CLI sets, shows and resets a key\'s own figures and its plan', async (t) => {
  const created = cli('create', '--name', 'cli-figures', '--plan', 'premium', '--page-rows', '250', '--export-rows', '0');
  t.is(created.status, 0, created.stderr);
  const record = JSON.parse(created.stdout);
  t.like(record, { plan: 'premium', page_rows: 250, export_rows: 0, searches_per_minute: null, bulk_size: null });
  const updated = cli('update', record.id, '--plan', 'basic', '--page-rows', 'plan', '--bulk-size', '5');
  t.is(updated.status, 0, updated.stderr);
  t.regex(updated.stdout, /basic .*bulk_size=5/);
  t.notRegex(updated.stdout, /page_rows/);
  t.like((await keyInfo(record.key)).json, { plan: 'basic', figures: { page_rows: 100, bulk_size: 5, export_rows: 0 } });
  const listed = JSON.parse(cli('list', '--json').stdout).find((k: { id: string }) => k.id === record.id);
  t.like(listed, { plan: 'basic', page_rows: null, bulk_size: 5, export_rows: 0 });
});

test('bad figures are refused naming the field: admin API (400) and CLI (exit 64)', async (t) => {
  const { id } = await newKey({});
  const cases: Array<[string, unknown]> = [['searches_per_minute', 0], ['searches_per_minute', -1], ['searches_per_minute', 1e12], ['searches_per_minute', 'x'], ['searches_per_minute', 1.5],
    ['page_rows', 5000], ['page_rows', 0], ['bulk_size', 101], ['bulk_size', [5]], ['export_rows', -1], ['export_rows', 10_000_001], ['export_rows', true]];
  for (const [field, value] of cases) {
    for (const [method, p] of [['POST', '/v1/admin/keys'], ['PATCH', `/v1/admin/keys/${id}`]]) {
      const answer = await admin(method, p, method === 'POST' ? { name: 'bad', [field]: value } : { [field]: value });
      t.is(answer.status, 400, `${method} ${field}=${JSON.stringify(value)}`);
      t.is(answer.json.error.code, 'bad_request');
      t.true(answer.json.error.message.includes(field), answer.json.error.message);
    }
  }
  t.is((await admin('PATCH', `/v1/admin/keys/${id}`, { plan: 'gold' })).status, 400);
  t.is((await admin('PATCH', `/v1/admin/keys/${id}`, { searches_per_minutes: 5 })).status, 400, 'unknown fields are still refused');
  // A negative number is given as --flag=-1 (parseArgs reads `--flag -1` as a missing value).
  for (const [flags, field] of [[['--bulk-size', '101'], 'bulk_size'], [['--page-rows', '5000'], 'page_rows'], [['--searches-per-minute', 'x'], 'searches_per_minute'], [['--export-rows=-1'], 'export_rows']] as const) {
    const refused = cli('create', '--name', 'bad', ...flags);
    t.is(refused.status, 64, flags.join(' '));
    t.true(refused.stderr.includes(field), refused.stderr);
  }
});

test('SEARCH_PLANS changes what /v1/key says and the rate enforced', async (t) => {
  const basic = await newKey({}, planned);
  t.like((await keyInfo(basic.key, planned)).json, { figures: { searches_per_minute: 7, page_rows: 20, bulk_size: 7, export_rows: 0 } });
  const premium = await newKey({ plan: 'premium' }, planned);
  t.like((await keyInfo(premium.key, planned)).json, { figures: { searches_per_minute: 1200, page_rows: 500, export_rows: 0, export: false } });
  const { answers } = await pastTheRate(async () => (await newKey({}, planned)).key, 7, [planned]);
  t.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200, 200, 200, 200, 429]);
});

/** consume(key, n) in a store: n uses at once or none, exactly, under concurrency. */
async function consumesSeveral(t: ExecutionContext, store: KeyStore) {
  const { key, record } = await store.create({ name: 'bulk', plan: 'basic', expires_at: null, request_limit: 10 });
  t.like(await store.consume(key, 3), { state: 'active', record: { used: 3 } });
  const refused = await store.consume(key, 8);
  t.is(refused.state, 'exhausted');
  t.is(refused.record?.used, 3, 'nothing counted');
  t.like(await store.consume(key, 7), { state: 'active', record: { used: 10 } });
  t.is((await store.consume(key, 1)).state, 'exhausted');

  const { key: racing } = await store.create({ name: 'race', plan: 'basic', expires_at: null, request_limit: 10 });
  const results = await Promise.all(Array.from({ length: 10 }, () => store.consume(racing, 3)));
  t.is(results.filter((r) => r.state === 'active').length, 3);
  t.is((await store.peek(racing)).record?.used, 9);
  t.is((await store.list()).find((r) => r.id === record.id)?.used, 10);

  const { key: unlimited } = await store.create({ name: 'free', plan: 'premium', expires_at: null, request_limit: null, searches_per_minute: 5 });
  t.like(await store.consume(unlimited, 4), { state: 'active', record: { used: 4, searches_per_minute: 5 } });
  t.is((await store.peek(unlimited)).record?.used, 4, 'peek sees the uses this instance has counted');
}

test('file store: consume(key, n) counts n uses or none', async (t) => {
  const store = new FileKeyStore(path.join(dir, 'consume-keys.json'));
  await consumesSeveral(t, store);
  await store.close();
});

withRedis('Redis store: consume(key, n) counts n uses or none', async (t) => {
  const client: RedisClientType = createClient({ url: redis!.url });
  await client.connect();
  t.teardown(() => client.quit());
  await consumesSeveral(t, new RedisKeyStore(client));
});

test('a record made before keys had figures of their own reads as the plan\'s figures (file and Redis)', async (t) => {
  const key = generateKey();
  const old = { id: 'key_0000000000000001', name: 'old', plan: 'premium', created_at: '2026-01-01T00:00:00.000Z', expires_at: null, request_limit: null, used: 4, disabled: false, hash: hashKey(key) };
  const file = path.join(dir, 'old-keys.json');
  await fs.writeFile(file, JSON.stringify({ version: 1, keys: [old] }));
  const stores: KeyStore[] = [new FileKeyStore(file)];
  if (redis) {
    const client: RedisClientType = createClient({ url: redis.url });
    await client.connect();
    t.teardown(() => client.quit());
    await client.multi().set(`skinfarm:search:key:${old.id}`, JSON.stringify(old)).set(`skinfarm:search:keyhash:${old.hash}`, old.id).sAdd('skinfarm:search:keys', old.id).exec();
    stores.push(new RedisKeyStore(client));
  }
  for (const store of stores) {
    const read = (await store.peek(key)).record as KeyRecord;
    t.like(publicKey(read), { used: 4, searches_per_minute: null, page_rows: null, bulk_size: null, export_rows: null, state: 'active' }, store.backend);
    t.deepEqual(planFigures(loadConfig({}), read), DEFAULT_PLAN_FIGURES.premium);
    t.like(await store.update(old.id, { bulk_size: 7 }), { bulk_size: 7, used: 4 }, store.backend);
    t.like(await store.consume(key, 2), { state: 'active', record: { used: 6 } }, store.backend);
  }
  await stores[0].close?.();
});

withRedis('a key\'s rate counts across instances sharing Redis', async (t) => {
  const [a, b] = shared;
  const { key, answers } = await pastTheRate(async () => (await newKey({ searches_per_minute: 4 }, a)).key, 4, [a, b]);
  t.deepEqual(answers.map((r) => r.status), [200, 200, 200, 200, 429]);
  t.like((await keyInfo(key, b)).json, { used: 4, rate_limit: { limit: 4, remaining: 0 } });
});
