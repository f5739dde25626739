// The operator's data files imported into PostgreSQL (SEARCH_DATABASE_URL, `npm run
// search-import`) as the `local_index` source: the same answers as the in-memory index, from a
// database any number of instances share. Nothing is loaded at start but the catalogue of files;
// an import's notification (or, failing that, a poll) brings its new files in without a restart.
// When the database cannot be used the source is reported skipped, and it comes back by itself.
import pg from 'pg';
import type { CountryCode } from 'libphonenumber-js';
import type { Logger } from '../../../shared/log.ts';
import type { ReadinessCheck } from '../../readiness.ts';
import type { IndexStats } from '../index/local-index.ts';
import { defaultFacts, groupSources, originOf, type DataSource, type FileFacts, type Origin } from '../index/source-facts.ts';
import { MAX_PREFIX_TERMS } from '../index/terms.ts';
import { holds, prefixTerm, queryKey } from '../lookup-keys.ts';
import { readCatalogue } from '../pg/catalogue.ts';
import { CHANGES_CHANNEL, decodeEntities, isDatabaseDown, lookupKey, prefixEnd, UNDEFINED_TABLE } from '../pg/schema.ts';
import { SEARCH_TYPES, type TypedValue } from '../types.ts';
import type { RebuildReport } from './local.ts';
import { SourceSkipped, type SearchSource, type SourceAnswer, type SourceRecord, type SourceRequest } from './source.ts';

/** Connections per instance: a search's cross pass asks up to ten lookups at once. */
const POOL_SIZE = 8;
/** Statements waiting for a connection at most (beyond them a search is refused at once), and how long one waits. */
const POOL_QUEUE = 32;
const POOL_WAIT_MS = 2000;
const BUSY_LOG_MS = 10_000;
/** How often an unreachable database is tried again. */
const RETRY_MS = 1000;
/** The catalogue is read this often besides on notifications (a notification can be missed while reconnecting). */
const POLL_MS = 30_000;
const CONNECT_TIMEOUT_MS = 5000;

/** Lookups asked together at most (one statement): a search's cross pass asks up to ten at once. */
const BATCH_MAX = 10;
/** A value's rows are counted up to this many: past it the answer says `total` 1000 and `total_capped`. */
export const TOTAL_CAP = 1000;
/** Values last seen with more rows than TOTAL_CAP, remembered at most (each is then looked up alone). */
const FREQUENT_KEYS = 4096;

/** The pool is full and its queue too, or a statement waited past its turn: overload, not an outage. */
export class PoolBusy extends Error {
  override readonly name = 'PoolBusy';
}

// Each key's count and a page of its rows in import order (file, then line), for every lookup asked in
// the same turn of the event loop (a search's cross pass, searches arriving together) in one
// round trip: one statement, one reply, instead of one each. The values table is named first:
// searches then lock it before the rows, in the order an import swapping a file in takes them,
// so the two cannot deadlock.
const LOOKUP = `
SELECT q.n, h.total, x.name, x.line, x.body, x.entities
FROM unnest($1::bigint[], $2::int[], $3::int[]) WITH ORDINALITY AS q(key, lim, off, n)
CROSS JOIN LATERAL (SELECT count(*) AS total FROM (SELECT 1 FROM search_values WHERE key = q.key LIMIT ${TOTAL_CAP + 1}) c) h
LEFT JOIN LATERAL (
  SELECT v.file_no, v.line, r.body, r.entities, f.name
  FROM (SELECT file_no, line FROM search_values WHERE key = q.key ORDER BY file_no, line LIMIT q.lim OFFSET q.off) v
  JOIN search_rows r ON r.file_no = v.file_no AND r.line = v.line
  JOIN search_files f ON f.file_no = v.file_no
) x ON true
ORDER BY q.n, x.file_no, x.line`;

interface LookupRow { n: string; total: string; name: string | null; line: number | null; body: string | null; entities: string | null }

// A prefix query's page: the file's distinct terms in the prefix's range ($1 type, $2 <= value <
// $3; MAX_PREFIX_TERMS + 1 at most, to tell a cut), then each term's rows in file and line order,
// as many as the page or the count can use ($6: max(offset + limit, TOTAL_CAP + 1)), each row once;
// their count, and the page. Every step is an index range or probe.
const PREFIX_LOOKUP = `
WITH t AS MATERIALIZED (
  SELECT key FROM search_terms WHERE type = $1 AND value >= $2 AND value < $3 LIMIT ${MAX_PREFIX_TERMS + 1}
), m AS MATERIALIZED (
  SELECT DISTINCT v.file_no, v.line
  FROM (SELECT DISTINCT key FROM t) k
  CROSS JOIN LATERAL (SELECT file_no, line FROM search_values WHERE key = k.key ORDER BY file_no, line LIMIT $6) v
)
SELECT (SELECT count(*) FROM t) AS terms, (SELECT count(*) FROM m) AS total, x.name, x.line, x.body, x.entities
FROM (SELECT 1) one
LEFT JOIN LATERAL (
  SELECT p.file_no, p.line, r.body, r.entities, f.name
  FROM (SELECT file_no, line FROM m ORDER BY file_no, line LIMIT $4 OFFSET $5) p
  JOIN search_rows r ON r.file_no = p.file_no AND r.line = p.line
  JOIN search_files f ON f.file_no = p.file_no
) x ON true
ORDER BY x.file_no, x.line`;

