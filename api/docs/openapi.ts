// The OpenAPI 3.1 description of the services whose route tables it is given (path, method,
// rate-limit group, caching, parameters, answers, and each service's components:
// api/http/route-table.ts), with the shared component schemas. Nothing here lists a route or
// imports a service: a route that is answered is described, and only then.
import pkg from '../../package.json' with { type: 'json' };
import { ERROR_CODES, type ErrorCode } from '../../shared/errors.ts';
import type { Config } from '../config.ts';
import type { DocContext, Param } from '../http/params.ts';
import { quotaGroup, routeLimit, SITE_GROUP, type RouteSpec, type RouteTable } from '../http/route-table.ts';
import { headers, HEADERS, HTML } from './fragments.ts';
import type { Method, OpenApiDocument, Operation, Parameter, PathItem, Response, Schema, Server } from './openapi-types.ts';
import { SHARED_SCHEMAS } from './schemas.ts';
import { SHELL_ROUTES, SHELL_SECURITY } from './shared-routes.ts';

type ServiceId = RouteTable['service'];

/** Where each service is reached: PUBLIC_URL for skins, MEDIA_/SEARCH_PUBLIC_URL or localhost:<port>. */
export function serviceUrls(config: Config): Record<ServiceId, string> {
  return {
    skins: config.publicUrl,
    media: config.media.publicUrl ?? `http://localhost:${config.ports.media}`,
    search: config.search.publicUrl?.replace(/\/+$/, '') ?? `http://localhost:${config.ports.search}`,
  };
}

const byService = (tables: readonly RouteTable[]) => new Map(tables.map((table) => [table.service, table]));

/** The error body of the given codes in the shape of each service answering the path. */
function errorSchema(tables: Map<ServiceId, RouteTable>, services: readonly ServiceId[], codes: ErrorCode[]): Schema {
  // Services with one error shape (skins and media: the envelope) share one schema.
  const shapes = [...new Map(services.map((s) => tables.get(s)!.errorBody(codes)).map((schema) => [JSON.stringify(schema), schema])).values()];
  return shapes.length === 1 ? shapes[0] : { anyOf: shapes };
}

/** One response per HTTP status, listing the codes it stands for, in the services' error shape. */
function errorResponses(tables: Map<ServiceId, RouteTable>, services: readonly ServiceId[], codes: readonly ErrorCode[], htmlToo: boolean): Record<string, Response> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) byStatus.set(ERROR_CODES[code].status, [...byStatus.get(ERROR_CODES[code].status) ?? [], code]);
  return Object.fromEntries([...byStatus].sort(([a], [b]) => a - b).map(([status, list]) => [String(status), {
    description: list.map((code) => `\`${code}\``).join(', ') + (htmlToo ? ' (a browser gets an HTML page)' : ''),
    ...(status === 429 || status === 503 ? { headers: headers('Retry-After') } : {}),
    content: { 'application/json': { schema: errorSchema(tables, services, list) }, ...(htmlToo ? { 'text/html': HTML } : {}) },
  }]));
}

/** Answers that no operation lists, because they apply to any path (see info.description). */
function anyPathResponses(tables: Map<ServiceId, RouteTable>, config: Config): Record<string, Response> {
  const all = [...tables.keys()];
  const error = (status: number, code: ErrorCode, description: string, more: Partial<Response> = {}): Response =>
    ({ description, 'x-status': status, ...more, content: { 'application/json': { schema: errorSchema(tables, all, [code]) } } });
  return {
    RouteNotFound: error(404, 'route_not_found', 'A path the service does not answer: `route_not_found`.'),
    MethodNotAllowed: error(405, 'method_not_allowed', 'A method a documented path does not answer: `method_not_allowed`; Allow names the methods it does.', { headers: headers('Allow') }),
    Preflight: { description: 'An OPTIONS request (CORS preflight) on any path: no body. Preflights count in the `site` rate-limit group: past its quota, PreflightLimited.', 'x-status': 204, headers: headers('Access-Control-Allow-Methods') },
    // The shell counts preflights before answering them (api/http/app.ts shellLimit).
    PreflightLimited: error(429, 'rate_limited', `An OPTIONS request (CORS preflight) past the \`site\` group's quota (${quotaGroup(SITE_GROUP, config).limit} requests per minute per IP, shared with that group's other requests): \`rate_limited\`, with the preflight's CORS headers so that a browser lets the page read it.`, { headers: headers('Retry-After', 'Access-Control-Allow-Methods') }),
  };
}

