// The skins service's routes: thin handlers over the lookup, record and texture modules.
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import { queryFlag, readJson, queryParam } from '../http/body.ts';
import { ok } from '../http/envelope.ts';
import type { SkinsService } from './service.ts';
import { parseBatch, runBatch } from './batch.ts';
import { imageEtag, notModified, sendPng } from './image-response.ts';
import { playerRecord, profileRecord, readTextures, uuidRecord } from './records.ts';
import { decodeTexturesValue } from './textures.ts';
import type { RawProfile } from './types.ts';
import { parsePlayerQuery, parseSource, parseUuid } from './validate.ts';

export const RATE_GROUPS = {
  normal: { name: 'normal', limit: 120 },
  image: { name: 'image', limit: 240 },
  batch: { name: 'batch', limit: 300 },
} as const;

const sourceOf = (ctx: Context) => parseSource(queryParam(ctx, 'source'));

/** Raw texture endpoints (/v1/skin, /v1/cape): the unprocessed PNG, from the allow-listed host. */
function textureRoute(service: SkinsService, kind: 'skin' | 'cape'): Middleware {
  return async (ctx) => {
    const source = sourceOf(ctx);
    const download = queryFlag(ctx, 'download', false);
    const useUpload = queryFlag(ctx, 'upload', true);
    let profile: RawProfile = (await service.lookup.find(ctx.params.name, source)).value;
    if (!useUpload && profile.source === 'external') {
      // upload=0: ignore the skin-site upload and fall back to the official account's texture.
      profile = (await service.lookup.find(profile.name, 'official')).value;
    }
    const { skin } = readTextures(profile);
    const url = kind === 'skin' ? skin.skinUrl : skin.capeUrl;
    if (!url) throw new ApiError('no_texture', { detail: kind });
    const etag = imageEtag(kind, url);
    if (notModified(ctx, etag)) return;
    const texture = await service.textures.get(url);
    sendPng(ctx, { png: texture.png, etag, cache: texture.cache, download: download ? `${profile.name}-${kind}.png` : null });
  };
}

export function skinsRouter(service: SkinsService): Router {
  const router = new Router();
  const limit = (group: keyof typeof RATE_GROUPS) => service.limiter.middleware(RATE_GROUPS[group]);

  const player: Middleware = async (ctx) => {
    const found = await service.lookup.find(ctx.params.name, sourceOf(ctx));
    ctx.set('X-Cache', found.cache);
    ok(ctx, playerRecord(found.value, service.config.publicUrl));
  };
  router.get('/v1/player/:name', limit('normal'), player);
  router.get('/v1/u/:name', limit('normal'), player);

  router.get('/v1/uuid/:name', limit('normal'), async (ctx) => {
    const source = sourceOf(ctx);
    const query = parsePlayerQuery(ctx.params.name, source);
    const resolved = query.kind === 'name'
      ? await service.lookup.resolveName(query.name, source)
      : await service.lookup.profile(query.uuid, source);
    const hit = { id: resolved.value.id, name: resolved.value.name, source: resolved.source };
    ctx.set('X-Cache', resolved.cache);
    ok(ctx, uuidRecord(hit, resolved.cache !== 'MISS'));
  });

  router.get('/v1/profile/:uuid', limit('normal'), async (ctx) => {
    const found = await service.lookup.profile(parseUuid(ctx.params.uuid), sourceOf(ctx));
    ctx.set('X-Cache', found.cache);
    ok(ctx, profileRecord(found.value));
  });

  router.get('/v1/batch', limit('batch'), async (ctx) => {
    const names = queryParam(ctx, 'names');
    const uuids = queryParam(ctx, 'uuids');
    const request = parseBatch({ names: names?.split(','), uuids: uuids?.split(','), type: queryParam(ctx, 'type') }, sourceOf(ctx));
    ok(ctx, await runBatch(request, service.lookup));
  });
  router.post('/v1/batch', limit('batch'), async (ctx) => {
    const body = await readJson(ctx);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new ApiError('bad_request', { detail: { zh: '请求体应为 JSON 对象 {names, uuids, type, source}', en: 'the body must be a JSON object {names, uuids, type, source}' } });
    }
    const fields = body as { names?: unknown; uuids?: unknown; type?: unknown; source?: unknown };
    if (fields.source !== undefined && typeof fields.source !== 'string') throw new ApiError('bad_source');
    const source = parseSource((fields.source as string | undefined) ?? queryParam(ctx, 'source'));
    ok(ctx, await runBatch(parseBatch({ ...fields, type: fields.type ?? queryParam(ctx, 'type') }, source), service.lookup));
  });

  router.get('/v1/decode', limit('normal'), (ctx) => {
    const value = queryParam(ctx, 'value');
    if (!value) throw new ApiError('missing_param', { detail: 'value' });
    const decoded = decodeTexturesValue(value);
    if (!decoded) throw new ApiError('bad_request', { detail: { zh: 'value 不是有效的 base64 材质数据', en: 'value is not base64 textures data' } });
    ok(ctx, decoded);
  });

  router.get('/v1/status', async (ctx) => ok(ctx, await service.status()));
  router.get('/v1/sources', (ctx) => ok(ctx, { sources: service.sourceList() }));

  const announcements: Middleware = async (ctx) => {
    const list = await service.externalInfo.announcements(queryFlag(ctx, 'fresh', false));
    ok(ctx, { source: 'external', count: list.length, announcements: list });
  };
  router.get('/v1/external/announcements', limit('normal'), announcements);
  router.get('/v1/external/notice', limit('normal'), announcements);

  const meta: Middleware = async (ctx) => ok(ctx, service.externalInfo.metaRecord(await service.externalInfo.metadata()));
  router.get('/v1/external/meta', limit('normal'), meta);
  router.get('/v1/external/yggdrasil', limit('normal'), meta);

  router.get('/v1/skin/:name', limit('image'), textureRoute(service, 'skin'));
  router.get('/v1/cape/:name', limit('image'), textureRoute(service, 'cape'));

  return router;
}