interface PrefixRow { terms: string; total: string; name: string | null; line: number | null; body: string | null; entities: string | null }

export interface PostgresSourceOptions {
  region: CountryCode;
  log: Logger;
  /** A lookup's limit in the database (the pipeline stops waiting at its own). */
  statementTimeoutMs: number;
  /** Connections (POOL_SIZE), statements waiting for one at most (POOL_QUEUE) and how long (POOL_WAIT_MS), values in one statement (BATCH_MAX). */
  poolSize?: number;
  poolQueue?: number;
  poolWaitMs?: number;
  batchMax?: number;
}

export class PostgresSource implements SearchSource {
  readonly id = 'local_index';
  readonly description = 'Records from the operator\'s own data files imported into PostgreSQL (SEARCH_DATABASE_URL), by every typed value they hold';
  readonly answers = SEARCH_TYPES;
  readonly produces = SEARCH_TYPES;
  readonly patterns = true;
  private readonly url: string;
  private readonly region: CountryCode;
  private readonly log: Logger;
  private readonly pool: pg.Pool;
  private listener: pg.Client | null = null;
  private catalogue: IndexStats | null = null;
  /** Each imported file's source facts, by its name, from the catalogue. */
  private files: Array<FileFacts & { file: string }> = [];
  private origins = new Map<string, Origin>();
  private version: string | null = null;
  private lastRead: RebuildReport | null = null;
  /** Why the database cannot be used now; null when it can. */
  private down: string | null = null;
  private reading: Promise<void> | null = null;
  private readAgain = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private pollTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** The files last warned about as typed in another region. */
  private otherRegion = '';
  /** Lookups asked in this turn of the event loop, sent together when it ends. */
  private pending: Array<{ key: string; limit: number; offset: number; done: (rows: Promise<LookupRow[]>) => void }> = [];
  private readonly poolSize: number;
  private readonly poolQueue: number;
  private readonly poolWaitMs: number;
  private readonly batchMax: number;
  /** Statements on a connection now, and those waiting for one (the pool itself never queues them). */
  private active = 0;
  private waiting: Array<{ run: () => void; refuse: (error: Error) => void; timer: NodeJS.Timeout }> = [];
  /** Keys whose rows reached the cap, oldest first: each goes in a statement of its own. */
  private frequent = new Set<string>();
  /** When a full pool was last logged (once every BUSY_LOG_MS at most, not once a refused lookup). */
  private busyLoggedAt = 0;

  constructor(url: string, options: PostgresSourceOptions) {
    this.url = url;
    this.region = options.region;
    this.log = options.log;
    this.poolSize = options.poolSize ?? POOL_SIZE;
    this.poolQueue = options.poolQueue ?? POOL_QUEUE;
    this.poolWaitMs = options.poolWaitMs ?? POOL_WAIT_MS;
    this.batchMax = options.batchMax ?? BATCH_MAX;
    this.pool = new pg.Pool({
      connectionString: url, max: this.poolSize, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true,
      statement_timeout: options.statementTimeoutMs, application_name: 'skinfarm-search',
      // The lookup is prepared once a connection; left to choose, PostgreSQL planned it again at
      // every execution (0.5-1.2 ms over the partitions, more than running it: 0.1-0.5 ms). Its
      // generic plan is the same one (index probes a key), for any keys and limits.
      options: '-c plan_cache_mode=force_generic_plan',
    });
    // An idle connection the server closed: the database may be gone; the next read tells.
    this.pool.on('error', () => this.readSoon());
  }

  /** Reads the catalogue; an unreachable database does not stop the start (the source is skipped until it answers). */
  async open(): Promise<void> {
    await this.readSoon();
    this.pollTimer = setInterval(() => void this.readSoon(), POLL_MS);
    this.pollTimer.unref();
  }

  /** The in-memory index's statistics, from the catalogue, with the last read of it. */
  get stats(): (IndexStats & { last_rebuild: RebuildReport | null }) | null {
    return this.catalogue ? { ...this.catalogue, last_rebuild: this.lastRead } : null;
  }

  unavailable(): string | null {
    return this.down;
  }

