// The PostgreSQL source under load: a value shared by many rows is counted only up to a cap, the
// lookups asked together are cut into bounded statements (a frequent value in one of its own),
// and a full pool is overload (that search times out) rather than an outage (the source stays up).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import pg from 'pg';
import { parseQuery } from '../api/search/detect.ts';
import { CROSS_FANOUT, runSearch } from '../api/search/pipeline.ts';
import { PostgresSource, TOTAL_CAP } from '../api/search/sources/postgres.ts';
import { silentLogger } from '../shared/log.ts';
import { createDatabase, runImport, type TestDatabase } from './helpers/postgres.ts';
import { until } from './helpers/poll.ts';

const SHARED = 'shared.inbox@example.org';
const ROWS = 1500;

let dir: string;
let db: TestDatabase;
const sources: PostgresSource[] = [];

test.before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-search-pg-load-'));
  const file = path.join(dir, 'people.jsonl');
  const lines = Array.from({ length: ROWS }, (_, i) => JSON.stringify({ username: `member_${i}`, email: SHARED }));
  await fs.writeFile(file, `${lines.join('\n')}\n`);
  db = await createDatabase();
  const imported = await runImport(db.url, file);
  if (imported.code !== 0) throw new Error(imported.stderr);
});

test.after.always(async () => {
  await Promise.allSettled(sources.map((s) => s.close()));
  await db?.drop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

async function openSource(options: Partial<ConstructorParameters<typeof PostgresSource>[1]> = {}): Promise<PostgresSource> {
  const source = new PostgresSource(db.url, { region: 'US', log: silentLogger, statementTimeoutMs: 30_000, ...options });
  sources.push(source);
  await source.open();
  return source;
}

type Pool = { query<R>(text: string): Promise<{ rows: R[] }>; waitingCount: number };
const poolOf = (source: PostgresSource) => (source as unknown as { pool: Pool }).pool;

/** Executions of the lookup statement on the pool's one connection (a pool of one). */
async function lookupsRun(source: PostgresSource): Promise<number> {
  const { rows } = await poolOf(source).query<{ n: string }>("SELECT generic_plans + custom_plans AS n FROM pg_prepared_statements WHERE name = 'search-lookup-page'");
  return Number(rows[0]?.n ?? 0);
}

const OPTIONS = { timeoutMs: 60_000, sourceTimeoutMs: 30_000, crossFanout: CROSS_FANOUT, log: silentLogger };
const ask = (source: PostgresSource, value: string) =>
  source.search(parseQuery(value, 'auto'), { signal: new AbortController().signal, limit: 10 });

test.serial('a value in more rows than the cap is counted up to it: total 1000 and total_capped, read as "1000+"', async (t) => {
  const source = await openSource();
  const answer = await runSearch([source], parseQuery(SHARED, 'auto'), OPTIONS);
  t.like(answer.data.local_index, { outcome: 'completed', records: 50, total: TOTAL_CAP, total_capped: true });
  // A value under the cap keeps its exact count, and says nothing of a cap.
  const exact = (await runSearch([source], parseQuery('member_7', 'auto'), OPTIONS)).data.local_index;
  t.like(exact, { outcome: 'completed', records: 1 });
  t.false('total_capped' in exact);
});

test.serial('lookups asked together go in statements of at most ten values, a frequent value in one of its own', async (t) => {
  const source = await openSource({ poolSize: 1 });
  const names = Array.from({ length: 40 }, (_, i) => `member_${i}`);
  let before = await lookupsRun(source);
  const answers = await Promise.all(names.map((n) => ask(source, n)));
  t.deepEqual(answers.map((a) => [a.records.length, a.total]), names.map(() => [1, 1]));
  t.is(await lookupsRun(source) - before, 4);

  // Once seen past the cap, the shared address goes alone: the three others still share one statement.
  t.like(await ask(source, SHARED), { total: TOTAL_CAP, totalCapped: true });
  before = await lookupsRun(source);
  const together = await Promise.all([SHARED, 'member_1', 'member_2', 'member_3'].map((v) => ask(source, v)));
  t.deepEqual(together.map((a) => a.total), [TOTAL_CAP, 1, 1, 1]);
  t.is(await lookupsRun(source) - before, 2);
});

test.serial('a full pool is overload: the search beyond it times out, its queue stays bounded, and the source stays up', async (t) => {
  const source = await openSource({ poolSize: 1, poolQueue: 1, poolWaitMs: 200 });
  // A transaction holding the catalogue's table: every lookup (it joins it) waits behind it.
  const holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE search_files IN ACCESS EXCLUSIVE MODE');
    const searches: Array<ReturnType<typeof runSearch>> = [];
    for (let i = 0; i < 10; i++) {
      // One turn each: asked in the same turn they would go as one statement.
      searches.push(runSearch([source], parseQuery(`member_${i}`, 'auto'), { ...OPTIONS, sourceTimeoutMs: 1500 }));
      await new Promise((r) => setImmediate(r));
    }
    // Statements beyond the pool and its queue were refused, not queued in pg-pool.
    t.true(poolOf(source).waitingCount <= 1, `${poolOf(source).waitingCount} waiting in pg-pool`);
    const answers = await Promise.all(searches);
    for (const answer of answers) t.is(answer.data.local_index.outcome, 'timed_out');
    // Whatever waited for a connection has given up by now; none of it marked the source down.
    await until('no statement waiting', async () => poolOf(source).waitingCount, (n) => n === 0);
    t.is(source.unavailable(), null);
    t.like(source.readinessCheck().run(), { status: 'ok' });
  } finally {
    await holder.query('ROLLBACK').catch(() => {});
    await holder.end();
  }
  // The held statement finishes; the next search is answered as usual.
  const next = await until('lookups through', () => runSearch([source], parseQuery('member_3', 'auto'), OPTIONS), (a) => a.data.local_index.outcome === 'completed');
  t.like(next.data.local_index, { records: 1 });
  t.is(source.unavailable(), null);
});