// ---- operations -----------------------------------------------------------------------------

const RATE_HEADERS = headers('X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset');

/** A route as the document lists it: where, for which services, with which parameters. */
export interface DescribedRoute { method: Method; path: string; services: ServiceId[]; route: RouteSpec; params: readonly Param[] }

/** The path template a route is listed under: its docPath, whose parameter names replace the route's. */
function listedParams(route: RouteSpec): readonly Param[] {
  if (!route.docPath) return route.params ?? [];
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const listed = [...route.docPath.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  return (route.params ?? []).map((p) => (p.in === 'path' ? { ...p, name: listed[names.indexOf(p.name)] } : p));
}

/**
 * The operations of the document: one per route, except that the entries several services have
 * for one path share one description (OperationDoc.services) and are listed once, with the
 * parameters of all of them. HEAD operations are not in this list (see OperationDoc.head). The
 * app shell's routes are answered by every service of the tables.
 */
export function describedRoutes(tables: readonly Pick<RouteTable, 'service' | 'routes'>[]): DescribedRoute[] {
  const byKey = new Map<string, DescribedRoute>();
  const entries = [...tables.flatMap((t) => t.routes.map((route) => ({ service: t.service, route }))),
    ...SHELL_ROUTES.flatMap((route) => tables.map(({ service }) => ({ service, route })))];
  for (const { service, route } of entries) {
    const path = route.docPath ?? route.path;
    const key = `${route.method} ${path}`;
    const seen = byKey.get(key);
    if (!seen) {
      byKey.set(key, { method: route.method, path, services: [service], route, params: listedParams(route) });
      continue;
    }
    // Two services may answer one path only under one shared description.
    if (!route.doc.services || seen.route.doc !== route.doc) throw new Error(`${key} is described twice`);
    seen.services.push(service);
    const names = new Set(seen.params.map((p) => p.name));
    seen.params = [...seen.params, ...listedParams(route).filter((p) => !names.has(p.name))];
    // The quota of the service that has one (media's on /), which the description names; the
    // caching only when every service's entry declares the same.
    seen.route = {
      ...seen.route, limit: seen.route.limit ?? route.limit,
      cacheControl: seen.route.cacheControl === route.cacheControl ? route.cacheControl : undefined,
    };
  }
  for (const described of byKey.values()) {
    const declared = described.route.doc.services;
    if (declared && (declared.length !== described.services.length || declared.some((s) => !described.services.includes(s)))) {
      throw new Error(`${described.method} ${described.path} is answered by ${described.services.join(', ')}, described for ${declared.join(', ')}`);
    }
    // In the order the description gives: tools that take a path's first server get that one.
    if (declared) described.services = [...declared];
  }
  return [...byKey.values()];
}

function parameter(p: Param, docs: DocContext): Parameter {
  const example = typeof p.example === 'function' ? p.example(docs) : p.example;
  return {
    name: p.name, in: p.in as Parameter['in'], required: p.required, description: p.description, schema: p.schema,
    ...(example !== undefined ? { example } : {}), ...(p.deprecated ? { deprecated: true } : {}),
  };
}

/**
 * skinsGetV1AvatarByNameBySize: camelCase, as code generators name methods, and without `_`,
 * which Swagger UI's deep links (/docs#/skins/<id>) read as an escaped space.
 */
function operationId(services: readonly ServiceId[], method: Method, path: string): string {
  const words = [services.length > 1 ? 'all' : services[0], method, ...path.replace(/\{(\w+)\}/g, 'by_$1').split(/[^a-z0-9]+/i).filter(Boolean)];
  if (words.length === 2) words.push('root');
  return words.map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1))).join('');
}

/** What one document is built for: the configuration (addresses, quotas, the demo player) and every table. */
interface Building { config: Config; tables: Map<ServiceId, RouteTable>; docs: DocContext }