  /** For /ready: every instance shares the database, so its loss degrades an instance, never takes it out. */
  readinessCheck(): ReadinessCheck {
    return {
      name: 'search_database',
      critical: false,
      run: () => (this.down ? { status: 'degraded', detail: this.down } : { status: 'ok', detail: `${this.catalogue?.files ?? 0} files` }),
    };
  }

  /** The files imported now, each by its number (a re-import swaps a file in under a new one). */
  dataVersion(): string | null {
    return this.version;
  }

  /** The data sources imported (GET /v1/search/sources), from the catalogue last read. */
  async dataSources(): Promise<DataSource[]> {
    return groupSources(this.files);
  }

  async search(query: TypedValue, request: SourceRequest): Promise<SourceAnswer> {
    try {
      return query.match === 'prefix' ? await this.prefixPage(query, request) : await this.page(query, request);
    } catch (error) {
      // Nothing imported yet: no tables, no rows.
      if ((error as { code?: string }).code === UNDEFINED_TABLE) return { records: [], total: 0 };
      // A full pool is overload, not an outage: this search's lookup is reported timed_out (the
      // pipeline stops waiting at its limit), the source stays up for the others.
      if (error instanceof PoolBusy) {
        if (Date.now() - this.busyLoggedAt > BUSY_LOG_MS) {
          this.busyLoggedAt = Date.now();
          this.log.warn('search database pool full; lookups past it are answered timed_out', { err: error.message });
        }
        return untilAborted(request.signal, error);
      }
      if (!isDatabaseDown(error)) throw error;
      this.lost(error as Error);
      throw new SourceSkipped(this.down!);
    }
  }

  /** A lookup by one key (a value, its digest, an address's domain), batched with this turn's others. */
  private async page(query: TypedValue, request: SourceRequest): Promise<SourceAnswer> {
    const key = lookupKey(queryKey(query));
    const rows = await this.lookup(key, request.limit, request.offset ?? 0);
    const total = Number(rows[0]?.total ?? 0);
    if (total <= TOTAL_CAP) return { records: this.records(rows, query), total };
    this.remember(key);
    return { records: this.records(rows, query), total: TOTAL_CAP, totalCapped: true };
  }

  /** A prefix's page, in a statement of its own (it ranges over terms rather than probing a key). */
  private async prefixPage(query: TypedValue, request: SourceRequest): Promise<SourceAnswer> {
    const start = prefixTerm(query).slice(query.type.length + 1);
    const offset = request.offset ?? 0;
    const { rows } = await this.gated(() => this.pool.query<PrefixRow>({
      name: 'search-prefix-page', text: PREFIX_LOOKUP,
      values: [SEARCH_TYPES.indexOf(query.type), start, prefixEnd(start) ?? '\u{10ffff}', request.limit, offset, Math.max(offset + request.limit, TOTAL_CAP + 1)],
    }));
    const total = Number(rows[0]?.total ?? 0);
    const records = this.records(rows, query);
    // Past MAX_PREFIX_TERMS terms, the rows of the rest are not counted: the total is a floor.
    if (total <= TOTAL_CAP && Number(rows[0]?.terms ?? 0) <= MAX_PREFIX_TERMS) return { records, total };
    return { records, total: Math.min(total, TOTAL_CAP), totalCapped: true };
  }

  /** The rows found, each checked against the row's own values (keys are fingerprints, or derived). */
  private records(rows: ReadonlyArray<Pick<LookupRow, 'name' | 'line' | 'body' | 'entities'>>, query: TypedValue): SourceRecord[] {
    const records: SourceRecord[] = [];
    for (const row of rows) {
      if (row.body === null) continue;
      const entities = decodeEntities(row.entities!);
      if (!holds(entities, query)) continue;
      const origin = this.origins.get(row.name!) ?? originOf(defaultFacts(row.name!));
      records.push({ source: this.id, kind: 'record', ref: `${row.name}:${row.line}`, fields: JSON.parse(row.body) as Record<string, unknown>, entities, origin });
    }
    return records;
  }

  /** A key seen with more rows than the cap; the oldest is forgotten past FREQUENT_KEYS. */
  private remember(key: string): void {
    this.frequent.delete(key);
    this.frequent.add(key);
    if (this.frequent.size > FREQUENT_KEYS) this.frequent.delete(this.frequent.values().next().value!);
  }

  /** A page of a key's rows, asked together with the other lookups of this turn. */
  private lookup(key: string, limit: number, offset: number): Promise<LookupRow[]> {
    return new Promise((resolve) => {
      this.pending.push({ key, limit, offset, done: resolve });
      if (this.pending.length === 1) queueMicrotask(() => this.flush());
    });
  }

