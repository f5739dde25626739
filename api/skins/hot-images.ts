// Hot cached images answered in front of the Koa stack: a GET or HEAD of a player's image whose
// profile and render this process holds fresh is answered here, with the same headers, rate-limit
// counting, 304, metrics and access log as the Koa route (image-routes.ts). Anything else (a
// miss, a stale entry, a bad parameter, a lagging loop) goes to Koa untouched; a request counted
// here and then limited goes too, marked as counted, so Koa answers the 429 without counting again.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { parse as parseQuery, type ParsedUrlQuery } from 'node:querystring';
import type { Context } from 'koa';
import type { CacheNamespace } from '../cache.ts';
import { LruMap } from '../../shared/lru-map.ts';
import { FastReplies, type FastRequest } from '../http/fast-reply.ts';
import { handOverCounted, rateLimitHeaders } from '../http/rate-limit.ts';
import { IMAGE_KINDS, imageOptions, imageParams, type ImageKind, type ImageOptions } from './image-params.ts';
import { readParams } from '../http/params.ts';
import { IMAGE_CACHE_CONTROL, IMAGE_EXPOSED, etagMatches } from './image-response.ts';
import { routeGroup } from '../metrics.ts';
import { RATE_GROUPS, source as sourceParam } from './route-params.ts';
import type { SkinsService } from './service.ts';
import type { RawProfile, SourceParam } from './types.ts';

/** The image routes' paths, for names and UUIDs that need no decoding (others go to Koa). */
const IMAGE_PATH = new RegExp(`^/v1/(${IMAGE_KINDS.join('|')})/([A-Za-z0-9_-]{1,64})(?:/(\\d{1,3}))?$`);

interface Parsed {
  path: string; group: string; name: string; options: ImageOptions; source: SourceParam;
  /** Render key and ETag by cached profile (the same object while it is cached). */
  tags: WeakMap<RawProfile, { key: string; etag: string }>;
}

interface Hit { request: FastRequest; etag: string; png: Buffer | null; read: CacheNamespace<unknown>[] }

export function hotImages(service: SkinsService, fallback: RequestListener): RequestListener {
  const replies = new FastReplies('skins', service.log, service.config);

  /** What an image URL asks for; null when the fast path leaves it to Koa. */
  const parse = (url: string): Parsed | null => {
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    const match = IMAGE_PATH.exec(path);
    if (!match) return null;
    const query: ParsedUrlQuery = mark < 0 ? {} : parseQuery(url.slice(mark + 1));
    // A repeated parameter is Koa's 400.
    for (const value of Object.values(query)) if (Array.isArray(value)) return null;
    try {
      // The route's own declarations, read the same strict way (readParams reads ctx.params and ctx.query only).
      const kind = match[1] as ImageKind;
      const params = readParams({ params: { size: match[3] }, query } as unknown as Context, [...imageParams(kind, match[3] ? 'path' : 'query'), sourceParam]);
      return { path, group: routeGroup(path), name: match[2], options: imageOptions(kind, params), source: params.source as SourceParam, tags: new WeakMap() };
    } catch {
      return null;
    }
  };
  // The same few URLs come again and again (embeds): parsed once each.
  const parsedUrls = new LruMap<Parsed | null>(10_000, 4 * 1024 * 1024);

  /** The answer this process can give at once, or null. */
  const find = (req: IncomingMessage, started: bigint): Hit | null => {
    const url = req.url ?? '';
    let parsed = parsedUrls.get(url);
    if (parsed === undefined) {
      parsed = parse(url);
      parsedUrls.set(url, parsed);
    }
    if (!parsed) return null;
    const { name, options, source } = parsed;
    const read: CacheNamespace<unknown>[] = [];
    const profile = service.lookup.peek(name, source, read);
    if (!profile) return null;
    let tag = parsed.tags.get(profile);
    if (!tag) {
      tag = service.images.tagOf(profile, options);
      parsed.tags.set(profile, tag);
    }
    const { key, etag } = tag;
    const notModified = etagMatches(req.headers['if-none-match'], etag);
    // Koa answers a 304 from the ETag alone, before reading the render.
    const png = notModified ? null : service.images.peekRender(key, read);
    if (png === undefined) return null;
    return { request: replies.begin(req, started, parsed.path, parsed.group), etag, png, read };
  };

  const answer = async (req: IncomingMessage, res: ServerResponse, hit: Hit) => {
    const outcome = await service.limiter.check(RATE_GROUPS.image, hit.request.ip);
    if (outcome.limited) {
      handOverCounted(req, outcome);
      return fallback(req, res);
    }
    for (const ns of hit.read) ns.countHit();
    const limits = rateLimitHeaders(outcome);
    const headers = [
      'Access-Control-Expose-Headers', IMAGE_EXPOSED, 'X-RateLimit-Limit', limits['X-RateLimit-Limit'], 'X-RateLimit-Remaining', limits['X-RateLimit-Remaining'], 'X-RateLimit-Reset', limits['X-RateLimit-Reset'],
      'ETag', hit.etag, 'Cache-Control', IMAGE_CACHE_CONTROL,
    ];
    if (!hit.png) return replies.send(req, res, hit.request, 304, [...headers, 'X-Cache', 'HIT'], null);
    replies.send(req, res, hit.request, 200, [...headers, 'Content-Type', 'image/png', 'X-Cache', 'HIT', 'Content-Length', String(hit.png.length)], hit.png);
  };

  return (req, res) => {
    const hit = (req.method === 'GET' || req.method === 'HEAD') && replies.open ? find(req, process.hrtime.bigint()) : null;
    if (!hit) return fallback(req, res);
    answer(req, res, hit).catch((err: unknown) => {
      service.log.error('hot image failed', { err });
      if (!res.headersSent) fallback(req, res);
    });
  };
}
