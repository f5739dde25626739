// The skins service's route table: lookups, batches and external-service info here; images,
// account and pages in their own files; all joined in SKINS_SECTIONS, which the service mounts and
// SKINS_TABLE describes. Handlers are thin, over the lookup, record and texture modules.
import type { Context } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import { readJson } from '../http/body.ts';
import { ok } from '../http/envelope.ts';
import { flag, inPath, inQuery, text, type Param, type Params } from '../http/params.ts';
import { section, type Route, type RouteTable, type TableSection } from '../http/route-table.ts';
import { data, images, png, pretty } from '../docs/fragments.ts';
import { envelopeError, ref } from '../docs/schemas.ts';
import { DOCS_ROUTES, type DocsSource } from '../docs/routes.ts';
import type { SkinsService } from './service.ts';
import { BATCH_LIMIT, parseBatch, runBatch } from './batch.ts';
import { IMAGE_CACHE_CONTROL, imageEtag, notModified, sendPng } from './image-response.ts';
import { chargeWork, FORMAT_NOTE, IMAGE_ROUTES, WORK_NOTE } from './image-routes.ts';
import { drawnCost } from './image-cost.ts';
import { explicitFormat, extensionOf, formatParam, requestFormat, type ImageFormat } from './image-format.ts';
import { sizeParam } from './image-params.ts';
import { capeFront, capeWidth, processedSkinPng } from './texture-images.ts';
import { GROUP_ROUTES } from './group-routes.ts';
import { TURNTABLE_ROUTES } from './turntable-routes.ts';
import { ACCOUNT_ROUTES, type AccountContext } from './account/routes.ts';
import { PAGE_ROUTES, type PagesDeps } from './pages/routes.ts';
import { playerRecord, profileRecord, readTextures, uuidRecord } from './records.ts';
import { decodeTexturesValue } from './textures.ts';
import { charged, LOOKUP_ERRORS, namePath, PLAYER_LOOKUP_ERRORS, playerPath, RATE_GROUPS, source } from './route-params.ts';
import { SKINS_SCHEMAS } from './schemas.ts';
import type { RawProfile, SourceParam } from './types.ts';
import { parsePlayerQuery, parseSource, parseUuid } from './validate.ts';

// ---- parameters ----------------------------------------------------------------------------------

const uuidPath = inPath('uuid', '32 hex digits, dashes optional', { type: 'string', pattern: '^[0-9a-fA-F-]{32,36}$' }, { read: parseUuid });

const sourceOf = (params: Params) => params.source as SourceParam;

// ---- handlers ---------------------------------------------------------------------------------

async function player(ctx: Context, service: SkinsService, params: Params): Promise<void> {
  const found = await service.lookup.find(params.name as string, sourceOf(params));
  ctx.set('X-Cache', found.cache);
  ok(ctx, playerRecord(found.value, service.config.publicUrl));
}

async function uuid(ctx: Context, service: SkinsService, params: Params): Promise<void> {
  const source = sourceOf(params);
  const query = parsePlayerQuery(params.name as string);
  const resolved = query.kind === 'name'
    ? await service.lookup.resolveName(query.name, source)
    : await service.lookup.profile(query.uuid, source);
  const hit = { id: resolved.value.id, name: resolved.value.name, source: resolved.source };
  ctx.set('X-Cache', resolved.cache);
  ok(ctx, uuidRecord(hit, resolved.cache !== 'MISS'));
}

async function profile(ctx: Context, service: SkinsService, params: Params): Promise<void> {
  const found = await service.lookup.profile(params.uuid as string, sourceOf(params));
  ctx.set('X-Cache', found.cache);
  ok(ctx, profileRecord(found.value));
}

async function batchFromQuery(ctx: Context, service: SkinsService, params: Params): Promise<void> {
  const list = (name: string) => (params[name] as string | undefined)?.split(',');
  ok(ctx, await runBatch(parseBatch({ names: list('names'), uuids: list('uuids'), type: params.type }, sourceOf(params)), service.lookup));
}

async function batchFromBody(ctx: Context, service: SkinsService, params: Params): Promise<void> {
  const body = await readJson(ctx);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError('bad_request', { detail: { zh: '请求体应为 JSON 对象 {names, uuids, type, source}', en: 'the body must be a JSON object {names, uuids, type, source}' } });
  }
  const fields = body as { names?: unknown; uuids?: unknown; type?: unknown; source?: unknown };
  if (fields.source !== undefined && typeof fields.source !== 'string') throw new ApiError('bad_source');
  const source = fields.source === undefined ? sourceOf(params) : parseSource(fields.source as string);
  ok(ctx, await runBatch(parseBatch({ ...fields, type: fields.type ?? params.type }, source), service.lookup));
}

