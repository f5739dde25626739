// The search service over HTTP, started as a user starts it, on a generated synthetic data set
// with keys in a file store: types, errors, key states and counting, admin API, CLI, cross pass.
import { spawnSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { parseQuery } from '../api/search/detect.ts';
import { writeSyntheticData } from '../scripts/search-data.ts';
import { until } from './helpers/poll.ts';
import { call, ROOT, startApp, type RunningApp } from './helpers/service.ts';

const ADMIN = 'searchHttp-Ux3Kd8PqZ1mWv6RtB4Ly';
// Two records linked only by a phone number (area code 202 is kept out of generated data):
// e-mail -> Chain Start -> its phone -> Chain End.
const CHAIN = [
  { full_name: 'Chain Start', email: 'chain.start@example.org', phone: '+1 202 555 0100', city: 'Northvale' },
  { full_name: 'Chain End', phone: '+1 (202) 555-0100', telegram: '@chain_end' },
];

let app: RunningApp;
let dataFile: string;
let dataDir: string;
let dir: string;

test.before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-search-'));
  dataFile = path.join(dir, 'people.jsonl');
  dataDir = path.join(dir, 'state');
  await writeSyntheticData(dataFile, 2000, { seed: 11, extra: CHAIN });
  app = await startApp({ SERVICES: 'search', SEARCH_DATA: dataFile, SEARCH_ADMIN_TOKEN: ADMIN, DATA_DIR: dataDir, OFFICIAL_ENABLED: 'false', EXTERNAL_ENABLED: 'false',
    // 50 searches of one key at once test the quota's count, not the bound on running searches.
    SEARCH_KEY_CONCURRENCY: '64' });
});
test.after.always(async () => {
  await app?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const url = (p: string) => `${app.urls.search}${p}`;

function admin(method: string, p: string, body?: unknown, token = ADMIN) {
  return call(url(p), { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
}

async function newKey(body: Record<string, unknown> = {}): Promise<{ id: string; key: string }> {
  const r = await admin('POST', '/v1/admin/keys', { name: 'test', ...body });
  if (r.status !== 201) throw new Error(`key not created: ${r.status} ${r.text}`);
  return r.json;
}

function search(key: string | null, query: string, type?: string) {
  const params = new URLSearchParams({ query, ...(type ? { type } : {}) });
  return call(url(`/v1/search?${params}`), { headers: key ? { 'x-api-key': key } : {} });
}

test('health and types answer without a key; every documented example parses as its type', async (t) => {
  const health = await call(url('/health'));
  t.is(health.status, 200);
  t.like(health.json, { status: 'ok', version: '1.0.0', key_store: 'file', admin_api: 'on', index: { malformed: 0 } });
  // 2,000 generated + the chain (+1 once the reload test has appended its record).
  t.true(health.json.index.records >= 2002);
  t.truthy(health.headers.get('x-request-id'));
  t.regex(health.headers.get('x-powered-by') ?? '', /search/);
  // Health and types count in the generous site group (SITE_RATE_LIMIT, 600), apart from searches.
  t.is(health.headers.get('x-ratelimit-limit'), '600');

  const types = await call(url('/v1/types'));
  t.is(types.status, 200);
  const names = types.json.types.map((x: { type: string }) => x.type);
  t.deepEqual(names, ['auto', 'phone', 'email', 'messenger_user', 'network_user', 'social_id', 'fio', 'ip', 'domain', 'mac', 'email_sha256', 'phone_sha256']);
  for (const info of types.json.types) {
    t.truthy(info.description);
    const parsed = parseQuery(info.example, info.type);
    if (info.type !== 'auto') t.is(parsed.type, info.type, info.example);
  }
});

test('search answers are compact JSON unless pretty=1 asks (the other endpoints indent unless pretty=0)', async (t) => {
  const { key } = await newKey();
  const compact = await search(key, 'chain.start@example.org');
  t.is(compact.status, 200);
  t.false(compact.text.includes('\n'), 'compact by default');
  const indented = await call(url('/v1/search?query=chain.start%40example.org&pretty=1'), { headers: { 'x-api-key': key } });
  t.true(indented.text.startsWith('{\n  "status": "success"'));
  const posted = await call(url('/v1/search?pretty=true'), { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ query: 'chain.start@example.org' }) });
  t.true(posted.text.includes('\n  "query": "chain.start@example.org"'));
  const refused = await search(null, 'chain.start@example.org');
  t.is(refused.status, 401);
  t.false(refused.text.includes('\n'), 'the route\'s errors follow its default');
  t.true((await call(url('/v1/types'))).text.includes('\n  '), '/v1/types still indents by default');
  for (const value of ['2', 'yes']) {
    const bad = await call(url(`/v1/search?query=chain.start%40example.org&pretty=${value}`), { headers: { 'x-api-key': key } });
    t.is(bad.status, 400, `pretty=${value}`);
  }
  const empty = await call(url('/v1/search?query=chain.start%40example.org&pretty='), { headers: { 'x-api-key': key } });
  t.is(empty.status, 200);
  t.false(empty.text.includes('\n'), 'an empty pretty is the default, as the parameter reader takes it');
});

test('errors are JSON {status: "error", error: {code, message}} with the right status', async (t) => {
  const { id, key } = await newKey();
  const cases: Array<[Promise<Awaited<ReturnType<typeof call>>>, number, string]> = [
    [search(null, 'chain.start@example.org'), 401, 'missing_key'],
    [search('sk_not_a_key', 'chain.start@example.org'), 401, 'invalid_key'],
    [search(key, 'x', 'nickname'), 400, 'invalid_type'],
    [search(key, '   '), 400, 'invalid_query'],
    [search(key, 'not-an-address', 'ip'), 400, 'invalid_query'],
    [call(url('/v1/search'), { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: '{"query":' }), 400, 'bad_request'],
    [call(url('/v1/nothing')), 404, 'route_not_found'],
  ];
  for (const [pending, status, code] of cases) {
    const r = await pending;
    t.is(r.status, status, code);
    t.is(r.json.status, 'error', code);
    t.is(r.json.error.code, code);
    t.is(typeof r.json.error.message, 'string');
  }
  // Refused requests did not use the key.
  t.is((await admin('GET', '/v1/admin/keys')).json.keys.find((k: { id: string }) => k.id === id).used, 0);
});

test('disabled, expired and exhausted keys are 403 naming the state; re-enabling works', async (t) => {
  const once = await newKey({ request_limit: 1 });
  const found = await search(once.key, 'chain.start@example.org');
  t.is(found.status, 200);
  t.is(found.headers.get('x-ratelimit-limit'), '600');
  const exhausted = await search(once.key, 'chain.start@example.org');
  t.is(exhausted.status, 403);
  t.is(exhausted.json.error.code, 'key_exhausted');

  const past = await newKey({ expires_at: '2020-01-01T00:00:00Z' });
  const expired = await search(past.key, 'chain.start@example.org');
  t.is(expired.status, 403);
  t.is(expired.json.error.code, 'key_expired');

  const toggled = await newKey({ plan: 'premium', duration: 'lifetime' });
  t.like((await admin('PATCH', `/v1/admin/keys/${toggled.id}`, { disabled: true })).json, { disabled: true, state: 'disabled' });
  const disabled = await search(toggled.key, 'chain.start@example.org');
  t.is(disabled.status, 403);
  t.is(disabled.json.error.code, 'key_disabled');
  await admin('PATCH', `/v1/admin/keys/${toggled.id}`, { disabled: false });
  t.is((await search(toggled.key, 'chain.start@example.org')).status, 200);
});

test('50 parallel searches on a key limited to 10: exactly 10 succeed (file store)', async (t) => {
  const { id, key } = await newKey({ request_limit: 10 });
  const statuses = await Promise.all(Array.from({ length: 50 }, () => search(key, '+1 202 555 0100').then((r) => r.status)));
  t.is(statuses.filter((s) => s === 200).length, 10);
  t.is(statuses.filter((s) => s === 403).length, 40);
  const listed = (await admin('GET', '/v1/admin/keys')).json.keys.find((k: { id: string }) => k.id === id);
  t.like(listed, { used: 10, request_limit: 10, state: 'exhausted' });
});

test('admin API: the key is shown once, listed without secrets, updated and deleted', async (t) => {
  const created = await admin('POST', '/v1/admin/keys', { name: 'ops', plan: 'premium', duration: '2m', request_limit: 500 });
  t.is(created.status, 201);
  t.like(created.json, { status: 'success', name: 'ops', plan: 'premium', request_limit: 500, used: 0, disabled: false, state: 'active' });
  t.regex(created.json.key, /^sk_[A-Za-z0-9_-]{43}$/);
  const months = (Date.parse(created.json.expires_at) - Date.now()) / (30 * 86_400_000);
  t.true(months > 1.9 && months < 2.1, String(months));

  const list = await admin('GET', '/v1/admin/keys');
  const listed = list.json.keys.find((k: { id: string }) => k.id === created.json.id);
  t.truthy(listed);
  t.false(list.text.includes(created.json.key));
  t.false('hash' in listed);

  const patched = await admin('PATCH', `/v1/admin/keys/${created.json.id}`, { request_limit: null, expires_at: null });
  t.like(patched.json, { request_limit: null, expires_at: null, state: 'active' });
  t.is((await admin('PATCH', `/v1/admin/keys/${created.json.id}`, { used: 0 })).status, 400);
  t.is((await admin('PATCH', '/v1/admin/keys/key_missing', { disabled: true })).status, 404);

  t.is((await admin('DELETE', `/v1/admin/keys/${created.json.id}`)).status, 200);
  t.is((await admin('DELETE', `/v1/admin/keys/${created.json.id}`)).status, 404);
  const gone = await search(created.json.key, 'chain.start@example.org');
  t.is(gone.status, 401);
  t.is(gone.json.error.code, 'invalid_key');

  const wrong = await admin('GET', '/v1/admin/keys', undefined, 'not-the-token');
  t.is(wrong.status, 401);
  t.is(wrong.json.error.code, 'unauthorized');
  t.is((await call(url('/v1/admin/keys'))).status, 401);
  t.is((await admin('POST', '/v1/admin/keys', { plan: 'gold' })).status, 400);
});

test('the CLI works on the running service\'s key store', async (t) => {
  const cli = (...args: string[]) => spawnSync(process.execPath, ['scripts/search-keys.ts', ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir }, encoding: 'utf8' });
  const created = cli('create', '--name', 'from-cli', '--plan', 'premium', '--duration', 'lifetime');
  t.is(created.status, 0, created.stderr);
  const { id, key } = JSON.parse(created.stdout);
  t.is((await search(key, 'chain.start@example.org')).status, 200);

  t.is(cli('update', id, '--disable').status, 0);
  t.is((await search(key, 'chain.start@example.org')).json.error.code, 'key_disabled');
  // The service adds uses of keys without a request limit to the file within a second.
  const listed = await until('the use written', async () => JSON.parse(cli('list', '--json').stdout).find((k: { id: string }) => k.id === id), (k) => k.used === 1);
  t.like(listed, { used: 1, disabled: true, state: 'disabled' });
  t.is(cli('delete', id).status, 0);
  t.is((await search(key, 'chain.start@example.org')).status, 401);
  t.is(cli('update', id, '--enable').status, 1);
  t.is(cli('create', '--plan', 'premium').status, 64);
});

test('the cross pass finds a record two hops away, never re-searching the query', async (t) => {
  const { key } = await newKey();
  const r = await search(key, 'Chain.Start@example.org');
  t.is(r.status, 200);
  const result = r.json;
  t.like(result, { status: 'success', timed_out: false, query: 'chain.start@example.org', search_type: 'email' });
  const refs = (records: Array<{ source: string; fields: Record<string, unknown> }>) => records.filter((x) => x.source === 'local_index').map((x) => x.fields.full_name);
  t.deepEqual(refs(result.results), ['Chain Start']);
  t.is(result.count, result.results.length);
  t.deepEqual(result.entities_found.phone, ['+12025550100']);
  t.is(result.entities_found.email, undefined, 'the query is not an entity');

  const cross = result.cross_results['phone:+12025550100'];
  t.deepEqual(refs(cross.results), ['Chain End'], 'second hop found, first hop not repeated');
  t.deepEqual(Object.keys(cross.data).sort(), ['local_index', 'phone_analyser'], 'a cross pass lists only the sources that answer its type');
  t.is(result.cross_results['email:chain.start@example.org'], undefined);
  t.is(result.cross_results['messenger_user:@chain_end'], undefined, 'depth 1: values found in the cross pass are not searched');
  t.is(result.parsed_count, result.count + Object.values(result.cross_results).reduce((n: number, c: any) => n + c.count, 0));

  t.like(result.data, {
    local_index: { outcome: 'completed', records: 1 },
    email_analyser: { outcome: 'completed' },
    players: { outcome: 'skipped' },
    ip_analyser: { outcome: 'skipped', reason: 'does not answer email' },
  });
  // A row is in the answer once per pass that returns it: no raw copy under `data`.
  t.false('raw' in result.data.local_index);
  t.false('raw' in result.data.email_analyser);
  t.like(result.smart_sections.contacts.phone[0], { value: '+12025550100', records: 2 });
  t.deepEqual(result.smart_sections.accounts.messenger_user, [{ value: '@chain_end', records: 1, sources: [{ name: 'people', date: null }] }]);
  t.like(result.smart_sections.analysis[0], { source: 'email_analyser', facts: { domain: 'example.org', free_mail: false } });
  t.deepEqual(result.aggregated.city, ['Northvale']);

  // POST gives the same search.
  const posted = await call(url('/v1/search'), { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ query: 'chain.start@example.org', type: 'email' }) });
  t.deepEqual(Object.keys(posted.json.cross_results), Object.keys(result.cross_results));

  // The audit line has the key, type and a keyed hash of the query (HMAC under the secret made
  // at start and kept in DATA_DIR); the query itself is never logged.
  const audit = app.logs.find((l) => l.msg === 'search audit' && l.type === 'email');
  t.like(audit, { type: 'email', count: result.count });
  const secret = (await fs.readFile(path.join(dataDir, 'search-audit-secret'), 'utf8')).trim();
  t.is(audit?.query_hmac, createHmac('sha256', secret).update('chain.start@example.org').digest('hex'));
  t.false(app.rawLog.some((line) => line.includes(createHash('sha256').update('chain.start@example.org').digest('hex'))), 'no plain hash');
  t.false(app.rawLog.some((line) => line.toLowerCase().includes('chain.start@example.org')));
});

