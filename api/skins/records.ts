// Turns upstream profiles into the spec's records (player, profile, UUID) with image addresses.
import { defaultSkinFor } from '../../shared/default-skin.ts';
import { dashUuid } from '../../shared/uuid.ts';
import { renderOptionsInfo } from './image-params.ts';
import { decodeTexturesValue, textureHash, texturesProperty } from './textures.ts';
import type { NameHit, RawProfile, SourceId, TexturesPayload } from './types.ts';

const RENDER_OPTIONS_INFO = renderOptionsInfo();

export interface SkinInfo {
  model: 'classic' | 'slim';
  slim: boolean;
  hasSkin: boolean;
  hasCape: boolean;
  skinUrl: string | null;
  capeUrl: string | null;
  skinHash: string | null;
  capeHash: string | null;
  /** Built-in skin the game shows when there is no custom one. */
  defaultSkin: string | null;
}

export interface ProfileTextures { raw_value: string | null; raw_signature: string | null; decoded: TexturesPayload | null }

// Cached profiles are the same objects on every hit, so their decoded textures are kept with them.
const decodedProfiles = new WeakMap<RawProfile, { textures: ProfileTextures; skin: SkinInfo }>();

/** Reads the textures property of a profile (an absent or broken property means no textures). */
export function readTextures(profile: RawProfile): { textures: ProfileTextures; skin: SkinInfo } {
  let read = decodedProfiles.get(profile);
  if (!read) {
    read = decodeProfileTextures(profile);
    decodedProfiles.set(profile, read);
  }
  return read;
}

function decodeProfileTextures(profile: RawProfile): { textures: ProfileTextures; skin: SkinInfo } {
  const property = texturesProperty(profile);
  const decoded = property ? decodeTexturesValue(property.value)?.decoded ?? null : null;
  const skinEntry = decoded?.textures.SKIN;
  const capeEntry = decoded?.textures.CAPE;
  const safeHash = (url: string | undefined) => {
    try {
      return url ? textureHash(url) : null;
    } catch {
      return null;
    }
  };
  const fallback = skinEntry ? null : defaultSkinFor(profile.id);
  const slim = skinEntry ? skinEntry.metadata?.model === 'slim' : fallback!.slim;
  return {
    textures: { raw_value: property?.value ?? null, raw_signature: property?.signature ?? null, decoded },
    skin: {
      model: slim ? 'slim' : 'classic',
      slim,
      hasSkin: !!skinEntry?.url,
      hasCape: !!capeEntry?.url,
      skinUrl: skinEntry?.url ?? null,
      capeUrl: capeEntry?.url ?? null,
      skinHash: safeHash(skinEntry?.url),
      capeHash: safeHash(capeEntry?.url),
      defaultSkin: fallback?.name ?? null,
    },
  };
}

/** ISO 8601 with a numeric UTC offset (the spec's examples use +00:00 style, not Z). */
export function isoWithOffset(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, '+00:00');
}

export function imageLinks(publicUrl: string, uuid: string, source: SourceId) {
  // Records from the external source say so in their image addresses, saving an official miss.
  const q = source === 'external' ? '?source=external' : '';
  const amp = q ? '&' : '?';
  const at = (path: string) => `${publicUrl}/v1/${path}`;
  return {
    avatar: {
      url_64: at(`avatar/${uuid}/64${q}`),
      url_128: at(`avatar/${uuid}/128${q}`),
      url_256: at(`avatar/${uuid}/256${q}`),
      sizeable: at(`avatar/${uuid}/{size}${q}`),
    },
    head: { url_128: at(`head/${uuid}/128${q}`), sizeable: at(`head/${uuid}/{size}${q}`) },
    body: { url: at(`body/${uuid}/256${q}`), sizeable: at(`body/${uuid}/{size}${q}`) },
    render: {
      url: at(`render/${uuid}/256${q}`),
      sizeable: at(`render/${uuid}/{size}${q}`),
      // From the declarations the render route reads: the defaults and ranges it applies.
      options: RENDER_OPTIONS_INFO,
    },
    cube: { url: at(`cube/${uuid}/256${q}`), sizeable: at(`cube/${uuid}/{size}${q}`) },
    bust: { url: at(`bust/${uuid}/256${q}`), sizeable: at(`bust/${uuid}/{size}${q}`) },
    turntable: { url: at(`turntable/${uuid}/128${q}`), sizeable: at(`turntable/${uuid}/{size}${q}`) },
    skin: { url: at(`skin/${uuid}${q}`), download: at(`skin/${uuid}${q}${amp}download=1`) },
    cape: { url: at(`cape/${uuid}${q}`), download: at(`cape/${uuid}${q}${amp}download=1`) },
    isometric: at(`render/${uuid}${q}`),
  };
}

function profileObject(profile: RawProfile) {
  return { id: profile.id, name: profile.name, properties: profile.properties.map((p) => ({ name: p.name, value: p.value })) };
}

export function profileRecord(profile: RawProfile) {
  const { textures, skin } = readTextures(profile);
  return {
    uuid: profile.id,
    uuid_dashed: dashUuid(profile.id),
    name: profile.name,
    source: profile.source,
    skin_url: skin.skinUrl,
    cape_url: skin.capeUrl,
    model: skin.model,
    profile: profileObject(profile),
    textures,
  };
}

export function playerRecord(profile: RawProfile, publicUrl: string, queriedAt = new Date()) {
  const { skin } = readTextures(profile);
  const { profile: profileObj, textures, ...identity } = profileRecord(profile);
  return {
    ...identity,
    model_label: skin.slim ? 'Slim (Alex, 3 px arms)' : 'Classic (Steve, 4 px arms)',
    slim: skin.slim,
    has_skin: skin.hasSkin,
    has_cape: skin.hasCape,
    skin_hash: skin.skinHash,
    cape_hash: skin.capeHash,
    default_skin: skin.defaultSkin,
    textures_signed: !!textures.raw_signature,
    textures_updated_at: textures.decoded?.timestamp ?? null,
    images: imageLinks(publicUrl, profile.id, profile.source),
    profile: profileObj,
    textures,
    queried_at: isoWithOffset(queriedAt),
  };
}

export function uuidRecord(hit: NameHit, cached: boolean) {
  return { id: hit.id, dashed: dashUuid(hit.id), name: hit.name, source: hit.source, cached };
}