function decode(ctx: Context, _service: SkinsService, params: Params): void {
  const decoded = decodeTexturesValue(params.value as string);
  if (!decoded) throw new ApiError('bad_request', { detail: { zh: 'value 不是有效的 base64 材质数据', en: 'value is not base64 textures data' } });
  ok(ctx, decoded);
}

async function announcements(ctx: Context, service: SkinsService, params: Params): Promise<void> {
  const list = await service.externalInfo.announcements(params.fresh as boolean);
  ok(ctx, { source: 'external', count: list.length, announcements: list });
}

async function meta(ctx: Context, service: SkinsService): Promise<void> {
  ok(ctx, service.externalInfo.metaRecord(await service.externalInfo.metadata()));
}

/** The profile whose textures a texture route serves. */
async function textureOwner(service: SkinsService, params: Params): Promise<RawProfile> {
  const found = (await service.lookup.find(params.name as string, sourceOf(params))).value;
  // upload=0: ignore the skin-site upload and fall back to the official account's texture.
  return !params.upload && found.source === 'external' ? (await service.lookup.find(found.name, 'official')).value : found;
}

/** The address of a player's skin or cape, and its hash (the key of what is made from it); no_texture without one. */
function textureOf(profile: RawProfile, kind: 'skin' | 'cape'): { url: string; hash: string } {
  const { skin } = readTextures(profile);
  const [url, hash] = kind === 'skin' ? [skin.skinUrl, skin.skinHash] : [skin.capeUrl, skin.capeHash];
  if (!url) throw new ApiError('no_texture', { detail: kind });
  return { url, hash: hash ?? url };
}

/** Raw texture endpoints (/v1/skin, /v1/cape): the unprocessed PNG, from the allow-listed host. */
const texture = (kind: 'skin' | 'cape') => async (ctx: Context, service: SkinsService, params: Params): Promise<void> => {
  const found = await textureOwner(service, params);
  const { url } = textureOf(found, kind);
  const etag = imageEtag(kind, url);
  if (notModified(ctx, etag)) return;
  const fetched = await service.textures.get(url);
  sendPng(ctx, { png: fetched.png, etag, cache: fetched.cache, download: params.download ? `${found.name}-${kind}.png` : null });
};

/** /v1/skin: the raw texture, or (processed=1) the skin as the renderer draws it, an image like any other. */
async function skinTexture(ctx: Context, service: SkinsService, params: Params): Promise<void> {
  if (!params.processed) {
    // The raw texture is the upstream's file as it is, so a PNG: another format is for processed=1.
    if ((explicitFormat(params.format as ImageFormat | undefined, ctx.state.extensionFormat as ImageFormat | undefined) ?? 'png') !== 'png') {
      throw new ApiError('bad_request', { detail: { zh: '原始皮肤是上游的 PNG 文件; 其他格式需要 processed=1', en: 'the raw skin is the upstream\'s PNG file; other formats need processed=1' } });
    }
    return texture('skin')(ctx, service, params);
  }
  const format = requestFormat(ctx, params.format, service.config.imageFormatFromAccept);
  const found = await textureOwner(service, params);
  const { url, hash } = textureOf(found, 'skin');
  await service.images.replyDrawn(ctx, `skin-processed|${hash}`, format, async () => processedSkinPng(await service.images.skin(url, hash)), {
    // By its pixels: an HD skin is larger (a PNG's width is bytes 16-19; a legacy skin becomes square).
    admit: async () => chargeWork(ctx, service, drawnCost((await service.textures.get(url)).png.readUInt32BE(16) ** 2, format)),
    download: params.download ? `${found.name}-skin-processed.${format}` : null,
  });
}

/** GET /v1/cape/{name}/{size}: the cape's front face, drawn in-process (texture-images.ts). */
async function capeImage(ctx: Context, service: SkinsService, params: Params): Promise<void> {
  const format = requestFormat(ctx, params.format, service.config.imageFormatFromAccept);
  const size = params.size as number;
  const { url, hash } = textureOf(await textureOwner(service, params), 'cape');
  await service.images.replyDrawn(ctx, `cape-front|${size}|${hash}`, format, async () => capeFront(await service.images.cape(url, hash), size), {
    admit: () => chargeWork(ctx, service, drawnCost(size * capeWidth(size), format)),
  });
}

// ---- the table --------------------------------------------------------------------------------

