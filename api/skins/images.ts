// Image endpoints: a player's skin (or the game's default skin) drawn by sharp (avatar) or the
// render farm (head, body, 3D render, cube). Renders are cached by texture hash + options, the
// ETag comes from the same key so a 304 costs no render, and identical requests render once.
import type { Context } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import { renderAvatar } from '../../renderer/avatar-2d.ts';
import { defaultSkin } from '../../renderer/default-skins.ts';
import type { Farm } from '../../renderer/farm.ts';
import type { RenderJob } from '../../renderer/jobs.ts';
import { normalizeCape, normalizeSkin, type NormalizedCape, type NormalizedSkin } from '../../renderer/skin-normalize.ts';
import { renderDuration } from '../metrics.ts';
import type { Cache, CacheNamespace } from '../cache.ts';
import { LruMap } from '../../shared/lru-map.ts';
import { ReadThrough } from '../read-through.ts';
import { clientKey } from '../http/rate-limit.ts';
import { CONTENT_TYPES, encodeImage, queuedEncode, type ImageFormat } from './image-format.ts';
import { imageEtag, notModified, sendPng } from './image-response.ts';
import { optionsKey, type ImageOptions } from './image-params.ts';
import { ANIMATION_TYPES, encodeAnimation } from '../../renderer/animate.ts';
import { frameYaws, turntableKey, type TurntableOptions } from './turntable.ts';
import { readTextures } from './records.ts';
import type { RenderLock } from './render-lock.ts';
import type { TextureStore } from './texture-store.ts';
import type { RawProfile } from './types.ts';

/** A cached image as a Buffer: the stored one itself (no copy per hit) unless a store gave bytes. */
function asBuffer(value: Uint8Array): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.from(value);
}

/** What is drawn: the skin (by hash or default name), its model and the cape. */
interface Subject { skinUrl: string | null; skinKey: string; slim: boolean; capeUrl: string | null; capeKey: string; defaultName: string | null; upsideDown: boolean }

/** The names the game draws upside down: exactly these, case and all (LivingEntityRenderer.isEntityUpsideDown). */
const UPSIDE_DOWN = new Set(['Dinnerbone', 'Grumm']);

/** What is drawn for a profile: on its own model unless the request names one (`model`). */
function subjectOf(profile: RawProfile, model: ImageOptions['model']): Subject {
  const { skin } = readTextures(profile);
  return {
    skinUrl: skin.skinUrl,
    skinKey: skin.skinHash ?? `default-${skin.defaultSkin}`,
    slim: model ? model === 'slim' : skin.slim,
    capeUrl: skin.capeUrl,
    capeKey: skin.capeHash ?? '-',
    defaultName: skin.defaultSkin,
    upsideDown: UPSIDE_DOWN.has(profile.name),
  };
}

/**
 * The options as this subject is drawn: flipped only for the upside-down names; without a cape
 * no cape (nothing on the back), but the elytra stays: the renderer draws grey wings of its own.
 * Options that draw the same pixels then share one key and one image.
 */
function asDrawn(subject: Subject, o: ImageOptions): ImageOptions {
  return { ...o, flip: o.flip && subject.upsideDown, equip: subject.capeUrl || o.equip === 'elytra' ? o.equip : 'none' };
}

const withCapeFor = (o: ImageOptions) => (o.kind === 'render' || o.kind === 'body') && o.equip !== 'none';

/** The part of an image's key that says what is drawn: the skin, its model, and the cape when one is drawn. */
const texturesKey = (subject: Subject, withCape: boolean) => `${subject.skinKey}|${+subject.slim}|${withCape ? subject.capeKey : '-'}`;

/**
 * The render cache key, and the ETag's source: what decides the pixels (options as drawn), and
 * the format (PNG's keys are those of before formats).
 */
function imageKey(subject: Subject, options: ImageOptions, format: ImageFormat): string {
  return inFormat(`${optionsKey(options)}|${texturesKey(subject, withCapeFor(options))}`, format);
}

/** The key of an image in `format` from its PNG's key: the PNG's is the key itself (as before formats). */
const inFormat = (pngKey: string, format: ImageFormat) => (format === 'png' ? pngKey : `${pngKey}|${format}`);

/** What else an image reply may take: `admit` (see reply) and a download's file name. */
export interface ReplyExtras { admit?: () => Promise<void>; download?: string | null }

