// Image endpoints: a player's skin (or the game's default skin) drawn by sharp (avatar) or the
// render farm (head, body, 3D render, cube). Renders are cached by texture hash + options, the
// ETag comes from the same key so a 304 costs no render, and identical requests render once.
import type { Context } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import { renderAvatar } from '../../renderer/avatar-2d.ts';
import { defaultSkin } from '../../renderer/default-skins.ts';
import type { RenderFarm } from '../../renderer/farm.ts';
import type { RenderJob } from '../../renderer/jobs.ts';
import { normalizeCape, normalizeSkin, type NormalizedCape, type NormalizedSkin } from '../../renderer/skin-normalize.ts';
import { renderDuration } from '../metrics.ts';
import type { Cache, CacheNamespace } from '../cache.ts';
import { LruMap } from '../../shared/lru-map.ts';
import { ReadThrough } from '../read-through.ts';
import { CONTENT_TYPES, encodeImage, type ImageFormat } from './image-format.ts';
import { imageEtag, notModified, sendPng } from './image-response.ts';
import { optionsKey, type ImageOptions } from './image-params.ts';
import { readTextures } from './records.ts';
import type { RenderLock } from './render-lock.ts';
import type { TextureStore } from './texture-store.ts';
import type { RawProfile } from './types.ts';

/** A cached image as a Buffer: the stored one itself (no copy per hit) unless a store gave bytes. */
function asBuffer(value: Uint8Array): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.from(value);
}

/** What is drawn: the skin (by hash or default name), its model and the cape. */
interface Subject { skinUrl: string | null; skinKey: string; slim: boolean; capeUrl: string | null; capeKey: string; defaultName: string | null }

function subjectOf(profile: RawProfile): Subject {
  const { skin } = readTextures(profile);
  return {
    skinUrl: skin.skinUrl,
    skinKey: skin.skinHash ?? `default-${skin.defaultSkin}`,
    slim: skin.slim,
    capeUrl: skin.capeUrl,
    capeKey: skin.capeHash ?? '-',
    defaultName: skin.defaultSkin,
  };
}

const withCapeFor = (o: ImageOptions) => o.kind === 'render' || o.kind === 'body';

/** The render cache key, and the ETag's source: what decides the pixels, and the format (PNG's keys are those of before formats). */
function imageKey(subject: Subject, options: ImageOptions, format: ImageFormat): string {
  const key = `${optionsKey(options)}|${subject.skinKey}|${+subject.slim}|${withCapeFor(options) ? subject.capeKey : '-'}`;
  return format === 'png' ? key : `${key}|${format}`;
}

export class ImageRenderer {
  private readonly textures: TextureStore;
  private readonly renders: ReadThrough<Buffer>;
  private readonly farm: () => RenderFarm | null;
  /** Decoded skins and capes by texture hash: a cold render of known textures skips the PNG decode. */
  // Bounded in bytes too: an HD skin decodes to up to 4 MiB (512 of them were 2 GiB).
  private readonly decodedSkins = new LruMap<Promise<NormalizedSkin>>(512, 32 * 1024 * 1024);
  private readonly decodedCapes = new LruMap<Promise<NormalizedCape>>(256, 8 * 1024 * 1024);

  /** Forgets the decoded textures (idle: decoding one again takes ~35 µs). */
  trim(): void {
    this.decodedSkins.clear();
    this.decodedCapes.clear();
  }

  constructor(textures: TextureStore, cache: Cache, farm: () => RenderFarm | null, lock: RenderLock) {
    this.textures = textures;
    // One cold render per key across instances: the lock holder renders, the others find its PNG.
    this.renders = new ReadThrough(cache.namespace('render', undefined, 0), { exclusive: lock });
    this.farm = farm;
  }

  /**
   * Answers one image request for a player's profile; `admit` is asked before this request draws
   * an image of its own (or encodes one: a WebP or AVIF is made from the PNG, itself cached).
   */
  async reply(ctx: Context, profile: RawProfile, options: ImageOptions, format: ImageFormat, admit?: () => Promise<void>): Promise<void> {
    const subject = subjectOf(profile);
    const key = imageKey(subject, options, format);
    const etag = imageEtag(key);
    if (notModified(ctx, etag)) return;
    const png = async () => (await this.renders.get(imageKey(subject, options, 'png'), () => this.drawSubject(subject, options))).value;
    const { value, cache } = await this.renders.get(key, async () => (format === 'png' ? this.drawSubject(subject, options) : encodeImage(asBuffer(await png()), format)), { admit });
    sendPng(ctx, { png: asBuffer(value), type: CONTENT_TYPES[format], etag, cache });
  }

