// The search service's route table: the front page, /health and /v1/types need no key and are
// not counted; /v1/search (GET or POST: a page of the answer, or an export) and /v1/search/bulk
// need a key and count in the search group; the admin API (admin-routes.ts) needs the admin token.
import type { Context } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import { readJson } from '../http/body.ts';
import { isOperator } from '../metrics.ts';
import { serviceLinks } from '../http/page.ts';
import { between, choice, inQuery, text, type Params } from '../http/params.ts';
import type { Route, RouteTable } from '../http/route-table.ts';
import { json, pretty, prettyOnRequest, requires } from '../docs/fragments.ts';
import type { Response } from '../docs/openapi-types.ts';
import { ref } from '../docs/schemas.ts';
import { HEALTH_DOC, ROOT_DOC } from '../docs/shared-routes.ts';
import { keyAccepted, SEARCH_GROUPS, useKey } from './auth.ts';
import { BULK_CONCURRENCY, BULK_MAX, readBulk, runBulk } from './bulk.ts';
import { EXPORT_FORMATS, EXPORT_MAX_MS, sendExport, type ExportFormat } from './export.ts';
import type { KeyRecord } from './keys/model.ts';
import { OFFSET_MAX, PAGE_ROWS_MAX, readPage } from './paging.ts';
import { MAIN_RECORD_LIMIT } from './pipeline.ts';
import { planFigures, type PlanFigures } from './plans.ts';
import type { TypedValue } from './types.ts';
import { assumedRegion, parseQuery } from './detect.ts';
import { requestOrigin } from '../http/client-address.ts';
import { pageLanguage } from '../http/i18n.ts';
import { ADMIN_ROUTES } from './admin-routes.ts';
import { KEY_ROUTES } from './key-routes.ts';
import { SOURCE_ROUTES } from './source-routes.ts';
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

/** The figures of the key keyAccepted read: a request is checked against them before the key is counted. */
const figuresOf = (ctx: Context, service: SearchService) => planFigures(service.config, ctx.state.searchKeyRecord as KeyRecord);

const FORMATS = ['json', ...EXPORT_FORMATS];

function readFormat(value: unknown): 'json' | ExportFormat {
  if (value === undefined || value === null) return 'json';
  if (typeof value !== 'string' || !FORMATS.includes(value)) throw new ApiError('bad_request', { detail: `format must be ${FORMATS.join(' or ')}` });
  return value as 'json' | ExportFormat;
}

async function search(ctx: Context, service: SearchService, params: Params): Promise<void> {
  const input = ctx.method === 'GET' ? params : await readJson(ctx);
  const fields = typeof input === 'object' && input !== null ? input as Record<string, unknown> : {};
  // The query and the page are checked before the key is counted: a malformed request costs no quota.
  const region = service.config.search.defaultRegion;
  const parsed = parseQuery(fields.query, fields.type, region);
  const format = readFormat(fields.format);
  if (format !== 'json') return exportRows(ctx, service, parsed, format, fields);
  const page = readPage(fields, parsed, figuresOf(ctx, service), service.cursors);
  const key = ctx.state.searchKey as string;
  // Refused before the key is counted: a search that never ran costs no quota.
  const release = service.running.enter(key);
  try {
    const { record } = await useKey(service, ctx, key);
    ctx.body = await service.search(parsed, record.id, assumedRegion(fields.query as string, parsed, region), { page });
  } finally {
    release();
  }
}

/** `format=csv|jsonl`: counted as one search, holding one of the key's running places while it streams. */
async function exportRows(ctx: Context, service: SearchService, query: TypedValue, format: ExportFormat, fields: Record<string, unknown>): Promise<void> {
  const paging = ['limit', 'offset', 'cursor'].find((f) => fields[f] !== undefined && fields[f] !== null);
  if (paging) throw new ApiError('bad_request', { detail: `${paging}: an export streams every row; leave out limit, offset and cursor` });
  const planned: PlanFigures = figuresOf(ctx, service);
  if (planned.export_rows === 0) throw new ApiError('forbidden', { detail: { zh: '此密钥的套餐不含导出（export_rows 为 0）', en: 'this key\'s plan has no export (export_rows 0)' } });
  const key = ctx.state.searchKey as string;
  const release = service.running.enter(key);
  try {
    const { record, figures } = await useKey(service, ctx, key);
    const started = performance.now();
    await sendExport(ctx, {
      source: service.local, query, format, cap: figures.export_rows, pageTimeoutMs: service.config.search.sourceTimeoutMs,
      done: (end) => service.writeAudit(record.id, query, { count: end.rows, timed_out: end.reason === 'timed_out', export: format, complete: end.complete, reason: end.reason, started }),
    }, release);
  } catch (error) {
    release();
    throw error;
  }
}

async function bulk(ctx: Context, service: SearchService): Promise<void> {
  // Read and checked whole before the key is counted: one bad query costs nothing.
  const request = readBulk(await readJson(ctx), figuresOf(ctx, service), service.config.search.defaultRegion);
  const key = ctx.state.searchKey as string;
  const { places, release } = service.running.enterUpTo(key, BULK_CONCURRENCY);
  try {
    const { record } = await useKey(service, ctx, key, request.queries.length);
    ctx.body = await runBulk(service, request, record.id, places);
  } finally {
    release();
  }
}

