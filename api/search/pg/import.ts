// `npm run search-import`: data files into PostgreSQL, each file on its own. A file whose content
// (and the region and rules it was typed under) is already imported is left alone, so running
// the import again after an interruption only does what is left; a changed file replaces its rows.
// The file is read once, typed in worker threads and streamed by binary COPY into three fresh
// tables (rows, values and prefix terms, one connection each, so the database uses its cores too),
// indexed once, and swapped in for the file's old tables in one transaction that notifies every
// search instance. A file whose data is unchanged but whose sidecar (`<file>.source.json`, its
// source facts) changed only has its facts updated in the catalogue.
import { createHash, randomInt } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import { once } from 'node:events';
import type { CountryCode } from 'libphonenumber-js';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { Piscina } from 'piscina';
import type { Logger } from '../../../shared/log.ts';
import { FileTally, problemLogger } from '../index/file-tally.ts';
import { listDataFiles, readRowTexts } from '../index/files.ts';
import type { FileStats } from '../index/local-index.ts';
import { readSidecar, type SidecarReading } from '../index/source-facts.ts';
import { typeBatch, type Batch, type TypedBatch } from './batch.ts';
import { COPY_HEADER, COPY_TRAILER } from './copy-binary.ts';
import { CHANGES_CHANNEL, ensureSchema, IMPORT_FORMAT, LOCK_SPACE, UNDEFINED_TABLE } from './schema.ts';

/** Advisory lock spaces: a running import (its tables are its own), a file being imported. */
const SESSION_LOCKS = LOCK_SPACE + 1;
const FILE_LOCKS = LOCK_SPACE + 2;
/** Rows per batch handed to a worker, and batches in flight per worker. */
const BATCH_ROWS = 2000;
const BATCHES_PER_WORKER = 3;
/** Sort memory of the index builds and the terms' sort (the server's defaults, 64 MB and 4 MB, spill a million rows to disk). */
const INDEX_MEMORY = '256MB';

export interface ImportOptions {
  databaseUrl: string;
  /** Region of phone numbers stored without a country code (SEARCH_DEFAULT_REGION). */
  region: CountryCode;
  /** Threads typing values; 0 types them in this thread. */
  workers: number;
  log: Logger;
  /** Called as a file's lines are read: lines done of `lines`, rows indexed so far. */
  onProgress?: (progress: FileProgress) => void;
  /** Called as each file is done. */
  onFile?: (outcome: FileOutcome) => void;
}

export interface FileProgress { file: string; lines: number; linesDone: number; rows: number; startedAt: number }

export type FileOutcome =
  | { file: string; outcome: 'imported'; stats: FileStats; values: number; ms: number }
  | { file: string; outcome: 'unchanged' | 'removed' | 'not_imported' }
  /** The data was unchanged (not read again); its sidecar's source facts were. */
  | { file: string; outcome: 'facts_updated' }
  | { file: string; outcome: 'failed'; error: string };

interface Fingerprint { size: string; mtimeNs: string; sha256: string; lines: number }

interface Catalogued {
  file_no: number; rows_table: string; values_table: string; terms_table: string | null; size: string; mtime_ns: string; sha256: string;
  region: string; format: number; sidecar_sha256: string;
}

/** The catalogue's source-fact columns and their values, for the swap and for a facts-only update. */
const FACT_COLUMNS = ['sidecar_sha256', 'source_name', 'source_date', 'source_verified', 'source_fields', 'source_note', 'source_problem'];
const factValues = ({ facts, problem, sha256 }: SidecarReading) => [sha256, facts.name, facts.date, facts.verified, facts.fields, facts.note, problem];

/** The file's content hash and line count, in one read (a fraction of the import's time). */
async function fingerprint(file: string, stat: { size: bigint; mtimeNs: bigint }): Promise<Fingerprint> {
  const hash = createHash('sha256');
  let lines = 0;
  let last = 10;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines += 1;
    last = chunk[chunk.length - 1];
  }
  if (last !== 10) lines += 1;
  return { size: String(stat.size), mtimeNs: String(stat.mtimeNs), sha256: hash.digest('hex'), lines };
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'skinfarm-search-import' });
  // Failures reach the query that meets them; an idle connection's end must not crash the import.
  client.on('error', () => {});
  await client.connect();
  // Index builds, and the sort that keeps a file's distinct prefix terms.
  await client.query(`SET maintenance_work_mem = '${INDEX_MEMORY}'; SET work_mem = '${INDEX_MEMORY}'`);
  return client;
}

