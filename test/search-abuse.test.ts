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

const ADMIN = 'searchAbuse-H5nGq2TzX8kMw3YpL7Dc';
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
  // Health and the list of types count in the site group, apart from searches: they answer while searches are refused.
  for (const p of ['/health', '/v1/types']) {
    const r = await call(url(p));
    t.is(r.status, 200, p);
    t.is(r.headers.get('x-ratelimit-limit'), '600', p);
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

test('wrong admin tokens lock out only their address: 101 from one, then the right token from another is 200', async (t) => {
  const own = await startApp({ SERVICES: 'search', SEARCH_ADMIN_TOKEN: ADMIN, DATA_DIR: dir, TRUST_PROXY: 'true', OFFICIAL_ENABLED: 'false', EXTERNAL_ENABLED: 'false', SEARCH_ADMIN_RATE_LIMIT: '1000' });
  t.teardown(() => own.stop());
  const list = (token: string, from: string) => call(`${own.urls.search}/v1/admin/keys`, { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': from } });
  await startInOneWindow();
  const statuses: number[] = [];
  for (let i = 0; i < 101; i += 1) statuses.push((await list(`guess-${i}`, '203.0.113.7')).status);
  // 30 failures a minute per address, then 429 for it.
  t.deepEqual(statuses, [...Array(30).fill(401), ...Array(71).fill(429)]);
  // Past its limit the guesser cannot tell a right token from a wrong one.
  const guesser = await list(ADMIN, '203.0.113.7');
  t.is(guesser.status, 429);
  t.true(Number(guesser.headers.get('retry-after')) <= 60);
  // Nobody else is locked out, and the same happens spread over 110 addresses.
  t.is((await list(ADMIN, '198.51.100.2')).status, 200);
  for (let i = 0; i < 110; i += 10) {
    const answers = await Promise.all(Array.from({ length: 10 }, (_, j) => list(`guess-${i + j}`, `192.0.2.${i + j + 1}`)));
    t.true(answers.every((r) => r.status === 401));
  }
  t.is((await list(ADMIN, '198.51.100.3')).status, 200);
});

test('SEARCH_ADMIN_TOKEN must hold 128 random bits: short, worded, repeated and run tokens are refused', (t) => {
  for (const weak of ['change-me', 'search-abuse-admin-token', 'correct-horse-battery-staple-42', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', '0123456789abcdef0123456789abcdef', 'abcdefghijklmnopqrstuvwxyzABCDEF', 'f63f9216f3519fae3e04664dd0b7150', 'Ab1Ab1Ab1Ab1Ab1Ab1Ab1Ab1']) {
    const error = t.throws(() => loadConfig({ SEARCH_ADMIN_TOKEN: weak }), { instanceOf: ConfigError }, weak);
    t.regex(error.message, /SEARCH_ADMIN_TOKEN must be a random token of at least 128 bits/, weak);
    t.false(error.message.includes(weak), 'the token is never repeated');
  }
  for (const strong of ['f63f9216f3519fae3e04664dd0b7150a', 'F63F9216F3519FAE3E04664DD0B7150A', 'j4w1nhj63-hWdogSPzUxAb', 'q3Jx/8Rk+Lm2Wv0Zp7Tb5Nc9YdH1', ADMIN]) {
    t.is(loadConfig({ SEARCH_ADMIN_TOKEN: strong }).search.adminToken, strong, strong);
  }
});

test('a weak SEARCH_ADMIN_TOKEN stops the start with 78 and says why in one line', async (t) => {
  const error = await t.throwsAsync(startApp({ SERVICES: 'search', SEARCH_ADMIN_TOKEN: 'admin-token-1', DATA_DIR: dir, OFFICIAL_ENABLED: 'false', EXTERNAL_ENABLED: 'false' }));
  t.regex(error.message, /exited with 78/);
  t.regex(error.message, /SEARCH_ADMIN_TOKEN must be a random token of at least 128 bits: [^\n]*openssl rand -hex 16/);
  t.false(error.message.includes('admin-token-1'));
});