const example = TYPE_INFO.find((t) => t.type === 'email')!.example;
const keyErrors = ['missing_key', 'invalid_key', 'key_disabled', 'key_expired', 'key_exhausted', 'rate_limited'] as const;
const searchErrors = ['invalid_query', 'invalid_type', 'bad_request', ...keyErrors, 'forbidden', 'search_failed'] as const;
const description = 'A main pass over every source that answers the type, then a cross pass over the entities found, under one deadline (SEARCH_TIMEOUT_MS). '
  + 'The key is checked before the request is read (a wrong key is refused whatever the query), and a malformed query is refused before the key is counted. '
  + `Paging: \`limit\` rows of local_index (at most the plan's page_rows) from \`offset\`, or the previous answer's \`page.next_cursor\` as \`cursor\`; pages after the first ask only local_index. `
  + `\`format=csv|jsonl\` streams every local_index row of the main pass instead (up to the plan's export_rows, within ${EXPORT_MAX_MS / 60_000} minutes; 403 \`forbidden\` on a plan without export), ending with a trailer that says whether it is complete.`;
const streamed = (type: string) => ({ schema: { type: 'string', contentMediaType: type } });
/** What every answer counted against a key carries (api/search/auth.ts useKey). */
const keyHeaders: Response['headers'] = {
  'X-Key-Requests-Remaining': { description: 'searches the key has left, or `unlimited`', schema: { type: 'string' } },
  'X-Key-RateLimit-Limit': { description: 'searches a minute the key may make (its plan\'s searches_per_minute, or its own)', schema: { type: 'integer' } },
  'X-Key-RateLimit-Remaining': { description: 'searches the key may still make this minute', schema: { type: 'integer' } },
  'X-Key-RateLimit-Reset': { description: 'when the key\'s minute ends (Unix seconds)', schema: { type: 'integer' } },
};
const searchAnswer: Response = {
  description: 'search result (JSON), or the export (format=csv or jsonl)',
  headers: {
    ...keyHeaders,
    'X-Export-Limit': { description: 'exports: rows the key\'s plan streams at most', schema: { type: 'integer' } },
    'Content-Disposition': { description: 'exports: attachment; filename="search-TYPE.csv"', schema: { type: 'string' } },
  },
  content: { 'application/json': { schema: ref('SearchResult') }, 'text/csv': streamed('text/csv'), 'application/x-ndjson': streamed('application/x-ndjson') },
};
const pageParams = [
  inQuery('limit', `local_index rows a page, 1 to the key's plan's page_rows (default ${MAIN_RECORD_LIMIT}, or page_rows when fewer)`, between('integer', 1, PAGE_ROWS_MAX)),
  inQuery('offset', 'local_index rows to pass over first (default 0); or give cursor', between('integer', 0, OFFSET_MAX)),
  inQuery('cursor', 'page.next_cursor of the previous answer (not with offset; a limit beside it replaces its own)', { type: 'string', maxLength: 512 }),
  inQuery('format', 'json (the answer), or csv / jsonl: an export of every local_index row', choice(FORMATS, 'json')),
];

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
      ...pageParams,
      prettyOnRequest,
    ],
    doc: { summary: 'Search', description, ok: searchAnswer, errors: searchErrors, security: requires('searchApiKey') },
  },
  {
    method: 'post', path: '/v1/search', limit: SEARCH_GROUPS.search, params: [prettyOnRequest], before: (service) => [keyAccepted(service)], handle: search,
    doc: {
      summary: 'Search (JSON body)', description,
      body: { required: true, content: { 'application/json': { schema: ref('SearchRequest'), example: { query: example, type: 'email' } } } },
      ok: searchAnswer, errors: searchErrors, security: requires('searchApiKey'),
    },
  },
  {
    method: 'post', path: '/v1/search/bulk', limit: SEARCH_GROUPS.search, params: [prettyOnRequest], before: (service) => [keyAccepted(service)], handle: bulk,
    doc: {
      summary: 'Several searches in one request',
      description: `Up to the plan's bulk_size queries (${BULK_MAX} at most), checked all or nothing before the key is counted; each counts as a search. `
        + `They run up to ${BULK_CONCURRENCY} at a time (as many as the key's free SEARCH_KEY_CONCURRENCY places) under one deadline (SEARCH_TIMEOUT_MS) for the whole request: `
        + 'a query not started by then is answered timed_out with no results. One answer per query, in order, each a search answer (its first page); cross=false skips the cross passes.',
      body: { required: true, content: { 'application/json': { schema: ref('BulkRequest'), example: { queries: [{ query: example, type: 'email' }, { query: '192.0.2.1', type: 'ip' }], cross: false } } } },
      ok: { ...json('one answer per query', ref('BulkResult')), headers: keyHeaders }, errors: searchErrors.filter((c) => c !== 'forbidden'), security: requires('searchApiKey'),
    },
  },
  ...KEY_ROUTES,
  ...SOURCE_ROUTES,
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
