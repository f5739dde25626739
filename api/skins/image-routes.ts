// Image routes: GET avatar/head/body/render/cube/bust of a player, POST render of an uploaded skin.
import { createHash } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import { MAX_SKIN_BYTES } from '../../shared/skin-layout.ts';
import { fileForm, formFile } from '../http/multipart.ts';
import { asFormField, type Param, type Params } from '../http/params.ts';
import { clientKey } from '../http/rate-limit.ts';
import { quotaGroup, type OperationDoc, type Route } from '../http/route-table.ts';
import { images } from '../docs/fragments.ts';
import { object } from '../docs/schemas.ts';
import { IMAGE_KINDS, imageOptions, imageParams, imageSummary, optionsKey, sizeParam, type ImageKind } from './image-params.ts';
import { stillCost } from './image-cost.ts';
import { CONTENT_TYPES, extensionOf, formatParam, requestFormat } from './image-format.ts';
import { IMAGE_CACHE_CONTROL, imageEtag, sendPng } from './image-response.ts';
import { profileOrDemoFallback } from './pages/demo-fallback.ts';
import { charged, LOOKUP_ERRORS, namePath, RATE_GROUPS, source } from './route-params.ts';
import type { SkinsService } from './service.ts';
import type { RawProfile, SourceParam } from './types.ts';

/**
 * Answers with an image of the named player (or of the demo player standing in), drawn by `answer`.
 */
export async function answerForPlayer(ctx: Context, service: SkinsService, params: Params, answer: (profile: RawProfile) => Promise<void>): Promise<void> {
  const name = params.name as string;
  const { profile, fallback } = await profileOrDemoFallback(name, service.config.demoPlayer, async () => (await service.lookup.find(name, params.source as SourceParam)).value);
  await answer(profile);
  if (fallback) {
    // Another player's image stands in for this one: stricter than the route's caching, nobody keeps it.
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Demo-Fallback', fallback);
  }
}

const image = (kind: ImageKind) => async (ctx: Context, service: SkinsService, params: Params): Promise<void> => {
  // Before the lookup: a format named twice, differently, costs no upstream call.
  const format = requestFormat(ctx, params.format, service.config.imageFormatFromAccept);
  const options = imageOptions(kind, params);
  await answerForPlayer(ctx, service, params, (profile) => service.images.reply(ctx, profile, options, format, () => chargeWork(ctx, service, stillCost(options, format))));
};

/** Charges the work of an image this request draws or encodes (not found cached) to its client's own budget. */
export async function chargeWork(ctx: Context, service: SkinsService, cost: number): Promise<void> {
  await service.limiter.enforce(quotaGroup(RATE_GROUPS.work, service.config), ctx.ip, 'too much image work from this address this minute (uncached images, by size and format); cached images are still served', cost);
}

// The skin, and optionally a cape (its texture also holds the elytra); each at most as large as a
// skin may be. Render parameters are short: 1 KiB a field is plenty and keeps 20 fields small.
const uploadForm = fileForm(['file', 'cape'], { fileSize: MAX_SKIN_BYTES, fields: 20, fieldSize: 1024 });

/** The uploaded file must be there; its form fields then count as query parameters, so one reader checks both. */
const formFieldsAsQuery: Middleware = async (ctx, next) => {
  if (!formFile(ctx, 'file')) throw new ApiError('missing_param', { detail: 'file (multipart/form-data)' });
  const fields = (ctx.request as { body?: Record<string, string> }).body ?? {};
  for (const [name, value] of Object.entries(fields)) {
    // A field given twice, or in both the form and the query, is as ambiguous as a repeated parameter.
    if (typeof value !== 'string' || ctx.query[name] !== undefined) throw new ApiError('bad_request', { detail: { zh: `${name} 只能出现一次`, en: `${name} is given more than once` } });
    ctx.query = { ...ctx.query, [name]: value };
  }
  await next();
};

async function renderUpload(ctx: Context, service: SkinsService, params: Params): Promise<void> {
  const file = formFile(ctx, 'file')!;
  const cape = formFile(ctx, 'cape');
  const model = params.model as 'classic' | 'slim' | undefined;
  const options = imageOptions('render', params);
  const format = requestFormat(ctx, params.format, service.config.imageFormatFromAccept);
  await chargeWork(ctx, service, stillCost(options, format));
  const drawn = await service.images.drawUpload(file.buffer, cape?.buffer ?? null, model === undefined ? null : model === 'slim', options, format, clientKey(ctx.ip));
  // From the uploaded bytes and the options: two uploads never share a tag.
  const hash = (bytes: Buffer) => createHash('sha256').update(bytes).digest('base64url');
  sendPng(ctx, { png: drawn, type: CONTENT_TYPES[format], etag: imageEtag('upload', hash(file.buffer), cape ? hash(cape.buffer) : '-', model ?? 'guess', optionsKey(options), format), cache: 'MISS' });
}

