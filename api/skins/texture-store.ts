// Texture files by content hash: cached for a day, one download per hash at a time, and only
// from allow-listed hosts (TEXTURE_HOSTS, or textures.minecraft.net + the external skinDomains).
import type { Cache, CacheNamespace } from '../cache.ts';
import { Coalescer } from '../coalesce.ts';
import type { CacheState } from './types.ts';
import { textureHash, type TextureFetcher } from './textures.ts';

export const OFFICIAL_TEXTURE_HOST = 'textures.minecraft.net';

export class TextureStore {
  private readonly fetcher: TextureFetcher;
  private readonly files: CacheNamespace<Buffer>;
  private readonly inflight = new Coalescer();

  constructor(fetcher: TextureFetcher, cache: Cache) {
    this.fetcher = fetcher;
    this.files = cache.namespace('texture', undefined, 0);
  }

  async get(url: string): Promise<{ png: Buffer; hash: string; cache: CacheState }> {
    const hash = textureHash(url);
    const entry = await this.files.get(hash);
    if (entry) return { png: Buffer.from(entry.value), hash, cache: 'HIT' };
    return this.inflight.run(hash, async () => {
      const png = await this.fetcher.fetch(url);
      await this.files.set(hash, png);
      return { png, hash, cache: 'MISS' as const };
    });
  }
}
