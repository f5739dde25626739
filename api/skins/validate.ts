// Input rules for names, UUIDs and sources. Official names follow the game's rule; the external
// service (Blessing Skin) lets operators allow more, so it accepts any Unicode letters and digits.
// Bedrock names (gamertags, with the configured prefix) are the bedrock source's (upstream/floodgate.ts).
import { ApiError } from '../../shared/errors.ts';
import { looksLikeUuid, normalizeUuid } from '../../shared/uuid.ts';
import { TEXTURE_ID } from './texture-id.ts';
import { SOURCE_IDS, type SourceId, type SourceParam } from './types.ts';

export const OFFICIAL_NAME = /^[A-Za-z0-9_]{1,16}$/;
export const EXTERNAL_NAME = /^[\p{L}\p{N}_-]{1,32}$/u;
/**
 * An Xbox gamertag as Xbox Live (GeyserMC's Global API) writes it: letters, digits and single
 * spaces, at most 16 characters, a letter or digit at each end. It is the rule that a Bedrock
 * name carries (upstream/floodgate.ts, with `_` for the spaces), applied to what the upstream
 * answers: anything else is the upstream's error, never a player name.
 */
export const GAMERTAG = /^(?=.{1,16}$)[A-Za-z0-9]+(?: [A-Za-z0-9]+)*$/;

export type PlayerQuery = { kind: 'uuid'; uuid: string } | { kind: 'name'; name: string };
/** What the `{name}` of an image or raw texture names: a player, or a texture by its id (texture-id.ts). */
export type SubjectQuery = PlayerQuery | { kind: 'texture'; id: string };

export function validName(name: string, source: Exclude<SourceId, 'bedrock'>): boolean {
  return (source === 'official' ? OFFICIAL_NAME : EXTERNAL_NAME).test(name);
}

/**
 * A name, a UUID (dashes optional) or a texture id, which never overlap: a name is at most 32
 * characters (16 official) and never all hex from 32 on; a UUID is 32 hex digits (or 8-4-4-4-12);
 * a texture id 60 to 64. Other hex from 33 digits on is neither (invalid_name: no name either);
 * hex with dashes from 32 characters on is a malformed UUID (invalid_uuid). Whether a name is
 * valid depends on the sources asked, so the lookup says (invalid_name when no source takes it).
 */
export function parseSubjectQuery(input: string | undefined): SubjectQuery {
  if (!input) throw new ApiError('missing_param', { detail: 'name' });
  if (/^[0-9a-f]{33,}$/i.test(input)) {
    if (TEXTURE_ID.test(input)) return { kind: 'texture', id: input.toLowerCase() };
    throw new ApiError('invalid_name', { detail: { zh: `${input.length} 位十六进制既不是 UUID (32 位) 也不是材质 ID (60-64 位)`, en: `${input.length} hex digits are neither a UUID (32) nor a texture id (60-64)` } });
  }
  if (looksLikeUuid(input)) {
    const uuid = normalizeUuid(input);
    if (!uuid) throw new ApiError('invalid_uuid', { detail: input.slice(0, 64) });
    return { kind: 'uuid', uuid };
  }
  return { kind: 'name', name: input };
}

/** A name or a UUID: the JSON lookups are of players, and a texture id names none (invalid_name). */
export function parsePlayerQuery(input: string | undefined): PlayerQuery {
  const query = parseSubjectQuery(input);
  if (query.kind === 'texture') throw new ApiError('invalid_name', { detail: { zh: '材质 ID 不是玩家: 它只用于图片和 /v1/skin', en: 'a texture id names no player: it is for the images and /v1/skin' } });
  return query;
}

export function parseUuid(input: string | undefined): string {
  if (!input) throw new ApiError('missing_param', { detail: 'uuid' });
  const uuid = normalizeUuid(input);
  if (!uuid) throw new ApiError('invalid_uuid', { detail: input.slice(0, 64) });
  return uuid;
}

export function parseSource(input: string | undefined): SourceParam {
  if (input === undefined || input === '' || input === 'auto') return 'auto';
  if ((SOURCE_IDS as readonly string[]).includes(input)) return input as SourceId;
  throw new ApiError('bad_source', { detail: `${input.slice(0, 32)} (${['auto', ...SOURCE_IDS].join(', ')})` });
}
