// Input rules for names, UUIDs and sources. Official names follow the game's rule; the external
// service (Blessing Skin) lets operators allow more, so it accepts any Unicode letters and digits.
// Bedrock names (gamertags, with the configured prefix) are the bedrock source's (upstream/floodgate.ts).
import { ApiError } from '../../shared/errors.ts';
import { looksLikeUuid, normalizeUuid } from '../../shared/uuid.ts';
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

export function validName(name: string, source: Exclude<SourceId, 'bedrock'>): boolean {
  return (source === 'official' ? OFFICIAL_NAME : EXTERNAL_NAME).test(name);
}

/**
 * A name or a UUID (dashes optional); a malformed UUID is invalid_uuid. Whether a name is valid
 * depends on the sources asked, so the lookup says (invalid_name when no source takes it).
 */
export function parsePlayerQuery(input: string | undefined): PlayerQuery {
  if (!input) throw new ApiError('missing_param', { detail: 'name' });
  if (looksLikeUuid(input)) {
    const uuid = normalizeUuid(input);
    if (!uuid) throw new ApiError('invalid_uuid', { detail: input.slice(0, 64) });
    return { kind: 'uuid', uuid };
  }
  return { kind: 'name', name: input };
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
