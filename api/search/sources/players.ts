// Game players by user name or account UUID, through the skins service's upstream clients,
// lookup rules (official first, then external) and cache, so both services share answers.
import { ApiError } from '../../../shared/errors.ts';
import { dashUuid } from '../../../shared/uuid.ts';
import type { SharedDeps } from '../../service.ts';
import type { PlayerLookup } from '../../skins/lookup.ts';
import { imageLinks, readTextures } from '../../skins/records.ts';
import type { RawProfile } from '../../skins/types.ts';
import { validName } from '../../skins/validate.ts';
import type { TypedValue } from '../types.ts';
import { SourceSkipped, type SearchSource, type SourceAnswer } from './source.ts';

const UUID = /^[0-9a-f]{32}$/;

export class PlayersSource implements SearchSource {
  readonly id = 'players';
  readonly description = 'Game accounts (official and external Yggdrasil) by user name or UUID, with skin addresses';
  readonly answers = ['network_user'] as const;
  readonly produces = ['network_user'] as const;
  private readonly lookup: PlayerLookup;
  private readonly publicUrl: string;

  constructor(deps: SharedDeps) {
    this.lookup = deps.upstreams.lookup;
    this.publicUrl = deps.config.publicUrl;
  }

  unavailable(): string | null {
    const { sources } = this.lookup;
    return sources.isEnabled('official') || sources.isEnabled('external') ? null : 'no game account source is enabled';
  }

  // PlayerLookup takes no AbortSignal; past the deadline its calls finish (bounded by
  // UPSTREAM_TIMEOUT_MS) into the shared cache while the pipeline has stopped waiting.
  async search(query: TypedValue): Promise<SourceAnswer> {
    const name = query.value;
    if (!UUID.test(name) && !validName(name, 'official') && !validName(name, 'external')) {
      throw new SourceSkipped('not a game account name');
    }
    let profile: RawProfile;
    try {
      if (UUID.test(name)) {
        profile = (await this.lookup.profile(name, 'auto')).value;
      } else {
        const hit = await this.lookup.resolveName(name, 'auto');
        profile = (await this.lookup.profile(hit.value.id, hit.value.source)).value;
      }
    } catch (error) {
      if (error instanceof ApiError && error.code === 'not_found') return { records: [], raw: null };
      throw error;
    }
    const { skin } = readTextures(profile);
    const images = imageLinks(this.publicUrl, profile.id, profile.source);
    const fields = {
      name: profile.name,
      uuid: profile.id,
      uuid_dashed: dashUuid(profile.id),
      source: profile.source,
      model: skin.model,
      skin: images.skin.url,
      skin_texture_url: skin.skinUrl,
      avatar: images.avatar.url_64,
    };
    return {
      records: [{ source: this.id, kind: 'player', ref: `${profile.source}:${profile.id}`, fields, entities: [{ type: 'network_user', value: profile.name.toLowerCase() }] }],
      raw: { id: profile.id, name: profile.name, source: profile.source, properties: profile.properties.map((p) => ({ name: p.name, value: p.value })) },
    };
  }
}
