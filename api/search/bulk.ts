// POST /v1/search/bulk: up to the plan's bulk_size queries (100 at most whatever the plan) in one
// request, read and checked all or nothing before the key is counted, each counted as a search.
// They run a few at a time (as many as the key's free SEARCH_KEY_CONCURRENCY places allow, up to
// BULK_CONCURRENCY) under ONE deadline for the whole request: a query not started by then is
// answered timed_out with no results, so the request ends at the deadline however many it holds.
import { ApiError, type Language } from '../../shared/errors.ts';
import type { CountryCode } from 'libphonenumber-js';
import { assumedRegion, parseQuery } from './detect.ts';
import { bad, checkLimit, integerField, PAGE_ROWS_MAX } from './paging.ts';
import { MAIN_RECORD_LIMIT, type SearchResult } from './pipeline.ts';
import type { PlanFigures } from './plans.ts';
import type { SearchService } from './service.ts';
import type { TypedValue } from './types.ts';

/** Queries in one bulk request at most, whatever the plan. */
export const BULK_MAX = 100;
/** Queries of one bulk request running at once at most (each takes a place of SEARCH_KEY_CONCURRENCY). */
export const BULK_CONCURRENCY = 4;

export interface BulkQuery { query: TypedValue; region: string | null }
export interface BulkRequest { queries: BulkQuery[]; cross: boolean; limit: number }

export interface BulkResult {
  status: 'success';
  /** Some query's answer timed out (or never started before the deadline). */
  timed_out: boolean;
  count: number;
  results: SearchResult[];
  took_ms: number;
}

/** parseQuery's own error, naming the query's field in the bulk body. */
function named(error: unknown, field: string): unknown {
  if (!(error instanceof ApiError)) return error;
  const say = (lang: Language) => `${field}${lang === 'zh' ? '：' : ': '}${error.detailIn(lang) ?? ''}`;
  return new ApiError(error.code, { detail: { zh: say('zh'), en: say('en') } });
}

/** Reads and checks the whole body; the first bad field is named in a 400. */
export function readBulk(body: unknown, figures: PlanFigures, region: CountryCode): BulkRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('body', 'must be a JSON object with `queries`', '必须是含 queries 的 JSON 对象');
  const fields = body as Record<string, unknown>;
  const { queries } = fields;
  const most = Math.min(BULK_MAX, figures.bulk_size);
  if (!Array.isArray(queries) || queries.length === 0) throw bad('queries', 'must be a non-empty array of {query, type}', '必须是非空的 {query, type} 数组');
  if (queries.length > most) throw bad('queries', `at most ${most} queries on this key's plan (${queries.length} given)`, `此密钥的套餐最多 ${most} 个查询（收到 ${queries.length} 个）`);
  const parsed = queries.map((item, i): BulkQuery => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw bad(`queries[${i}]`, 'must be an object {query, type}', '必须是 {query, type} 对象');
    const { query, type } = item as Record<string, unknown>;
    let value: TypedValue;
    try {
      value = parseQuery(query, type, region);
    } catch (error) {
      throw named(error, (error as ApiError).code === 'invalid_type' ? `queries[${i}].type` : `queries[${i}].query`);
    }
    return { query: value, region: assumedRegion(query as string, value, region) };
  });
  if (fields.cross !== undefined && typeof fields.cross !== 'boolean') throw bad('cross', 'must be true or false', '必须是 true 或 false');
  const limit = integerField(fields, 'limit', 1, PAGE_ROWS_MAX) ?? Math.min(MAIN_RECORD_LIMIT, figures.page_rows);
  return { queries: parsed, cross: fields.cross !== false, limit: checkLimit(limit, figures) };
}

/**
 * Runs the queries, `places` at a time, in order of the list; answers keep the list's order. Each
 * is a search of its own (its audit line, its `page` with a cursor for later pages by GET or POST
 * /v1/search) sharing the request's deadline.
 */
export async function runBulk(service: SearchService, request: BulkRequest, keyId: string, places: number): Promise<BulkResult> {
  const started = performance.now();
  const deadline = AbortSignal.timeout(service.config.search.timeoutMs);
  const results: SearchResult[] = new Array(request.queries.length);
  let next = 0;
  const worker = async () => {
    // Past the deadline a query still gets its (timed-out, empty) answer and audit line, at once.
    for (let i = next++; i < request.queries.length; i = next++) {
      const { query, region } = request.queries[i];
      results[i] = await service.search(query, keyId, region, { page: { offset: 0, limit: request.limit }, cross: request.cross, signal: deadline });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(places, request.queries.length)) }, worker));
  return {
    status: 'success',
    timed_out: results.some((r) => r.timed_out),
    count: results.length,
    results,
    took_ms: Math.round((performance.now() - started) * 10) / 10,
  };
}