export class ImageRenderer {
  private readonly textures: TextureStore;
  private readonly renders: ReadThrough<Buffer>;
  private readonly farm: () => Farm | null;
  /** Decoded skins and capes by texture hash: a cold render of known textures skips the PNG decode. */
  // Bounded in bytes too: an HD skin decodes to up to 4 MiB (512 of them were 2 GiB).
  private readonly decodedSkins = new LruMap<Promise<NormalizedSkin>>(512, 32 * 1024 * 1024);
  private readonly decodedCapes = new LruMap<Promise<NormalizedCape>>(256, 8 * 1024 * 1024);

  /** Forgets the decoded textures (idle: decoding one again takes ~35 µs). */
  trim(): void {
    this.decodedSkins.clear();
    this.decodedCapes.clear();
  }

  constructor(textures: TextureStore, cache: Cache, farm: () => Farm | null, lock: RenderLock) {
    this.textures = textures;
    // One cold render per key across instances: the lock holder renders, the others find its PNG.
    this.renders = new ReadThrough(cache.namespace('render', undefined, 0), { exclusive: lock });
    this.farm = farm;
  }

  /**
   * Answers one image request for a player's profile; `admit` is asked before this request draws
   * an image of its own (or encodes one: a WebP or AVIF is made from the PNG, itself cached).
   * Its drawing and encoding are the requesting client's (its rate-limit key): jobs carry it.
   */
  async reply(ctx: Context, profile: RawProfile, asked: ImageOptions, format: ImageFormat, admit?: () => Promise<void>): Promise<void> {
    const subject = subjectOf(profile, asked.model);
    const options = asDrawn(subject, asked);
    await this.replyDrawn(ctx, imageKey(subject, options, 'png'), format, (client) => this.drawSubject(subject, options, client), { admit });
  }

  /**
   * Answers an image whose PNG `draw` makes for a client, keyed by `pngKey` (what decides its
   * pixels): the ETag from the key and the format, a 304 before anything is drawn, the render
   * cache (one drawing per key across requests and instances), another format encoded from the
   * cached PNG. reply() and the images of capes, processed skins and groups all answer here.
   */
  async replyDrawn(ctx: Context, pngKey: string, format: ImageFormat, draw: (client: string) => Promise<Buffer>, { admit, download }: ReplyExtras = {}): Promise<void> {
    const key = inFormat(pngKey, format);
    const etag = imageEtag(key);
    if (notModified(ctx, etag)) return;
    const client = clientKey(ctx.ip);
    const png = async () => (await this.renders.get(pngKey, () => draw(client))).value;
    const { value, cache } = await this.renders.get(key, async () => (format === 'png' ? draw(client) : encodeImage(asBuffer(await png()), format, client)), { admit });
    sendPng(ctx, { png: asBuffer(value), type: CONTENT_TYPES[format], etag, cache, download });
  }

  /** A player's image as PNG through the render cache, for `client` (the figures of a group). */
  async renderPng(profile: RawProfile, asked: ImageOptions, client: string): Promise<Buffer> {
    const subject = subjectOf(profile, asked.model);
    const options = asDrawn(subject, asked);
    return asBuffer((await this.renders.get(imageKey(subject, options, 'png'), () => this.drawSubject(subject, options, client))).value);
  }

  private async drawSubject(subject: Subject, options: ImageOptions, client: string): Promise<Buffer> {
    const { skin, cape } = await this.texturesOf(subject, withCapeFor(options));
    return this.draw(options, skin, subject.slim, cape, client);
  }

  /**
   * Answers a turntable of a player: cached, tagged and locked as a still is (the same render
   * cache, its own key), its frames drawn as one farm job (RenderFarm.renderFrames).
   */
  async replyTurntable(ctx: Context, profile: RawProfile, asked: TurntableOptions, admit?: () => Promise<void>): Promise<void> {
    const subject = subjectOf(profile, asked.still.model);
    const options = { ...asked, still: asDrawn(subject, asked.still) };
    const key = `${turntableKey(options)}|${texturesKey(subject, withCapeFor(options.still))}`;
    const etag = imageEtag(key);
    if (notModified(ctx, etag)) return;
    const client = clientKey(ctx.ip);
    const { value, cache } = await this.renders.get(key, async () => {
      const { skin, cape } = await this.texturesOf(subject, withCapeFor(options.still));
      const started = performance.now();
      const frames = await this.farmOrOverloaded().renderFrames(renderJob(options.still, skin, subject.slim, cape, client), frameYaws(options));
      // A GIF of 72 frames takes a core for a second: in the client's turn, as a still's encode.
      const animation = await queuedEncode(client, () => encodeAnimation(frames, options.format, options.fps));
      renderDuration.observe({ kind: 'turntable' }, (performance.now() - started) / 1000);
      return animation;
    }, { admit });
    sendPng(ctx, { png: asBuffer(value), etag, cache, type: ANIMATION_TYPES[options.format] });
  }

