// Resized and converted variants of images (w, h, fit, fmt, q, blur, grayscale, upscale): made
// with sharp from the original (EXIF orientation applied), each under its own immutable address
// `/f/<id>.<ext>?<options in canonical order>`. sharp works in libuv's threads; a fair queue
// bounds how many it makes at once (one per client at a time, clients in turn), each uncached
// variant costs its client's MEDIA_VARIANT_BUDGET by its pixels, and made ones are kept in an LRU
// bounded in bytes (cached ones cost nothing).
import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import sharp, { type Sharp } from 'sharp';
import { ApiError } from '../../shared/errors.ts';
import { FairQueue } from '../../shared/fair-queue.ts';
import { LruMap } from '../../shared/lru-map.ts';
import { between, choice, flag, inQuery, type Param, type Params } from '../http/params.ts';
import { clientKey, type RateLimiter } from '../http/rate-limit.ts';
import type { MediaSettings } from './config.ts';
import { answeredNotModified, isOpen, openIndexed, sendBytes, sendMediaFile, type SendOptions, type SendResult, type Unsent } from './file-response.ts';
import type { MediaFile, MediaType } from './types.ts';

const MAX_SIDE = 4096;
const FITS = ['cover', 'contain', 'inside'] as const;
const FORMATS = ['webp', 'avif', 'jpeg', 'png'] as const;
type Fit = typeof FITS[number];
type VariantFormat = typeof FORMATS[number];
const MIME: Record<VariantFormat, string> = { webp: 'image/webp', avif: 'image/avif', jpeg: 'image/jpeg', png: 'image/png' };
/** Without fmt a variant keeps its original's format where sharp writes it; a GIF (its first frame) becomes PNG. */
const KEPT_FORMAT: Record<string, VariantFormat> = { 'image/webp': 'webp', 'image/avif': 'avif', 'image/jpeg': 'jpeg', 'image/png': 'png' };
/** Variants waiting for a thread past the running ones; past this a request hears 503. */
const MAX_WAITING = 64;
const MAX_CACHED = 100_000;

export interface VariantOptions {
  w: number | undefined;
  h: number | undefined;
  fit: Fit;
  fmt: VariantFormat | undefined;
  q: number | undefined;
  blur: number | undefined;
  grayscale: boolean;
  upscale: boolean;
  /** The options in canonical order, as the variant's address carries them. */
  query: string;
}

/** The parameters of a variant, on the random route and on permanent addresses, in canonical order. */
export const VARIANT_PARAMS: Param[] = [
  inQuery('w', `media images: width of a resized variant (1-${MAX_SIDE}; never wider than the original unless upscale=1)`, between('integer', 1, MAX_SIDE)),
  inQuery('h', `media images: height of a resized variant (1-${MAX_SIDE}; never taller than the original unless upscale=1)`, between('integer', 1, MAX_SIDE)),
  inQuery('fit', 'media images, with w and h: cover crops to fill both (the default), contain letterboxes, inside keeps the whole picture within', choice(FITS)),
  inQuery('fmt', 'media images: the variant\'s format (default: the original\'s; a GIF becomes PNG)', choice(FORMATS)),
  inQuery('q', 'media images: quality of the variant\'s encoding (1-100; sharp\'s default when absent)', between('integer', 1, 100)),
  inQuery('blur', 'media images: Gaussian blur of this sigma (1-10)', between('integer', 1, 10)),
  flag('grayscale', 0, 'media images: the variant in shades of grey'),
  flag('upscale', 0, 'media images: let w and h enlarge a smaller original'),
];
const NAMES = VARIANT_PARAMS.map((p) => p.name);
/** Values that ask for nothing: left out of the address, so that a variant has one. */
const DEFAULTS: Record<string, unknown> = { fit: 'cover', grayscale: false, upscale: false };

/**
 * The variant the parameters ask for; undefined when they ask for none (the original). Videos
 * take none: the first option given is named in a 400.
 */
export function variantOptions(params: Params, type: MediaType): VariantOptions | undefined {
  const given = NAMES.filter((name) => params[name] !== undefined && params[name] !== DEFAULTS[name]);
  if (given.length === 0) return undefined;
  if (type === 'video') throw new ApiError('bad_request', { detail: { zh: `${given[0]} 不适用于视频`, en: `${given[0]} does not apply to videos` } });
  return {
    w: params.w as number | undefined, h: params.h as number | undefined, fit: (params.fit as Fit | undefined) ?? 'cover',
    fmt: params.fmt as VariantFormat | undefined, q: params.q as number | undefined, blur: params.blur as number | undefined,
    grayscale: params.grayscale === true, upscale: params.upscale === true,
    query: given.map((name) => `${name}=${typeof params[name] === 'boolean' ? 1 : String(params[name])}`).join('&'),
  };
}

interface Variant { bytes: Buffer; mime: string; etag: string }
const isVariant = (made: Variant | Unsent): made is Variant => typeof made !== 'string' && !('failed' in made);

