// POST /v1/search/bulk on both backends: one answer per query in order, cross=false, each query
// counted as a search, bad bodies refused whole (naming the field) before the key is counted; and
// with the game upstream hanging, one deadline for the whole request.
import { spawnSync } from 'node:child_process';
import test from 'ava';
import { startFakeUpstream, type FakeUpstream } from '../scripts/fake-upstream/server.ts';
import { call, ROOT, type RunningApp } from './helpers/service.ts';
import { createSearchKey } from './helpers/search-keys.ts';
import { SHARED_EMAIL, sharedName, startBackends, type Backends, comparable } from './helpers/search-backends.ts';

const TIMEOUT_MS = 1500;
const SOURCE_TIMEOUT_MS = 1000;
let fake: FakeUpstream;
let b: Backends;
let basic: string;
let premium: string;

test.before(async () => {
  fake = await startFakeUpstream();
  b = await startBackends('search-bulk', 60, {
    SEARCH_TIMEOUT_MS: String(TIMEOUT_MS), SEARCH_SOURCE_TIMEOUT_MS: String(SOURCE_TIMEOUT_MS), UPSTREAM_TIMEOUT_MS: '60000', UPSTREAM_RETRIES: '0',
    ...fake.env, OFFICIAL_ENABLED: 'true', EXTERNAL_ENABLED: 'true',
  }, Array.from({ length: 12 }, (_, i) => ({ full_name: `Game Player${i}`, username: `GamePlayer${i}`, email: `game.player${i}@example.org` })));
  // Request limits: uses are then counted under the lock, at once (docs/search.md, Keys).
  basic = createSearchKey(b.dataDir, 'bulk-basic', '--limit', '1000');
  premium = createSearchKey(b.dataDir, 'bulk-premium', '--plan', 'premium', '--limit', '1000');
});
test.after.always(async () => {
  await b?.stop();
  await fake?.close();
});

