// Texture files by content hash: cached for a day, one download per hash at a time, and only
// from allow-listed hosts (TEXTURE_HOSTS, or textures.minecraft.net + the external skinDomains).
import type { Cache } from '../cache.ts';
import { ReadThrough } from '../read-through.ts';
import type { CacheState } from './types.ts';
import { textureHash, type TextureFetcher } from './textures.ts';

export const OFFICIAL_TEXTURE_HOST = 'textures.minecraft.net';

export class TextureStore {
  private readonly fetcher: TextureFetcher;
  private readonly files: ReadThrough<Buffer>;

  constructor(fetcher: TextureFetcher, cache: Cache) {
    this.fetcher = fetcher;
    this.files = new ReadThrough(cache.namespace('texture', undefined, 0));
  }

  async get(url: string): Promise<{ png: Buffer; hash: string; cache: CacheState }> {
    const hash = textureHash(url);
    const { value, cache } = await this.files.get(hash, () => this.fetcher.fetch(url));
    // A store may give back bytes that are not a Buffer.
    return { png: Buffer.from(value), hash, cache };
  }
}
