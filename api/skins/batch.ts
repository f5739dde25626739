// Batch lookup: names go through the upstreams' bulk endpoints (one call per 10 or 5 names),
// UUIDs through profiles; what cannot be resolved is listed in `missing`. Each name or UUID that
// must be asked upstream is charged to the client as one lookup (upstream/budget.ts).
import { ApiError } from '../../shared/errors.ts';
import { dashUuid, normalizeUuid } from '../../shared/uuid.ts';
import type { PlayerLookup } from './lookup.ts';
import { profileRecord } from './records.ts';
import type { NameHit, RawProfile, SourceId, SourceParam } from './types.ts';

export const BATCH_LIMIT = 100;

export interface BatchRequest { names: string[]; uuids: string[]; full: boolean; source: SourceParam }

function stringList(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw new ApiError('bad_request', { detail: { zh: `${field} 必须是字符串数组`, en: `${field} must be an array of strings` } });
  }
  return value.map((v: string) => v.trim()).filter(Boolean);
}

/** Validates a batch request (POST body or GET query already split). */
export function parseBatch(input: { names?: unknown; uuids?: unknown; type?: unknown }, source: SourceParam): BatchRequest {
  const names = stringList(input.names, 'names');
  const uuids = stringList(input.uuids, 'uuids');
  if (names.length === 0 && uuids.length === 0) throw new ApiError('missing_param', { detail: { zh: 'names 或 uuids', en: 'names or uuids' } });
  if (names.length > BATCH_LIMIT || uuids.length > BATCH_LIMIT || names.length + uuids.length > BATCH_LIMIT) {
    throw new ApiError('too_many_names', { detail: `${names.length + uuids.length} > ${BATCH_LIMIT}` });
  }
  if (input.type !== undefined && typeof input.type !== 'string') throw new ApiError('bad_request', { detail: 'type' });
  return { names, uuids, full: input.type === 'profile', source };
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]);
    }
  });
  await Promise.all(workers);
  return results;
}

interface Found { query: string; hit: NameHit; profile?: RawProfile }

const codeOf = (error: unknown) => (error instanceof ApiError ? error.code : 'internal_error');

/** One entry per source and code, as the answer's `errors` lists them. */
function summarizeFailures(failures: { source: SourceId; error: unknown }[]): { source: SourceId; code: string }[] {
  const seen = new Map<string, { source: SourceId; code: string }>();
  for (const f of failures) seen.set(`${f.source}:${codeOf(f.error)}`, { source: f.source, code: codeOf(f.error) });
  return [...seen.values()];
}

/**
 * Nothing found and nothing knowable: the client's spent lookup budget is its 429; our own outgoing budget (or an upstream's 429) is a 503 to
 * retry after a while, a timeout a 504, anything else a 502.
 */
function batchFailure(errors: unknown[]): ApiError {
  // The client's own budget of uncached lookups (upstream/budget.ts): a 429 for it alone.
  const limited = errors.find((e): e is ApiError => e instanceof ApiError && e.code === 'rate_limited');
  if (limited) return limited;
  const busy = errors.filter((e): e is ApiError => e instanceof ApiError && e.code === 'upstream_busy');
  if (busy.length > 0) {
    const retryAfter = Math.min(...busy.map((e) => e.retryAfter ?? 1));
    return new ApiError('upstream_busy', { detail: busy[0].detail, retryAfter });
  }
  return new ApiError(errors.some((e) => codeOf(e) === 'upstream_timeout') ? 'upstream_timeout' : 'upstream_error', { detail: { zh: '所有数据源均不可用', en: 'no source could answer' } });
}

export async function runBatch(request: BatchRequest, lookup: PlayerLookup) {
  const found: Found[] = [];
  const missing: string[] = [];
  const failures: { source: SourceId; error: unknown }[] = [];

  // Names: per source, each through the lookup's cache (fresh, error memo, stale, coalesced);
  // what a source does not know or cannot answer goes on to the next one.
  let pending = [...new Map(request.names.map((n) => [n.toLowerCase(), n])).values()];
  for (const source of lookup.sources.order(request.source)) {
    const asked = pending.filter((name) => lookup.sources.asksName(source, name, request.source));
    const next = pending.filter((name) => !lookup.sources.asksName(source, name, request.source));
    const answers = await Promise.allSettled(asked.map((name) => lookup.nameIn(source.id, name)));
    answers.forEach((answer, i) => {
      if (answer.status === 'fulfilled' && answer.value) found.push({ query: asked[i], hit: answer.value });
      else next.push(asked[i]);
      if (answer.status === 'rejected') failures.push({ source: source.id, error: answer.reason });
    });
    pending = next;
  }
  missing.push(...pending);

  // UUIDs: one profile each (cached and coalesced by the lookup), a few at a time.
  const uuidResults = await mapLimit(request.uuids, 8, async (query) => {
    const uuid = normalizeUuid(query);
    if (!uuid) return { query, found: null };
    try {
      const resolved = await lookup.profile(uuid, request.source);
      return { query, found: resolved.value };
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'not_found') {
        failures.push({ source: request.source === 'auto' ? 'official' : request.source, error });
      }
      return { query, found: null };
    }
  });
  for (const r of uuidResults) {
    if (r.found) found.push({ query: r.query, hit: { id: r.found.id, name: r.found.name, source: r.found.source }, profile: r.found });
    else missing.push(r.query);
  }

  if (found.length === 0 && failures.length > 0 && missing.length > 0) throw batchFailure(failures.map((f) => f.error));

  const items = request.full
    ? await mapLimit(found, 8, async (f) => {
      try {
        const profile = f.profile ?? (await lookup.profile(f.hit.id, f.hit.source)).value;
        return { query: f.query, id: f.hit.id, dashed: dashUuid(f.hit.id), ...profileRecord(profile) };
      } catch {
        return { query: f.query, id: f.hit.id, dashed: dashUuid(f.hit.id), name: f.hit.name, source: f.hit.source, profile: null };
      }
    })
    : found.map((f) => ({ query: f.query, id: f.hit.id, dashed: dashUuid(f.hit.id), name: f.hit.name, source: f.hit.source }));

  return {
    found: items,
    missing,
    source: request.source,
    count: items.length,
    ...(failures.length > 0 ? { errors: summarizeFailures(failures) } : {}),
  };
}
