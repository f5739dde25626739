// The search service with its keys in a real (test-started) Redis: exact counting under
// concurrency, and the CLI working on the same keys through REDIS_URL.
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { createClient } from '@redis/client';
import { writeSyntheticData } from '../scripts/search-data.ts';
import { redisUnavailableReason, startRedis, type TestRedis } from './helpers/redis.ts';
import { call, ROOT, startApp, type RunningApp } from './helpers/service.ts';

const skip = redisUnavailableReason();
if (skip) console.log(skip);
const maybe = skip ? test.skip : test;

const ADMIN = 'searchRedis-P4vLc9XbN2qTz7KmW1Hy';
let redis: TestRedis;
let app: RunningApp;
let dataDir: string;
let dir: string;

test.before(async () => {
  if (skip) return;
  redis = await startRedis();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-search-redis-'));
  dataDir = path.join(dir, 'state');
  const dataFile = path.join(dir, 'people.jsonl');
  await writeSyntheticData(dataFile, 100, { seed: 3 });
  app = await startApp({ SERVICES: 'search', REDIS_URL: redis.url, SEARCH_ADMIN_TOKEN: ADMIN, SEARCH_DATA: dataFile, DATA_DIR: dataDir, OFFICIAL_ENABLED: 'false', EXTERNAL_ENABLED: 'false',
    // 50 searches of one key at once test the quota's count, not the bound on running searches.
    SEARCH_KEY_CONCURRENCY: '64' });
});
test.after.always(async () => {
  await app?.stop();
  await redis?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const search = (key: string) => call(`${app.urls.search}/v1/search?query=192.0.2.1`, { headers: { 'x-api-key': key } });
const cli = (...args: string[]) => spawnSync(process.execPath, ['scripts/search-keys.ts', ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', REDIS_URL: redis.url, DATA_DIR: dataDir }, encoding: 'utf8' });

maybe('50 parallel searches on a key limited to 10: exactly 10 succeed (Redis store)', async (t) => {
  const created = await call(`${app.urls.search}/v1/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` }, body: JSON.stringify({ name: 'redis', request_limit: 10 }) });
  t.is(created.status, 201);
  const statuses = await Promise.all(Array.from({ length: 50 }, () => search(created.json.key).then((r) => r.status)));
  t.is(statuses.filter((s) => s === 200).length, 10);
  t.is(statuses.filter((s) => s === 403).length, 40);

  const client = createClient({ url: redis.url });
  await client.connect();
  t.teardown(() => client.quit());
  const stored = JSON.parse((await client.get(`skinfarm:search:key:${created.json.id}`))!);
  t.like(stored, { used: 10, request_limit: 10 });
  t.false(JSON.stringify(stored).includes(created.json.key));
  await t.throwsAsync(fs.access(path.join(dataDir, 'search-keys.json')), undefined, 'no file store next to Redis');
});

maybe('the CLI manages the keys the service checks in Redis', async (t) => {
  const made = cli('create', '--name', 'redis-cli', '--limit', '5');
  t.is(made.status, 0, made.stderr);
  const { id, key } = JSON.parse(made.stdout);
  t.is((await search(key)).status, 200);
  t.is(cli('update', id, '--expires-at', '2020-01-01T00:00:00Z').status, 0);
  t.is((await search(key)).json.error.code, 'key_expired');
  t.is(cli('update', id, '--expires-at', 'never', '--limit', '1').status, 0);
  t.is((await search(key)).json.error.code, 'key_exhausted');
  const listed = JSON.parse(cli('list', '--json').stdout).find((k: { id: string }) => k.id === id);
  t.like(listed, { used: 1, request_limit: 1, expires_at: null, state: 'exhausted' });
  t.is(cli('delete', id).status, 0);
  t.is((await search(key)).status, 401);
});

maybe('with Redis the audit secret is made once and kept there; the audit line is its HMAC', async (t) => {
  const client = createClient({ url: redis.url });
  await client.connect();
  t.teardown(() => client.quit());
  const secret = await client.get('skinfarm:search:audit-secret');
  t.regex(String(secret), /^[0-9a-f]{64}$/);
  t.is((await call(`${app.urls.search}/health`)).json.audit_secret, 'redis');
  const made = cli('create', '--name', 'redis-audit');
  await search(JSON.parse(made.stdout).key);
  const audit = await app.waitForLog((l) => l.msg === 'search audit');
  t.is(audit.query_hmac, createHmac('sha256', secret!).update('192.0.2.1').digest('hex'));
  await t.throwsAsync(fs.access(path.join(dataDir, 'search-audit-secret')), undefined, 'no secret file next to Redis');
});
