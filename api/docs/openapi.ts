// The OpenAPI 3.1 description of all three services, generated from their route tables (path,
// method, rate-limit group, parameters, answers: api/http/route-table.ts) and the shared component
// schemas. Nothing here lists a route: a route that is answered is described, and only then.
import pkg from '../../package.json' with { type: 'json' };
import { ERROR_CODES, type ErrorCode } from '../../shared/errors.ts';
import { SERVICE_NAMES, type Config, type ServiceName } from '../config.ts';
import type { DocContext, Param } from '../http/params.ts';
import type { RouteSpec, RouteTable } from '../http/route-table.ts';
import { MEDIA_ROUTES } from '../media/routes.ts';
import { SEARCH_ROUTES } from '../search/routes.ts';
import { SKINS_ROUTES } from '../skins/routes.ts';
import { headers, HEADERS, HTML } from './fragments.ts';
import { SHELL_ROUTES } from './shared-routes.ts';
import { errorBody, SCHEMAS, type Schema } from './schemas.ts';

export type ServiceId = ServiceName;
export const METHODS = ['get', 'head', 'post', 'patch', 'delete'] as const;
export type Method = typeof METHODS[number];

export interface Server { url: string; description: string; 'x-service': ServiceId }
export interface Parameter {
  name: string; in: 'path' | 'query' | 'header'; required: boolean; description: string; schema: Schema; example?: string | number; deprecated?: boolean;
}
export interface MediaType { schema: Schema; example?: unknown }
export interface RequestBody { required: boolean; description?: string; content: Record<string, MediaType> }
export interface Response {
  description: string; headers?: Record<string, { $ref: string }>; content?: Record<string, MediaType>;
  /** For the answers in components.responses, which apply to any path: their status. */
  'x-status'?: number;
}
export type SecurityRequirement = Record<string, string[]>;
export interface SecurityScheme {
  type: 'apiKey' | 'http'; in?: 'header' | 'query' | 'cookie'; name?: string; scheme?: 'basic' | 'bearer'; description: string;
  /** What the curl examples write for the credential (a shell variable). */
  'x-curl'?: string;
}
export interface Operation {
  operationId: string;
  tags: ServiceId[];
  summary: string;
  description?: string;
  deprecated?: boolean;
  parameters?: Parameter[];
  requestBody?: RequestBody;
  responses: Record<string, Response>;
  /** `[]` for public operations; `{}` in the list makes credentials optional. */
  security: SecurityRequirement[];
}
export type PathItem = { servers: Server[] } & Partial<Record<Method, Operation>>;
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string; license: { name: string; identifier: string } };
  servers: Server[];
  tags: Array<{ name: ServiceId; description: string }>;
  paths: Record<string, PathItem>;
  components: {
    schemas: Record<string, Schema>; responses: Record<string, Response>; headers: Record<string, { description: string; schema: Schema }>;
    securitySchemes: Record<string, SecurityScheme>;
  };
}

/** Where each service is reached: PUBLIC_URL for skins, MEDIA_/SEARCH_PUBLIC_URL or localhost:<port>. */
export function serviceUrls(config: Config): Record<ServiceId, string> {
  return {
    skins: config.publicUrl,
    media: config.media.publicUrl ?? `http://localhost:${config.ports.media}`,
    search: config.search.publicUrl?.replace(/\/+$/, '') ?? `http://localhost:${config.ports.search}`,
  };
}

const TAGS: Record<ServiceId, string> = {
  skins: 'Player lookup by name or UUID (official and external account services), PNG images, OAuth accounts. '
    + 'JSON answers use the envelope {code, success, message, data, timestamp}. Pages for people: / (landing), /status, /docs.',
  media: 'A random image or video of a category by plain URL, orientation filter, private categories behind a password.',
  search: 'Multi-type search (main pass and cross pass) with API keys; key administration with the admin token.',
};

const SECURITY: Record<string, SecurityScheme> = {
  searchApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'search API key (sk_...); the docs page keeps it in memory only, until Logout or a reload, and shows `$KEY` in its curl commands', 'x-curl': '$KEY' },
  searchAdmin: { type: 'http', scheme: 'bearer', description: 'SEARCH_ADMIN_TOKEN', 'x-curl': '$SEARCH_ADMIN_TOKEN' },
  session: { type: 'apiKey', in: 'cookie', name: 'skinfarm.sid', description: 'login session from /oauth/external (a browser keeps it)' },
  mediaBasic: { type: 'http', scheme: 'basic', description: 'any user name, MEDIA_PASSWORD as password' },
  mediaPassword: { type: 'apiKey', in: 'header', name: 'X-Media-Password', description: 'MEDIA_PASSWORD' },
  mediaToken: { type: 'apiKey', in: 'query', name: 'token', description: 'signed expiring token from POST /login' },
  metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, when set' },
};
const ERROR_SHAPE: Record<ServiceId, 'ErrorEnvelope' | 'SearchError'> = { skins: 'ErrorEnvelope', media: 'ErrorEnvelope', search: 'SearchError' };

/** The error body of the given codes in the shape of each service answering the path. */
function errorSchema(services: readonly ServiceId[], codes: ErrorCode[]): Schema {
  const shapes = [...new Set(services.map((s) => ERROR_SHAPE[s]))];
  return shapes.length === 1 ? errorBody(shapes[0], codes) : { anyOf: shapes.map((shape) => errorBody(shape, codes)) };
}