// The form of an upload: the options of a render, the model among them (the query may carry them too).
const uploadFields: Param[] = [
  // The sized render's options (the spec's yaw 0, pitch 0): an upload has no isometric address.
  ...imageParams('render', 'path').slice(1).map(asFormField),
  asFormField(formatParam),
];
const field = (p: Param) => [p.name, { ...p.schema, description: p.description, ...(p.deprecated ? { deprecated: true } : {}) }];

/** The description of an upload whose form holds these fields. */
function uploadDoc(fields: readonly Param[], description: string, example: Record<string, unknown>): OperationDoc {
  return {
    summary: 'Render an uploaded skin',
    description: `${description} The render options may also be given in the query; \`flip\` does nothing here (an upload has no name). The answer is not cached (Cache-Control: no-store). Each upload costs the client's work budget by its size and format (IMAGE_WORK_BUDGET, as an image that is not cached): 429 past it.`,
    body: {
      required: true,
      content: {
        'multipart/form-data': {
          schema: object({
            file: { type: 'string', contentMediaType: 'image/png', maxLength: MAX_SKIN_BYTES, description: `skin PNG, at most ${MAX_SKIN_BYTES / 1024 / 1024} MB` },
            cape: { type: 'string', contentMediaType: 'image/png', maxLength: MAX_SKIN_BYTES, description: 'cape PNG (optional): 64x32 or a multiple, or a legacy 22x17 or 46x22; its elytra drawn with equip=elytra' },
            ...Object.fromEntries(fields.map(field)),
          }, ['cape', ...fields.map((p) => p.name)]),
          example: { file: '(the PNG file)', ...example },
        },
      },
    },
    ok: images('the render of the uploaded skin'),
    errors: ['missing_param', 'bad_request', 'invalid_skin', 'render_failed', 'render_unavailable', 'overloaded'],
  };
}

// An upload is nobody's permanent image: nothing may keep it.
const upload = { limit: RATE_GROUPS.image, cacheControl: 'no-store', handle: renderUpload };
const uploadBefore = (...first: Middleware[]) => () => [...first, uploadForm, formFieldsAsQuery];
const sizeField = asFormField(sizeParam('query', 256));

export const WORK_NOTE = 'An image that is not cached also costs the client\'s work budget by its pixels and format (IMAGE_WORK_BUDGET, estimated CPU ms a minute; a 512 px AVIF costs over a hundred times a 64 px PNG): 429 past it, while cached images are still served.';
export const FORMAT_NOTE = 'PNG, WebP (lossless) or AVIF (lossless): by `format=` or an extension on the last segment (`/256.webp`, or `/{name}.webp` without a size), the two agreeing; by `Accept` only where the operator turns IMAGE_FORMAT_FROM_ACCEPT on (then `Vary: Accept`).';

function imageRoutes(kind: ImageKind): Route<SkinsService>[] {
  const route = (sizeIn: 'path' | 'query'): Route<SkinsService> => ({
    method: 'get', path: sizeIn === 'path' ? `/v1/${kind}/{name}/{size}` : `/v1/${kind}/{name}`, limit: RATE_GROUPS.image, cacheControl: IMAGE_CACHE_CONTROL,
    params: [namePath, ...imageParams(kind, sizeIn), formatParam, source], handle: charged(image(kind)),
    before: () => [extensionOf(sizeIn === 'path' ? 'size' : 'name')],
    doc: {
      summary: imageSummary(kind),
      description: `Size in pixels ${sizeIn === 'path' ? 'in the path (or as ?size=)' : 'as ?size= (or in the path)'}. ${FORMAT_NOTE} ${WORK_NOTE} Answers HEAD too.`,
      ok: images('the image'), conditional: true, head: true,
      // overloaded: the render queue, or (an avatar too) the queue of WebP and AVIF encodes.
      errors: ['bad_request', ...LOOKUP_ERRORS, ...(kind === 'avatar' ? [] : ['render_failed', 'render_unavailable'] as const), 'overloaded'],
    },
  });
  return [route('query'), route('path')];
}

export const IMAGE_ROUTES: Route<SkinsService>[] = [
  ...IMAGE_KINDS.flatMap(imageRoutes),
  {
    method: 'post', path: '/v1/render', ...upload, before: uploadBefore(), params: [sizeField, ...uploadFields],
    doc: uploadDoc([sizeField, ...uploadFields], 'The size in pixels is a form field, as the options are.', { size: 256, model: 'slim', yaw: 30 }),
  },
  {
    // The first address of the upload, kept for the clients that use it. OpenAPI forbids a second
    // template that differs from /v1/render/{name} only in its parameter's name, so the document
    // lists it under that path item, as deprecated (docs/openapi.md).
    method: 'post', path: '/v1/render/{size}', docPath: '/v1/render/{name}', ...upload, before: uploadBefore(extensionOf('size')),
    params: [sizeParam('path', 256, 'the size in pixels: for an upload this segment holds no name'), ...uploadFields],
    doc: {
      ...uploadDoc(uploadFields, 'The older address of POST /v1/render, kept for existing clients: the path segment is the size in pixels (POST /v1/render/256), not a player name.', { model: 'slim', yaw: 30 }),
      summary: 'Render an uploaded skin (older address: the segment is the size)',
      deprecated: true,
    },
  },
];