  private async drawSubject(subject: Subject, options: ImageOptions): Promise<Buffer> {
    const skin = subject.skinUrl ? await this.skin(subject.skinUrl, subject.skinKey) : defaultSkin(subject.defaultName ?? 'steve', subject.slim);
    const cape = withCapeFor(options) && subject.capeUrl ? await this.capeOrNull(subject.capeUrl, subject.capeKey) : null;
    return this.draw(options, skin, subject.slim, cape);
  }

  /** The render key and ETag of a player's image, for a fast path that answers without reply(). */
  tagOf(profile: RawProfile, options: ImageOptions, format: ImageFormat): { key: string; etag: string } {
    const key = imageKey(subjectOf(profile), options, format);
    return { key, etag: imageEtag(key) };
  }

  /** The render of `key` when cached fresh in this process; the read is pushed to `read` (see PlayerLookup.peek). */
  peekRender(key: string, read: CacheNamespace<unknown>[]): Buffer | undefined {
    const value = this.renders.ns.peek(key);
    if (!value) return undefined;
    read.push(this.renders.ns as CacheNamespace<unknown>);
    return asBuffer(value);
  }

  /** Renders an uploaded skin (not cached: every upload is its own subject). */
  async drawUpload(file: Buffer, slim: boolean | null, options: ImageOptions, format: ImageFormat): Promise<Buffer> {
    const skin = await normalizeSkin(file);
    const png = await this.draw(options, skin, slim ?? skin.slimGuess, null);
    return format === 'png' ? png : encodeImage(png, format);
  }

  private skin(url: string, hash: string): Promise<NormalizedSkin> {
    return this.decode(this.decodedSkins, url, hash, normalizeSkin);
  }

  private async capeOrNull(url: string, hash: string): Promise<NormalizedCape | null> {
    // A broken cape must not cost the whole render: draw without it.
    try {
      return await this.decode(this.decodedCapes, url, hash, normalizeCape);
    } catch {
      return null;
    }
  }

  /** A texture's decoded form, remembered by hash (failures are forgotten so they can be retried). */
  private decode<T extends { data: Buffer }>(memo: LruMap<Promise<T>>, url: string, hash: string, normalize: (png: Buffer) => Promise<T>): Promise<T> {
    let decoded = memo.get(hash);
    if (!decoded) {
      const pending = this.textures.get(url).then((texture) => normalize(texture.png));
      memo.set(hash, pending);
      pending.then((texture) => memo.resize(hash, texture.data.length), () => memo.delete(hash));
      decoded = pending;
    }
    return decoded;
  }

  private async draw(o: ImageOptions, skin: NormalizedSkin, slim: boolean, cape: NormalizedCape | null): Promise<Buffer> {
    const started = performance.now();
    const image = await this.drawWith(o, skin, slim, cape);
    renderDuration.observe({ kind: o.kind }, (performance.now() - started) / 1000);
    return image;
  }

  private drawWith(o: ImageOptions, skin: NormalizedSkin, slim: boolean, cape: NormalizedCape | null): Promise<Buffer> {
    if (o.kind === 'avatar') return renderAvatar(skin, { size: o.size, shape: o.shape, helm: o.outer, bg: o.bg });
    const farm = this.farm();
    if (!farm) throw new ApiError('overloaded', { detail: '渲染池未启用 (RENDER_WORKERS=0)', retryAfter: 60 });
    const job: RenderJob = {
      kind: o.kind, skin, slim, cape, size: o.size, yaw: o.yaw, pitch: o.pitch, shadow: o.shadow, outer: o.outer, bg: o.bg,
      scale: o.scale ?? undefined, view: o.view, pose: o.kind === 'render' ? o.pose : undefined,
    };
    return farm.render(job);
  }
}