const { normal, image, batch } = RATE_GROUPS;
const download = flag('download', 0, '1 adds download headers');
const upload = (kind: 'skin' | 'cape') => flag('upload', 1, `0 ignores a skin-site upload and uses the official ${kind}`);
const lookupParams: Param[] = [playerPath, source, pretty];
const batchParams = (listsInQuery: boolean): Param[] => [
  ...(listsInQuery ? [inQuery('names', 'comma-separated player names (or give uuids)', text, { example: (docs) => `${docs.demoPlayer},Nobody` }), inQuery('uuids', 'comma-separated UUIDs', text)] : []),
  inQuery('type', '`profile` returns full profile records', { type: 'string', enum: ['profile'] }), source, pretty,
];
const batchErrors = ['missing_param', 'too_many_names', 'bad_request', 'bad_source', 'upstream_error', 'upstream_busy', 'upstream_timeout'] as const;
const batchNote = `At most ${BATCH_LIMIT} names and UUIDs together; unresolved ones are listed in missing.`;

const playerRoute: Route<SkinsService> = {
  method: 'get', path: '/v1/player/{name}', limit: normal, params: lookupParams, handle: charged(player),
  doc: { summary: 'Full player record', description: 'Every texture detail and the addresses of every image. X-Cache says HIT, MISS or STALE.', ok: data('player record', 'PlayerRecord'), errors: PLAYER_LOOKUP_ERRORS },
};
const announcementsRoute: Route<SkinsService> = {
  method: 'get', path: '/v1/external/announcements', limit: normal, params: [flag('fresh', 0, '1 skips the cache'), pretty], handle: announcements,
  doc: { summary: 'Announcements of the external service', description: 'HTML cleaned to a tag whitelist; cached 10 minutes.', ok: data('announcements', 'Announcements'), errors: ['bad_request', 'upstream_error', 'upstream_timeout'] },
};
const metaRoute: Route<SkinsService> = {
  method: 'get', path: '/v1/external/meta', limit: normal, params: [pretty], handle: meta,
  doc: { summary: 'Authentication metadata of the external service', ok: data('metadata', 'ExternalMeta'), errors: ['upstream_error', 'upstream_timeout'] },
};
/** The same route at another address, summarised as such. */
const alias = <D>(route: Route<D>, path: string, summary: string): Route<D> => ({ ...route, path, doc: { ...route.doc, summary } });