test('the index follows changes to SEARCH_DATA', async (t) => {
  const { key } = await newKey();
  const email = 'late.arrival@example.net';
  t.is((await search(key, email)).json.data.local_index.records, 0);
  await fs.appendFile(dataFile, `${JSON.stringify({ full_name: 'Late Arrival', email })}\n`);
  const deadline = Date.now() + 10_000;
  let found = 0;
  while (Date.now() < deadline && found === 0) {
    found = (await search(key, email)).json.data.local_index.records;
    if (!found) await new Promise((r) => setTimeout(r, 100));
  }
  t.is(found, 1);
});

test('a phone number without a country code says which region it was read in', async (t) => {
  const { key } = await newKey();
  const national = await search(key, '(202) 555-0100');
  t.like(national.json, { search_type: 'phone', query: '+12025550100', assumed_region: 'US' });
  t.deepEqual(national.json.results.filter((x: { source: string }) => x.source === 'local_index').map((x: { fields: { full_name: string } }) => x.fields.full_name).sort(), ['Chain End', 'Chain Start']);
  const international = await search(key, '+1 202 555 0100');
  t.is(international.json.assumed_region, undefined);
  t.like((await call(url('/health'))).json, { default_region: 'US', audit_secret: 'file' });
});

test('the front page says what the service is, how to get a key and where the docs are; JSON clients get the envelope', async (t) => {
  const r = await call(url('/'), { headers: { accept: 'text/html' } });
  t.is(r.status, 200);
  t.regex(r.headers.get('content-type') ?? '', /text\/html/);
  t.regex(r.text, /<h1>Skinfarm search<\/h1>/);
  t.true(r.text.includes('npm run search-keys -- create'));
  t.true(r.text.includes('X-API-Key'));
  t.regex(r.text, /href="http:\/\/localhost:\d+\/docs"/);
  t.true(r.text.includes(`${app.urls.search}/v1/search?query=`), 'examples use the address the page was asked on');
  const api = await call(url('/'), { headers: { accept: 'application/json' } });
  t.is(api.status, 404);
  t.is(api.json.error.code, 'route_not_found');
});
