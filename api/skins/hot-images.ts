// Hot cached images answered in front of the Koa stack: a GET or HEAD of a player's image whose
// profile and render this process holds fresh is answered here, with the same headers, rate-limit
// counting, 304, metrics and access log as the Koa route (image-routes.ts). Anything else (a
// miss, a stale entry, a bad parameter, a lagging loop) goes to Koa untouched; a request counted
// here and then limited goes too, marked as counted, so Koa answers the 429 without counting again.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Context } from 'koa';
import type { CacheNamespace } from '../cache.ts';
import { LruMap } from '../../shared/lru-map.ts';
import { FastReplies, type FastRequest } from '../http/fast-reply.ts';
import { handOverCounted, rateLimitHeaders } from '../http/rate-limit.ts';
import { IMAGE_KINDS, imageOptions, type ImageKind, type ImageOptions } from './image-params.ts';
import { IMAGE_ROUTES } from './image-routes.ts';
import { readParams } from '../http/params.ts';
import { etagMatches } from '../http/etag.ts';
import { IMAGE_CACHE_CONTROL, IMAGE_EXPOSED } from './image-response.ts';
import { acceptedFormat, CONTENT_TYPES, explicitFormat, splitExtension, type ImageFormat } from './image-format.ts';
import { RATE_GROUPS } from './route-params.ts';
import type { SkinsService } from './service.ts';
import type { RawProfile, SourceParam } from './types.ts';

/** The image routes' paths, for names and UUIDs that need no decoding (others go to Koa); a format's extension last. */
const IMAGE_PATH = new RegExp(`^/v1/(${IMAGE_KINDS.join('|')})/([A-Za-z0-9_-]{1,64})(?:/(\\d{1,3}))?(\\.[A-Za-z]{3,4})?$`);
/** Where parseurl (Koa's ctx.path and ctx.querystring) leaves its plain split at the first "?". */
const NOT_PLAIN = /[\t\n\f\r #\u00a0\ufeff]/;
/** The parameters of each GET image route, by its path template: what Koa reads for it. */
const ROUTE_PARAMS = new Map(IMAGE_ROUTES.filter((r) => r.method === 'get').map((r) => [r.path, r.params ?? []]));

export interface ParsedImageUrl {
  /** `route`: the route's path template (its metrics label). */
  path: string; route: string; name: string; options: ImageOptions; source: SourceParam;
  /** The format the URL names (`format=`, an extension); null: PNG, or by Accept where that is on. */
  format: ImageFormat | null;
  /** Render key and ETag by cached profile (the same object while it is cached) and format. */
  tags: WeakMap<RawProfile, Partial<Record<ImageFormat, { key: string; etag: string }>>>;
}

/** Koa's reading of a query string (koa/lib/search-params.js): a repeated name gives a list. */
function koaQuery(search: string): Record<string, string | string[]> {
  const query = new URLSearchParams(search);
  return Object.fromEntries([...new Set(query.keys())].map((key) => {
    const values = query.getAll(key);
    return [key, values.length === 1 ? values[0] : values];
  }));
}

/**
 * What an image URL asks for, read as the Koa route reads it: the same split of path and query,
 * the same query parser, the route's own parameter declarations. null when the fast path leaves
 * it to Koa (not an image path, a parameter Koa refuses). `memo` keeps image URLs only: every
 * other URL (a login callback's ?code=, anything a client makes up) passes without being kept.
 */
export function parseImageUrl(url: string, memo: Map<string, ParsedImageUrl | null>): ParsedImageUrl | null {
  const known = memo.get(url);
  if (known !== undefined) return known;
  const mark = url.indexOf('?');
  const path = mark < 0 ? url : url.slice(0, mark);
  const match = IMAGE_PATH.exec(path);
  if (!match || NOT_PLAIN.test(url)) return null;
  const parsed = readImageUrl(path, match, mark < 0 ? '' : url.slice(mark + 1));
  memo.set(url, parsed);
  return parsed;
}

function readImageUrl(path: string, [, kind, name, size, extension]: RegExpExecArray, search: string): ParsedImageUrl | null {
  const query = koaQuery(search);
  // A repeated parameter is Koa's 400.
  for (const value of Object.values(query)) if (Array.isArray(value)) return null;
  // One Koa takes off the path (image-format.ts extensionOf); any other leaves it to Koa.
  const named = extension ? splitExtension(extension).format : null;
  if (extension && !named) return null;
  try {
    const route = `/v1/${kind}/{name}${size ? '/{size}' : ''}`;
    // readParams reads ctx.params and ctx.query only.
    const params = readParams({ params: { name, size }, query } as unknown as Context, ROUTE_PARAMS.get(route)!);
    const format = explicitFormat(params.format as ImageFormat | undefined, named);
    return { path, route, name: params.name as string, options: imageOptions(kind as ImageKind, params), source: params.source as SourceParam, format, tags: new WeakMap() };
  } catch {
    return null;
  }
}

interface Hit { request: FastRequest; etag: string; image: Buffer | null; format: ImageFormat; vary: boolean; read: CacheNamespace<unknown>[] }

export function hotImages(service: SkinsService, fallback: RequestListener): RequestListener {
  const replies = new FastReplies('skins', service.log, service.config);
  const fromAccept = service.config.imageFormatFromAccept;

  // The same few URLs come again and again (embeds): parsed once each.
  const parsedUrls = new LruMap<ParsedImageUrl | null>(10_000, 4 * 1024 * 1024);

  /** The answer this process can give at once, or null. */
  const find = (req: IncomingMessage, started: bigint): Hit | null => {
    const parsed = parseImageUrl(req.url ?? '', parsedUrls);
    if (!parsed) return null;
    const { name, options, source } = parsed;
    const read: CacheNamespace<unknown>[] = [];
    const profile = service.lookup.peek(name, source, read);
    if (!profile) return null;
    // As Koa chooses (image-format.ts requestFormat): the URL's format, else Accept's where that is on.
    const vary = !parsed.format && fromAccept;
    const format = parsed.format ?? (vary ? acceptedFormat(req.headers.accept) : 'png');
    let tags = parsed.tags.get(profile);
    if (!tags) parsed.tags.set(profile, tags = {});
    const { key, etag } = tags[format] ??= service.images.tagOf(profile, options, format);
    const notModified = etagMatches(req.headers['if-none-match'], etag);
    // Koa answers a 304 from the ETag alone, before reading the render.
    const image = notModified ? null : service.images.peekRender(key, read);
    if (image === undefined) return null;
    return { request: replies.begin(req, started, parsed.path, parsed.route), etag, image, format, vary, read };
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
    if (hit.vary) headers.push('Vary', 'Accept');
    if (!hit.image) return replies.send(req, res, hit.request, 304, [...headers, 'X-Cache', 'HIT'], null);
    replies.send(req, res, hit.request, 200, [...headers, 'Content-Type', CONTENT_TYPES[hit.format], 'X-Cache', 'HIT', 'Content-Length', String(hit.image.length)], hit.image);
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