/** One response per HTTP status, listing the codes it stands for, in the services' error shape. */
function errorResponses(services: readonly ServiceId[], codes: readonly ErrorCode[], htmlToo: boolean): Record<string, Response> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) byStatus.set(ERROR_CODES[code].status, [...byStatus.get(ERROR_CODES[code].status) ?? [], code]);
  return Object.fromEntries([...byStatus].sort(([a], [b]) => a - b).map(([status, list]) => [String(status), {
    description: list.map((code) => `\`${code}\``).join(', ') + (htmlToo ? ' (a browser gets an HTML page)' : ''),
    ...(status === 429 || status === 503 ? { headers: headers('Retry-After') } : {}),
    content: { 'application/json': { schema: errorSchema(services, list) }, ...(htmlToo ? { 'text/html': HTML } : {}) },
  }]));
}

/** Answers that no operation lists, because they apply to any path (see info.description). */
function anyPathResponses(): Record<string, Response> {
  const all = [...SERVICE_NAMES];
  const error = (status: number, code: ErrorCode, description: string, more: Partial<Response> = {}): Response =>
    ({ description, 'x-status': status, ...more, content: { 'application/json': { schema: errorSchema(all, [code]) } } });
  return {
    RouteNotFound: error(404, 'route_not_found', 'A path the service does not answer: `route_not_found`.'),
    MethodNotAllowed: error(405, 'method_not_allowed', 'A method a documented path does not answer: `method_not_allowed`; Allow names the methods it does.', { headers: headers('Allow') }),
    Preflight: { description: 'An OPTIONS request (CORS preflight) on any path: no body.', 'x-status': 204, headers: headers('Access-Control-Allow-Methods') },
  };
}

// ---- operations -----------------------------------------------------------------------------

/** Every service's table, in the order of the document's tags (the shell's routes join them in describedRoutes). */
export const ROUTE_TABLES: readonly RouteTable[] = [
  { service: 'skins', routes: SKINS_ROUTES }, { service: 'media', routes: MEDIA_ROUTES }, { service: 'search', routes: SEARCH_ROUTES },
];

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
 * parameters of all of them. HEAD operations are not in this list (see OperationDoc.head).
 */
export function describedRoutes(tables: readonly RouteTable[] = ROUTE_TABLES): DescribedRoute[] {
  const byKey = new Map<string, DescribedRoute>();
  const entries = [...tables.flatMap((t) => t.routes.map((route) => ({ service: t.service, route }))),
    ...SHELL_ROUTES.flatMap((route) => SERVICE_NAMES.map((service) => ({ service, route })))];
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
    // The quota of the service that has one (media's on /), which the description names.
    if (!seen.route.limit && route.limit) seen.route = route;
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

function operation({ method, path, services, route, params }: DescribedRoute, docs: DocContext): Operation {
  const spec = route.doc;
  const body = typeof spec.body === 'function' ? spec.body(docs) : spec.body;
  // Form fields are described in the request body, not as parameters.
  const parameters = params.filter((p) => p.in !== 'form').map((p) => parameter(p, docs));
  // Any operation with query parameters refuses one given twice (bad_request).
  const repeated = parameters.some((p) => p.in === 'query') ? ['bad_request' as const] : [];
  const errors: ErrorCode[] = [...new Set<ErrorCode>([...spec.errors ?? [], ...repeated, ...(route.limit ? ['rate_limited' as const] : []),
    // overloaded: every port answers 503 while its service starts, and the load shedder's 503 after.
    ...(body ? ['payload_too_large' as const] : []), 'overloaded' as const])];
  const ok = route.limit ? { ...spec.ok, headers: { ...spec.ok.headers, ...RATE_HEADERS } } : spec.ok;
  const limitNote = route.limit ? `Rate limit: ${route.limit.limit} requests per minute per IP (group ${route.limit.name}).` : '';
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
      ...errorResponses(services, errors, spec.htmlErrors ?? false),
    },
    security: spec.security ?? [],
  };
}

/** The HEAD twin of a GET: the same statuses and headers, no bodies. */
function headOf(get: Operation, id: string): Operation {
  const responses = Object.fromEntries(Object.entries(get.responses).map(([status, { content: _body, ...response }]) => [status, response]));
  return { ...get, operationId: id, summary: `${get.summary} (headers only)`, responses };
}

/** The whole document for the current configuration. */
export function buildOpenApi(config: Config): OpenApiDocument {
  const urls = serviceUrls(config);
  const servers: Server[] = SERVICE_NAMES.map((id) => ({ url: urls[id], description: `${id} service`, 'x-service': id }));
  const docs: DocContext = { demoPlayer: config.demoPlayer };
  const paths: Record<string, PathItem> = {};
  for (const described of describedRoutes()) {
    // Servers in the order given: tools that take a path's first server get the one it is for.
    const item = paths[described.path] ??= { servers: described.services.map((id) => servers.find((s) => s['x-service'] === id)!) };
    // Path keys are shared by all services: two services may not claim one path differently.
    if (item.servers.some((s) => !described.services.includes(s['x-service']))) throw new Error(`${described.method} ${described.path} is described twice`);
    item[described.method] = operation(described, docs);
    if (described.route.doc.head) item.head = headOf(item[described.method]!, operationId(described.services, 'head', described.path));
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Skinfarm',
      version: pkg.version,
      description: 'Three services, each at its own address (see servers; every path names its own). '
        + 'Every answer carries X-Request-Id, X-Response-Time and Access-Control-Allow-Origin: *. '
        + 'Answers that apply to any path are in components.responses (their status in x-status): OPTIONS on any path is a CORS preflight (204); '
        + 'a method a documented path does not list is 405 with Allow; a path a service does not list is 404. '
        + 'Every GET also answers HEAD with the same status and headers and no body (described separately where clients use it: images, textures, media files).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers,
    tags: SERVICE_NAMES.map((name) => ({ name, description: TAGS[name] })),
    paths,
    components: { schemas: SCHEMAS, responses: anyPathResponses(), headers: HEADERS, securitySchemes: SECURITY },
  };
}
