// API keys on requests: X-API-Key checked and counted in one store operation. Unauthenticated
// failures (no key, unknown key, wrong admin token) are rate limited per client IP so guessing
// costs the guesser, not the store.
import { timingSafeEqual, createHash } from 'node:crypto';
import type { Context } from 'koa';
import { ApiError, type ErrorCode } from '../../shared/errors.ts';
import type { RateLimiter } from '../http/rate-limit.ts';
import type { KeyStore } from './keys/store.ts';
import type { KeyRecord } from './keys/model.ts';

export const AUTH_FAILURES = { name: 'search-auth-failures', limit: 30 } as const;

/** Throws `code`, or rate_limited once this IP has failed too often this minute. */
export async function refuse(limiter: RateLimiter, ctx: Context, code: ErrorCode): Promise<never> {
  const outcome = await limiter.check(AUTH_FAILURES, ctx.ip);
  if (outcome.limited) throw new ApiError('rate_limited', { retryAfter: Math.ceil((outcome.resetAt - Date.now()) / 1000) });
  throw new ApiError(code);
}

export function presentedKey(ctx: Context): string | null {
  return ctx.get('X-API-Key').trim() || null;
}

/** Checks the key and counts this request against it; 401 for unknown, 403 naming the state. */
export async function useKey(store: KeyStore, limiter: RateLimiter, ctx: Context, key: string): Promise<KeyRecord> {
  const result = await store.consume(key);
  switch (result.state) {
    case 'active': return result.record;
    case 'unknown': return refuse(limiter, ctx, 'invalid_key');
    default: throw new ApiError(`key_${result.state}`);
  }
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Bearer token check in constant time (hashing first evens out the lengths). */
export async function requireAdmin(adminToken: string | null, limiter: RateLimiter, ctx: Context): Promise<void> {
  if (!adminToken) throw new ApiError('admin_disabled');
  const match = /^Bearer\s+(.+)$/i.exec(ctx.get('Authorization'));
  if (!match || !timingSafeEqual(digest(match[1].trim()), digest(adminToken))) await refuse(limiter, ctx, 'unauthorized');
}
