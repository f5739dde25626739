// The search service's route table: the front page, /health and /v1/types need no key and are
// not counted; /v1/search (GET or POST) needs a key and counts in the search group; the admin API
// (admin-routes.ts) needs the admin token.
import type { Context } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import { readJson } from '../http/body.ts';
import { isOperator } from '../metrics.ts';
import { serviceLinks } from '../http/page.ts';
import { choice, inQuery, text, type Params } from '../http/params.ts';
import type { Route, RouteTable } from '../http/route-table.ts';
import { json, pretty, prettyOnRequest, requires } from '../docs/fragments.ts';
import { ref } from '../docs/schemas.ts';
import { HEALTH_DOC, ROOT_DOC } from '../docs/shared-routes.ts';
import { keyAccepted, SEARCH_GROUPS, useKey } from './auth.ts';
import { assumedRegion, parseQuery } from './detect.ts';
import { requestOrigin } from '../http/client-address.ts';
import { pageLanguage } from '../http/i18n.ts';
import { ADMIN_ROUTES } from './admin-routes.ts';
import { frontPage } from './front-page.ts';
import type { SearchService } from './service.ts';
import { SEARCH_SCHEMAS, searchError } from './schemas.ts';
import { TYPE_INFO } from './types.ts';

function front(ctx: Context, service: SearchService): void {
  // API clients asking for JSON get what any unknown address gives them.
  if (ctx.accepts('html', 'json') !== 'html') throw new ApiError('route_not_found');
  const { publicUrl } = service.config.search;
  ctx.type = 'html';
  ctx.body = frontPage(pageLanguage(ctx), {
    self: publicUrl ?? requestOrigin(ctx, ctx.state.viaTrustedProxy === true), docs: `${service.config.publicUrl}/docs`, services: serviceLinks(service.config, ctx, 'search'),
  });
}

async function search(ctx: Context, service: SearchService, params: Params): Promise<void> {
  const input = ctx.method === 'GET' ? params : await readJson(ctx);
  const fields = typeof input === 'object' && input !== null ? input as Record<string, unknown> : {};
  // The query is checked before the key is counted: a malformed request costs no quota.
  const region = service.config.search.defaultRegion;
  const parsed = parseQuery(fields.query, fields.type, region);
  const key = ctx.state.searchKey as string;
  // Refused before the key is counted: a search that never ran costs no quota.
  const release = service.running.enter(key);
  try {
    const { record } = await useKey({ store: service.keys, limiter: service.limiter, config: service.config }, ctx, key);
    ctx.body = await service.search(parsed, record.id, assumedRegion(fields.query as string, parsed, region));
  } finally {
    release();
  }
}

const example = TYPE_INFO.find((t) => t.type === 'email')!.example;
const keyErrors = ['missing_key', 'invalid_key', 'key_disabled', 'key_expired', 'key_exhausted', 'rate_limited'] as const;
const searchErrors = ['invalid_query', 'invalid_type', 'bad_request', ...keyErrors, 'search_failed'] as const;
const description = 'A main pass over every source that answers the type, then a cross pass over the entities found, under one deadline (SEARCH_TIMEOUT_MS). '
  + 'The key is checked before the request is read (a wrong key is refused whatever the query), and a malformed query is refused before the key is counted.';

export const SEARCH_ROUTES: Route<SearchService>[] = [
  { method: 'get', path: '/', handle: front, doc: ROOT_DOC },
  {
    method: 'get', path: '/health', doc: HEALTH_DOC,
    // The detail (data-file names, row problems, reasons) only to the operator, as /metrics decides.
    handle: (ctx, service) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = service.health(isOperator(ctx, [service.config.search.adminToken]));
    },
  },
  {
    method: 'get', path: '/v1/types', params: [pretty], handle: (ctx) => { ctx.body = { status: 'success', types: TYPE_INFO }; },
    doc: { summary: 'Query types with a description and an example', description: 'No key needed.', ok: json('the types', ref('SearchTypes')) },
  },
  {
    method: 'get', path: '/v1/search', limit: SEARCH_GROUPS.search, before: (service) => [keyAccepted(service)], handle: search,
    params: [
      inQuery('query', 'the value to search (URL-encode a leading +)', text, { required: true, missing: 'invalid_query', example }),
      // Checked with the query (invalid_type, before it) by parseQuery, as a POST body's type is.
      inQuery('type', 'query type; auto detects it', choice(TYPE_INFO.map((t) => t.type), 'auto'), { read: (raw) => raw }),
      prettyOnRequest,
    ],
    doc: { summary: 'Search', description, ok: json('search result', ref('SearchResult')), errors: searchErrors, security: requires('searchApiKey') },
  },
  {
    method: 'post', path: '/v1/search', limit: SEARCH_GROUPS.search, params: [prettyOnRequest], before: (service) => [keyAccepted(service)], handle: search,
    doc: {
      summary: 'Search (JSON body)', description,
      body: { required: true, content: { 'application/json': { schema: ref('SearchRequest'), example: { query: example, type: 'email' } } } },
      ok: json('search result', ref('SearchResult')), errors: searchErrors, security: requires('searchApiKey'),
    },
  },
  ...ADMIN_ROUTES,
];

export const SEARCH_TABLE: RouteTable = {
  service: 'search',
  description: 'Multi-type search (main pass and cross pass) with API keys; key administration with the admin token.',
  routes: SEARCH_ROUTES,
  schemas: SEARCH_SCHEMAS,
  securitySchemes: {
    searchApiKey: {
      type: 'apiKey', in: 'header', name: 'X-API-Key',
      description: 'search API key (sk_...); the docs page keeps it in memory only, until Logout or a reload, and shows `$KEY` in its curl commands', 'x-curl': '$KEY',
    },
    searchAdmin: { type: 'http', scheme: 'bearer', description: 'SEARCH_ADMIN_TOKEN', 'x-curl': '$SEARCH_ADMIN_TOKEN' },
  },
  errorBody: searchError,
};
