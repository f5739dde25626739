// One place that sets every status and header of an image reply (ETag, 304, download); its
// Cache-Control is its route's (IMAGE_CACHE_CONTROL in the table entry).
import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { LruMap } from '../../shared/lru-map.ts';
import { etagMatches } from '../http/etag.ts';
import type { CacheState } from './types.ts';

/** Browsers and CDNs may keep a player-addressed image as long as the profile cache does. */
const IMAGE_MAX_AGE = 300;
/** Cache-Control of every image route (declared in its table entry) and of the hot path's replies. */
export const IMAGE_CACHE_CONTROL = `public, max-age=${IMAGE_MAX_AGE}, immutable`;

const etags = new LruMap<string>(20_000);

/**
 * What an image reply lets scripts of other origins read: the shell's list also names headers an
 * image never carries (ranges, Retry-After), which only lengthens every reply. Errors get the full list again.
 */
export const IMAGE_EXPOSED = 'X-Request-Id, X-Response-Time, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Cache, ETag';

/** A strong ETag from what decides the pixels (remembered: hot images ask for it constantly). */
export function imageEtag(...parts: (string | number | boolean | null | undefined)[]): string {
  const key = parts.map(String).join('|');
  let etag = etags.get(key);
  if (!etag) {
    etag = `"${createHash('sha256').update(key).digest('base64url').slice(0, 27)}"`;
    etags.set(key, etag);
  }
  return etag;
}

/** True (and a 304 set) when the client already holds this ETag. */
export function notModified(ctx: Context, etag: string): boolean {
  ctx.set('ETag', etag);
  if (!etagMatches(ctx.get('If-None-Match'), etag)) return false;
  ctx.set('Access-Control-Expose-Headers', IMAGE_EXPOSED);
  ctx.status = 304;
  ctx.set('X-Cache', 'HIT');
  return true;
}

export interface PngReply {
  png: Buffer; etag: string; cache: CacheState; download?: string | null;
  /** Its media type when not a PNG (another format, an animation). */
  type?: string;
}

export function sendPng(ctx: Context, reply: PngReply): void {
  ctx.status = 200;
  ctx.type = reply.type ?? 'image/png';
  ctx.set('ETag', reply.etag);
  ctx.set('X-Cache', reply.cache);
  ctx.set('Access-Control-Expose-Headers', reply.download ? `${IMAGE_EXPOSED}, Content-Disposition` : IMAGE_EXPOSED);
  if (reply.download) ctx.attachment(reply.download);
  ctx.body = reply.png;
}
