// Session-server profiles with the textures property, in each upstream's own dialect: Mojang
// pretty-prints the value JSON, Blessing Skin writes it compact and adds uploadableTextures.
import type { FakePlayer } from './players.ts';
import { signValue, type SigningKey } from './keys.ts';
import { playerTextureUrls } from './textures.ts';
import { LruMap } from '../../shared/lru-map.ts';

export interface ProfileProperty { name: string; value: string; signature?: string }
export interface SessionProfile { id: string; name: string; properties: ProfileProperty[]; profileActions?: [] }

/** Jackson's default pretty printer, which Mojang's value strings show: `" : "` and 2-space indents. */
function pretty(value: unknown, indent = ''): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return JSON.stringify(value);
  const entries = Object.entries(value);
  if (entries.length === 0) return '{ }';
  const inner = `${indent}  `;
  return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)} : ${pretty(v, inner)}`).join(',\n')}\n${indent}}`;
}

async function texturesMap(player: FakePlayer, baseUrl: string) {
  const urls = await playerTextureUrls(player, baseUrl);
  const textures: Record<string, unknown> = {};
  if (urls.skin) textures.SKIN = player.slim ? { url: urls.skin, metadata: { model: 'slim' } } : { url: urls.skin };
  if (urls.cape) textures.CAPE = { url: urls.cape };
  return textures;
}

function property(name: string, value: string, key: SigningKey | null): ProfileProperty {
  return key ? { name, value, signature: signValue(key, value) } : { name, value };
}

/** `key` signs the properties; null answers unsigned, as with the default `unsigned=true`. */
export async function officialProfile(player: FakePlayer, baseUrl: string, key: SigningKey | null): Promise<SessionProfile> {
  const payload = {
    timestamp: Date.now(),
    profileId: player.uuid,
    profileName: player.name,
    ...(key ? { signatureRequired: true } : {}),
    textures: await texturesMap(player, baseUrl),
  };
  const value = Buffer.from(pretty(payload)).toString('base64');
  return { id: player.uuid, name: player.name, properties: [property('textures', value, key)], profileActions: [] };
}

export async function externalProfile(player: FakePlayer, baseUrl: string, key: SigningKey | null): Promise<SessionProfile> {
  const payload = {
    timestamp: Date.now(),
    profileId: player.uuid,
    profileName: player.name,
    isPublic: true,
    ...(key ? { signatureRequired: true } : {}),
    textures: await texturesMap(player, baseUrl),
  };
  const value = Buffer.from(JSON.stringify(payload)).toString('base64');
  return {
    id: player.uuid,
    name: player.name,
    properties: [property('textures', value, key), property('uploadableTextures', 'skin,cape', key)],
  };
}

/** Generated players' profiles kept: as many PNGs as textures.ts keeps. */
const MAX_GENERATED_PROFILES = 20_000;
const generatedProfiles = new LruMap<Promise<SessionProfile>>(MAX_GENERATED_PROFILES);

/**
 * A player's session profile in its source's dialect. A generated player's is built once per
 * fake, key and signing (its timestamp is then when its textures were first served): signing and
 * drawing cost about 2 ms a player, which a load test over thousands of new players would
 * otherwise spend in the fake instead of the service (see `prepareGenerated` in server.ts).
 */
export function sessionProfile(player: FakePlayer, baseUrl: string, key: SigningKey | null): Promise<SessionProfile> {
  const build = player.source === 'official' ? officialProfile : externalProfile;
  if (!player.generated) return build(player, baseUrl, key);
  const cacheKey = `${baseUrl} ${player.source}:${player.uuid} ${key ? 'signed' : 'unsigned'}`;
  let profile = generatedProfiles.get(cacheKey);
  if (!profile) {
    profile = build(player, baseUrl, key);
    profile.catch(() => generatedProfiles.delete(cacheKey));
    generatedProfiles.set(cacheKey, profile);
  }
  return profile;
}
