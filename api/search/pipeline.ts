// One search: the main pass over every source that answers the query's type, then the cross pass
// (the same search for each entity found, depth 1, bounded fan-out, no value searched twice).
// One deadline covers both: when it passes, the answer is built from what has arrived and the
// abandoned work is not waited for (theHarvester's outcome records, Maigret's deadline). Each
// source also has its own time limit per pass, below the deadline, so a hanging source ends the
// main pass early enough for the cross pass to run on what the others found.
import { isApiError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import { SourceSkipped, type SearchSource, type SourceRecord, type SourceRequest } from './sources/source.ts';
import { aggregate, extractEntities, groupByType, recordKey, smartSections } from './summary.ts';
import { displayKey, type SearchType, type TypedValue } from './types.ts';
import type { PageInfo, PageRequest } from './paging.ts';

export type Outcome = 'completed' | 'failed' | 'timed_out' | 'skipped';

export interface SourceReport {
  outcome: Outcome;
  duration_ms: number;
  /** Records returned, and matches in total when more matched than were returned. */
  records?: number;
  total?: number;
  /** `total` is where counting stopped: at least that many matched. */
  total_capped?: true;
  reason?: string;
  error?: string;
  raw?: unknown;
}

/** The paged sources' share of a main pass: their rows on the page, their total, and whether more follow. */
export interface PagedRows { returned: number; total: number; capped: boolean; more: boolean }

export interface PassResult { records: SourceRecord[]; data: Record<string, SourceReport>; timedOut: boolean; paged: PagedRows }

export interface CrossResult {
  query: string;
  search_type: SearchType;
  timed_out: boolean;
  count: number;
  results: SourceRecord[];
  data: Record<string, Omit<SourceReport, 'raw'>>;
}

export interface SearchResult {
  status: 'success';
  timed_out: boolean;
  query: string;
  search_type: SearchType;
  /** The region a phone number without a country code was read in (SEARCH_DEFAULT_REGION). */
  assumed_region?: string;
  count: number;
  parsed_count: number;
  entities_found: Partial<Record<SearchType, string[]>>;
  cross_results: Record<string, CrossResult>;
  smart_sections: ReturnType<typeof smartSections>;
  results: SourceRecord[];
  aggregated: Record<string, string[]>;
  data: Record<string, SourceReport>;
  /** The page of the paged sources' rows (local_index) this answer holds; the service adds the cursor. */
  page: PageInfo;
  took_ms: number;
}

export interface SearchOptions {
  timeoutMs: number;
  /** Each source's limit per pass (below timeoutMs). */
  sourceTimeoutMs: number;
  /** Entities searched in the cross pass at most. */
  crossFanout: number;
  log: Logger;
  /** The page of the paged sources' rows; absent: the first, MAIN_RECORD_LIMIT rows. */
  page?: PageRequest;
  /** Run the cross pass (default true). */
  cross?: boolean;
  /** An outer deadline besides timeoutMs (a bulk request's, shared by its queries). */
  signal?: AbortSignal;
}

export const CROSS_FANOUT = 10;
/**
 * Records per source and query: the cross pass takes fewer, so one search reads at most
 * 50 + 10 x 10 rows from a source however widely its values are shared.
 */
export const MAIN_RECORD_LIMIT = 50;
export const CROSS_RECORD_LIMIT = 10;

const elapsed = (since: number) => Math.round((performance.now() - since) * 10) / 10;

/** Resolves with the work's value, or with null as soon as the signal aborts. */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<{ value: T } | null> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return resolve(null);
    const onAbort = () => resolve(null);
    signal.addEventListener('abort', onAbort, { once: true });
    // Settling twice is harmless, and the handlers keep a late failure from going unhandled.
    work.then(
      (value) => { signal.removeEventListener('abort', onAbort); resolve({ value }); },
      (error) => { signal.removeEventListener('abort', onAbort); reject(error); },
    );
  });
}

