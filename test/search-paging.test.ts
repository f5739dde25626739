// Paging through the main pass's rows (limit/offset and the signed cursor) on both backends: 10,050
// rows holding one e-mail come back each exactly once, in the same order from memory and
// PostgreSQL; totals, has_more, later pages, bad values, and a cursor over changed data.
import fs from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { call, type RunningApp } from './helpers/service.ts';
import { createSearchKey } from './helpers/search-keys.ts';
import { SHARED_EMAIL, sharedName, startBackends, type Backends } from './helpers/search-backends.ts';
import { until } from './helpers/poll.ts';

const SHARED = 10_050;
let b: Backends;
/** Basic plan (page_rows 100), with a rate that 200 pages a minute stay under. */
let key: string;

test.before(async () => {
  b = await startBackends('search-paging', SHARED);
  key = createSearchKey(b.dataDir, 'paging', '--searches-per-minute', '100000');
});
test.after.always(async () => {
  await b?.stop();
});

type Answer = Awaited<ReturnType<typeof call>>;
const get = (app: RunningApp, params: Record<string, string>) =>
  call(`${app.urls.search}/v1/search?${new URLSearchParams(params)}`, { headers: { 'x-api-key': key } });
const post = (app: RunningApp, body: unknown) =>
  call(`${app.urls.search}/v1/search`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
const rows = (answer: Answer) => answer.json.results.filter((r: { source: string }) => r.source === 'local_index') as Array<{ ref: string; fields: { row: number } }>;
const shared = { query: SHARED_EMAIL, type: 'email' };

/** Every page by cursor, from the first; the rows' refs and the pages. */
async function pageThrough(app: RunningApp, limit: number) {
  const refs: string[] = [];
  const pages: Array<Record<string, unknown>> = [];
  let answer = await get(app, { ...shared, limit: String(limit) });
  for (;;) {
    if (answer.status !== 200) throw new Error(`${answer.status} ${answer.text}`);
    refs.push(...rows(answer).map((r) => r.ref));
    pages.push(answer.json.page);
    const cursor = answer.json.page.next_cursor;
    if (!cursor) break;
    answer = await get(app, { ...shared, cursor });
  }
  return { refs, pages };
}

test.serial('paging over 10,050 rows with the cursor returns each row exactly once, in the same order on both backends', async (t) => {
  const [memory, postgres] = await Promise.all([pageThrough(b.memory, 100), pageThrough(b.postgres, 100)]);
  for (const [name, run] of [['memory', memory], ['postgres', postgres]] as const) {
    t.is(run.refs.length, SHARED, name);
    t.is(new Set(run.refs).size, SHARED, `${name}: no row twice`);
    t.is(run.pages.length, 101, name);
    t.like(run.pages[0], { offset: 0, limit: 100, returned: 100, total: 1000, total_capped: true, has_more: true, data_changed: false });
    t.like(run.pages[100], { offset: 10_000, limit: 100, returned: 50, has_more: false, next_cursor: null, data_changed: false });
    t.true(run.pages.every((p) => p.data_changed === false));
  }
  // File then line order: the shared rows follow the 200 generated ones.
  t.deepEqual(postgres.refs, memory.refs);
  t.deepEqual(memory.refs.slice(0, 2), ['people.jsonl:201', 'people.jsonl:202']);
  t.is(memory.refs.at(-1), `people.jsonl:${200 + SHARED}`);
});

test.serial('offset and limit give the same pages as the cursor; the same answers from both backends', async (t) => {
  for (const [name, app] of b.both) {
    const last = await get(app, { ...shared, offset: '10000', limit: '100' });
    t.is(last.status, 200, name);
    t.deepEqual(rows(last).map((r) => r.fields.row), Array.from({ length: 50 }, (_, i) => 10_000 + i), name);
    t.like(last.json.page, { offset: 10_000, returned: 50, has_more: false, next_cursor: null });
    t.is(last.json.count, 50, 'count is the main pass\'s records on this page');
    const middle = await post(app, { ...shared, offset: 5000, limit: 7 });
    t.deepEqual(rows(middle).map((r) => r.fields.row), [5000, 5001, 5002, 5003, 5004, 5005, 5006], name);
    t.like(middle.json.page, { offset: 5000, limit: 7, returned: 7, has_more: true });
    // Past the end: an empty page, nothing more.
    const past = await get(app, { ...shared, offset: '20000' });
    t.like(past.json.page, { returned: 0, has_more: false, next_cursor: null });
  }
  const [m, p] = await Promise.all(b.both.map(([, app]) => get(app, { ...shared, offset: '300', limit: '20' })));
  const page = (a: Answer) => ({ ...a.json.page, next_cursor: a.json.page.next_cursor !== null });
  t.deepEqual(page(p), page(m));
  t.deepEqual(rows(p), rows(m));
});

test.serial('a value of a few rows: exact total, no more pages; the default page is 50 rows', async (t) => {
  for (const [name, app] of b.both) {
    const one = await get(app, { query: sharedName(7), type: 'fio' });
    t.like(one.json.page, { offset: 0, limit: 50, returned: 1, total: 1, total_capped: false, has_more: false, next_cursor: null, data_changed: false }, name);
    const first = await get(app, shared);
    t.like(first.json.page, { offset: 0, limit: 50, returned: 50, has_more: true }, name);
    // count is the main pass's records: the page's rows and, on the first page, the e-mail's analysis.
    t.is(first.json.count, 51);
  }
});

test.serial('pages after the first ask only local_index, and the cross pass runs over the page\'s own rows', async (t) => {
  for (const [name, app] of b.both) {
    const first = await get(app, { ...shared, limit: '5' });
    t.like(first.json.data.email_analyser, { outcome: 'completed' }, name);
    const second = await get(app, { ...shared, cursor: first.json.page.next_cursor });
    t.like(second.json.page, { offset: 5, limit: 5, returned: 5 });
    t.like(second.json.data.email_analyser, { outcome: 'skipped', reason: 'pages after the first ask only the sources that page' }, name);
    t.deepEqual(rows(second).map((r) => r.fields.row), [5, 6, 7, 8, 9]);
    t.deepEqual(second.json.entities_found.fio?.sort(), [5, 6, 7, 8, 9].map(sharedName));
    t.true(Object.keys(second.json.cross_results).length > 0);
  }
});

test.serial('bad paging values are refused with 400 naming the field', async (t) => {
  const app = b.memory;
  const first = await get(app, { ...shared, limit: '5' });
  const cursor = first.json.page.next_cursor as string;
  const [payload, signature] = cursor.split('.');
  const edited = `${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), o: 0 })).toString('base64url')}.${signature}`;
  const cases: Array<[string, Promise<Answer>, string]> = [
    ['limit=0', get(app, { ...shared, limit: '0' }), 'limit'],
    ['limit=101 on the basic plan', get(app, { ...shared, limit: '101' }), 'limit'],
    ['limit=5000', get(app, { ...shared, limit: '5000' }), 'limit'],
    ['offset=-1', get(app, { ...shared, offset: '-1' }), 'offset'],
    ['offset=abc', get(app, { ...shared, offset: 'abc' }), 'offset'],
    ['offset past the furthest', get(app, { ...shared, offset: '100001' }), 'offset'],
    ['repeated limit', call(`${app.urls.search}/v1/search?query=${SHARED_EMAIL}&type=email&limit=1&limit=2`, { headers: { 'x-api-key': key } }), 'limit'],
    ['garbage cursor', get(app, { ...shared, cursor: 'garbage' }), 'cursor'],
    ['an edited cursor', get(app, { ...shared, cursor: edited }), 'cursor'],
    ['a cursor of another query', get(app, { query: sharedName(7), type: 'fio', cursor }), 'cursor'],
    ['cursor and offset', get(app, { ...shared, cursor, offset: '5' }), 'cursor'],
    ['a 10 KB cursor', get(app, { ...shared, cursor: 'x'.repeat(10_000) }), 'cursor'],
    ['limit as a string in a body', post(app, { ...shared, limit: '5' }), 'limit'],
    ['offset as an array in a body', post(app, { ...shared, offset: [1] }), 'offset'],
    ['a cursor as a number in a body', post(app, { ...shared, cursor: 5 }), 'cursor'],
    ['format=xml', get(app, { ...shared, format: 'xml' }), 'format'],
  ];
  for (const [what, answer, field] of cases) {
    const r = await answer;
    t.is(r.status, 400, what);
    t.is(r.json.error.code, 'bad_request', what);
    t.true(r.json.error.message.includes(field), `${what}: ${r.json.error.message}`);
  }
  // The cursor's own limit may be replaced, within the plan.
  const wider = await get(app, { ...shared, cursor, limit: '8' });
  t.like(wider.json.page, { offset: 5, limit: 8, returned: 8 });
});

test.serial('a cursor made before a rebuild (memory) or a re-import (PostgreSQL) says data_changed', async (t) => {
  const cursors = await Promise.all(b.both.map(async ([, app]) => (await get(app, { ...shared, limit: '10' })).json.page.next_cursor as string));
  const records = async () => (await call(`${b.memory.urls.search}/health`)).json.index.records as number;
  const before = await records();
  await fs.appendFile(path.join(b.data, 'people.jsonl'), `${JSON.stringify({ full_name: 'Late Comer', email: 'late.comer@example.org' })}\n`);
  await until('the memory index rebuilt', records, (n) => n === before + 1);
  await b.reimport();
  for (const [i, [name, app]] of b.both.entries()) {
    // PostgreSQL hears of the import by a notification: asked until it has.
    const next = await until(`${name} sees the new data`, () => get(app, { ...shared, cursor: cursors[i] }), (r) => r.json.page.data_changed === true);
    t.like(next.json.page, { offset: 10, limit: 10, returned: 10, data_changed: true }, name);
    // The next cursor is made on the new data: no longer flagged.
    const after = await get(app, { ...shared, cursor: next.json.page.next_cursor });
    t.like(after.json.page, { offset: 20, data_changed: false }, name);
  }
});