  private async texturesOf(subject: Subject, withCape: boolean): Promise<{ skin: NormalizedSkin; cape: NormalizedCape | null }> {
    // Both downloads at once: a cold render waits for the slower one, not for both in turn.
    const [skin, cape] = await Promise.all([
      subject.skinUrl ? this.skin(subject.skinUrl, subject.skinKey) : defaultSkin(subject.defaultName ?? 'steve', subject.slim),
      withCape && subject.capeUrl ? this.capeOrNull(subject.capeUrl, subject.capeKey) : null,
    ]);
    return { skin, cape };
  }

  /** The render key and ETag of a player's image, for a fast path that answers without reply(). */
  tagOf(profile: RawProfile, options: ImageOptions, format: ImageFormat): { key: string; etag: string } {
    const subject = subjectOf(profile, options.model);
    const key = imageKey(subject, asDrawn(subject, options), format);
    return { key, etag: imageEtag(key) };
  }

  /** The render of `key` when cached fresh in this process; the read is pushed to `read` (see PlayerLookup.peek). */
  peekRender(key: string, read: CacheNamespace<unknown>[]): Buffer | undefined {
    const value = this.renders.ns.peek(key);
    if (!value) return undefined;
    read.push(this.renders.ns as CacheNamespace<unknown>);
    return asBuffer(value);
  }

  /** Renders an uploaded skin and cape for `client` (not cached: every upload is its own subject; it has no name to flip). */
  async drawUpload(file: Buffer, capeFile: Buffer | null, slim: boolean | null, options: ImageOptions, format: ImageFormat, client: string): Promise<Buffer> {
    const skin = await normalizeSkin(file);
    // Checked even when not drawn (equip=none): a broken file is the client's to hear about.
    const cape = capeFile ? await normalizeCape(capeFile) : null;
    const png = await this.draw({ ...options, flip: false }, skin, slim ?? skin.slimGuess, withCapeFor(options) ? cape : null, client);
    return format === 'png' ? png : encodeImage(png, format, client);
  }

  /** A skin as the renderer draws it (renderer/skin-normalize.ts), decoded once per hash. */
  skin(url: string, hash: string): Promise<NormalizedSkin> {
    return this.decode(this.decodedSkins, url, hash, normalizeSkin);
  }

  /** A cape texture as the renderer reads it, decoded once per hash. */
  cape(url: string, hash: string): Promise<NormalizedCape> {
    return this.decode(this.decodedCapes, url, hash, normalizeCape);
  }

  private async capeOrNull(url: string, hash: string): Promise<NormalizedCape | null> {
    // A broken cape must not cost the whole render: draw without it.
    try {
      return await this.cape(url, hash);
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

  private async draw(o: ImageOptions, skin: NormalizedSkin, slim: boolean, cape: NormalizedCape | null, client: string): Promise<Buffer> {
    const started = performance.now();
    const image = await this.drawWith(o, skin, slim, cape, client);
    renderDuration.observe({ kind: o.kind }, (performance.now() - started) / 1000);
    return image;
  }

  private drawWith(o: ImageOptions, skin: NormalizedSkin, slim: boolean, cape: NormalizedCape | null, client: string): Promise<Buffer> {
    if (o.kind === 'avatar') return renderAvatar(skin, { size: o.size, shape: o.shape, helm: o.outer, bg: o.bg });
    return this.farmOrOverloaded().render(renderJob(o, skin, slim, cape, client));
  }

  private farmOrOverloaded(): Farm {
    const farm = this.farm();
    if (!farm) throw new ApiError('overloaded', { detail: '渲染池未启用 (RENDER_WORKERS=0)', retryAfter: 60 });
    return farm;
  }
}

function renderJob(o: ImageOptions, skin: NormalizedSkin, slim: boolean, cape: NormalizedCape | null, client: string): RenderJob {
  if (o.kind === 'avatar') throw new Error('avatars are not drawn by the farm');
  return {
    kind: o.kind, skin, slim, cape, size: o.size, yaw: o.yaw, pitch: o.pitch, shadow: o.shadow, outer: o.outer, bg: o.bg,
    scale: o.scale ?? undefined, view: o.view, pose: o.kind === 'render' || o.kind === 'bust' ? o.pose : undefined,
    elytra: o.equip === 'elytra', flip: o.flip, fov: o.fov || undefined, limbs: o.limbs ?? undefined, client,
  };
}
