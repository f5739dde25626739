// What each row comes from, on both backends: a data file's sidecar (`<file>.source.json`) names
// its source and the date of its data; records carry that origin, smart_sections name the sources
// each value was found in, and GET /v1/search/sources lists them with their rows. A missing sidecar
// gives the file's name, a malformed one is a problem in /health (never a failed start), unknown
// members are ignored. No answer holds a server path. A re-import after only a sidecar changed
// updates the facts without reading the rows again.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { parseFacts } from '../api/search/index/source-facts.ts';
import { until } from './helpers/poll.ts';
import { createDatabase, runImport, type TestDatabase } from './helpers/postgres.ts';
import { createSearchKey } from './helpers/search-keys.ts';
import { call, startApp, type RunningApp } from './helpers/service.ts';

const SHARED_EMAIL = 'origin.holder@example.org';
const BREACH_FACTS = { name: 'Example Breach', date: '2019-07', verified: true, fields: ['email', 'phone'], note: 'synthetic test data', shipped_by: 'ignored member' };

let dir: string;
let data: string;
let db: TestDatabase;
let memory: RunningApp;
let postgres: RunningApp;
let both: Array<[string, RunningApp, string]>;

const write = (file: string, rows: unknown[]) => fs.writeFile(path.join(data, file), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');

test.before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-search-sources-'));
  data = path.join(dir, 'data');
  await fs.mkdir(path.join(data, 'forums'), { recursive: true });
  await write('breach.jsonl', [
    { email: SHARED_EMAIL, phone: '+1 202 555 0101', full_name: 'Origin Holder' },
    { email: 'other.person@example.org', username: 'other_person' },
  ]);
  await fs.writeFile(path.join(data, 'breach.jsonl.source.json'), JSON.stringify(BREACH_FACTS));
  await fs.writeFile(path.join(data, 'forums', 'board.csv'), `email,login\n${SHARED_EMAIL},origin_holder\n`);
  await fs.writeFile(path.join(data, 'forums', 'board.csv.source.json'), '{"name": "Board", "date": "last spring"');
  await write('plain.jsonl', [{ email: SHARED_EMAIL, city: 'Northvale' }]);
  db = await createDatabase();
  const imported = await runImport(db.url, data);
  if (imported.code !== 0) throw new Error(imported.stderr);
  const dataDir = path.join(dir, 'state');
  const common = { SERVICES: 'search', DATA_DIR: dataDir, OFFICIAL_ENABLED: 'false', EXTERNAL_ENABLED: 'false' };
  [memory, postgres] = await Promise.all([startApp({ ...common, SEARCH_DATA: data }), startApp({ ...common, SEARCH_DATABASE_URL: db.url })]);
  const key = createSearchKey(dataDir, 'sources');
  both = [['memory', memory, key], ['postgres', postgres, key]];
});

