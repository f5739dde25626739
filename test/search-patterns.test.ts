// Query patterns and hashed queries on both backends: `*@domain`, a `prefix*` on user names,
// messenger names and full names, and the SHA-256 of an e-mail address or a phone number. The
// in-memory index and PostgreSQL answer from the same files and must give the same rows, pages and
// totals; bad patterns are 400 naming the query.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { parseQuery } from '../api/search/detect.ts';
import { LocalIndex } from '../api/search/index/local-index.ts';
import { PostgresSource } from '../api/search/sources/postgres.ts';
import type { SourceAnswer } from '../api/search/sources/source.ts';
import type { TypedValue } from '../api/search/types.ts';
import { silentLogger } from '../shared/log.ts';
import { writeSyntheticData } from '../scripts/search-data.ts';
import { createDatabase, runImport, type TestDatabase } from './helpers/postgres.ts';
import { createSearchKey } from './helpers/search-keys.ts';
import { call, startApp, type RunningApp } from './helpers/service.ts';

// Planted rows (generated people use example.org/.net and handles like "baceki_lomo12").
const PLANTED = [
  { id: 'p1', email: 'one@example.com', username: 'zorblax_one', full_name: 'Zorbla Quent' },
  { id: 'p2', email: 'two@example.com', username: 'zorblax_two', telegram: '@zorblax_tg', full_name: 'ZORBLA QUENTIN' },
  { id: 'p3', email: 'three@sub.example.com', username: 'zorbla' },
  { id: 'p4', email: 'four@example.com.au', username: 'zor_other', full_name: 'Zorb Quent' },
  { id: 'p5', emails: ['five@example.net', 'FIVE@Example.Com'], phone: '+1 202 555 0177' },
  { id: 'p6', email: 'six@notexample.com', username: 'xzorblax' },
];
const SECOND = [
  { id: 's1', email: 'seven@example.com', username: 'zorblax_three', full_name: 'Zorbla Quenton' },
];

let dir: string;
let db: TestDatabase;
let memory: LocalIndex;
let postgres: PostgresSource;
let app: RunningApp;
let key: string;

test.before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-search-patterns-'));
  const data = path.join(dir, 'data');
  await writeSyntheticData(path.join(data, 'a.jsonl'), 300, { seed: 5, extra: PLANTED });
  await writeSyntheticData(path.join(data, 'b.jsonl'), 0, { extra: SECOND });
  db = await createDatabase();
  const imported = await runImport(db.url, data);
  if (imported.code !== 0) throw new Error(imported.stderr);
  memory = await LocalIndex.build(data, { region: 'US' });
  postgres = new PostgresSource(db.url, { region: 'US', log: silentLogger, statementTimeoutMs: 4000 });
  await postgres.open();
  const dataDir = path.join(dir, 'state');
  app = await startApp({ SERVICES: 'search', SEARCH_DATA: data, DATA_DIR: dataDir, OFFICIAL_ENABLED: 'false', EXTERNAL_ENABLED: 'false' });
  key = createSearchKey(dataDir, 'patterns');
});

