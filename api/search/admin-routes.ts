// The admin API over the key store: create (the key is in this answer only), list, update, delete.
import type { Context, Middleware } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import { readJson } from '../http/body.ts';
import { inPath, text, type Params } from '../http/params.ts';
import type { RequestBody } from '../docs/openapi-types.ts';
import type { Route } from '../http/route-table.ts';
import { json, pretty, requires } from '../docs/fragments.ts';
import { object, ref } from '../docs/schemas.ts';
import { requireAdmin, SEARCH_GROUPS } from './auth.ts';
import { parseCreateInput, parsePatch, publicKey } from './keys/model.ts';
import type { SearchService } from './service.ts';

const adminOnly = (service: SearchService): Middleware[] => [async (ctx, next) => {
  await requireAdmin(service.config.search.adminToken, service.limiter, ctx);
  await next();
}];

async function create(ctx: Context, { keys }: SearchService): Promise<void> {
  const input = parseCreateInput(await readJson(ctx));
  const { key, record } = await keys.create(input);
  ctx.status = 201;
  ctx.body = { status: 'success', ...publicKey(record), key };
}

async function list(ctx: Context, { keys }: SearchService): Promise<void> {
  ctx.body = { status: 'success', keys: (await keys.list()).map((r) => publicKey(r)) };
}

async function update(ctx: Context, { keys }: SearchService, params: Params): Promise<void> {
  const id = params.id as string;
  const record = await keys.update(id, parsePatch(await readJson(ctx)));
  if (!record) throw new ApiError('not_found', { detail: `no key ${id}` });
  ctx.body = { status: 'success', ...publicKey(record) };
}

async function remove(ctx: Context, { keys }: SearchService, params: Params): Promise<void> {
  const id = params.id as string;
  if (!(await keys.delete(id))) throw new ApiError('not_found', { detail: `no key ${id}` });
  ctx.body = { status: 'success', id, deleted: true };
}

const admin = requires('searchAdmin');
const adminErrors = ['unauthorized', 'admin_disabled', 'rate_limited'] as const;
const keyId = inPath('id', 'key id (key_...)', text);
const body = (schema: string, example: unknown): RequestBody => ({ required: true, content: { 'application/json': { schema: ref(schema), example } } });

export const ADMIN_ROUTES: Route<SearchService>[] = [
  {
    method: 'post', path: '/v1/admin/keys', limit: SEARCH_GROUPS.admin, before: adminOnly, handle: create,
    doc: {
      summary: 'Create a key', description: 'The key itself is in this answer only; just its hash is stored. `searches_per_minute`, `page_rows`, `bulk_size` and `export_rows` give the key figures of its own instead of its plan\'s (null = the plan\'s).',
      body: body('CreateKey', { name: 'acme', plan: 'premium', duration: '2m', request_limit: 10000 }),
      status: '201', ok: json('the key record and the key', ref('ApiKeyCreated')), errors: [...adminErrors, 'bad_request'], security: admin,
    },
  },
  {
    method: 'get', path: '/v1/admin/keys', params: [pretty], limit: SEARCH_GROUPS.admin, before: adminOnly, handle: list,
    doc: { summary: 'List keys', ok: json('every key record', ref('ApiKeyList')), errors: adminErrors, security: admin },
  },
  {
    method: 'patch', path: '/v1/admin/keys/{id}', params: [keyId], limit: SEARCH_GROUPS.admin, before: adminOnly, handle: update,
    doc: {
      summary: 'Disable, limit, re-date or re-plan a key', description: 'A figure set to null goes back to the plan\'s.', body: body('KeyPatch', { plan: 'premium', searches_per_minute: 600 }),
      ok: json('the updated record', { allOf: [ref('ApiKey'), object({ status: { const: 'success' } })] }), errors: [...adminErrors, 'bad_request', 'not_found'], security: admin,
    },
  },
  {
    method: 'delete', path: '/v1/admin/keys/{id}', params: [keyId], limit: SEARCH_GROUPS.admin, before: adminOnly, handle: remove,
    doc: { summary: 'Delete a key', ok: json('deleted', ref('ApiKeyDeleted')), errors: [...adminErrors, 'not_found'], security: admin },
  },
];
