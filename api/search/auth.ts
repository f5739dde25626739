// API keys on requests: X-API-Key checked before the request is read, then counted in one store
// operation. Every search and admin request counts in a per-client group first, so a flood is
// refused before any key is hashed or looked up; unauthenticated failures (no key, unknown key,
// wrong admin token) are rate limited per client IP besides, so guessing costs the guesser. No
// budget is shared by all clients: keys are random 256-bit values and the admin token a random
// 128-bit one at least (api/config.ts refuses a weaker one), so a global budget would only let one
// client lock every key holder or the operator out.
import { timingSafeEqual, createHash } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { ApiError, type ErrorCode } from '../../shared/errors.ts';
import type { Config } from '../config.ts';
import { limitedUntil, rateLimitHeaders, type RateLimiter, type RateLimitGroup, type RateLimitOutcome } from '../http/rate-limit.ts';
import type { KeyStore } from './keys/store.ts';
import { usesLeft, type ConsumeResult, type KeyRecord } from './keys/model.ts';
import { planFigures, type PlanFigures } from './plans.ts';

/** Quotas per IP a minute: SEARCH_RATE_LIMIT and SEARCH_ADMIN_RATE_LIMIT (api/config.ts gives their defaults). */
export const SEARCH_GROUPS = {
  search: { name: 'search', limit: (config: Config) => config.search.rateLimit },
  admin: { name: 'search-admin', limit: (config: Config) => config.search.adminRateLimit },
};

/** Failed key and token attempts per client a minute: an authentication group, so it fails closed. */
export const AUTH_FAILURES = { name: 'search-auth-failures', limit: 30, authentication: true } as const;

/** Throws `code`, or rate_limited once this IP has failed too often this minute. */
export async function refuse(limiter: RateLimiter, ctx: Context, code: ErrorCode): Promise<never> {
  await limiter.enforce(AUTH_FAILURES, ctx.ip);
  throw new ApiError(code);
}

export function presentedKey(ctx: Context): string | null {
  return ctx.get('X-API-Key').trim() || null;
}

/** 403 `key_exhausted`, saying how many uses are left when some are but fewer than `count`. */
function exhausted(record: KeyRecord | undefined, count: number): ApiError {
  const left = record ? usesLeft(record) : null;
  return new ApiError('key_exhausted', left ? { detail: { zh: `剩余 ${left} 次，此请求需要 ${count} 次`, en: `${left} use(s) left, this request needs ${count}` } } : {});
}

/** The record of an active key; 401 for an unknown one, 403 naming the state of another. */
async function accepted(result: ConsumeResult, limiter: RateLimiter, ctx: Context, count = 1): Promise<KeyRecord> {
  switch (result.state) {
    case 'active': return result.record;
    case 'unknown': return refuse(limiter, ctx, 'invalid_key');
    case 'exhausted': throw exhausted(result.record, count);
    default: throw new ApiError(`key_${result.state}`);
  }
}

/** The record of a key that could search, nothing counted (checked before the request is read). */
export async function checkKey(store: KeyStore, limiter: RateLimiter, ctx: Context, key: string): Promise<KeyRecord> {
  return accepted(await store.peek(key), limiter, ctx);
}

/** An accepted key's record and the figures of its plan (with its own overrides). */
export interface KeyUse { record: KeyRecord; figures: PlanFigures }

/**
 * Each key's searches a minute (its figure `searches_per_minute`), counted by key id in every
 * instance that shares the counters, whatever addresses the key comes from.
 */
export const keyRate = (figures: PlanFigures): RateLimitGroup => ({ name: 'search-key', limit: figures.searches_per_minute });

/** The key's rate as headers: the per-address X-RateLimit-* names with X-Key-. */
export function keyRateHeaders(outcome: RateLimitOutcome): Record<string, string> {
  return Object.fromEntries(Object.entries(rateLimitHeaders(outcome)).map(([name, value]) => [name.replace(/^X-/, 'X-Key-'), value]));
}

/** What a search answer says of its key: uses left (`unlimited` without a request limit) and its rate. */
function keyHeaders(record: KeyRecord, rate: RateLimitOutcome): Record<string, string> {
  return { 'X-Key-Requests-Remaining': String(usesLeft(record) ?? 'unlimited'), ...keyRateHeaders(rate) };
}

/**
 * Counts `count` searches against the key (a bulk request counts each of its queries): refused
 * whole when fewer uses are left (403 `key_exhausted`, nothing counted) or past the key's rate (429
 * `rate_limited` with Retry-After). The rate is counted before the uses, so a search refused for
 * the rate costs no use; a search the store then refuses (a race with another request for the
 * last uses) has counted in the minute, as any attempt does. The answer carries the key's figures
 * in headers. Uses the record keyAccepted read when the route has it, else reads it.
 */
export async function useKey(service: { keys: KeyStore; limiter: RateLimiter; config: Config }, ctx: Context, key: string, count = 1): Promise<KeyUse> {
  const known: KeyRecord = ctx.state.searchKey === key && ctx.state.searchKeyRecord ? ctx.state.searchKeyRecord : await checkKey(service.keys, service.limiter, ctx, key);
  if ((usesLeft(known) ?? Infinity) < count) throw exhausted(known, count);
  const rate = await service.limiter.check(keyRate(planFigures(service.config, known)), known.id, Date.now(), count);
  if (rate.limited) {
    throw limitedUntil(rate.resetAt, { zh: `此密钥每分钟最多 ${rate.limit} 次搜索`, en: `this key may make ${rate.limit} searches a minute` }, keyRateHeaders(rate));
  }
  const record = await accepted(await service.keys.consume(key, count), service.limiter, ctx, count);
  ctx.set(keyHeaders(record, rate));
  return { record, figures: planFigures(service.config, record) };
}

/**
 * A request without a key that could search is refused before anything else is read; the key is
 * left in `ctx.state.searchKey` and its record (as read, nothing counted) in
 * `ctx.state.searchKeyRecord`.
 */
export const keyAccepted = (service: { keys: KeyStore; limiter: RateLimiter }): Middleware => async (ctx, next) => {
  const key = presentedKey(ctx) ?? await refuse(service.limiter, ctx, 'missing_key');
  ctx.state.searchKeyRecord = await checkKey(service.keys, service.limiter, ctx, key);
  ctx.state.searchKey = key;
  await next();
};

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * Bearer token check in constant time (hashing first evens out the lengths). An address past its
 * failure limit is refused before the token is compared, so past the limit a right guess cannot be
 * told from a wrong one; other addresses are not affected (no budget of all clients).
 */
export async function requireAdmin(adminToken: string | null, limiter: RateLimiter, ctx: Context): Promise<void> {
  if (!adminToken) throw new ApiError('admin_disabled');
  // Cost 0: reads this address's failures without counting one.
  const failed = await limiter.check(AUTH_FAILURES, ctx.ip, Date.now(), 0);
  if (failed.limited) throw limitedUntil(failed.resetAt, { zh: '此地址的失败尝试过多', en: 'too many failed attempts from this address' }, rateLimitHeaders(failed));
  const match = /^Bearer\s+(.+)$/i.exec(ctx.get('Authorization'));
  if (match && timingSafeEqual(digest(match[1].trim()), digest(adminToken))) return;
  await refuse(limiter, ctx, 'unauthorized');
}
