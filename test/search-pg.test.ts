// The PostgreSQL backend (SEARCH_DATABASE_URL, npm run search-import) against the real server:
// the same answers as the in-memory index over one data set, the poisoned-row rules, re-imports
// (unchanged files left alone, a changed file's rows replaced, an interrupted import finished),
// searches while an import swaps a file in, and two instances on one database.
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { ConfigError, loadConfig } from '../api/config.ts';
import { SEARCH_OLD_SPACE_FLAG } from '../api/relaunch.ts';
import { syntheticRecords, writeSyntheticData } from '../scripts/search-data.ts';
import { createDatabase, fileOutcomes, runImport, type TestDatabase } from './helpers/postgres.ts';
import { call, startApp, type RunningApp } from './helpers/service.ts';
import { until } from './helpers/poll.ts';
import { createSearchKey } from './helpers/search-keys.ts';
import { comparable } from './helpers/search-backends.ts';

const RECORDS = 1500;
const SEED = 5;
/** A phone held by more rows than a search returns (50), in two files. */
const SHARED_PHONE = '+1 202 555 0100';
const POISONED = [
  JSON.stringify({ full_name: 'Zone Keeper', ip: 'fe80::1%eth0.100', email: 'zone.keeper@example.org', phone: SHARED_PHONE }),
  JSON.stringify({ note: 'ff02::5678%pvc1.3', login: 'zone_two', last_ip: '[fe80::2%25eth1]:22' }),
  '{"truncated": ',
  '[1, 2]',
  JSON.stringify({ full_name: 'No Number', phone: 'n/a', email: 'no.number@example.net' }),
  // Text COPY had to escape these (tab, backslash, line break, its NULL marker); an astral character is 4 bytes of UTF-8.
  JSON.stringify({ full_name: 'Odd Text', note: 'tab\there, back\\slash, line\nbreak, \\N, 😀 Ёж', email: 'odd.text@example.org' }),
].join('\n');

let dir: string;
let data: string;
let db: TestDatabase;
let memory: RunningApp;
let postgres: RunningApp;
let key: string;
let firstImport: Awaited<ReturnType<typeof runImport>>;

const shared = (i: number) => ({ full_name: `Shared Holder${String.fromCharCode(97 + (i % 26))}`, phone: SHARED_PHONE, email: `shared.${i}@example.org`, city: 'Northvale' });

async function writeContacts(rows: string[]): Promise<void> {
  // A spreadsheet's export: semicolons, a byte order mark, a quoted cell with a line break.
  await fs.writeFile(path.join(data, 'sub', 'contacts.csv'), `\uFEFFfull_name;mobile;email;note\r\n${rows.join('\r\n')}\r\n`);
}

const CONTACTS = [
  'Ronald McDonald;+1 202 555 0100;ronald.mcdonald@example.org;"two\nlines"',
  'Ada Example;(202) 555-0143;ada.example@example.org;',
  'Bad Row;only two',
];

test.before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-search-pg-'));
  data = path.join(dir, 'data');
  await fs.mkdir(path.join(data, 'sub'), { recursive: true });
  await writeSyntheticData(path.join(data, 'people.jsonl'), RECORDS, { seed: SEED, extra: Array.from({ length: 55 }, (_, i) => shared(i)) });
  await fs.writeFile(path.join(data, 'network.jsonl'), POISONED);
  await writeContacts(CONTACTS);
  db = await createDatabase();
  firstImport = await runImport(db.url, data);
  const env = { SERVICES: 'search', DATA_DIR: path.join(dir, 'state'), SEARCH_RATE_LIMIT: '1000000', SEARCH_KEY_CONCURRENCY: '1000', OFFICIAL_ENABLED: 'false', EXTERNAL_ENABLED: 'false' };
  [memory, postgres] = await Promise.all([startApp({ ...env, SEARCH_DATA: data }), startApp({ ...env, SEARCH_DATABASE_URL: db.url })]);
  // Some 230 searches a minute compare the backends: the key's own rate is not what is tested.
  key = createSearchKey(env.DATA_DIR, 'pg', '--searches-per-minute', '1000000');
});

