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
import { limitedUntil, rateLimitHeaders, type RateLimiter } from '../http/rate-limit.ts';
import type { KeyStore } from './keys/store.ts';
import type { ConsumeResult, KeyRecord } from './keys/model.ts';
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

/** The record of an active key; 401 for an unknown one, 403 naming the state of another. */
async function accepted(result: ConsumeResult, limiter: RateLimiter, ctx: Context): Promise<KeyRecord> {
  switch (result.state) {
    case 'active': return result.record;
    case 'unknown': return refuse(limiter, ctx, 'invalid_key');
    default: throw new ApiError(`key_${result.state}`);
  }
}

/** Refuses a key that could not search, without counting a use (before the request is read). */
export async function checkKey(store: KeyStore, limiter: RateLimiter, ctx: Context, key: string): Promise<void> {
  await accepted(await store.peek(key), limiter, ctx);
}

/** An accepted key's record and the figures of its plan (with its own overrides). */
export interface KeyUse { record: KeyRecord; figures: PlanFigures }

/**
 * Checks the key and counts `count` searches against it (a bulk request counts each of its
 * queries).
 */
export async function useKey(keys: { store: KeyStore; limiter: RateLimiter; config: Config }, ctx: Context, key: string, _count = 1): Promise<KeyUse> {
  const record = await accepted(await keys.store.consume(key), keys.limiter, ctx);
  return { record, figures: planFigures(keys.config, record) };
}

/**
 * A request without a key that could search is refused before anything else is read; the key is
 * left in `ctx.state.searchKey`. Nothing is counted against the key here.
 */
export const keyAccepted = (service: { keys: KeyStore; limiter: RateLimiter }): Middleware => async (ctx, next) => {
  const key = presentedKey(ctx) ?? await refuse(service.limiter, ctx, 'missing_key');
  await checkKey(service.keys, service.limiter, ctx, key);
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