/** Writes a chunk, waiting while the stream's buffer is full (rejects when the stream fails). */
async function write(stream: Writable, chunk: Uint8Array): Promise<void> {
  if (!stream.write(chunk)) await once(stream, 'drain');
}

export class Importer {
  private readonly options: ImportOptions;
  private readonly logProblem: ReturnType<typeof problemLogger>;
  private readonly token = randomInt(1, 2 ** 31 - 1);
  private readonly pool: Piscina<Batch, TypedBatch> | null;
  /** Rows, catalogue and locks on `main`; values on `side` and prefix terms on `third`, at the same time. */
  private main!: pg.Client;
  private side!: pg.Client;
  private third!: pg.Client;

  constructor(options: ImportOptions) {
    this.options = options;
    this.logProblem = problemLogger(options.log);
    this.pool = options.workers > 0
      ? new Piscina<Batch, TypedBatch>({ filename: new URL('./batch-worker.ts', import.meta.url).href, minThreads: options.workers, maxThreads: options.workers, idleTimeout: Number.MAX_SAFE_INTEGER })
      : null;
  }

  /** Imports a file, or every data file under a folder (named relative to it, as SEARCH_DATA names them). */
  async run(target: string): Promise<FileOutcome[]> {
    const files = await listDataFiles(target);
    const base = files.length === 1 && files[0] === target ? path.dirname(target) : target;
    await this.reconnect();
    try {
      await ensureSchema(this.main);
      await this.dropAbandoned();
      const outcomes: FileOutcome[] = [];
      for (const file of files) {
        const name = path.relative(base, file);
        const outcome = await this.withFileLock(name, () => this.importOne(file, name));
        this.options.onFile?.(outcome);
        outcomes.push(outcome);
      }
      return outcomes;
    } finally {
      await this.disconnect();
    }
  }

  /** Takes imported files (by the names the import gave them) out of the database. */
  async remove(names: string[]): Promise<FileOutcome[]> {
    await this.reconnect();
    try {
      const outcomes: FileOutcome[] = [];
      for (const name of names) {
        const outcome = await this.withFileLock(name, () => this.removeOne(name));
        this.options.onFile?.(outcome);
        outcomes.push(outcome);
      }
      return outcomes;
    } finally {
      await this.disconnect();
    }
  }

  async close(): Promise<void> {
    await this.pool?.destroy();
  }

  /** Two imports of one file take turns; the second then finds it unchanged. */
  private async withFileLock(name: string, work: () => Promise<FileOutcome>): Promise<FileOutcome> {
    await this.main.query('SELECT pg_advisory_lock($1, hashtext($2))', [FILE_LOCKS, name]);
    try {
      return await work();
    } catch (error) {
      this.options.log.error('search import failed', { file: name, err: error });
      // A failed COPY leaves its connections mid-transaction: go on with new ones.
      await this.reconnect().catch(() => {});
      return { file: name, outcome: 'failed', error: (error as Error).message };
    } finally {
      await this.main.query('SELECT pg_advisory_unlock($1, hashtext($2))', [FILE_LOCKS, name]).catch(() => {});
    }
  }

