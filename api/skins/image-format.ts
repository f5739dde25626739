// The file format of an image answer (issue #31): PNG unless the request names another, by
// `format=` or by an extension on the last path segment (`/v1/render/Knight/256.webp`), or,
// only where the operator turns it on (IMAGE_FORMAT_FROM_ACCEPT), by its Accept header. WebP and
// AVIF are encoded from the PNG the renderer drew, losslessly: the pixels are the PNG's.
import type { Context, Middleware } from 'koa';
import sharp from 'sharp';
import { ApiError } from '../../shared/errors.ts';
import { FairQueue } from '../../shared/fair-queue.ts';
import { LruMap } from '../../shared/lru-map.ts';
import { choice, inQuery } from '../http/params.ts';
import { gaugeFrom } from '../metrics.ts';

export type ImageFormat = 'png' | 'webp' | 'avif';
export const IMAGE_FORMATS: readonly ImageFormat[] = ['png', 'webp', 'avif'];
export const CONTENT_TYPES: Readonly<Record<ImageFormat, string>> = { png: 'image/png', webp: 'image/webp', avif: 'image/avif' };

/** No default: a request that names no format may still get one from Accept. */
export const formatParam = inQuery('format', 'file format (default png; also chosen by an extension on the last path segment: `/256.webp`, `/{name}.avif`)', choice(IMAGE_FORMATS), { example: 'webp' });

// Names ([A-Za-z0-9_], the external source's letters, digits, _ and -; a Bedrock name's dot is
// its first character) and UUIDs end in no dot and extension, nor does a size: a known extension
// is never part of what it follows.
const EXTENSION = /\.(png|webp|avif)$/i;

/** `segment` without a known extension, and the format it names (null when none). */
export function splitExtension(segment: string): { base: string; format: ImageFormat | null } {
  const match = EXTENSION.exec(segment);
  return match ? { base: segment.slice(0, match.index), format: match[1].toLowerCase() as ImageFormat } : { base: segment, format: null };
}

/**
 * Before the parameters are read: takes the extension off the path's last segment (`name` or
 * `size`), read by `split` (a still's formats by default; turntables bring their own).
 */
export const extensionOf = (segment: 'name' | 'size', split: (segment: string) => { base: string; format: string | null } = splitExtension): Middleware => (ctx, next) => {
  const params = ctx.params as Record<string, string | undefined>;
  const { base, format } = split(params[segment] ?? '');
  if (format) {
    params[segment] = base;
    ctx.state.extensionFormat = format;
  }
  return next();
};

/** The format the request names (`format=`, the extension), or null; both naming different ones is bad_request. */
export function explicitFormat<F extends string>(given: F | undefined, extension: F | null | undefined): F | null {
  if (given && extension && given !== extension) {
    // The format, not the extension as written: a turntable's `.png` names apng.
    throw new ApiError('bad_request', { detail: { zh: `format=${given} 与扩展名所指的 ${extension} 不一致`, en: `format=${given} and the extension, which names ${extension}, disagree` } });
  }
  return given ?? extension ?? null;
}

/**
 * Among types a client accepts alike: WebP (the smallest, and cheap to encode), then PNG, then
 * AVIF (larger than the PNG below 256 px and tens to hundreds of ms to encode: docs/benchmarks.md).
 */
const PREFERENCE: readonly ImageFormat[] = ['webp', 'png', 'avif'];
const chosen = new LruMap<ImageFormat>(256);

/**
 * The format an Accept header asks for: the highest q among image/webp and image/avif named
 * explicitly and image/png (or image/*, * / *), ties going to PREFERENCE. A client that names
 * neither WebP nor AVIF (curl's * / *) gets PNG, so nothing changes for it.
 */
export function readAccept(accept: string): ImageFormat {
  const q: Record<ImageFormat, number> = { png: 0, webp: 0, avif: 0 };
  // An entry's type and q (RFC 9110 12.5.1); an unreadable q counts as 1, as browsers do.
  for (const entry of accept.split(',')) {
    const [type, ...params] = entry.split(';');
    const quality = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('q='));
    const value = quality ? Number(quality.slice(2)) : 1;
    const weight = Number.isFinite(value) ? Math.min(Math.max(value, 0), 1) : 1;
    const name = type.trim().toLowerCase();
    const format = name === 'image/webp' ? 'webp' : name === 'image/avif' ? 'avif' : name === 'image/png' || name === 'image/*' || name === '*/*' ? 'png' : null;
    if (format) q[format] = Math.max(q[format], weight);
  }
  const best = PREFERENCE.reduce((a, b) => (q[b] > q[a] ? b : a));
  return q[best] > 0 ? best : 'png';
}

