// Texture files by pixel hash, and the trap URLs a careful client must refuse. Drawn PNGs are a
// pure function of their spec, so they are cached per process (bounded, the least recently used
// go first) and shared by every fake; the hash is taken from the drawn pixels, so a texture is
// encoded once and never decoded (a load test's first request per player costs about 1 ms here,
// see docs/fake-upstream.md).
import { createHash } from 'node:crypto';
import type { CapeArt, FakePlayer, SkinArt, SkinTrap, Source } from './players.ts';
import { capePixels, encodePng, skinPixels } from './skin-art.ts';
import { pixelHash } from './texture-hash.ts';
import { LruMap } from '../../shared/lru-map.ts';

export interface Texture { hash: string; png: Buffer }
type Art = { kind: 'skin'; spec: SkinArt } | { kind: 'cape'; spec: CapeArt };

/** Generated skins are 1-3 KB: 20,000 files (a 10,000-player load test with capes) fit in ~40 MB. */
const MAX_PNGS = 20_000;
/** As many as players.ts remembers, with their capes. */
const MAX_HASHES = 200_000;
const pngs = new LruMap<Promise<Texture>>(MAX_PNGS);
/** Hash -> art, so a file evicted from `pngs` can be drawn again when its URL is asked for. */
const arts = new LruMap<Art>(MAX_HASHES);

export function drawTexture(art: Art): Promise<Texture> {
  const key = JSON.stringify(art);
  let texture = pngs.get(key);
  if (!texture) {
    const pixels = art.kind === 'skin' ? skinPixels(art.spec) : capePixels(art.spec);
    const hash = pixelHash(pixels.width, pixels.height, pixels.data);
    arts.set(hash, art);
    texture = encodePng(pixels).then((png) => ({ hash, png }));
    texture.catch(() => pngs.delete(key));
    pngs.set(key, texture);
  }
  return texture;
}

/** The PNG for a hash handed out earlier, or undefined. */
export function textureByHash(hash: string): Promise<Texture> | undefined {
  const art = arts.get(hash);
  return art ? drawTexture(art) : undefined;
}

/** Trap files live at hash-shaped addresses so nothing but the response gives them away. */
export const TRAP_HASHES: Record<Exclude<SkinTrap, 'evil'>, string> = {
  redirect: trapHash('redirect'),
  notPng: trapHash('notPng'),
  huge: trapHash('huge'),
};

function trapHash(name: string): string {
  return createHash('sha256').update(`fake-upstream trap ${name}`).digest('hex');
}

export function trapOf(hash: string): SkinTrap | undefined {
  return (Object.keys(TRAP_HASHES) as Array<keyof typeof TRAP_HASHES>).find((k) => TRAP_HASHES[k] === hash);
}

/** The fake's own address under another host name: a different host to any allow-list. */
export function evilBase(baseUrl: string): string {
  const url = new URL(baseUrl);
  url.hostname = url.hostname === 'localhost' ? '127.0.0.1' : 'localhost';
  return `${url.origin}/evil`;
}

export interface TextureUrls { skin?: string; cape?: string }

/** Where the fake serves a source's texture files (textures.minecraft.net / littleskin.cn/textures). */
export function textureBase(baseUrl: string, source: Source): string {
  return source === 'official' ? `${baseUrl}/official/textures/texture` : `${baseUrl}/external/textures`;
}

/** The SKIN and CAPE urls of a player's textures property. */
export async function playerTextureUrls(player: FakePlayer, baseUrl: string): Promise<TextureUrls> {
  const base = textureBase(baseUrl, player.source);
  const urls: TextureUrls = {};
  if (player.skin === 'evil') urls.skin = `${evilBase(baseUrl)}/skin.png`;
  else if (typeof player.skin === 'string') urls.skin = `${base}/${TRAP_HASHES[player.skin]}`;
  else if (player.skin) urls.skin = `${base}/${(await drawTexture({ kind: 'skin', spec: player.skin })).hash}`;
  if (player.cape) urls.cape = `${base}/${(await drawTexture({ kind: 'cape', spec: player.cape })).hash}`;
  return urls;
}
