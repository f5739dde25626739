// Composition of the search service: key store, sources, pipeline and the Koa app.
import type Koa from 'koa';
import { ApiError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import type { Config } from '../config.ts';
import { createHttpApp, type AppState } from '../http/app.ts';
import type { RateLimiter } from '../http/rate-limit.ts';
import type { Service, SharedDeps } from '../service.ts';
import { loadAuditSecret, queryHash, type AuditSecret } from './audit.ts';
import { formatSearchError } from './errors.ts';
import { openKeyStore, type KeyStore } from './keys/store.ts';
import { Cursors, OFFSET_MAX, PAGE_TOTAL_CAP, type PageRequest } from './paging.ts';
import { CROSS_FANOUT, runSearch, type SearchResult } from './pipeline.ts';
import { SEARCH_ROUTES } from './routes.ts';
import { tableRouter } from '../http/route-table.ts';
import { domainAnalyser } from './sources/analysers/domain.ts';
import { emailAnalyser } from './sources/analysers/email.ts';
import { ipAnalyser } from './sources/analysers/ip.ts';
import { macAnalyser } from './sources/analysers/mac.ts';
import { phoneAnalyser } from './sources/analysers/phone.ts';
import { LocalIndexSource } from './sources/local.ts';
import { PlayersSource } from './sources/players.ts';
import { PostgresSource } from './sources/postgres.ts';
import { RunningSearches } from './running-searches.ts';
import type { SearchSource } from './sources/source.ts';
import type { TypedValue } from './types.ts';
import { VERSION } from '../version.ts';
import { asLookupClient } from '../skins/upstream/budget.ts';


export async function createSearchService(deps: SharedDeps): Promise<SearchService> {
  const { search } = deps.config;
  const audit = await loadAuditSecret(search.auditSecret, deps.config.dataDir, deps.redis);
  // One backend for the operator's data: PostgreSQL when configured, else the in-memory index.
  const local = search.databaseUrl
    ? new PostgresSource(search.databaseUrl, { region: search.defaultRegion, log: deps.log, statementTimeoutMs: search.sourceTimeoutMs, poolSize: search.databasePool, poolQueue: search.databaseQueue })
    : new LocalIndexSource(search.dataPath, search.defaultRegion, deps.log);
  if (local instanceof PostgresSource) deps.readiness.add(local.readinessCheck());
  await local.open();
  return new SearchService(deps, local, audit);
}

/** How one search runs besides its query: its page, the cross pass, an outer deadline (a bulk request's). */
export interface SearchRun { page?: PageRequest; cross?: boolean; signal?: AbortSignal }

export class SearchService implements Service {
  readonly config: Config;
  readonly log: Logger;
  readonly limiter: RateLimiter;
  readonly keys: KeyStore;
  readonly sources: SearchSource[];
  readonly app: Koa<AppState>;
  /** Searches running per key (SEARCH_KEY_CONCURRENCY). */
  readonly running: RunningSearches;
  /** The operator's data: the source that pages and exports. */
  readonly local: LocalIndexSource | PostgresSource;
  /** Signs and reads paging cursors. */
  readonly cursors: Cursors;
  private readonly audit: AuditSecret;
  private readonly startedAt = Date.now();

  constructor(deps: SharedDeps, local: LocalIndexSource | PostgresSource, audit: AuditSecret) {
    this.config = deps.config;
    this.log = deps.log;
    this.limiter = deps.limiter;
    this.keys = openKeyStore(deps.config.dataDir, deps.redis);
    this.local = local;
    this.audit = audit;
    this.cursors = new Cursors(audit.secret);
    this.running = new RunningSearches(deps.config.search.keyConcurrency);
    this.sources = [
      local,
      new PlayersSource(deps),
      ipAnalyser, domainAnalyser, phoneAnalyser, macAnalyser, emailAnalyser,
    ];
    const { app, routes } = createHttpApp({ service: 'search', log: deps.log, config: deps.config, formatError: formatSearchError, readiness: deps.readiness, limiter: deps.limiter });
    this.app = app;
    routes.mount(tableRouter(SEARCH_ROUTES, this, deps));
  }

  /**
   * Runs a search and writes its audit line (a keyed hash of the query, never the query).
   * `assumedRegion`: the region a phone query without a country code was read in.
   */
  async search(query: TypedValue, keyId: string, assumedRegion: string | null = null, options: SearchRun = {}): Promise<SearchResult> {
    const started = performance.now();
    const { timeoutMs, sourceTimeoutMs } = this.config.search;
    let result: SearchResult;
    try {
      const before = this.local.dataVersion();
      // The players source's uncached lookups are charged to the key (skins/upstream/budget.ts).
      result = await asLookupClient(`key:${keyId}`, () => runSearch(this.sources, query, { timeoutMs, sourceTimeoutMs, crossFanout: CROSS_FANOUT, log: this.log, ...options }));
      result = { ...result, page: this.finishPage(query, result, options.page?.version, before) };
      if (assumedRegion) result = { ...result, assumed_region: assumedRegion };
    } catch (error) {
      this.log.error('search failed', { key_id: keyId, type: query.type, err: error });
      throw new ApiError('search_failed');
    }
    this.writeAudit(keyId, query, { count: result.count, timed_out: result.timed_out, ...(result.page.offset ? { offset: result.page.offset } : {}), started });
    return result;
  }

  /** The audit line of a search or an export: a keyed hash of the query, never the query. */
  writeAudit(keyId: string, query: TypedValue, facts: { count: number; timed_out: boolean; started: number; [more: string]: unknown }): void {
    const { started, ...rest } = facts;
    this.log.info('search audit', {
      key_id: keyId,
      type: query.type,
      query_hmac: queryHash(this.audit.secret, query.value),
      ...rest,
      duration_ms: Math.round(performance.now() - started),
    });
  }

  /**
   * The page's total as both backends can say it (the database counts to PAGE_TOTAL_CAP, so the
   * index says no more either), its cursor, and whether the data changed: since the cursor was
   * made, or while this page was read. The next cursor starts past the page's positions and carries
   * today's version.
   */
  private finishPage(query: TypedValue, result: SearchResult, cursorVersion: string | null | undefined, before: string | null) {
    const { page } = result;
    const now = this.local.dataVersion();
    const next = page.offset + page.limit;
    return {
      ...page,
      total: Math.min(page.total, PAGE_TOTAL_CAP),
      total_capped: page.total_capped || page.total > PAGE_TOTAL_CAP,
      next_cursor: page.has_more && next <= OFFSET_MAX ? this.cursors.make(query, next, page.limit, now) : null,
      data_changed: before !== now || (cursorVersion !== undefined && cursorVersion !== now),
    };
  }

  /**
   * The service's state. `detail` (the operator: isOperator in metrics.ts) adds the settings, the
   * data files with their row problems and each source's reason; anyone else gets the summary:
   * status, version and counts.
   */
  health(detail: boolean) {
    const summary = {
      status: 'ok' as const,
      version: VERSION,
      uptime_s: Math.round((Date.now() - this.startedAt) / 1000),
    };
    if (!detail) {
      const stats = this.local.stats;
      return {
        ...summary,
        index: stats && { files: stats.files, records: stats.records, values: stats.values, malformed: stats.malformed },
        sources_available: this.sources.filter((s) => s.unavailable() === null).length,
        sources_total: this.sources.length,
      };
    }
    return {
      ...summary,
      key_store: this.keys.backend,
      admin_api: this.config.search.adminToken ? 'on' : 'off',
      timeout_ms: this.config.search.timeoutMs,
      source_timeout_ms: this.config.search.sourceTimeoutMs,
      default_region: this.config.search.defaultRegion,
      audit_secret: this.audit.origin,
      index: this.local.stats,
      sources: this.sources.map((s) => {
        const reason = s.unavailable();
        return { id: s.id, description: s.description, answers: s.answers, produces: s.produces, available: reason === null, reason };
      }),
    };
  }

  async close(): Promise<void> {
    const keysClosed = this.keys.close?.().catch((err: unknown) => this.log.error('search key uses lost', { err }));
    await Promise.all([this.local.close(), keysClosed]);
  }
}