export const LOOKUP_ROUTES: Route<SkinsService>[] = [
  playerRoute,
  alias(playerRoute, '/v1/u/{name}', 'Full player record (same as /v1/player, for UUIDs)'),
  {
    method: 'get', path: '/v1/uuid/{name}', limit: normal, params: lookupParams, handle: charged(uuid),
    doc: { summary: 'Name to UUID', description: 'Cached 1 hour; `cached` says whether this answer came from the cache.', ok: data('UUID record', 'UuidRecord'), errors: PLAYER_LOOKUP_ERRORS },
  },
  {
    method: 'get', path: '/v1/profile/{uuid}', limit: normal, params: [uuidPath, source, pretty], handle: charged(profile),
    doc: { summary: 'Profile record', ok: data('profile record', 'ProfileRecord'), errors: ['missing_param', ...PLAYER_LOOKUP_ERRORS] },
  },
  {
    method: 'get', path: '/v1/batch', limit: batch, params: batchParams(true), handle: charged(batchFromQuery),
    doc: { summary: 'Batch lookup (comma-separated)', description: batchNote, ok: data('batch result', 'BatchResult'), errors: batchErrors },
  },
  {
    method: 'post', path: '/v1/batch', limit: batch, params: batchParams(false), handle: charged(batchFromBody),
    doc: {
      summary: 'Batch lookup (JSON body)', description: `${batchNote} type and source may also be given in the query; the body's win.`,
      body: (docs) => ({ required: true, content: { 'application/json': { schema: ref('BatchRequest'), example: { names: [docs.demoPlayer, 'Nobody'], type: 'profile' } } } }),
      ok: data('batch result', 'BatchResult'), errors: batchErrors,
    },
  },
  {
    method: 'get', path: '/v1/decode', limit: normal, params: [inQuery('value', 'properties[].value of a profile', text, { required: true }), pretty], handle: decode,
    doc: { summary: 'Decode a base64 textures value', ok: data('decoded textures', 'DecodeResult'), errors: ['missing_param', 'bad_request'] },
  },
  {
    method: 'get', path: '/v1/status', unmetered: true, params: [pretty], handle: async (ctx, service) => ok(ctx, await service.status()),
    doc: { summary: 'Service status', description: 'Local state only: asks no upstream; not rate limited.', ok: data('status record', 'Status') },
  },
  {
    method: 'get', path: '/v1/sources', unmetered: true, params: [pretty], handle: (ctx, service) => ok(ctx, { sources: service.sourceList() }),
    doc: { summary: 'Data sources', description: 'Not rate limited.', ok: data('source list', 'Sources') },
  },
  announcementsRoute,
  alias(announcementsRoute, '/v1/external/notice', 'Announcements (same as /v1/external/announcements)'),
  metaRoute,
  alias(metaRoute, '/v1/external/yggdrasil', 'Authentication metadata (same as /v1/external/meta)'),
  {
    method: 'get', path: '/v1/skin/{name}', limit: image, cacheControl: IMAGE_CACHE_CONTROL, handle: charged(skinTexture),
    params: [namePath, download, upload('skin'), flag('processed', 0, '1: the skin as the renderer draws it (64x64, left limbs of a legacy skin mirrored, base layer opaque; HD kept), in any format'), formatParam, source],
    before: () => [extensionOf('name')],
    doc: {
      summary: 'Raw skin PNG, or the skin as drawn (processed=1)',
      description: 'The unprocessed texture as the upstream serves it; 404 no_texture when the player has no skin. It is a PNG: `format` or an extension other than png is bad_request without processed=1. '
        + 'processed=1 is the skin as the renderer draws it: a legacy 64x32 skin converted to 64x64 with the left limbs mirrored, the base layer\'s transparent texels made opaque as the game does, an HD skin at its own size; '
        + `its own ETag and cache entry, in PNG, WebP or AVIF as the other images. ${WORK_NOTE}`,
      ok: images('the skin texture'), conditional: true, head: true, errors: ['bad_request', 'no_texture', ...LOOKUP_ERRORS, 'overloaded'],
    },
  },
  {
    method: 'get', path: '/v1/cape/{name}', limit: image, cacheControl: IMAGE_CACHE_CONTROL, handle: charged(texture('cape')),
    params: [namePath, download, upload('cape'), source],
    doc: {
      summary: 'Raw cape PNG', description: 'The unprocessed texture as the upstream serves it; 404 no_texture when the player has no cape. The cape as a picture: /v1/cape/{name}/{size}.',
      ok: png('the cape texture'), conditional: true, head: true, errors: ['bad_request', 'no_texture', ...LOOKUP_ERRORS],
    },
  },
  {
    method: 'get', path: '/v1/cape/{name}/{size}', limit: image, cacheControl: IMAGE_CACHE_CONTROL, handle: charged(capeImage),
    params: [namePath, sizeParam('path', 128, 'height in pixels; the width is 10/16 of it, rounded'), upload('cape'), formatParam, source],
    before: () => [extensionOf('size')],
    doc: {
      summary: 'The cape\'s front face',
      description: `The front face of the player's cape (10x16 texels of a 64x32 texture, scaled for an HD cape) scaled to \`size\` pixels high without smoothing: each pixel is a texel's colour. 404 no_texture when the player has no cape. ${FORMAT_NOTE} ${WORK_NOTE} Answers HEAD too.`,
      ok: images('the cape\'s front face'), conditional: true, head: true, errors: ['bad_request', 'no_texture', 'invalid_skin', ...LOOKUP_ERRORS, 'overloaded'],
    },
  },
];

/** What the sections' handlers work with, built by the service (the docs by the composition root). */
export interface SkinsParts { service: SkinsService; account: AccountContext; pages: PagesDeps; docs: DocsSource }

/** Every route of the skins service, in the order the service mounts them, each section over its part. */
export const SKINS_SECTIONS: readonly TableSection<SkinsParts>[] = [
  section([...LOOKUP_ROUTES, ...IMAGE_ROUTES, ...TURNTABLE_ROUTES, ...GROUP_ROUTES], (parts: SkinsParts) => parts.service),
  section(ACCOUNT_ROUTES, (parts: SkinsParts) => parts.account),
  section(PAGE_ROUTES, (parts: SkinsParts) => parts.pages),
  section(DOCS_ROUTES, (parts: SkinsParts) => parts.docs),
];

export const SKINS_TABLE: RouteTable = {
  service: 'skins',
  description: 'Player lookup by name or UUID (official and external account services, Bedrock players), images (PNG, WebP or AVIF; turntables as animated WebP, APNG or GIF), OAuth accounts. '
    + 'JSON answers use the envelope {code, success, message, data, timestamp}. Pages for people: / (landing), /status, /docs.',
  routes: SKINS_SECTIONS.flatMap((part) => part.routes),
  schemas: SKINS_SCHEMAS,
  securitySchemes: { session: { type: 'apiKey', in: 'cookie', name: 'skinfarm.sid', description: 'login session from /oauth/external (a browser keeps it)' } },
  errorBody: envelopeError,
};