test.after.always(async () => {
  await Promise.allSettled([memory?.stop(), postgres?.stop()]);
  await db?.drop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const search = (app: RunningApp, query: string, type = 'auto') =>
  call(`${app.urls.search}/v1/search?${new URLSearchParams({ query, type, pretty: '0' })}`, { headers: { 'x-api-key': key } });
const health = async (app: RunningApp) => (await call(`${app.urls.search}/health`)).json;
const refs = (answer: { json: { results: Array<{ source: string; ref: string }> } }) =>
  answer.json.results.filter((r) => r.source === 'local_index').map((r) => r.ref);


/** The index statistics both backends share (not when or how fast they were built, nor their bytes). */
function indexFacts(index: Record<string, unknown>) {
  const { files, records, values, malformed, problems } = index;
  const dataFiles = (index.data_files as Array<Record<string, unknown>>).map(({ indexed_at: _at, ...file }) => file);
  return { files, records, values, malformed, problems, data_files: dataFiles };
}


test.serial('the PostgreSQL source gives the in-memory index\'s answers, every one', async (t) => {
  t.is(firstImport.code, 0, firstImport.stderr);
  const queries = new Set<string>([SHARED_PHONE, '(202) 555-0143', 'RONALD MCDONALD', 'fe80::1%eth0.100', 'nobody.here@example.org', 'zone_two', 'Shared Holdera', 'odd.text@example.org']);
  let i = 0;
  for (const record of syntheticRecords(RECORDS, SEED)) {
    if (i++ % 60 === 0) for (const field of ['full_name', 'email', 'phone', 'username', 'telegram', 'social_id', 'ip', 'mac', 'website']) queries.add(String(record[field]));
  }
  let compared = 0;
  const list = [...queries];
  for (let at = 0; at < list.length; at += 8) {
    await Promise.all(list.slice(at, at + 8).map(async (query) => {
      const [a, b] = await Promise.all([search(memory, query), search(postgres, query)]);
      t.is(b.status, a.status, query);
      t.deepEqual(comparable(b.json), comparable(a.json), query);
      compared += 1;
    }));
  }
  t.is(compared, list.length);
  const odd = await search(postgres, 'odd.text@example.org');
  t.is(odd.json.results[0].fields.note, JSON.parse(POISONED.split('\n')[5]).note, 'the row as it was in the file');
  // The limits and the total: 50 of the 57 rows holding the phone, in file then line order.
  const phone = await search(postgres, SHARED_PHONE);
  t.like(phone.json.data.local_index, { outcome: 'completed', records: 50, total: 57 });
  t.deepEqual(refs(phone).slice(0, 2), ['network.jsonl:1', `people.jsonl:${RECORDS + 1}`]);
  t.deepEqual(indexFacts((await health(postgres)).index), indexFacts((await health(memory)).index));
});

test.serial('a search-only instance on PostgreSQL runs with its old generation capped; the in-memory one, which holds the data, does not', (t) => {
  const commandLine = (app: RunningApp) => readFileSync(`/proc/${app.process.pid}/cmdline`, 'utf8').split('\0');
  t.true(commandLine(postgres).includes(SEARCH_OLD_SPACE_FLAG));
  t.false(commandLine(memory).some((arg) => arg.startsWith('--max-old-space-size')));
});

test.serial('a search-only instance loads no image code (sharp and libvips are 44 MB of RSS)', async (t) => {
  t.is((await search(postgres, SHARED_PHONE)).status, 200);
  const maps = readFileSync(`/proc/${postgres.process.pid}/maps`, 'utf8');
  t.false(/libvips|sharp-linux/.test(maps), 'no image library mapped');
});

test.serial('a poisoned file: its bad rows are skipped, counted and logged with file and line, the rest imported', async (t) => {
  const problems = firstImport.logs.filter((l) => l.msg === 'search data problem');
  t.like(problems.find((p) => p.file === 'network.jsonl' && p.line === 3), { level: 'warn', reason: 'not JSON' });
  t.like(problems.find((p) => p.file === 'network.jsonl' && p.line === 4), { reason: 'not a JSON object' });
  t.like(problems.find((p) => p.file === 'network.jsonl' && p.line === 5), { reason: 'phone is not a valid phone; the value is not indexed' });
  t.like(problems.find((p) => p.file === path.join('sub', 'contacts.csv')), { line: 5, reason: '2 cells for 4 columns' });
  t.like(fileOutcomes(firstImport)['network.jsonl'], { outcome: 'imported', rows_indexed: 4, rows_skipped: 2, values_rejected: 1, last_error: 'line 5: phone is not a valid phone; the value is not indexed' });
  const file = (await health(postgres)).index.data_files.find((f: { file: string }) => f.file === 'network.jsonl');
  t.like(file, { rows_indexed: 4, rows_skipped: 2, values_rejected: 1 });
  t.deepEqual(refs(await search(postgres, 'fe80::2', 'ip')), ['network.jsonl:2']);
});

test.serial('importing again leaves unchanged files alone; a changed file replaces its rows', async (t) => {
  const before = (await health(postgres)).index;
  const again = await runImport(db.url, data);
  t.is(again.code, 0);
  t.deepEqual(Object.values(fileOutcomes(again)).map((o) => o.outcome), ['unchanged', 'unchanged', 'unchanged']);
  // Touched, not changed: the content decides.
  const now = new Date();
  await fs.utimes(path.join(data, 'people.jsonl'), now, now);
  t.like(fileOutcomes(await runImport(db.url, data))['people.jsonl'], { outcome: 'unchanged' });
  t.like(await search(postgres, SHARED_PHONE), { json: { data: { local_index: { total: 57 } } } });

  await writeContacts(['Ronald McDonald;+1 202 555 0100;ronald.new@example.org;moved', 'Ada Example;(202) 555-0143;ada.example@example.org;']);
  const changed = await runImport(db.url, data);
  t.like(fileOutcomes(changed), { 'network.jsonl': { outcome: 'unchanged' }, 'people.jsonl': { outcome: 'unchanged' }, [path.join('sub', 'contacts.csv')]: { outcome: 'imported', rows_indexed: 2, rows_skipped: 0 } });
  // The running service sees it without a restart.
  const after = await until('the new contacts in /health', () => health(postgres), (h) => h.index.malformed === before.malformed - 1);
  t.is(after.index.records, before.records);
  t.deepEqual(refs(await search(postgres, 'ronald.mcdonald@example.org')), []);
  t.deepEqual(refs(await search(postgres, 'ronald.new@example.org')), [`${path.join('sub', 'contacts.csv')}:2`]);
  t.like(await search(postgres, SHARED_PHONE), { json: { data: { local_index: { total: 57 } } } });
  // One table pair per file: the replaced file's old tables are gone.
  const partitions = await db.query<{ n: string }>("SELECT count(*) AS n FROM pg_inherits WHERE inhparent = 'search_rows'::regclass");
  t.is(Number(partitions[0].n), 3);
});

test.serial('an interrupted import is finished by the next run, without duplicates or tables left behind', async (t) => {
  const extra = path.join(dir, 'extra');
  await fs.mkdir(extra);
  await fs.writeFile(path.join(extra, 'a-small.jsonl'), `${JSON.stringify({ full_name: 'First Small', email: 'first.small@example.org' })}\n`);
  await writeSyntheticData(path.join(extra, 'b-large.jsonl'), 30_000, { seed: 9, extra: [{ full_name: 'Last Large', email: 'last.large@example.org' }] });
  // Killed as soon as the first file is in: the second is then mid-way.
  const killed = await runImport(db.url, extra, { onLog: (entry, child) => { if (entry.msg === 'search import file') child.kill('SIGKILL'); } });
  t.is(killed.code, null);
  const resumed = await runImport(db.url, extra);
  t.is(resumed.code, 0, resumed.stderr);
  t.like(fileOutcomes(resumed), { 'a-small.jsonl': { outcome: 'unchanged' }, 'b-large.jsonl': { outcome: 'imported', rows_indexed: 30_001 } });
  t.deepEqual(refs(await until('the large file searchable', () => search(postgres, 'last.large@example.org'), (r) => refs(r).length > 0)), ['b-large.jsonl:30001']);
  const leftovers = await db.query("SELECT relname FROM pg_class WHERE relname ~ '^search_(rows|values)_' AND relkind = 'r' AND NOT relispartition");
  t.deepEqual(leftovers, []);
});

test.serial('searches while a file is swapped in see its old rows or its new ones, never neither nor both', async (t) => {
  const people = path.join(data, 'people.jsonl');
  // The same people and 55 more holders of the shared phone: 57 -> 112.
  await writeSyntheticData(people, RECORDS, { seed: SEED, extra: Array.from({ length: 110 }, (_, i) => shared(i)) });
  const running = runImport(db.url, data);
  let done = false;
  void running.finally(() => { done = true; });
  const totals = new Set<number>();
  let during = 0;
  const ask = async () => {
    const [phone, ada] = await Promise.all([search(postgres, SHARED_PHONE), search(postgres, 'ada.example@example.org')]);
    t.is(phone.json.data.local_index.outcome, 'completed');
    totals.add(phone.json.data.local_index.total);
    t.deepEqual(refs(ada), [`${path.join('sub', 'contacts.csv')}:3`]);
    return phone.json.data.local_index.total as number;
  };
  while (!done) {
    await ask();
    during += 1;
  }
  await until('the new file searched', ask, (total) => total === 112);
  t.like(fileOutcomes(await running)['people.jsonl'], { outcome: 'imported' });
  t.true(during > 0);
  t.deepEqual([...totals].filter((n) => n !== 57 && n !== 112), []);
});

test.serial('two instances on one database: both answer, both see a new import and a removal without a restart', async (t) => {
  const second = await startApp({ SERVICES: 'search', DATA_DIR: path.join(dir, 'state'), SEARCH_DATABASE_URL: db.url, OFFICIAL_ENABLED: 'false', EXTERNAL_ENABLED: 'false' });
  try {
    const [a, b] = await Promise.all([search(postgres, SHARED_PHONE), search(second, SHARED_PHONE)]);
    t.deepEqual(comparable(b.json), comparable(a.json));
    const late = path.join(dir, 'late');
    await fs.mkdir(late);
    await fs.writeFile(path.join(late, 'late.jsonl'), `${JSON.stringify({ full_name: 'Late Comer', email: 'late.comer@example.net' })}\n`);
    t.is((await runImport(db.url, late)).code, 0);
    for (const app of [postgres, second]) {
      const found = await until('the late file', () => search(app, 'late.comer@example.net'), (r) => refs(r).length > 0);
      t.deepEqual(refs(found), ['late.jsonl:1']);
      t.like((await health(app)).index.data_files.find((f: { file: string }) => f.file === 'late.jsonl'), { rows_indexed: 1 });
    }
    const removed = await runImport(db.url, '--remove', { args: ['late.jsonl', 'never-imported.jsonl'] });
    t.like(fileOutcomes(removed), { 'late.jsonl': { outcome: 'removed' }, 'never-imported.jsonl': { outcome: 'not_imported', level: 'warn' } });
    for (const app of [postgres, second]) {
      await until('the late file gone', () => health(app), (h) => !h.index.data_files.some((f: { file: string }) => f.file === 'late.jsonl'));
      t.deepEqual(refs(await search(app, 'late.comer@example.net')), []);
    }
  } finally {
    await second.stop();
  }
});

test('SEARCH_DATABASE_URL is checked at start: a postgres:// URL, and not with SEARCH_DATA', (t) => {
  t.is(loadConfig({ SEARCH_DATABASE_URL: 'postgresql://search@db:5432/search' }).search.databaseUrl, 'postgresql://search@db:5432/search');
  t.is(loadConfig({}).search.databaseUrl, null);
  const error = t.throws(() => loadConfig({ SEARCH_DATABASE_URL: 'mysql://search:secret@db/search', SEARCH_DATA: './data' }), { instanceOf: ConfigError });
  t.deepEqual(error.problems, [
    'SEARCH_DATABASE_URL must start with postgres:// or postgresql://',
    'SEARCH_DATA and SEARCH_DATABASE_URL are two backends: set one (import the files into the database with npm run search-import)',
  ]);
  // The URL may hold a password: no problem repeats it.
  t.notRegex(error.message, /secret/);
});

// PostgreSQL refuses a NUL in text, and one refused row fails a whole COPY (the file's import).
test('NUL characters in every typed field and raw NUL bytes in a CSV cost values, never the file', async (t) => {
  const own = await createDatabase();
  const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-search-nul-'));
  t.teardown(async () => {
    await own.drop();
    await fs.rm(folder, { recursive: true, force: true });
  });
  const nul = (text: string) => text.replace('|', '\0');
  const row = Object.fromEntries(Object.entries({
    full_name: 'Ann| Lee', email: 'a|b@example.org', phone: '+1 202 555 0100|', ip: '192.0.2.1|', domain: 'ex|ample.org',
    mac: '00:16:3e:02:71:c3|', username: 'bo|b', telegram: '@bo|b', social_id: '12|34', note: 'x| y',
  }).map(([k, v]) => [k, nul(v)]));
  await fs.writeFile(path.join(folder, 'nul.jsonl'), `${JSON.stringify(row)}\n`);
  await fs.writeFile(path.join(folder, 'nul.csv'), `full_name,email,city\n${nul('Zed| Null')},${nul('zed|@example.org')},${nul('Nor|thvale')}\n`);
  const run = await runImport(own.url, folder);
  t.is(run.code, 0, run.stderr);
  const outcomes = fileOutcomes(run);
  t.like(outcomes['nul.jsonl'], { outcome: 'imported', rows_indexed: 1, rows_skipped: 0, values_rejected: 9 });
  t.like(outcomes['nul.csv'], { outcome: 'imported', rows_indexed: 1, rows_skipped: 0, values_rejected: 2 });
  const bodies = await own.query<{ body: string }>('SELECT body FROM search_rows ORDER BY body');
  t.deepEqual(bodies.map((b) => JSON.parse(b.body).full_name).sort(), ['Ann\0 Lee', 'Zed\0 Null'], 'the rows as they were, NULs escaped in their JSON text');
});