test.after.always(async () => {
  await postgres?.close();
  await app?.stop();
  await db?.drop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

interface Page { ids: unknown[]; refs: string[]; total: number | undefined; capped: boolean }

async function both(query: TypedValue, limit = 50, offset = 0): Promise<[Page, Page]> {
  const request = { signal: new AbortController().signal, limit, offset };
  const fromMemory = memory.find(query, limit, offset);
  const mem: SourceAnswer = { records: fromMemory.hits.map((h) => ({ source: 'local_index', kind: 'record', ref: h.ref, fields: h.record, entities: h.entities })), total: fromMemory.total, totalCapped: fromMemory.totalCapped };
  const pg = await postgres.search(query, request);
  const page = (a: SourceAnswer): Page => ({ ids: a.records.map((r) => r.fields.id), refs: a.records.map((r) => r.ref), total: a.total, capped: a.totalCapped === true });
  return [page(mem), page(pg)];
}

test('*@domain finds every address at the domain, not its subdomains or look-alikes, the same in both backends', async (t) => {
  const query = parseQuery('*@Example.Com', 'email');
  t.deepEqual(query, { type: 'email', value: 'example.com', match: 'domain' });
  t.deepEqual(parseQuery('*@example.com', 'auto'), query);
  const [mem, pg] = await both(query);
  t.deepEqual(mem.ids, ['p1', 'p2', 'p5', 's1']);
  t.deepEqual(mem.refs, ['a.jsonl:301', 'a.jsonl:302', 'a.jsonl:305', 'b.jsonl:1']);
  t.deepEqual(pg, mem);
  t.is(mem.total, 4);
});

test('a domain pattern pages by limit and offset in file and line order', async (t) => {
  const query = parseQuery('*@example.com', 'email');
  const [first, pgFirst] = await both(query, 2, 0);
  const [second, pgSecond] = await both(query, 2, 2);
  t.deepEqual(first.ids, ['p1', 'p2']);
  t.deepEqual(second.ids, ['p5', 's1']);
  t.deepEqual([pgFirst, pgSecond], [first, second]);
  t.is(second.total, 4);
});

test('a prefix finds exactly the user names starting with it, across files, in pages', async (t) => {
  const query = parseQuery('Zorblax*', 'network_user');
  t.deepEqual(query, { type: 'network_user', value: 'zorblax', match: 'prefix' });
  const [all, pgAll] = await both(query);
  t.deepEqual(all.ids, ['p1', 'p2', 's1']);
  t.deepEqual(pgAll, all);
  t.is(all.total, 3);
  const [page, pgPage] = await both(query, 1, 1);
  t.deepEqual(page.ids, ['p2']);
  t.is(page.total, 3);
  t.deepEqual(pgPage, page);
  const [shorter, pgShorter] = await both(parseQuery('zor*', 'network_user'));
  t.deepEqual(shorter.ids, ['p1', 'p2', 'p3', 'p4', 's1']);
  t.deepEqual(pgShorter, shorter);
});

test('a name prefix matches whatever the case; a messenger prefix takes its @ or not', async (t) => {
  const [names, pgNames] = await both(parseQuery('zorbla quent*', 'fio'));
  t.deepEqual(names.ids, ['p1', 'p2', 's1']);
  t.deepEqual(pgNames, names);
  const [tg, pgTg] = await both(parseQuery('@zorb*', 'messenger_user'));
  t.deepEqual(tg.ids, ['p2']);
  t.deepEqual(pgTg, tg);
  t.deepEqual(parseQuery('ZORB*', 'messenger_user'), { type: 'messenger_user', value: '@zorb', match: 'prefix' });
  const [none, pgNone] = await both(parseQuery('qqqzzz*', 'network_user'));
  t.deepEqual(none.ids, []);
  t.deepEqual(pgNone, none);
});

test('hashed e-mail and phone queries find the same rows as the plain values', async (t) => {
  const sha = (text: string) => createHash('sha256').update(text).digest('hex');
  for (const [plain, hashed] of [
    [parseQuery('FIVE@example.com', 'email'), parseQuery(sha('five@example.com').toUpperCase(), 'email_sha256')],
    [parseQuery('+1 202 555 0177', 'phone'), parseQuery(sha('+12025550177'), 'phone_sha256')],
  ] as const) {
    t.regex(hashed.value, /^[0-9a-f]{64}$/);
    const [mem, pg] = await both(plain);
    const [hashedMem, hashedPg] = await both(hashed);
    t.deepEqual(mem.ids, ['p5']);
    t.deepEqual(hashedMem, mem);
    t.deepEqual(hashedPg, pg);
  }
  // A digest is a lookup key, never an entity of the row.
  const [hit] = memory.find(parseQuery(sha('one@example.com'), 'email_sha256'), 5).hits;
  t.false(hit.entities.some((e) => e.type === 'email_sha256' || e.type === 'phone_sha256'));
});

test('bad patterns are refused: 400 invalid_query naming the query', (t) => {
  const refusals: Array<[string, string]> = [
    ['*', 'network_user'], ['*', 'auto'], ['a*', 'network_user'], ['ab*', 'fio'], ['*abc', 'network_user'], ['a*b', 'network_user'],
    ['**', 'email'], ['*@', 'email'], ['*@x', 'email'], ['abc**', 'network_user'], ['abc*', 'phone'], ['abc*', 'auto'], ['*@example.org', 'domain'],
    ['ab c*', 'network_user'], ['0123*', 'email_sha256'], [`${'a'.repeat(10_000)}*`, 'network_user'],
  ];
  for (const [query, type] of refusals) {
    const error = t.throws(() => parseQuery(query, type), undefined, `${query} (${type})`) as Error & { code?: string; detail?: string };
    t.is(error.code, 'invalid_query', `${query} (${type})`);
    t.regex(error.detail ?? '', /^query/, `${query} (${type})`);
  }
});

test('over HTTP: a domain pattern searches; a bad pattern is 400 naming the query', async (t) => {
  const search = (query: string, type: string) => call(`${app.urls.search}/v1/search?${new URLSearchParams({ query, type })}`, { headers: { 'x-api-key': key } });
  const found = await search('*@example.com', 'email');
  t.is(found.status, 200, found.text);
  t.is(found.json.search_type, 'email');
  t.deepEqual(found.json.results.map((r: { fields: { id: string } }) => r.fields.id), ['p1', 'p2', 'p5', 's1']);
  for (const [query, type] of [['a*', 'network_user'], ['*', 'auto'], [`${'x'.repeat(10_000)}*`, 'fio'], ['*abc', 'email']]) {
    const refused = await search(query, type);
    t.is(refused.status, 400, query.slice(0, 20));
    t.is(refused.json.error.code, 'invalid_query');
    t.regex(refused.json.error.message, /query/);
  }
});