function operation({ method, path, services, route, params }: DescribedRoute, { config, tables, docs }: Building): Operation {
  const spec = route.doc;
  const body = typeof spec.body === 'function' ? spec.body(docs) : spec.body;
  // Form fields are described in the request body, not as parameters.
  const parameters = params.filter((p) => p.in !== 'form').map((p) => parameter(p, docs));
  // Any operation with query parameters refuses one given twice (bad_request).
  const repeated = parameters.some((p) => p.in === 'query') ? ['bad_request' as const] : [];
  const limit = routeLimit(route);
  const errors: ErrorCode[] = [...new Set<ErrorCode>([...spec.errors ?? [], ...repeated, ...(limit ? ['rate_limited' as const] : []),
    // overloaded: every port answers 503 while its service starts, and the load shedder's 503 after.
    // A body is bounded (api/http/body.ts): its size, its deadline, the client's bodies at once.
    ...(body ? ['payload_too_large', 'request_timeout', 'rate_limited'] as const : []), 'overloaded' as const])];
  const okHeaders = {
    ...spec.ok.headers, ...(limit ? RATE_HEADERS : {}),
    ...(route.cacheControl ? { 'Cache-Control': { description: route.cacheControl, schema: { type: 'string' } } } : {}),
  };
  const ok = Object.keys(okHeaders).length ? { ...spec.ok, headers: okHeaders } : spec.ok;
  const group = limit && quotaGroup(limit, config);
  const limitNote = group ? `Rate limit: ${group.limit} requests per minute per IP (group ${group.name}).` : '';
  const description = [spec.description, limitNote].filter(Boolean).join(' ');
  return {
    operationId: operationId(services, method, path),
    tags: services,
    summary: spec.summary,
    ...(description ? { description } : {}),
    ...(spec.deprecated ? { deprecated: true } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: {
      [spec.status ?? '200']: ok,
      ...spec.more,
      ...(spec.conditional ? { 304: { description: 'not modified (If-None-Match matched the ETag)' } } : {}),
      ...errorResponses(tables, services, errors, spec.htmlErrors ?? false),
    },
    security: spec.security ?? [],
  };
}

/** The HEAD twin of a GET: the same statuses and headers, no bodies. */
function headOf(get: Operation, id: string): Operation {
  const responses = Object.fromEntries(Object.entries(get.responses).map(([status, { content: _body, ...response }]) => [status, response]));
  return { ...get, operationId: id, summary: `${get.summary} (headers only)`, responses };
}

/** The whole document of the given services' tables (in the order of its tags), for a configuration. */
export function buildOpenApi(config: Config, routeTables: readonly RouteTable[]): OpenApiDocument {
  const tables = byService(routeTables);
  const urls = serviceUrls(config);
  const servers: Server[] = routeTables.map(({ service }) => ({ url: urls[service], description: `${service} service`, 'x-service': service }));
  const building: Building = { config, tables, docs: { demoPlayer: config.demoPlayer } };
  const paths: Record<string, PathItem> = {};
  for (const described of describedRoutes(routeTables)) {
    // Servers in the order given: tools that take a path's first server get the one it is for.
    const item = paths[described.path] ??= { servers: described.services.map((id) => servers.find((s) => s['x-service'] === id)!) };
    // Path keys are shared by all services: two services may not claim one path differently.
    if (item.servers.some((s) => !described.services.includes(s['x-service'] as ServiceId))) throw new Error(`${described.method} ${described.path} is described twice`);
    item[described.method] = operation(described, building);
    if (described.route.doc.head) item.head = headOf(item[described.method]!, operationId(described.services, 'head', described.path));
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Skinfarm',
      version: pkg.version,
      description: 'Three services, each at its own address (see servers; every path names its own). '
        + 'Every answer carries X-Request-Id, X-Response-Time and Access-Control-Allow-Origin: *. '
        + 'Answers that apply to any path are in components.responses (their status in x-status): OPTIONS on any path is a CORS preflight (204, or 429 past the `site` group\'s quota); '
        + 'a method a documented path does not list is 405 with Allow; a path a service does not list is 404. '
        + 'Every GET also answers HEAD with the same status and headers and no body (described separately where clients use it: images, textures, media files).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers,
    tags: routeTables.map(({ service, description }) => ({ name: service, description })),
    paths,
    components: {
      schemas: Object.assign({}, SHARED_SCHEMAS, ...routeTables.map((t) => t.schemas)),
      responses: anyPathResponses(tables, config),
      headers: HEADERS,
      securitySchemes: Object.assign({}, ...routeTables.map((t) => t.securitySchemes), SHELL_SECURITY),
    },
  };
}
