// How the PostgreSQL source asks the database: the lookups of one turn (a search's cross pass,
// searches arriving together) go as one statement on one connection, and each search still gets
// its own rows, as when asked one by one.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { parseQuery } from '../api/search/detect.ts';
import { CROSS_FANOUT, runSearch } from '../api/search/pipeline.ts';
import { PostgresSource } from '../api/search/sources/postgres.ts';
import { silentLogger } from '../shared/log.ts';
import { syntheticRecords, writeSyntheticData } from '../scripts/search-data.ts';
import { createDatabase, runImport, type TestDatabase } from './helpers/postgres.ts';
import { comparable } from './helpers/search-backends.ts';

const RECORDS = 300;
const SEED = 11;

let dir: string;
let db: TestDatabase;
let source: PostgresSource;

test.before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-search-pg-lookups-'));
  const file = path.join(dir, 'people.jsonl');
  await writeSyntheticData(file, RECORDS, { seed: SEED });
  db = await createDatabase();
  const imported = await runImport(db.url, file);
  if (imported.code !== 0) throw new Error(imported.stderr);
  source = new PostgresSource(db.url, { region: 'US', log: silentLogger, statementTimeoutMs: 4000 });
  await source.open();
});

test.after.always(async () => {
  await source?.close();
  await db?.drop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const OPTIONS = { timeoutMs: 8000, sourceTimeoutMs: 4000, crossFanout: CROSS_FANOUT, log: silentLogger };


test.serial('a search\'s cross pass is one statement: one connection serves the whole search', async (t) => {
  const [person] = syntheticRecords(1, SEED);
  const answer = await runSearch([source], parseQuery(person.email, 'auto'), OPTIONS);
  const crossed = Object.values(answer.cross_results);
  // Asked one by one, its lookups would have opened a connection each (the pool holds up to 8).
  t.true(crossed.length >= 6);
  for (const cross of crossed) t.is(cross.data.local_index.outcome, 'completed');
  const [{ n }] = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'skinfarm-search'",
  );
  t.is(n, 1);
});

test.serial('the lookup is planned once a connection: its generic plan, never a custom one', async (t) => {
  // Left to choose, PostgreSQL planned it at every execution, which cost more than running it.
  for (const person of syntheticRecords(8, SEED)) await runSearch([source], parseQuery(person.phone, 'auto'), OPTIONS);
  // The searches ran one at a time on the pool's one connection; this asks that connection.
  const pool = (source as unknown as { pool: { query<R>(text: string): Promise<{ rows: R[] }> } }).pool;
  const { rows } = await pool.query<{ generic_plans: string; custom_plans: string }>(
    "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'search-lookup-page'",
  );
  t.is(rows.length, 1);
  t.true(Number(rows[0].generic_plans) >= 16, `${rows[0].generic_plans} generic plans`);
  t.is(Number(rows[0].custom_plans), 0);
});

test.serial('searches asked together get the answers they get one by one', async (t) => {
  const queries = [...syntheticRecords(40, SEED)].flatMap((p, i) => (i % 4 === 0 ? [p.phone, p.username, p.ip, p.full_name] : []))
    .map((q) => parseQuery(String(q), 'auto'));
  const alone = [];
  for (const query of queries) alone.push(comparable(await runSearch([source], query, OPTIONS)));
  const together = await Promise.all(queries.map((query) => runSearch([source], query, OPTIONS)));
  t.deepEqual(together.map(comparable), alone);
  t.true(together.every((a) => a.data.local_index.outcome === 'completed' && a.count > 0));
});