  /**
   * Sends this turn's lookups: at most `batchMax` values a statement, and a value known to have
   * more rows than the cap in a statement of its own, so it slows no other search's lookups.
   */
  private flush(): void {
    const asked = this.pending;
    this.pending = [];
    const batches: Array<typeof asked> = [];
    let shared: typeof asked = [];
    for (const a of asked) {
      if (this.frequent.has(a.key)) batches.push([a]);
      else if (shared.push(a) === this.batchMax) {
        batches.push(shared);
        shared = [];
      }
    }
    if (shared.length) batches.push(shared);
    for (const batch of batches) {
      const answer = this.gated(() => this.pool.query<LookupRow>({
        name: 'search-lookup-page', text: LOOKUP, values: [batch.map((a) => a.key), batch.map((a) => a.limit), batch.map((a) => a.offset)],
      })).then(({ rows }) => {
        const each = batch.map((): LookupRow[] => []);
        for (const row of rows) each[Number(row.n) - 1].push(row);
        return each;
      });
      batch.forEach((a, n) => a.done(answer.then((each) => each[n])));
    }
  }

  /**
   * Runs a statement when a connection is free: at most `poolSize` at once, `poolQueue` waiting
   * (each at most `poolWaitMs`); past either it is refused with PoolBusy. pg-pool's own queue is
   * never used, so its timeout means what it says: the database could not be reached.
   */
  private gated<T>(work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const run = () => {
        this.active += 1;
        work().then(resolve, reject).finally(() => {
          this.active -= 1;
          const next = this.waiting.shift();
          if (next) {
            clearTimeout(next.timer);
            next.run();
          }
        });
      };
      if (this.active < this.poolSize) return run();
      if (this.waiting.length >= this.poolQueue) return reject(new PoolBusy(`all ${this.poolSize} connections busy and ${this.poolQueue} statements waiting`));
      const entry = {
        run,
        refuse: reject,
        timer: setTimeout(() => {
          this.waiting = this.waiting.filter((w) => w !== entry);
          reject(new PoolBusy(`no connection free in ${this.poolWaitMs} ms`));
        }, this.poolWaitMs),
      };
      this.waiting.push(entry);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) {
      clearTimeout(w.timer);
      w.refuse(new PoolBusy('the source is closing'));
    }
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.pollTimer) clearInterval(this.pollTimer);
    await this.reading;
    await Promise.allSettled([this.listener?.end(), this.pool.end()]);
  }

  /** Reads the catalogue now, or once more after the read under way. */
  private readSoon(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.reading) {
      this.readAgain = true;
      return this.reading;
    }
    this.reading = this.read().finally(() => {
      this.reading = null;
      if (this.readAgain) {
        this.readAgain = false;
        void this.readSoon();
      }
    });
    return this.reading;
  }

  private async read(): Promise<void> {
    const at = new Date().toISOString();
    try {
      await this.listen();
      const { stats, files, otherRegion, version } = await readCatalogue((text) => this.gated(() => this.pool.query(text)), this.region);
      if (otherRegion.join('\n') !== this.otherRegion && otherRegion.length) {
        this.log.warn('search data imported with another SEARCH_DEFAULT_REGION; import these files again', { files: otherRegion, region: this.region });
      }
      this.otherRegion = otherRegion.join('\n');
      this.catalogue = stats;
      this.files = files;
      this.origins = new Map(files.map((f) => [f.file, originOf(f.facts)]));
      this.version = version;
      this.lastRead = { at, ok: true, error: null };
      if (this.down) this.log.info('search database reachable again');
      this.down = null;
    } catch (error) {
      this.lastRead = { at, ok: false, error: (error as Error).message };
      // A full pool (PoolBusy) is overload: the next read (a poll, a notification) tries again.
      if (error instanceof PoolBusy) this.log.warn('search catalogue read put off: the database pool is full', { err: error.message });
      else if (isDatabaseDown(error)) this.lost(error as Error);
      else this.log.warn('search catalogue read failed', { err: error });
    }
  }

  /** One connection listens for imports; losing it means reading (and so reconnecting) again. */
  private async listen(): Promise<void> {
    if (this.listener) return;
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true, application_name: 'skinfarm-search-listen' });
    const lost = () => {
      if (this.listener !== client) return;
      this.listener = null;
      void this.readSoon();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', () => void this.readSoon());
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => {});
      throw error;
    }
    this.listener = client;
  }

  /** Marks the source skipped and tries again shortly (a failed read comes back here). */
  private lost(error: Error): void {
    // The answers say only that; the log says why (an address or a login is no client's business).
    if (!this.down) this.log.warn('search database unavailable; the source is skipped until it answers', { err: error.message });
    this.down = 'the database is unavailable';
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.readSoon();
    }, RETRY_MS);
    this.retryTimer.unref();
  }
}

/** Settles (as a failure the pipeline no longer waits for) when the signal aborts: the pipeline reports the source timed_out. */
function untilAborted(signal: AbortSignal, error: Error): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) return reject(error);
    signal.addEventListener('abort', () => reject(error), { once: true });
  });
}
