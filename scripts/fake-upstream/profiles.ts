// Session-server profiles with the textures property, in each upstream's own dialect: Mojang
// pretty-prints the value JSON, Blessing Skin writes it compact and adds uploadableTextures.
import type { FakePlayer } from './players.ts';
import { signValue, type SigningKey } from './keys.ts';
import { playerTextureUrls } from './textures.ts';

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