test.after.always(async () => {
  await Promise.allSettled([memory?.stop(), postgres?.stop()]);
  await db?.drop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const sources = (app: RunningApp, key: string) => call(`${app.urls.search}/v1/search/sources`, { headers: { 'x-api-key': key } });
const search = (app: RunningApp, key: string, query: string) => call(`${app.urls.search}/v1/search?${new URLSearchParams({ query })}`, { headers: { 'x-api-key': key } });

/** /v1/search/sources' data sources without the time of the build or import. */
const dataSources = (answer: { json: { data_sources: Array<Record<string, unknown>> } }) => answer.json.data_sources.map(({ updated_at: _at, ...s }) => s);

test.serial('records name their source and its date; smart_sections name the sources of each value; the same in both backends', async (t) => {
  const answers = [];
  for (const [name, app, key] of both) {
    const answer = await search(app, key, SHARED_EMAIL);
    t.is(answer.status, 200, name);
    t.false(answer.text.includes(dir), `${name}: no server path in the answer`);
    const rows = answer.json.results.filter((r: { source: string }) => r.source === 'local_index');
    t.deepEqual(rows.map((r: { ref: string; origin: unknown }) => [r.ref, r.origin]), [
      ['breach.jsonl:1', { name: 'Example Breach', date: '2019-07', verified: true }],
      ['forums/board.csv:2', { name: 'board', date: null, verified: false }],
      ['plain.jsonl:1', { name: 'plain', date: null, verified: false }],
    ], name);
    t.deepEqual(answer.json.smart_sections.contacts.phone, [{ value: '+12025550101', records: 1, sources: [{ name: 'Example Breach', date: '2019-07' }] }], name);
    t.deepEqual(answer.json.smart_sections.accounts.network_user, [{ value: 'origin_holder', records: 1, sources: [{ name: 'board', date: null }] }], name);
    answers.push(rows);
  }
  t.deepEqual(answers[1], answers[0]);
});

test.serial('GET /v1/search/sources lists the data sources with their rows and dates, and the live sources', async (t) => {
  const lists = [];
  for (const [name, app, key] of both) {
    const answer = await sources(app, key);
    t.is(answer.status, 200, name);
    t.false(answer.text.includes(dir), name);
    t.deepEqual(dataSources(answer), [
      { name: 'Example Breach', date: '2019-07', verified: true, fields: ['email', 'phone'], note: 'synthetic test data', rows: 2, files: 1 },
      { name: 'board', date: null, verified: false, fields: [], note: null, rows: 1, files: 1 },
      { name: 'plain', date: null, verified: false, fields: [], note: null, rows: 1, files: 1 },
    ], name);
    t.true(answer.json.data_sources.every((s: { updated_at: string }) => !Number.isNaN(Date.parse(s.updated_at))));
    const live = answer.json.live_sources.map((s: { id: string }) => s.id);
    t.true(live.includes('players') && live.includes('ip_analyser'), `${name}: ${live.join(', ')}`);
    t.false(live.includes('local_index'));
    lists.push(dataSources(answer));
  }
  t.deepEqual(lists[1], lists[0]);
  // A key is needed, as for a search.
  t.is((await call(`${memory.urls.search}/v1/search/sources`)).status, 401);
  t.is((await sources(memory, 'sk_unknown')).status, 401);
});

test.serial('a malformed sidecar is a problem of its file in /health, the file indexed with default facts', async (t) => {
  for (const [name, app] of both) {
    const health = (await call(`${app.urls.search}/health`)).json;
    const board = health.index.data_files.find((f: { file: string }) => f.file === 'forums/board.csv');
    t.like(board, { rows_indexed: 1, last_error: 'board.csv.source.json: not JSON; ignored' }, name);
    t.true(health.index.problems.includes('forums/board.csv: board.csv.source.json: not JSON; ignored'), name);
    t.false(JSON.stringify(health).includes(dir), name);
  }
});

test('sidecar members: wrong ones are reported and ignored, unknown ones ignored, strings capped', (t) => {
  t.deepEqual(parseFacts(JSON.stringify(BREACH_FACTS), 'x/breach.jsonl'), {
    facts: { name: 'Example Breach', date: '2019-07', verified: true, fields: ['email', 'phone'], note: 'synthetic test data' }, wrong: [],
  });
  const { facts, wrong } = parseFacts(JSON.stringify({ name: 'n'.repeat(101), date: '2019-02-30', verified: 'yes', fields: 'email', note: 7 }), 'a/b.csv');
  t.deepEqual(facts, { name: 'b', date: null, verified: false, fields: [], note: null });
  t.is(wrong.length, 5);
  t.deepEqual(parseFacts('[1]', 'c.jsonl').wrong, ['not a JSON object']);
  t.is(parseFacts('{"date": "2020"}', 'c.jsonl').facts.date, '2020');
});

test.serial('a changed sidecar: the index rebuilds, a re-import updates the facts without reading the rows', async (t) => {
  await fs.writeFile(path.join(data, 'breach.jsonl.source.json'), JSON.stringify({ ...BREACH_FACTS, name: 'Example Breach 2', date: '2020-01-02' }));
  const run = await runImport(db.url, data);
  t.is(run.code, 0, run.stderr);
  const files = run.logs.filter((l) => l.msg === 'search import file');
  t.deepEqual(files.map((l) => [l.file, l.outcome]), [['breach.jsonl', 'facts_updated'], ['forums/board.csv', 'unchanged'], ['plain.jsonl', 'unchanged']]);
  for (const [name, app, key] of both) {
    const listed = await until(`${name} sees the new facts`, () => sources(app, key), (a) => a.json.data_sources?.[0]?.name === 'Example Breach 2');
    t.like(listed.json.data_sources[0], { name: 'Example Breach 2', date: '2020-01-02', rows: 2 }, name);
    const answer = await search(app, key, SHARED_EMAIL);
    t.deepEqual(answer.json.results[0].origin, { name: 'Example Breach 2', date: '2020-01-02', verified: true }, name);
  }
});