/** readAccept, remembered: browsers send a handful of distinct headers (a long made-up one is read each time, not kept). */
export function acceptedFormat(accept: string | undefined): ImageFormat {
  if (!accept) return 'png';
  let format = chosen.get(accept);
  if (!format) {
    format = readAccept(accept);
    if (accept.length <= 512) chosen.set(accept, format);
  }
  return format;
}

/**
 * The format of this Koa request's answer. From Accept only when `fromAccept` (then the answer
 * says Vary: Accept, so caches keep one per header); else Accept is ignored and nothing varies.
 */
export function requestFormat(ctx: Context, given: unknown, fromAccept: boolean): ImageFormat {
  const explicit = explicitFormat(given as ImageFormat | undefined, ctx.state.extensionFormat as ImageFormat | undefined);
  if (explicit) return explicit;
  if (!fromAccept) return 'png';
  ctx.vary('Accept');
  return acceptedFormat(ctx.get('Accept'));
}

/**
 * Lossless settings, chosen by `npm run bench:formats` (docs/benchmarks.md). WebP `exact` keeps
 * the colour of fully transparent pixels too (a few bytes more), so the decoded pixels equal the
 * PNG's byte for byte; effort 2 packs as small as 4 and 6 here (15% of the PNG), for no more CPU.
 * AVIF lossless (libvips: identity matrix, 4:4:4) is exact too, but about as large as the PNG:
 * effort 2 is within ~8% of efforts 3 and 4 in bytes at less CPU (4, the default, takes seconds
 * for a body); lossy AVIF, even at q90 4:4:4, moves texel colours by up to 45 of 255.
 * Above AVIF_EFFORT_2_MAX_PIXELS AVIF is encoded at effort 1 (issue #38, docs/benchmarks.md "Work
 * per client"): a 512 px body took 885 ms of CPU at effort 2 and 278 at effort 1, and its file
 * is still smaller than the PNG (78%, against 55%); below, effort 1 makes files larger than the PNG.
 */
const WEBP = { lossless: true, exact: true, effort: 2 } as const;
const AVIF = { lossless: true, effort: 2 } as const;
const AVIF_LARGE = { lossless: true, effort: 1 } as const;
export const AVIF_EFFORT_2_MAX_PIXELS = 256 * 512;

/**
 * CPU ms an encode takes per megapixel, measured with these settings (docs/benchmarks.md, "Work
 * per client"): what an image costs its client's work budget (image-cost.ts).
 */
export function encodeMsPerMegapixel(format: ImageFormat, pixels: number): number {
  if (format === 'png') return 0;
  if (format === 'webp') return 300;
  return pixels <= AVIF_EFFORT_2_MAX_PIXELS ? 1800 : 700;
}

/**
 * Encodes running at once, and waiting: sharp runs each in libuv's pool (4 threads unless
 * UV_THREADPOOL_SIZE says otherwise), which DNS lookups of upstream calls, file reads and skin
 * decodes need too; an AVIF takes a core for tenths of a second, so a burst of them must not hold
 * every thread, nor one client's burst every slot: the queue is fair (shared/fair-queue.ts), one
 * encode of a client at a time. Past the waiting bound the answer is 503 `overloaded`, as the
 * render queue's is.
 */
const RUNNING_MAX = 2;
const WAITING_MAX = 256;
const encodes = new FairQueue(RUNNING_MAX, WAITING_MAX, () => new ApiError('overloaded', { detail: { zh: '图像编码队列已满', en: 'the image encoding queue is full' }, retryAfter: 5 }));
gaugeFrom('skinfarm_encode_queue_running', 'Image encodes (stills and turntables) running', () => encodes.running);
gaugeFrom('skinfarm_encode_queue_waiting', 'Image encodes waiting for their client\'s turn', () => encodes.waiting);

/** Runs an encode (a still's, a turntable's) in `client`'s turn of the encode queue. */
export function queuedEncode<T>(client: string, encode: () => Promise<T>): Promise<T> {
  return encodes.run(client, encode);
}

/** Width x height of a PNG, from its header (IHDR is always the first chunk). */
const pngPixels = (png: Buffer) => png.readUInt32BE(16) * png.readUInt32BE(20);

/** The PNG re-encoded as `format` for `client` (sharp: in libuv's pool, off the event loop). */
export function encodeImage(png: Buffer, format: Exclude<ImageFormat, 'png'>, client: string): Promise<Buffer> {
  return queuedEncode(client, () => {
    const image = sharp(png);
    return (format === 'webp' ? image.webp(WEBP) : image.avif(pngPixels(png) <= AVIF_EFFORT_2_MAX_PIXELS ? AVIF : AVIF_LARGE)).toBuffer();
  });
}
