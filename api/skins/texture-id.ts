// Textures by id (issue #41): the hex hash that ends a skin address of the official texture host
// (`https://textures.minecraft.net/texture/<id>`) stands in for a player on the image and raw
// texture routes. It is drawn as a player who wears that skin is, from a profile built here: no
// upstream is asked who it is, so no name or profile call and no budget.
import { LruMap } from '../../shared/lru-map.ts';
import type { RawProfile } from './types.ts';

/**
 * A texture id: 60 to 64 hex digits (a SHA-256 in hex, the official host drops leading zeros).
 * Longer than any name (at most 32 characters) or UUID (32 hex digits), so the three never meet.
 */
export const TEXTURE_ID = /^[0-9a-f]{60,64}$/i;

/** Profiles by id: the same object each time, so what is keyed on a profile (decoded textures, the hot path's tags) is found again. */
const REMEMBERED = 1000;

export class TextureProfiles {
  private readonly baseUrl: string;
  private readonly made = new LruMap<RawProfile>(REMEMBERED);

  /** `baseUrl`: OFFICIAL_TEXTURE_URL, read as `{url}/{id}` (the download is still held to TEXTURE_HOSTS). */
  constructor(baseUrl: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  /**
   * The profile that draws texture `id` (lower case: one address, cache entry and ETag whatever
   * the case asked): named by its id, the classic model (a hash says nothing of the arms), no cape.
   */
  profile(id: string): RawProfile {
    let profile = this.made.get(id);
    if (!profile) {
      // Our own unsigned property, as for Bedrock skins: only the hex id enters the address.
      const value = Buffer.from(JSON.stringify({ profileId: id, profileName: id, textures: { SKIN: { url: `${this.baseUrl}/${id}` } } })).toString('base64');
      profile = { id, name: id, properties: [{ name: 'textures', value }], source: 'official' };
      this.made.set(id, profile);
    }
    return profile;
  }
}
