// GET /v1/turntable/{name}[/{size}]: a player's 3D render turning a full turn, as an animation.
// Counted in the `image` group like every image; one that must be drawn also costs the client's
// `turntable` budget and, by its frames, its work budget (image-cost.ts); a cached one costs
// nothing more.
import type { Context } from 'koa';
import type { Response } from '../docs/openapi-types.ts';
import { headers } from '../docs/fragments.ts';
import type { Params } from '../http/params.ts';
import type { Route } from '../http/route-table.ts';
import { ANIMATION_TYPES, type AnimationFormat } from '../../renderer/animate.ts';
import { turntableCost } from './image-cost.ts';
import { answerForPlayer, chargeWork } from './image-routes.ts';
import { extensionOf } from './image-format.ts';
import { IMAGE_CACHE_CONTROL } from './image-response.ts';
import { charged, LOOKUP_ERRORS, namePath, RATE_GROUPS, source } from './route-params.ts';
import type { SkinsService } from './service.ts';
import { splitTurntableExtension, TURNTABLE_MAX_SIZE, turntableOptions, turntableParams } from './turntable.ts';

const turntable = (ctx: Context, service: SkinsService, params: Params) => {
  const options = turntableOptions(params, ctx.state.extensionFormat as AnimationFormat | undefined);
  return answerForPlayer(ctx, service, params, (profile) => service.images.replyTurntable(ctx, profile, options, async () => {
    await service.limiter.enforce(RATE_GROUPS.turntable, ctx.ip, 'too many uncached turntables from this address; cached ones are still served');
    await chargeWork(ctx, service, turntableCost(options));
  }));
};

const animation: Response = {
  description: 'the animation, looping forever, in the format asked for',
  headers: headers('ETag', 'X-Cache'),
  content: Object.fromEntries(Object.values(ANIMATION_TYPES).map((type) => [type, { schema: { type: 'string', contentMediaType: type } }])),
};

const description = (sizeIn: 'path' | 'query') => [
  `Size in pixels ${sizeIn === 'path' ? 'in the path (or as ?size=)' : 'as ?size= (or in the path)'}, at most ${TURNTABLE_MAX_SIZE}: every frame of one turntable is drawn and held at once.`,
  'Animated WebP, APNG or GIF: by `format=` or an extension on the last segment (`/128.gif`, `/128.png` for the APNG, `/128.webp`, or `/{name}.gif` without a size), the two agreeing; the same image, ETag and cache entry either way. Any other extension (`.avif`, `.jpg`) is bad_request.',
  'The first frame is the render at `yaw` (GET /v1/render with the same options draws it), each next one 360/frames degrees further.',
  `A turntable that is not cached also counts against the client's own budget of ${RATE_GROUPS.turntable.limit} a minute, and its drawing and encoding against the client's work budget (IMAGE_WORK_BUDGET; 429 past either; cached ones are still served).`,
  'Answers HEAD too.',
].join(' ');

function route(sizeIn: 'path' | 'query'): Route<SkinsService> {
  return {
    method: 'get', path: sizeIn === 'path' ? '/v1/turntable/{name}/{size}' : '/v1/turntable/{name}', limit: RATE_GROUPS.image, cacheControl: IMAGE_CACHE_CONTROL,
    params: [namePath, ...turntableParams(sizeIn), source], handle: charged(turntable),
    before: () => [extensionOf(sizeIn === 'path' ? 'size' : 'name', splitTurntableExtension)],
    doc: {
      summary: 'The 3D render turning a full turn: animated WebP, APNG or GIF', description: description(sizeIn),
      ok: animation, conditional: true, head: true, errors: ['bad_request', ...LOOKUP_ERRORS, 'render_failed', 'render_unavailable', 'overloaded'],
    },
  };
}

export const TURNTABLE_ROUTES: Route<SkinsService>[] = [route('query'), route('path')];
