// What several skins route files declare alike: the rate-limit groups, the player parameters and
// the errors of a lookup. Its own module so that the route files need not import each other.
import type { Context } from 'koa';
import type { Config } from '../config.ts';
import { inPath, inQuery, text, type Params } from '../http/params.ts';
import { clientKey } from '../http/rate-limit.ts';
import { asLookupClient } from './upstream/budget.ts';
import { SOURCE_IDS } from './types.ts';
import { parsePlayerQuery, parseSource } from './validate.ts';

export const RATE_GROUPS = {
  normal: { name: 'normal', limit: 120 },
  image: { name: 'image', limit: 240 },
  batch: { name: 'batch', limit: 300 },
  /**
   * The work of images that are not cached and must be drawn or encoded (and stored), within
   * `image`: counted in estimated CPU ms (image-cost.ts), not requests, since a cached image costs
   * microseconds and a drawn one from 2 ms (a 64 px avatar) to half a second (a 512 px AVIF body).
   */
  work: { name: 'work', limit: (config: Config) => config.imageWorkBudget },
  /**
   * Turntables that are not cached and must be drawn, within `image`: one is 8 to 72 renders
   * drawn together (36 by default) and an animation's encode.
   */
  turntable: { name: 'turntable', limit: 12 },
} as const;

export const source = inQuery('source', 'auto asks official first, then external; a Floodgate UUID (top 64 bits zero) or a name with the Bedrock prefix (`.` by default) asks bedrock alone',
  { type: 'string', enum: ['auto', ...SOURCE_IDS], default: 'auto' }, { read: parseSource });
/** `{name}` of the images and raw textures: a player, or a texture by its id (lookup.ts find). */
export const namePath = inPath('name', 'player name, UUID (dashes optional), or a texture id: the 60-64 hex digits that end a skin address of textures.minecraft.net (drawn with the classic model, no cape; asks no player source)',
  text, { example: (docs) => docs.demoPlayer });
/** `{name}` of the JSON lookups: players only; a texture id is invalid_name. */
export const playerPath = inPath('name', 'player name or UUID (dashes optional)', text, { example: (docs) => docs.demoPlayer, read: (raw) => {
  parsePlayerQuery(raw);
  return raw;
} });

/**
 * A handler whose uncached upstream lookups (the player an image is of, too) are charged to the
 * requesting client (upstream/budget.ts).
 */
export const charged = <S>(handle: (ctx: Context, service: S, params: Params) => Promise<void>) =>
  (ctx: Context, service: S, params: Params): Promise<void> => asLookupClient(clientKey(ctx.ip), () => handle(ctx, service, params));

export const PLAYER_LOOKUP_ERRORS = ['invalid_name', 'invalid_uuid', 'bad_source', 'not_found', 'upstream_error', 'upstream_busy', 'upstream_timeout'] as const;
/** The errors of namePath: a texture id the texture host does not have is no_texture. */
export const LOOKUP_ERRORS = [...PLAYER_LOOKUP_ERRORS, 'no_texture'] as const;