/**
 * One pass's request to every source: the search's deadline and each source's own limit. The
 * pass's signal aborts at whichever comes first: one timer and one combined signal a pass, not
 * one a source (a search asks up to 11 passes of 7 sources).
 */
export interface PassRequest {
  deadline: AbortSignal; signal: AbortSignal; sourceTimeoutMs: number; limit: number;
  /** The main pass's page: sources that page (dataVersion) return its rows instead of `limit`. */
  page?: PageRequest;
}

/** Sources whose rows are paged: those naming their data (the local index's backends). */
export const pages = (source: SearchSource) => source.dataVersion !== undefined;

/** Whether a pass asks the source for this query. */
export const asks = (source: SearchSource, query: TypedValue) => source.answers.includes(query.type) && (!query.match || source.patterns === true);

interface Asked { report: SourceReport; records: SourceRecord[]; paged?: PagedRows }

async function askSource(source: SearchSource, query: TypedValue, pass: PassRequest, log: Logger): Promise<Asked> {
  const { deadline, signal } = pass;
  const unavailable = source.unavailable();
  if (unavailable) return { report: { outcome: 'skipped', duration_ms: 0, reason: unavailable }, records: [] };
  if (deadline.aborted) return { report: { outcome: 'timed_out', duration_ms: 0, reason: 'the deadline passed before it started' }, records: [] };
  const started = performance.now();
  const page = pass.page && pages(source) ? pass.page : null;
  // One row past the page tells whether another follows, whatever the source could count.
  const request: SourceRequest = page ? { signal, limit: page.limit + 1, offset: page.offset } : { signal, limit: pass.limit };
  try {
    const answer = await untilAborted(source.search(query, request), signal);
    if (!answer) {
      const reason = deadline.aborted ? 'the search deadline passed' : `over its time limit (${pass.sourceTimeoutMs} ms)`;
      return { report: { outcome: 'timed_out', duration_ms: elapsed(started), reason }, records: [] };
    }
    const { raw, total, totalCapped } = answer.value;
    const records = page ? answer.value.records.slice(0, page.limit) : answer.value.records;
    const report: SourceReport = { outcome: 'completed', duration_ms: elapsed(started), records: records.length, raw };
    if (total !== undefined && total > records.length) report.total = total;
    if (totalCapped) report.total_capped = true;
    const paged = page ? { returned: records.length, total: total ?? 0, capped: totalCapped === true, more: answer.value.records.length > page.limit } : undefined;
    return { report, records, paged };
  } catch (error) {
    const duration_ms = elapsed(started);
    if (error instanceof SourceSkipped) return { report: { outcome: 'skipped', duration_ms, reason: error.message }, records: [] };
    // A source's failure is part of the answer, not a failed search.
    if (!isApiError(error)) log.warn('search source failed', { source: source.id, err: error });
    return { report: { outcome: 'failed', duration_ms, error: isApiError(error) ? error.code : 'internal error' }, records: [] };
  }
}

/**
 * Asks every source that answers the query's type. `listSkipped`: the main pass reports the
 * others too (what the search could not ask); a cross pass leaves them out, as the same ten
 * lines under every entity would be a third of an answer.
 */
