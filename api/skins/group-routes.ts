// GET /v1/group/{size}?names=a,b,c: up to GROUP_MAX players side by side in one picture, each a
// render with the same options (one scale, yaw, pitch and pose), in the order given. Counted in
// the `image` group; each player's uncached lookup is charged to the client (route-params.ts
// charged), and a group that must be drawn costs its work budget one render per player.
import type { Context } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import { images } from '../docs/fragments.ts';
import { choice, inQuery, text, type Params } from '../http/params.ts';
import { NOT_FOUND_MAX_AGE } from '../http/errors.ts';
import type { Route } from '../http/route-table.ts';
import { drawnCost, pixelsOf } from './image-cost.ts';
import { extensionOf, formatParam, requestFormat } from './image-format.ts';
import { imageOptions, RENDER_OPTIONS, sizeParam } from './image-params.ts';
import { IMAGE_CACHE_CONTROL, IMAGE_EXPOSED } from './image-response.ts';
import { chargeWork, FORMAT_NOTE, WORK_NOTE } from './image-routes.ts';
import { composeGroup, GROUP_MAX, groupNames } from './group.ts';
import { charged, LOOKUP_ERRORS, RATE_GROUPS, source } from './route-params.ts';
import { readTextures } from './records.ts';
import { TEXTURE_ID } from './texture-id.ts';
import type { SkinsService } from './service.ts';
import type { RawProfile, SourceParam } from './types.ts';

/** Errors that mean "no such player": the name is left out of the picture and named in X-Group-Missing. */
const MISSING = new Set(['not_found', 'no_texture', 'invalid_name', 'invalid_uuid']);

/** Each player's profile in order, null for one that does not exist; any other failure answers. */
function profiles(service: SkinsService, names: readonly string[], from: SourceParam): Promise<(RawProfile | null)[]> {
  return Promise.all(names.map((name) => service.lookup.find(name, from).then((found) => drawable(service, found.value)).catch((error: unknown) => {
    if (error instanceof ApiError && MISSING.has(error.code)) return null;
    throw error;
  })));
}

/**
 * A texture id is found without asking anyone (texture-id.ts), so whether its file exists is only
 * known once it is fetched: fetched here (the decoded skin is kept for the render), a missing one
 * throws no_texture and is left out like an unknown name.
 */
async function drawable(service: SkinsService, profile: RawProfile): Promise<RawProfile> {
  if (!TEXTURE_ID.test(profile.id)) return profile;
  const { skin } = readTextures(profile);
  if (skin.skinUrl && skin.skinHash) await service.images.skin(skin.skinUrl, skin.skinHash);
  return profile;
}

async function group(ctx: Context, service: SkinsService, params: Params): Promise<void> {
  const format = requestFormat(ctx, params.format, service.config.imageFormatFromAccept);
  const names = groupNames(params.names as string);
  const options = imageOptions('render', params);
  const found = await profiles(service, names, params.source as SourceParam);
  const players = found.filter((p): p is RawProfile => p !== null);
  if (players.length === 0) throw new ApiError('not_found', { detail: { zh: '组中没有找到任何玩家', en: 'none of the names was found' } });
  // Percent-encoded: a header holds no Unicode letters (external names may have them).
  const missing = names.filter((_, i) => !found[i]).map(encodeURIComponent).join(',');
  if (missing) ctx.set('X-Group-Missing', missing);
  // The figures' own render keys (texture hashes, model, options as drawn) make the group's.
  const key = ['group', ...players.map((p) => service.images.tagOf(p, options, 'png').key)].join('||');
  await service.images.replyDrawn(ctx, key, format, async (client) => composeGroup(await Promise.all(players.map((p) => service.images.renderPng(p, options, client))), options.size), {
    admit: () => chargeWork(ctx, service, drawnCost(players.length * pixelsOf(options), format)),
  });
  if (missing) {
    ctx.set('Access-Control-Expose-Headers', `${IMAGE_EXPOSED}, X-Group-Missing`);
    // Partly a "not found": kept no longer than a 404 is, so a player who appears later is drawn soon.
    ctx.set('Cache-Control', `public, max-age=${NOT_FOUND_MAX_AGE}`);
  }
}

// The elytra is refused: the renderer frames a figure with wings in a larger sphere (so smaller),
// which would break the group's one scale.
const equip = inQuery('equip', 'what hangs on the back: the cape or nothing (the elytra draws its figure smaller, so a group does not take it)', choice(['cape', 'none'], 'cape'));
const options = RENDER_OPTIONS.map((p) => (p.name === 'equip' ? equip : p));
const names = inQuery('names', `comma-separated player names or UUIDs, at most ${GROUP_MAX}, drawn left to right (one may come twice)`, text, { required: true, example: (docs) => `${docs.demoPlayer},Nobody` });

const ok = images('the players side by side');

export const GROUP_ROUTES: Route<SkinsService>[] = [{
  method: 'get', path: '/v1/group/{size}', limit: RATE_GROUPS.image, cacheControl: IMAGE_CACHE_CONTROL,
  params: [sizeParam('path', 256, 'height in pixels; each player is a square of it, so the width is that times the players drawn'), names, ...options, formatParam, source],
  handle: charged(group), before: () => [extensionOf('size')],
  doc: {
    summary: 'Several players side by side',
    description: [
      `Up to ${GROUP_MAX} players (names or UUIDs), each the render GET /v1/render/{name}/{size} draws with the same options, side by side left to right in the order given, on one canvas \`size\` high.`,
      'A name that is no player (unknown, malformed) is left out and named, percent-encoded, in X-Group-Missing, and such a picture is cached no longer than a 404 (max-age 60); when none is found the answer is 404 not_found. Any other lookup failure answers as the lookup would.',
      `Each player's uncached lookup counts against the client's lookups, and a group that is not cached costs its work budget one render per player. ${FORMAT_NOTE} ${WORK_NOTE} Answers HEAD too.`,
    ].join(' '),
    ok: { ...ok, headers: { ...ok.headers, 'X-Group-Missing': { description: 'the names left out (not found), comma-separated and percent-encoded', schema: { type: 'string' } } } },
    conditional: true, head: true, errors: ['missing_param', 'bad_request', ...LOOKUP_ERRORS, 'render_failed', 'render_unavailable', 'overloaded'],
  },
}];