const bulk = (app: RunningApp, body: unknown, key = basic) =>
  call(`${app.urls.search}/v1/search/bulk`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
const search = (app: RunningApp, query: string, type: string) =>
  call(`${app.urls.search}/v1/search?${new URLSearchParams({ query, type })}`, { headers: { 'x-api-key': basic } });

/** The key's `used`, as the operator's CLI lists it. */
function used(name: string): number {
  const listed = spawnSync(process.execPath, ['scripts/search-keys.ts', 'list', '--json'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', DATA_DIR: b.dataDir }, encoding: 'utf8' });
  return (JSON.parse(listed.stdout) as Array<{ name: string; used: number }>).find((k) => k.name === name)!.used;
}


const QUERIES = [
  { query: SHARED_EMAIL, type: 'email' },
  { query: '192.0.2.1', type: 'ip' },
  { query: sharedName(3), type: 'auto' },
  { query: 'nobody.at.all@example.net', type: 'email' },
];

test.serial('one answer per query in order, each the search\'s own answer; the same from both backends', async (t) => {
  const answers = [];
  for (const [name, app] of b.both) {
    const r = await bulk(app, { queries: QUERIES, limit: 20 });
    t.is(r.status, 200, r.text);
    t.like(r.json, { status: 'success', timed_out: false, count: 4 });
    t.deepEqual(r.json.results.map((x: { query: string }) => x.query), [SHARED_EMAIL, '192.0.2.1', sharedName(3), 'nobody.at.all@example.net'], name);
    t.like(r.json.results[0].page, { offset: 0, limit: 20, returned: 20, total: 60, has_more: true });
    t.like(r.json.results[3].page, { returned: 0, total: 0, has_more: false });
    // Each is what a search of its own answers.
    const single = await search(app, QUERIES[2].query, 'auto');
    t.deepEqual(comparable(r.json.results[2]), comparable({ ...single.json, page: { ...single.json.page, limit: 20 } }), name);
    answers.push(r.json);
  }
  t.deepEqual(comparable(answers[1]), comparable(answers[0]));
});

test.serial('cross=false runs no cross pass', async (t) => {
  for (const [name, app] of b.both) {
    const r = await bulk(app, { queries: QUERIES.slice(0, 1), cross: false });
    t.is(r.status, 200);
    t.deepEqual(r.json.results[0].cross_results, {}, name);
    t.is(r.json.results[0].parsed_count, r.json.results[0].count);
    t.true(r.json.results[0].entities_found.fio.length > 0, 'entities are still found');
  }
});

test.serial('each query counts as a search against the key; a refused bulk counts nothing', async (t) => {
  const before = used('bulk-basic');
  t.is((await bulk(b.memory, { queries: QUERIES })).status, 200);
  t.is(used('bulk-basic'), before + 4);
  const refused = await bulk(b.memory, { queries: [...QUERIES, { query: '', type: 'email' }] });
  t.is(refused.status, 400);
  t.is(used('bulk-basic'), before + 4);
});

test.serial('bad bodies are refused whole with 400 naming the field', async (t) => {
  const q = QUERIES[0];
  const cases: Array<[string, unknown, string, string, string?]> = [
    ['101 queries', { queries: Array(101).fill(q) }, 'bad_request', 'queries', premium],
    ['more than the basic plan\'s 10', { queries: Array(11).fill(q) }, 'bad_request', 'queries'],
    ['an empty list', { queries: [] }, 'bad_request', 'queries'],
    ['no list', { query: SHARED_EMAIL }, 'bad_request', 'queries'],
    ['queries as an object', { queries: { 0: q } }, 'bad_request', 'queries'],
    ['a body that is an array', [q], 'bad_request', 'body'],
    ['an empty query at 7', { queries: [...Array(7).fill(q), { query: '', type: 'email' }] }, 'invalid_query', 'queries[7].query'],
    ['a query that is not its type', { queries: [q, { query: 'not-an-ip', type: 'ip' }] }, 'invalid_query', 'queries[1].query'],
    ['an unknown type', { queries: [q, { query: 'x', type: 'shoe_size' }] }, 'invalid_type', 'queries[1].type'],
    ['a query that is a number', { queries: [{ query: 5, type: 'auto' }] }, 'invalid_query', 'queries[0].query'],
    ['an entry that is a string', { queries: [SHARED_EMAIL] }, 'bad_request', 'queries[0]'],
    ['cross as a string', { queries: [q], cross: 'no' }, 'bad_request', 'cross'],
    ['limit 0', { queries: [q], limit: 0 }, 'bad_request', 'limit'],
    ['limit past the basic plan', { queries: [q], limit: 101 }, 'bad_request', 'limit'],
  ];
  for (const [what, body, code, field, key] of cases) {
    const r = await bulk(b.memory, body, key);
    t.is(r.status, 400, what);
    t.is(r.json.error.code, code, what);
    t.true(r.json.error.message.includes(field), `${what}: ${r.json.error.message}`);
  }
  // The premium plan's 100 are allowed.
  const hundred = await bulk(b.memory, { queries: Array(100).fill({ query: '192.0.2.7', type: 'ip' }), cross: false }, premium);
  t.is(hundred.status, 200);
  t.is(hundred.json.count, 100);
});

test.serial('with a hanging source, one deadline ends the whole request: queries not started by then are timed out and empty', async (t) => {
  fake.control({ hang: { official: true, external: true } });
  t.teardown(() => fake.control({ hang: { official: false, external: false } }));
  // Each game name asks the hanging upstream: four run at once until the deadline, the rest never start.
  const queries = Array.from({ length: 10 }, (_, i) => ({ query: `GamePlayer${i}`, type: 'network_user' }));
  const started = performance.now();
  const r = await bulk(b.memory, { queries }, premium);
  const took = performance.now() - started;
  t.is(r.status, 200);
  t.true(r.json.timed_out);
  t.true(took < TIMEOUT_MS + 1500, `answered in ${Math.round(took)} ms`);
  t.is(r.json.results.length, 10);
  for (const answer of r.json.results) t.true(answer.timed_out);
  // The first ones ran: the local index answered, the players timed out at their own limit.
  t.like(r.json.results[0].data.players, { outcome: 'timed_out', reason: `over its time limit (${SOURCE_TIMEOUT_MS} ms)` });
  t.like(r.json.results[0].data.local_index, { outcome: 'completed', records: 1 });
  // The last never started before the deadline: no results.
  const last = r.json.results[9];
  t.like(last, { count: 0, parsed_count: 0, results: [] });
  t.like(last.data.local_index, { outcome: 'timed_out', reason: 'the deadline passed before it started' });
});