  private async removeOne(name: string): Promise<FileOutcome> {
    const { rows: [known] } = await this.main.query<Catalogued>('SELECT * FROM search_files WHERE name = $1', [name]).catch((error) => {
      if ((error as { code?: string }).code === UNDEFINED_TABLE) return { rows: [] as Catalogued[] };
      throw error;
    });
    if (!known) return { file: name, outcome: 'not_imported' };
    await this.transaction(async (db) => {
      await this.dropTables(known);
      await db.query('DELETE FROM search_files WHERE name = $1', [name]);
      await db.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, name]);
    });
    return { file: name, outcome: 'removed' };
  }

  private async transaction(work: (db: pg.Client) => Promise<void>): Promise<void> {
    await this.main.query('BEGIN');
    try {
      await work(this.main);
      await this.main.query('COMMIT');
    } catch (error) {
      await this.main.query('ROLLBACK').catch(() => {});
      throw error;
    }
  }

  /**
   * A file's tables, dropped; searches lock the terms table first (a prefix), then the values,
   * then the rows: the same order, so no deadlock. A file imported before format 2 has no terms.
   */
  private async dropTables(known: Catalogued): Promise<void> {
    // A format-1 file may be removed from a database no format-2 import has upgraded (no search_terms).
    await this.main.query(`LOCK TABLE ${known.terms_table ? 'search_terms, ' : ''}search_values, search_rows IN ACCESS EXCLUSIVE MODE`);
    const tables = [known.terms_table, known.values_table, known.rows_table].filter((t): t is string => t !== null);
    await this.main.query(`DROP TABLE IF EXISTS ${tables.map((t) => pg.escapeIdentifier(t)).join(', ')}`);
  }

  private async reconnect(): Promise<void> {
    await this.disconnect();
    [this.main, this.side, this.third] = await Promise.all([connect(this.options.databaseUrl), connect(this.options.databaseUrl), connect(this.options.databaseUrl)]);
    // Held while this import runs: its unfinished tables are not abandoned.
    await this.main.query('SELECT pg_advisory_lock($1, $2)', [SESSION_LOCKS, this.token]);
  }

  private async disconnect(): Promise<void> {
    await Promise.allSettled([this.main?.end(), this.side?.end(), this.third?.end()]);
  }

  /** Tables an interrupted import left behind (its session lock is free again). */
  private async dropAbandoned(): Promise<void> {
    const { rows } = await this.main.query<{ name: string; token: string }>(`
      SELECT relname AS name, substring(relname from '_s(\\d+)$') AS token FROM pg_class
      WHERE relkind = 'r' AND NOT relispartition AND relnamespace = current_schema()::regnamespace
        AND relname ~ '^search_(rows|values|terms|termsraw)_\\d+_s\\d+$'`);
    for (const { name, token } of rows) {
      if (Number(token) === this.token) continue;
      const { rows: [{ free }] } = await this.main.query<{ free: boolean }>('SELECT pg_try_advisory_lock($1, $2::int) AS free', [SESSION_LOCKS, token]);
      if (!free) continue;
      await this.main.query(`DROP TABLE IF EXISTS ${pg.escapeIdentifier(name)}`);
      await this.main.query('SELECT pg_advisory_unlock($1, $2::int)', [SESSION_LOCKS, token]);
    }
  }

  private async importOne(file: string, name: string): Promise<FileOutcome> {
    const stat = await fs.stat(file, { bigint: true });
    const sidecar = await readSidecar(file);
    // Kept apart from the rows' problems (source_problem), so a facts-only update replaces it; the
    // catalogue lists it first, as the in-memory index meets it.
    if (sidecar.problem) this.logProblem({ file: name, line: null, reason: sidecar.problem });
    const { rows: [known] } = await this.main.query<Catalogued>('SELECT * FROM search_files WHERE name = $1', [name]);
    const sameRules = known && known.region === this.options.region && known.format === IMPORT_FORMAT;
    if (sameRules && known.size === String(stat.size) && known.mtime_ns === String(stat.mtimeNs)) return this.keep(name, known, sidecar);
    const print = await fingerprint(file, stat);
    if (sameRules && known.sha256 === print.sha256) {
      // Touched or copied, not changed.
      await this.main.query('UPDATE search_files SET size = $2, mtime_ns = $3 WHERE name = $1', [name, print.size, print.mtimeNs]);
      return this.keep(name, known, sidecar);
    }
    const fileNo = known?.file_no ?? Number((await this.main.query<{ n: string }>("SELECT nextval('search_file_no') AS n")).rows[0].n);
    return this.load(file, name, fileNo, print, known ?? null, sidecar);
  }

  /** A file whose rows stay: its source facts are updated when its sidecar changed (every search instance told). */
  private async keep(name: string, known: Catalogued, sidecar: SidecarReading): Promise<FileOutcome> {
    if (known.sidecar_sha256 === sidecar.sha256) return { file: name, outcome: 'unchanged' };
    await this.transaction(async (db) => {
      await db.query(`UPDATE search_files SET ${FACT_COLUMNS.map((c, i) => `${c} = $${i + 2}`).join(', ')} WHERE name = $1`, [name, ...factValues(sidecar)]);
      await db.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, name]);
    });
    return { file: name, outcome: 'facts_updated' };
  }

  private async load(file: string, name: string, fileNo: number, print: Fingerprint, known: Catalogued | null, sidecar: SidecarReading): Promise<FileOutcome> {
    const started = performance.now();
    const rowsTable = `search_rows_${fileNo}_s${this.token}`;
    const valuesTable = `search_values_${fileNo}_s${this.token}`;
    const termsTable = `search_terms_${fileNo}_s${this.token}`;
    // The batches' terms, repeated across batches: the file's distinct ones are kept from it.
    const rawTermsTable = `search_termsraw_${fileNo}_s${this.token}`;
    // Created in the transaction that fills them, so COPY can write them frozen (no later vacuum
    // pass, and index-only lookups from the start).
    await Promise.all([
      this.main.query(`BEGIN; CREATE TABLE ${rowsTable} (LIKE search_rows, CHECK (file_no = ${fileNo}))`),
      this.side.query(`BEGIN; CREATE TABLE ${valuesTable} (LIKE search_values, CHECK (file_no = ${fileNo}))`),
      this.third.query(`BEGIN; CREATE UNLOGGED TABLE ${rawTermsTable} (type smallint NOT NULL, value text COLLATE "C" NOT NULL, key bigint NOT NULL)`),
    ]);
    const rowsCopy = this.main.query(copyFrom(`COPY ${rowsTable} FROM STDIN WITH (FORMAT binary, FREEZE)`));
    const valuesCopy = this.side.query(copyFrom(`COPY ${valuesTable} FROM STDIN WITH (FORMAT binary, FREEZE)`));
    const termsCopy = this.third.query(copyFrom(`COPY ${rawTermsTable} FROM STDIN WITH (FORMAT binary, FREEZE)`));
    const copies = [rowsCopy, valuesCopy, termsCopy];
    // A COPY the server refuses ends the file's import at the next batch.
    const failed = { error: null as Error | null };
    for (const copy of copies) copy.on('error', (error) => { failed.error ??= error; });
    const tally = new FileTally(name, this.logProblem);
    await Promise.all(copies.map((c) => write(c, COPY_HEADER)));
    const values = await this.stream(file, name, fileNo, print.lines, tally, copies, failed);
    for (const copy of copies) copy.end(COPY_TRAILER);
    await Promise.all(copies.map((c) => finished(c)));
    await Promise.all([
      this.main.query(`ALTER TABLE ${rowsTable} ADD PRIMARY KEY (file_no, line); ANALYZE ${rowsTable}; COMMIT`),
      this.side.query(`CREATE INDEX ON ${valuesTable} (key, file_no, line); ANALYZE ${valuesTable}; COMMIT`),
      this.third.query(`CREATE TABLE ${termsTable} (LIKE search_terms, CHECK (file_no = ${fileNo}));
        INSERT INTO ${termsTable} SELECT DISTINCT ${fileNo}, type, value, key FROM ${rawTermsTable};
        DROP TABLE ${rawTermsTable}; CREATE INDEX ON ${termsTable} (type, value) INCLUDE (key); COMMIT`),
    ]);
    // Its rows were inserted, not copied frozen: a vacuum marks them visible, so a prefix reads
    // its terms from the index alone (a bitmap scan visited a heap page a term).
    await this.third.query(`VACUUM (ANALYZE) ${termsTable}`);
    const stats = tally.finish();
    const sizes = await this.main.query<{ rows: string; values: string }>(
      'SELECT pg_total_relation_size($1::regclass) AS rows, pg_total_relation_size($2::regclass) + pg_total_relation_size($3::regclass) AS values',
      [rowsTable, valuesTable, termsTable],
    );
    const ms = Math.round(performance.now() - started);
    await this.swap({ name, fileNo, rowsTable, valuesTable, termsTable, print, known, sidecar, stats, problems: tally.problems, values, ms, sizes: sizes.rows[0] });
    return { file: name, outcome: 'imported', stats, values, ms };
  }

  /** Reads, types (in order, `BATCHES_PER_WORKER` ahead) and writes the file's rows; returns the values written. */
  private async stream(file: string, name: string, fileNo: number, lines: number, tally: FileTally, [rowsCopy, valuesCopy, termsCopy]: Writable[], failed: { error: Error | null }): Promise<number> {
    const { region, workers, onProgress } = this.options;
    const startedAt = performance.now();
    const inFlight: Array<{ typed: Promise<TypedBatch>; unreadable: Array<{ line: number; reason: string }>; lastLine: number }> = [];
    let values = 0;
    const settle = async () => {
      const { typed, unreadable, lastLine } = inFlight.shift()!;
      const batch = await typed;
      if (failed.error) throw failed.error;
      // Problems in line order, as the in-memory index meets them.
      const problems = [...unreadable.map((p) => ({ ...p, skipped: true })), ...batch.problems].sort((a, b) => a.line - b.line);
      for (const p of problems) {
        if (p.skipped) tally.skipped(p.line, p.reason);
        else tally.rejected(p.line, p.reason);
      }
      tally.indexed(batch.rowsIndexed);
      values += batch.valuesIndexed;
      await Promise.all([write(rowsCopy, batch.rows), write(valuesCopy, batch.values), write(termsCopy, batch.terms)]);
      onProgress?.({ file: name, lines, linesDone: lastLine, rows: tally.stats.rows_indexed, startedAt });
    };
    let batch: Batch = { fileNo, region, texts: [], lines: [] };
    let unreadable: Array<{ line: number; reason: string }> = [];
    let lastLine = 0;
    const send = async () => {
      inFlight.push({ typed: this.pool ? this.pool.run(batch) : Promise.resolve(typeBatch(batch)), unreadable, lastLine });
      batch = { fileNo, region, texts: [], lines: [] };
      unreadable = [];
      if (inFlight.length >= Math.max(1, workers) * BATCHES_PER_WORKER) await settle();
    };
    try {
      for await (const row of readRowTexts(file)) {
        lastLine = row.line;
        if ('error' in row) unreadable.push({ line: row.line, reason: row.error });
        else {
          batch.texts.push(row.text);
          batch.lines.push(row.line);
        }
        if (batch.texts.length + unreadable.length >= BATCH_ROWS) await send();
      }
      if (batch.texts.length + unreadable.length > 0) await send();
      while (inFlight.length) await settle();
    } catch (error) {
      // The batches still being typed are abandoned with the file.
      for (const { typed } of inFlight) typed.catch(() => {});
      throw error;
    }
    return values;
  }

  private async swap(s: {
    name: string; fileNo: number; rowsTable: string; valuesTable: string; termsTable: string; print: Fingerprint; known: Catalogued | null;
    sidecar: SidecarReading; stats: FileStats; problems: string[]; values: number; ms: number; sizes: { rows: string; values: string };
  }): Promise<void> {
    await this.transaction(async (db) => {
      if (s.known) await this.dropTables(s.known);
      await db.query(`ALTER TABLE search_rows ATTACH PARTITION ${s.rowsTable} FOR VALUES IN (${s.fileNo})`);
      await db.query(`ALTER TABLE search_values ATTACH PARTITION ${s.valuesTable} FOR VALUES IN (${s.fileNo})`);
      await db.query(`ALTER TABLE search_terms ATTACH PARTITION ${s.termsTable} FOR VALUES IN (${s.fileNo})`);
      const { stats } = s;
      const columns = ['file_no', 'name', 'rows_table', 'values_table', 'terms_table', 'size', 'mtime_ns', 'sha256', 'region', 'format', 'rows_indexed',
        'rows_skipped', 'values_rejected', '"values"', 'problems', 'last_error', 'indexed_at', 'import_ms', 'row_bytes', 'index_bytes', ...FACT_COLUMNS];
      const values = [s.fileNo, s.name, s.rowsTable, s.valuesTable, s.termsTable, s.print.size, s.print.mtimeNs, s.print.sha256, this.options.region, IMPORT_FORMAT,
        stats.rows_indexed, stats.rows_skipped, stats.values_rejected, s.values, s.problems, stats.last_error, stats.indexed_at, s.ms,
        s.sizes.rows, s.sizes.values, ...factValues(s.sidecar)];
      await db.query(`
        INSERT INTO search_files (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})
        ON CONFLICT (name) DO UPDATE SET ${columns.filter((c) => c !== 'name').map((c) => `${c} = EXCLUDED.${c}`).join(', ')}`, values);
      await db.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, s.name]);
    });
  }
}
