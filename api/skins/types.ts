// Shapes shared by the skins service's modules.

export type SourceId = 'official' | 'external' | 'bedrock';
export type SourceParam = 'auto' | SourceId;
export const SOURCE_IDS: readonly SourceId[] = ['official', 'external', 'bedrock'];

export interface NameHit { id: string; name: string; source: SourceId }

export interface ProfileProperty { name: string; value: string; signature?: string }

/** A session-server profile as the upstream answered it. */
export interface RawProfile { id: string; name: string; properties: ProfileProperty[]; source: SourceId }

export interface TextureEntry { url: string; metadata?: { model?: string } }

/** The decoded `textures` property. */
export interface TexturesPayload {
  timestamp?: number;
  profileId?: string;
  profileName?: string;
  signatureRequired?: boolean;
  isPublic?: boolean;
  textures: { SKIN?: TextureEntry; CAPE?: TextureEntry; [kind: string]: TextureEntry | undefined };
}

export type { CacheState } from '../read-through.ts';