/** The variant's tag: its file's id and a hash of its options. */
const etagOf = (file: MediaFile, o: VariantOptions) => `"${file.id}-${createHash('sha256').update(o.query).digest('base64url').slice(0, 16)}"`;

/** Pixels written: the box asked for, the picture's shape kept where one side is free, never past the original unless upscale. */
function pixelsOut(file: MediaFile, o: VariantOptions): number {
  const scale = (side: number | undefined, of: number) => (side === undefined ? Infinity : side / of);
  let s = Math.min(scale(o.w, file.width), scale(o.h, file.height));
  if (s === Infinity) s = 1;
  if (!o.upscale) s = Math.min(s, 1);
  const box = o.w !== undefined && o.h !== undefined && o.fit !== 'inside' && (o.upscale || (o.w <= file.width && o.h <= file.height));
  return box ? o.w! * o.h! : Math.ceil(file.width * s) * Math.ceil(file.height * s);
}

/** What an uncached variant costs its client's budget: megapixels read and written, at least 1. */
function variantCost(file: MediaFile, o: VariantOptions): number {
  return Math.max(1, Math.ceil((file.width * file.height + pixelsOut(file, o)) / 1e6));
}

/** sharp's pipeline of a variant (test/media-variants.test.ts checks its pixels against sharp's own calls). */
function pipeline(input: Buffer, o: VariantOptions, format: VariantFormat): Sharp {
  let image = sharp(input).rotate();
  if (o.w !== undefined || o.h !== undefined) image = image.resize({ width: o.w, height: o.h, fit: o.fit, withoutEnlargement: !o.upscale });
  if (o.blur !== undefined) image = image.blur(o.blur);
  if (o.grayscale) image = image.grayscale();
  return image.toFormat(format, o.q === undefined ? {} : { quality: o.q });
}

export class VariantMaker {
  private readonly cache: LruMap<Variant>;
  /** Variants being made: a second request for one waits for it (and is not charged). */
  private readonly making = new Map<string, Promise<Variant | Unsent>>();
  private readonly queue: FairQueue;
  private readonly budget: { name: string; limit: number };
  private readonly limiter: RateLimiter;

  constructor(settings: MediaSettings, limiter: RateLimiter) {
    this.limiter = limiter;
    this.cache = new LruMap(MAX_CACHED, settings.variantCacheMb * 1024 * 1024);
    this.budget = { name: 'media-variant', limit: settings.variantBudget };
    this.queue = new FairQueue(settings.variantConcurrency, MAX_WAITING, () => new ApiError('overloaded', {
      detail: { zh: '正在生成的图片变体过多，请稍后再试', en: 'too many image variants are being made; try again shortly' }, retryAfter: 1,
    }));
  }

  /** Answers the file, or its variant when options ask for one; the caller settles 'stale' and failures as for the file. */
  async send(ctx: Context, file: MediaFile, filePath: string | undefined, variant: VariantOptions | undefined, options: SendOptions): Promise<SendResult> {
    if (!variant) return sendMediaFile(ctx, file, filePath, options);
    const etag = etagOf(file, variant);
    if (answeredNotModified(ctx, file, options.cache, false, etag)) return 'sent';
    const key = `${file.id}?${variant.query}`;
    let made = this.cache.get(key) ?? await this.making.get(key);
    if (!made) {
      await this.limiter.enforce(this.budget, ctx.ip, {
        zh: '此地址本分钟生成的图片变体过多（按像素计）；已缓存的变体仍可获取',
        en: 'too many uncached image variants from this address this minute (by pixels); cached variants are still served',
      }, variantCost(file, variant));
      made = await this.made(key, () => this.queue.run(clientKey(ctx.ip), () => this.make(file, filePath, variant, etag)));
    }
    if (!isVariant(made)) return made;
    sendBytes(ctx, file, options.cache, made);
    return 'sent';
  }

  /** The variant of `key` being made (one making per key), kept once made. */
  private async made(key: string, make: () => Promise<Variant | Unsent>): Promise<Variant | Unsent> {
    let making = this.making.get(key);
    if (!making) {
      making = make();
      this.making.set(key, making);
      void making.then((v) => {
        if (isVariant(v)) this.cache.set(key, v);
      }, () => undefined).finally(() => this.making.delete(key));
    }
    return making;
  }

  private async make(file: MediaFile, filePath: string | undefined, o: VariantOptions, etag: string): Promise<Variant | Unsent> {
    const handle = await openIndexed(file, filePath);
    if (!isOpen(handle)) return handle;
    let input: Buffer;
    try {
      input = await handle.readFile();
    } finally {
      await handle.close();
    }
    const format = o.fmt ?? KEPT_FORMAT[file.format.mime] ?? 'png';
    return { bytes: await pipeline(input, o, format).toBuffer(), mime: MIME[format], etag };
  }
}
