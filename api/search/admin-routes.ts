// The admin API over the key store: create (the key is in this answer only), list, update, delete.
import Router from '@koa/router';
import { ApiError } from '../../shared/errors.ts';
import { readJson } from '../http/body.ts';
import type { RateLimiter } from '../http/rate-limit.ts';
import { requireAdmin } from './auth.ts';
import { parseCreateInput, parsePatch, publicKey } from './keys/model.ts';
import type { KeyStore } from './keys/store.ts';

export function adminRouter(store: KeyStore, adminToken: string | null, limiter: RateLimiter): Router {
  const router = new Router({ prefix: '/v1/admin/keys' });
  router.use(async (ctx, next) => {
    await requireAdmin(adminToken, limiter, ctx);
    await next();
  });

  router.post('/', async (ctx) => {
    const input = parseCreateInput(await readJson(ctx));
    const { key, record } = await store.create(input);
    ctx.status = 201;
    ctx.body = { status: 'success', ...publicKey(record), key };
  });

  router.get('/', async (ctx) => {
    ctx.body = { status: 'success', keys: (await store.list()).map((r) => publicKey(r)) };
  });

  router.patch('/:id', async (ctx) => {
    const record = await store.update(ctx.params.id, parsePatch(await readJson(ctx)));
    if (!record) throw new ApiError('not_found', { detail: `no key ${ctx.params.id}` });
    ctx.body = { status: 'success', ...publicKey(record) };
  });

  router.delete('/:id', async (ctx) => {
    if (!(await store.delete(ctx.params.id))) throw new ApiError('not_found', { detail: `no key ${ctx.params.id}` });
    ctx.body = { status: 'success', id: ctx.params.id, deleted: true };
  });
  return router;
}
