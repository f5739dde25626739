// The public routes: the front page, /health and /v1/types need no key; /v1/search (GET or POST) does.
import Router from '@koa/router';
import type { Context } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import { readJson, queryParam } from '../http/body.ts';
import { presentedKey, refuse, useKey } from './auth.ts';
import { assumedRegion, parseQuery } from './detect.ts';
import { requestOrigin } from '../http/client-address.ts';
import { pageLanguage } from '../http/i18n.ts';
import { frontPage } from './front-page.ts';
import type { SearchService } from './service.ts';
import { TYPE_INFO } from './types.ts';

async function searchInput(ctx: Context): Promise<{ query: unknown; type: unknown }> {
  if (ctx.method === 'GET') return { query: queryParam(ctx, 'query'), type: queryParam(ctx, 'type') };
  const body = await readJson(ctx);
  const fields = typeof body === 'object' && body !== null ? body as Record<string, unknown> : {};
  return { query: fields.query, type: fields.type };
}

export function searchRouter(service: SearchService): Router {
  const router = new Router();

  router.get('/', (ctx) => {
    // API clients asking for JSON get what any unknown address gives them.
    if (ctx.accepts('html', 'json') !== 'html') throw new ApiError('route_not_found');
    const { publicUrl } = service.config.search;
    ctx.type = 'html';
    ctx.body = frontPage(pageLanguage(ctx), { self: publicUrl ?? requestOrigin(ctx, ctx.state.viaTrustedProxy === true), docs: `${service.config.publicUrl}/docs` });
  });

  router.get('/health', async (ctx) => {
    ctx.body = service.health();
  });

  router.get('/v1/types', (ctx) => {
    ctx.body = { status: 'success', types: TYPE_INFO };
  });

  const search = async (ctx: Context) => {
    const key = presentedKey(ctx) ?? await refuse(service.limiter, ctx, 'missing_key');
    // The query is checked before the key is counted: a malformed request costs no quota.
    const { query, type } = await searchInput(ctx);
    const region = service.config.search.defaultRegion;
    const parsed = parseQuery(query, type, region);
    const record = await useKey(service.keys, service.limiter, ctx, key);
    ctx.body = await service.search(parsed, record.id, assumedRegion(query as string, parsed, region));
  };
  router.get('/v1/search', search);
  router.post('/v1/search', search);
  return router;
}
