// Batch lookup: names go through the upstreams' bulk endpoints (one call per 10 or 5 names),
// UUIDs through profiles; what cannot be resolved is listed in `missing`.
import { ApiError } from '../../shared/errors.ts';
import { dashUuid, normalizeUuid } from '../../shared/uuid.ts';
import type { PlayerLookup } from './lookup.ts';
import { profileRecord } from './records.ts';
import type { NameHit, RawProfile, SourceId, SourceParam } from './types.ts';
import { validName } from './validate.ts';

export const BATCH_LIMIT = 100;

export interface BatchRequest { names: string[]; uuids: string[]; full: boolean; source: SourceParam }

function stringList(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw new ApiError('bad_request', { detail: `${field} 必须是字符串数组` });
  }
  return value.map((v: string) => v.trim()).filter(Boolean);
}

/** Validates a batch request (POST body or GET query already split). */
export function parseBatch(input: { names?: unknown; uuids?: unknown; type?: unknown }, source: SourceParam): BatchRequest {
  const names = stringList(input.names, 'names');
  const uuids = stringList(input.uuids, 'uuids');
  if (names.length === 0 && uuids.length === 0) throw new ApiError('missing_param', { detail: 'names 或 uuids' });
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

export async function runBatch(request: BatchRequest, lookup: PlayerLookup) {
  const found: Found[] = [];
  const missing: string[] = [];
  const failures: { source: SourceId; code: string }[] = [];

  // Names: per source, cached answers first, then one bulk call for the rest.
  let pending = [...new Map(request.names.map((n) => [n.toLowerCase(), n])).values()];
  for (const source of lookup.sources.order(request.source)) {
    const ask: string[] = [];
    const next: string[] = [];
    for (const name of pending) {
      if (!validName(name, source.id)) {
        next.push(name);
        continue;
      }
      const cached = await lookup.cachedName(source.id, name);
      if (cached) found.push({ query: name, hit: cached });
      else if (cached === null) next.push(name);
      else ask.push(name);
    }
    if (ask.length > 0) {
      try {
        const hits = await source.namesToIds(ask);
        await lookup.rememberNames(source.id, ask, hits);
        const byName = new Map(hits.map((h) => [h.name.toLowerCase(), h]));
        for (const name of ask) {
          const hit = byName.get(name.toLowerCase());
          if (hit) found.push({ query: name, hit });
          else next.push(name);
        }
      } catch (error) {
        failures.push({ source: source.id, code: error instanceof ApiError ? error.code : 'internal_error' });
        next.push(...ask);
      }
    }
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
        failures.push({ source: request.source === 'auto' ? 'official' : request.source, code: error instanceof ApiError ? error.code : 'internal_error' });
      }
      return { query, found: null };
    }
  });
  for (const r of uuidResults) {
    if (r.found) found.push({ query: r.query, hit: { id: r.found.id, name: r.found.name, source: r.found.source }, profile: r.found });
    else missing.push(r.query);
  }

  if (found.length === 0 && failures.length > 0 && missing.length > 0) {
    throw new ApiError(failures.some((f) => f.code === 'upstream_timeout') ? 'upstream_timeout' : 'upstream_error', { detail: '所有数据源均不可用' });
  }

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
    ...(failures.length > 0 ? { errors: failures } : {}),
  };
}