export async function runPass(sources: readonly SearchSource[], query: TypedValue, request: Omit<PassRequest, 'signal'>, log: Logger, listSkipped = true): Promise<PassResult> {
  const own = new AbortController();
  const timer = setTimeout(() => own.abort(), request.sourceTimeoutMs);
  const pass: PassRequest = { ...request, signal: AbortSignal.any([request.deadline, own.signal]) };
  // Pages after the first ask only the sources that page: the others' one record each came with the first.
  const laterPage = (request.page?.offset ?? 0) > 0;
  try {
    const asked = sources.filter((s) => asks(s, query) && (!laterPage || pages(s)));
    const answers = await Promise.all(asked.map((s) => askSource(s, query, pass, log)));
    const data: Record<string, SourceReport> = {};
    for (const s of sources) {
      const i = asked.indexOf(s);
      if (i >= 0) data[s.id] = answers[i].report;
      else if (!listSkipped) continue;
      else if (!asks(s, query)) data[s.id] = { outcome: 'skipped', duration_ms: 0, reason: `does not answer ${query.type}` };
      else data[s.id] = { outcome: 'skipped', duration_ms: 0, reason: 'pages after the first ask only the sources that page' };
    }
    const paged = answers.flatMap((a) => a.paged ?? []);
    return {
      records: answers.flatMap((a) => a.records),
      data,
      timedOut: answers.some((a) => a.report.outcome === 'timed_out'),
      paged: {
        returned: paged.reduce((n, p) => n + p.returned, 0),
        total: paged.reduce((n, p) => n + p.total, 0),
        capped: paged.some((p) => p.capped),
        more: paged.some((p) => p.more),
      },
    };
  } finally {
    clearTimeout(timer);
  }
}

const withoutRaw = (data: Record<string, SourceReport>) =>
  Object.fromEntries(Object.entries(data).map(([id, { raw: _raw, ...report }]) => [id, report]));

/** The page part of an answer as far as the pass knows it (the service caps the total and adds the cursor). */
function pageInfo(request: PageRequest, paged: PagedRows): PageInfo {
  return {
    offset: request.offset,
    limit: request.limit,
    returned: paged.returned,
    total: paged.total,
    total_capped: paged.capped,
    has_more: paged.more,
    next_cursor: null,
    data_changed: false,
  };
}

export async function runSearch(sources: readonly SearchSource[], query: TypedValue, options: SearchOptions): Promise<SearchResult> {
  const started = performance.now();
  const own = new AbortController();
  const timer = setTimeout(() => own.abort(), options.timeoutMs);
  const deadline = options.signal ? AbortSignal.any([own.signal, options.signal]) : own.signal;
  const page = options.page ?? { offset: 0, limit: MAIN_RECORD_LIMIT };
  try {
    const pass = (limit: number) => ({ deadline, sourceTimeoutMs: options.sourceTimeoutMs, limit });
    const main = await runPass(sources, query, { ...pass(MAIN_RECORD_LIMIT), page }, options.log);
    const entities = extractEntities(main.records, sources, query);
    // Depth 1: the entities come from the main pass only (this page's rows), and the query is never among them.
    const targets = options.cross === false ? [] : entities.slice(0, options.crossFanout);
    const passes = await Promise.all(targets.map((e) => runPass(sources, e, pass(CROSS_RECORD_LIMIT), options.log, false)));

    const seen = new Set(main.records.map(recordKey));
    const cross_results: Record<string, CrossResult> = {};
    const crossRecords: SourceRecord[] = [];
    targets.forEach((entity, i) => {
      // Records the main pass already returned are not repeated under an entity.
      const fresh = passes[i].records.filter((r) => !seen.has(recordKey(r)));
      cross_results[displayKey(entity)] = {
        query: entity.value,
        search_type: entity.type,
        timed_out: passes[i].timedOut,
        count: fresh.length,
        results: fresh,
        data: withoutRaw(passes[i].data),
      };
      crossRecords.push(...fresh);
    });
    const allRecords = [...new Map([...main.records, ...crossRecords].map((r) => [recordKey(r), r])).values()];

    return {
      status: 'success',
      timed_out: main.timedOut || passes.some((p) => p.timedOut),
      query: query.value,
      search_type: query.type,
      count: main.records.length,
      parsed_count: main.records.length + crossRecords.length,
      entities_found: groupByType(entities),
      cross_results,
      smart_sections: smartSections(allRecords, query),
      results: main.records,
      aggregated: aggregate(main.records),
      data: main.data,
      page: pageInfo(page, main.paged),
      took_ms: elapsed(started),
    };
  } finally {
    clearTimeout(timer);
  }
}
