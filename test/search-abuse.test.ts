// Abuse of the search service (issue 26): a key is checked before the request is read, so a wrong
// key costs no query parsing whatever the query; a flood is refused by the search group before any
// key is looked up; the admin API counts in a group of its own; /health answers throughout.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { ConfigError, loadConfig } from '../api/config.ts';
import { startInOneWindow } from './helpers/rate-window.ts';
import { call, startApp, type RunningApp } from './helpers/service.ts';

const ADMIN = 'search-abuse-admin-token';
// Below the 30 unauthenticated failures a minute, so every 429 of a flood is the group's.
const SEARCH_LIMIT = 20;
const ADMIN_LIMIT = 10;
// The query of issue 26: 65 ms of CPU when it was parsed before the key was checked.
const SLOW_QUERY = `1${' '.repeat(510)}1`;

let app: RunningApp;
let dir: string;

test.before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-search-abuse-'));
  app = await startApp({
    SERVICES: 'search', SEARCH_ADMIN_TOKEN: ADMIN, DATA_DIR: dir, OFFICIAL_ENABLED: 'false', EXTERNAL_ENABLED: 'false',
    SEARCH_RATE_LIMIT: String(SEARCH_LIMIT), SEARCH_ADMIN_RATE_LIMIT: String(ADMIN_LIMIT),
  });
});
test.after.always(async () => {
  await app?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const url = (p: string) => `${app.urls.search}${p}`;

function admin(method: string, p: string, body?: unknown) {
  return call(url(p), { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
}

function search(key: string, query: string, type?: string) {
  return call(url(`/v1/search?${new URLSearchParams({ query, ...(type ? { type } : {}) })}`), { headers: { 'x-api-key': key } });
}

test('SEARCH_RATE_LIMIT and SEARCH_ADMIN_RATE_LIMIT: 600 and 120 a minute unless set, positive integers', (t) => {
  t.like(loadConfig({}).search, { rateLimit: 600, adminRateLimit: 120 });
  t.like(loadConfig({ SEARCH_RATE_LIMIT: '5', SEARCH_ADMIN_RATE_LIMIT: '7' }).search, { rateLimit: 5, adminRateLimit: 7 });
  const error = t.throws(() => loadConfig({ SEARCH_RATE_LIMIT: 'lots', SEARCH_ADMIN_RATE_LIMIT: '0' }), { instanceOf: ConfigError });
  t.regex(error.message, /SEARCH_RATE_LIMIT must be an integer/);
  t.regex(error.message, /SEARCH_ADMIN_RATE_LIMIT must be an integer/);
});

test.serial('the key is checked before the request is read: a wrong key is a key error whatever the query', async (t) => {
  const active = (await admin('POST', '/v1/admin/keys', { name: 'active' })).json;
  const disabled = (await admin('POST', '/v1/admin/keys', { name: 'disabled' })).json;
  await admin('PATCH', `/v1/admin/keys/${disabled.id}`, { disabled: true });
  const cases: Array<[ReturnType<typeof call>, number, string]> = [
    [search('sk_wrong', SLOW_QUERY), 401, 'invalid_key'],
    [search('sk_wrong', 'ada@example.org', 'nickname'), 401, 'invalid_key'],
    [call(url('/v1/search'), { headers: { 'x-api-key': 'sk_wrong' } }), 401, 'invalid_key'],
    [call(url('/v1/search'), { method: 'POST', headers: { 'x-api-key': 'sk_wrong', 'content-type': 'application/json' }, body: '{"query":' }), 401, 'invalid_key'],
    [search(disabled.key, SLOW_QUERY), 403, 'key_disabled'],
    // A key that could search: the query is read, and refused before the key is counted.
    [search(active.key, SLOW_QUERY), 400, 'invalid_query'],
  ];
  for (const [pending, status, code] of cases) {
    const r = await pending;
    t.is(r.status, status, code);
    t.is(r.json.error.code, code);
  }
  const listed = (await admin('GET', '/v1/admin/keys')).json.keys.find((k: { id: string }) => k.id === active.id);
  t.is(listed.used, 0);
});

test.serial('a flood of wrong keys is refused by the search group before any key is looked up; /health answers throughout', async (t) => {
  await startInOneWindow();
  const first = await search('sk_wrong', SLOW_QUERY);
  t.is(first.status, 401);
  t.is(first.headers.get('x-ratelimit-limit'), String(SEARCH_LIMIT));
  const remaining = Number(first.headers.get('x-ratelimit-remaining'));

  const flood = Promise.all(Array.from({ length: remaining + 20 }, (_, i) => search(`sk_wrong_${i}`, SLOW_QUERY)));
  const health = await call(url('/health'));
  const answers = await flood;
  t.is(health.status, 200);
  t.is(answers.filter((r) => r.status === 401).length, remaining);
  const limited = answers.filter((r) => r.status === 429);
  t.is(limited.length, 20);
  for (const r of limited) {
    t.like(r.json, { status: 'error', error: { code: 'rate_limited' } });
    t.is(r.headers.get('x-ratelimit-limit'), String(SEARCH_LIMIT));
    t.is(r.headers.get('x-ratelimit-remaining'), '0');
    t.true(Number(r.headers.get('retry-after')) > 0);
  }
  // Health and the list of types are not counted: they answer while searches are refused.
  for (const p of ['/health', '/v1/types']) {
    const r = await call(url(p));
    t.is(r.status, 200, p);
    t.is(r.headers.get('x-ratelimit-limit'), null, p);
  }
  t.is((await search('sk_wrong', SLOW_QUERY)).status, 429);
});

test.serial('the admin API counts in a group of its own', async (t) => {
  await startInOneWindow();
  const first = await admin('GET', '/v1/admin/keys');
  t.is(first.status, 200);
  t.is(first.headers.get('x-ratelimit-limit'), String(ADMIN_LIMIT));
  const remaining = Number(first.headers.get('x-ratelimit-remaining'));
  const answers = await Promise.all(Array.from({ length: remaining + 3 }, () => admin('GET', '/v1/admin/keys')));
  t.is(answers.filter((r) => r.status === 200).length, remaining);
  const limited = answers.filter((r) => r.status === 429);
  t.is(limited.length, 3);
  for (const r of limited) t.is(r.headers.get('x-ratelimit-limit'), String(ADMIN_LIMIT));
});

test('wrong admin tokens from all clients together: past 100 an hour every token is refused, the right one too', async (t) => {
  const own = await startApp({ SERVICES: 'search', SEARCH_ADMIN_TOKEN: ADMIN, DATA_DIR: dir, TRUST_PROXY: 'true', OFFICIAL_ENABLED: 'false', EXTERNAL_ENABLED: 'false', SEARCH_ADMIN_RATE_LIMIT: '1000' });
  t.teardown(() => own.stop());
  const list = (token: string, from: string) => call(`${own.urls.search}/v1/admin/keys`, { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': from } });
  t.is((await list(ADMIN, '198.51.100.1')).status, 200);
  const statuses: number[] = [];
  // One wrong token from each of 110 addresses: no address is near its own limit.
  for (let i = 0; i < 110; i += 10) {
    statuses.push(...(await Promise.all(Array.from({ length: 10 }, (_, j) => list(`guess-${i + j}`, `203.0.113.${i + j + 1}`)))).map((r) => r.status));
  }
  // The 101st is counted and answered as what it is; every check after it is refused.
  t.deepEqual(statuses, [...Array(101).fill(401), ...Array(9).fill(429)]);
  const locked = await list(ADMIN, '198.51.100.2');
  t.is(locked.status, 429);
  t.regex(JSON.stringify(locked.json), /all clients/);
  // Windows are clock hours: the lock lasts until this one ends (under a minute in its last minute).
  const hourEnd = Math.ceil(Date.now() / 3_600_000) * 3_600_000;
  const retryAfter = Number(locked.headers.get('retry-after'));
  t.true(retryAfter >= 1 && Math.abs(retryAfter - (hourEnd - Date.now()) / 1000) <= 2, `Retry-After ${retryAfter}`);
});
