// The OpenAPI 3.1 description of all three services, built from small helpers so that repeated
// fragments (player parameters, image options, error responses) are written once. The limits,
// defaults and enumerations are imported from the modules that enforce them.
import pkg from '../../package.json' with { type: 'json' };
import { ERROR_CODES, type ErrorCode } from '../../shared/errors.ts';
import { MAX_SKIN_BYTES, POSE_NAMES } from '../../shared/skin-layout.ts';
import { SERVICE_NAMES, type Config, type ServiceName } from '../config.ts';
import { ORIENTATION_FILTERS } from '../media/orientation.ts';
import { SELECTORS } from '../media/selector.ts';
import { TYPE_INFO } from '../search/types.ts';
import { BATCH_LIMIT } from '../skins/batch.ts';
import { IMAGE_MAX_AGE } from '../skins/image-response.ts';
import { SIZE_RANGE, type ImageKind } from '../skins/image-params.ts';
import { RATE_GROUPS } from '../skins/routes.ts';
import { envelope, errorBody, object, oneOfValues, PLAYER_SOURCES, ref, SCHEMAS, type Schema } from './schemas.ts';

export type ServiceId = ServiceName;
export const METHODS = ['get', 'head', 'post', 'patch', 'delete'] as const;
export type Method = typeof METHODS[number];

export interface Server { url: string; description: string; 'x-service': ServiceId }
export interface Parameter { name: string; in: 'path' | 'query' | 'header'; required: boolean; description: string; schema: Schema; example?: string | number }
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
  searchApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'search API key (sk_...); the docs page sends it with one request and keeps it nowhere', 'x-curl': '$KEY' },
  searchAdmin: { type: 'http', scheme: 'bearer', description: 'SEARCH_ADMIN_TOKEN', 'x-curl': '$SEARCH_ADMIN_TOKEN' },
  session: { type: 'apiKey', in: 'cookie', name: 'skinfarm.sid', description: 'login session from /oauth/external (a browser keeps it)' },
  mediaBasic: { type: 'http', scheme: 'basic', description: 'any user name, MEDIA_PASSWORD as password' },
  mediaPassword: { type: 'apiKey', in: 'header', name: 'X-Media-Password', description: 'MEDIA_PASSWORD' },
  mediaToken: { type: 'apiKey', in: 'query', name: 'token', description: 'signed expiring token from POST /login' },
  metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, when set' },
};
const requires = (...schemes: string[]): SecurityRequirement[] => schemes.map((s) => (s ? { [s]: [] } : {}));
const MEDIA_PRIVATE = ['mediaBasic', 'mediaPassword', 'mediaToken'];

// ---- parameters -----------------------------------------------------------------------------

function param(name: string, where: Parameter['in'], description: string, schema: Schema, example?: string | number): Parameter {
  return { name, in: where, required: where === 'path', description, schema, ...(example !== undefined ? { example } : {}) };
}
const query = (name: string, description: string, schema: Schema, example?: string | number) => param(name, 'query', description, schema, example);
const required = (p: Parameter): Parameter => ({ ...p, required: true });
const text: Schema = { type: 'string' };
const choice = (values: readonly string[], fallback?: string): Schema => ({ ...oneOfValues(values), ...(fallback ? { default: fallback } : {}) });
const between = (type: 'integer' | 'number', min: number, max: number, fallback?: number): Schema => ({ type, minimum: min, maximum: max, ...(fallback !== undefined ? { default: fallback } : {}) });
/** 0/1 switches; the services also accept true/false. */
const flag = (name: string, fallback: 0 | 1, description: string) => query(name, `${description} (1/0, also true/false)`, { type: 'integer', enum: [0, 1], default: fallback });

const pretty = flag('pretty', 1, 'indented JSON; 0 gives compact output');
const source = query('source', 'auto asks official first, then external', choice(PLAYER_SOURCES, 'auto'));
const uuidPath = param('uuid', 'path', '32 hex digits, dashes optional', { type: 'string', pattern: '^[0-9a-fA-F-]{32,36}$' });
const namePath = (example: string) => param('name', 'path', 'player name or UUID (dashes optional)', text, example);
const bg = query('bg', 'background colour RRGGBB (default transparent)', { type: 'string', pattern: '^#?[0-9a-fA-F]{6}$|^transparent$' }, '336699');
const angle = (name: 'yaw' | 'pitch', fallback: number) => name === 'yaw'
  ? query('yaw', 'degrees; 0 = front, 90 = the figure\'s left side', between('number', -180, 180, fallback))
  : query('pitch', 'degrees; positive looks down from above', between('number', -90, 90, fallback));
const helm = flag('helm', 1, '0 drops the hat layer');
const outer = flag('outer', 1, '0 hides the second skin layer');
const renderOptions = [angle('yaw', 0), angle('pitch', 0), flag('shadow', 1, 'shadow under the feet'), outer, bg,
  query('scale', 'zoom of the figure (default fits the canvas)', between('number', 0.25, 4)),
  query('pose', 'how the figure stands', choice(POSE_NAMES, 'standing'), 'waving')];

// ---- responses ------------------------------------------------------------------------------

const header = (description: string, schema: Schema = text) => ({ description, schema });
const HEADERS = {
  'X-RateLimit-Limit': header('quota of this endpoint\'s group per 60 s window', { type: 'integer' }),
  'X-RateLimit-Remaining': header('requests left in this window', { type: 'integer' }),
  'X-RateLimit-Reset': header('Unix time when the window ends', { type: 'integer' }),
  'Retry-After': header('seconds to wait', { type: 'integer' }),
  ETag: header('from the texture hash and the normalised options (If-None-Match answers 304)'),
  'Cache-Control': header(`public, max-age=${IMAGE_MAX_AGE}, immutable`),
  'X-Cache': header('HIT, MISS or STALE', choice(['HIT', 'MISS', 'STALE'])),
  Location: header('where to go'),
  Allow: header('the methods this path answers'),
  'Content-Range': header('bytes first-last/size of a 206; bytes */size of a 416'),
  'Access-Control-Allow-Methods': header('GET, POST, OPTIONS'),
};
/** References to shared headers (components.headers), keyed by name as responses list them. */
const headers = (...names: Array<keyof typeof HEADERS>) => Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));
const RATE_HEADERS = headers('X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset');

function json(description: string, schema: Schema): Response {
  return { description, content: { 'application/json': { schema } } };
}
const data = (description: string, name: string) => json(`${description} (envelope, data: ${name})`, envelope(ref(name)));
const png = (description: string): Response => ({ description, headers: headers('ETag', 'Cache-Control', 'X-Cache'), content: { 'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } } } });
const html = (description: string): Response => ({ description, content: { 'text/html': { schema: text } } });
const HTML = { schema: text };
const redirect = (description: string): Response => ({ description, headers: headers('Location') });

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

interface Spec {
  summary: string;
  description?: string;
  params?: Parameter[];
  body?: RequestBody;
  ok: Response;
  /** Status of the success answer (200 unless given). */
  status?: '200' | '201' | '204' | '302';
  /** Other non-error answers (a redirect, a partial file). */
  more?: Record<string, Response>;
  errors?: readonly ErrorCode[];
  /** Error answers are HTML pages for a browser (a form post, a login callback). */
  htmlErrors?: boolean;
  /** Also described as HEAD: the GET's status and headers without a body. */
  head?: boolean;
  security?: SecurityRequirement[];
  /** Per-IP quota per 60 s window (adds the rate-limit headers and 429). */
  limit?: { group: string; perMinute: number };
  /** Answers 304 to a matching If-None-Match. */
  conditional?: boolean;
}

function operation(services: ServiceId[], method: Method, path: string, spec: Spec): Operation {
  // Any operation with query parameters refuses one given twice (bad_request).
  const repeated = spec.params?.some((p) => p.in === 'query') ? ['bad_request' as const] : [];
  const errors: ErrorCode[] = [...new Set<ErrorCode>([...spec.errors ?? [], ...repeated, ...(spec.limit ? ['rate_limited' as const] : []),
    // overloaded: every port answers 503 while its service starts, and the load shedder's 503 after.
    ...(spec.body ? ['payload_too_large' as const] : []), 'overloaded' as const])];
  const ok = spec.limit ? { ...spec.ok, headers: { ...spec.ok.headers, ...RATE_HEADERS } } : spec.ok;
  const limitNote = spec.limit ? `Rate limit: ${spec.limit.perMinute} requests per minute per IP (group ${spec.limit.group}).` : '';
  const description = [spec.description, limitNote].filter(Boolean).join(' ');
  const slug = path.replace(/\{(\w+)\}/g, 'by_$1').replace(/[^a-z0-9]+/gi, '_').replace(/^_|_$/g, '') || 'root';
  return {
    operationId: `${services.length > 1 ? 'all' : services[0]}_${method}_${slug}`,
    tags: services,
    summary: spec.summary,
    ...(description ? { description } : {}),
    ...(spec.params?.length ? { parameters: spec.params } : {}),
    ...(spec.body ? { requestBody: spec.body } : {}),
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
function headOf(get: Operation): Operation {
  const responses = Object.fromEntries(Object.entries(get.responses).map(([status, { content: _body, ...response }]) => [status, response]));
  return { ...get, operationId: get.operationId.replace('_get_', '_head_'), summary: `${get.summary} (headers only)`, responses };
}

type Add = (services: ServiceId | ServiceId[], method: Method, path: string, spec: Spec) => void;

const LOOKUP_ERRORS = ['invalid_name', 'invalid_uuid', 'bad_source', 'not_found', 'upstream_error', 'upstream_busy', 'upstream_timeout'] as const;
const ACCOUNT_ERRORS = ['not_logged_in', 'oauth_not_configured', 'upstream_error', 'upstream_timeout'] as const;
const [normal, image, batch] = (['normal', 'image', 'batch'] as const).map((g) => ({ group: RATE_GROUPS[g].name, perMinute: RATE_GROUPS[g].limit }));
// Defaults of MEDIA_RATE_LIMIT / MEDIA_FILE_RATE_LIMIT: the media service may run in another
// process with its own settings, which this one cannot know.
const mediaLimit = { group: 'media', perMinute: 600 };
const mediaFileLimit = { group: 'media-file', perMinute: 2400 };

const IMAGES: Record<ImageKind, { summary: string; size: number; options: Parameter[] }> = {
  avatar: { summary: '2D face with its hat layer, square or round', size: 128, options: [query('shape', 'outline', choice(['square', 'circle'], 'square')), helm, bg] },
  head: { summary: '3D head', size: 128, options: [angle('yaw', 35), angle('pitch', 20), helm, bg] },
  body: { summary: 'Full body, front or back (size wide, twice as tall)', size: 256, options: [query('view', 'side shown', choice(['front', 'back'], 'front')), outer, bg] },
  render: { summary: '3D render of the figure at any yaw and pitch', size: 256, options: renderOptions },
  cube: { summary: 'The head as a cube with its hat', size: 256, options: [angle('yaw', 0), angle('pitch', 0), helm, bg] },
};

function imagePaths(add: Add, example: string): void {
  for (const [kind, { summary, size, options }] of Object.entries(IMAGES) as Array<[ImageKind, typeof IMAGES[ImageKind]]>) {
    const sizeSchema = between('integer', SIZE_RANGE.min, SIZE_RANGE.max, size);
    const spec = (where: 'path' | 'query'): Spec => ({
      summary,
      description: `Size in pixels ${where === 'path' ? 'in the path (or as ?size=)' : 'as ?size= (or in the path)'}. Answers HEAD too.`,
      params: [namePath(example), param('size', where, 'pixels', sizeSchema, size), ...options, source],
      ok: png('the image'),
      conditional: true,
      head: true,
      errors: ['bad_request', ...LOOKUP_ERRORS, ...(kind === 'avatar' ? [] : ['render_failed', 'overloaded'] as const)],
      limit: image,
    });
    add('skins', 'get', `/v1/${kind}/{name}`, spec('query'));
    add('skins', 'get', `/v1/${kind}/{name}/{size}`, spec('path'));
  }
  const field = (p: Parameter) => [p.name, { ...p.schema, description: p.description }];
  // The upload is POST /v1/render/<size>. OpenAPI forbids a second template that differs from
  // /v1/render/{name} only in its parameter's name, so it shares that path item and its segment.
  add('skins', 'post', '/v1/render/{name}', {
    summary: 'Render an uploaded skin',
    description: 'The path segment is the size in pixels (POST /v1/render/256); there is no player name. '
      + 'The render options may also be given in the query. The answer is not cached (Cache-Control: no-store).',
    params: [param('name', 'path', 'the size in pixels (this segment holds no name for an upload)', between('integer', SIZE_RANGE.min, SIZE_RANGE.max, 256), 256)],
    body: {
      required: true,
      content: {
        'multipart/form-data': {
          schema: object({
            file: { type: 'string', contentMediaType: 'image/png', maxLength: MAX_SKIN_BYTES, description: `skin PNG, at most ${MAX_SKIN_BYTES / 1024 / 1024} MB` },
            model: { ...choice(['classic', 'slim']), description: 'else guessed from the pixels' },
            ...Object.fromEntries(renderOptions.map(field)),
          }, ['model', ...renderOptions.map((p) => p.name)]),
          example: { file: '(the PNG file)', model: 'slim', yaw: 30 },
        },
      },
    },
    ok: png('the render of the uploaded skin'),
    errors: ['missing_param', 'bad_request', 'invalid_skin', 'render_failed', 'overloaded'],
    limit: image,
  });
}

function skinsPaths(add: Add, example: string): void {
  const player: Spec = {
    summary: 'Full player record',
    description: 'Every texture detail and the addresses of every image. X-Cache says HIT, MISS or STALE.',
    params: [namePath(example), source, pretty], ok: data('player record', 'PlayerRecord'), errors: LOOKUP_ERRORS, limit: normal,
  };
  add('skins', 'get', '/v1/player/{name}', player);
  add('skins', 'get', '/v1/u/{name}', { ...player, summary: 'Full player record (same as /v1/player, for UUIDs)' });
  add('skins', 'get', '/v1/uuid/{name}', {
    summary: 'Name to UUID', description: 'Cached 1 hour; `cached` says whether this answer came from the cache.',
    params: [namePath(example), source, pretty], ok: data('UUID record', 'UuidRecord'), errors: LOOKUP_ERRORS, limit: normal,
  });
  add('skins', 'get', '/v1/profile/{uuid}', {
    summary: 'Profile record', params: [uuidPath, source, pretty], ok: data('profile record', 'ProfileRecord'), errors: ['missing_param', ...LOOKUP_ERRORS], limit: normal,
  });
  const batchErrors = ['missing_param', 'too_many_names', 'bad_request', 'bad_source', 'upstream_error', 'upstream_busy', 'upstream_timeout'] as const;
  const batchNote = `At most ${BATCH_LIMIT} names and UUIDs together; unresolved ones are listed in missing.`;
  add('skins', 'get', '/v1/batch', {
    summary: 'Batch lookup (comma-separated)', description: batchNote,
    params: [required(query('names', 'comma-separated player names (or give uuids)', text, `${example},Nobody`)), query('uuids', 'comma-separated UUIDs', text),
      query('type', '`profile` returns full profile records', choice(['profile'])), source, pretty],
    ok: data('batch result', 'BatchResult'), errors: batchErrors, limit: batch,
  });
  add('skins', 'post', '/v1/batch', {
    summary: 'Batch lookup (JSON body)', description: batchNote, params: [pretty],
    body: { required: true, content: { 'application/json': { schema: ref('BatchRequest'), example: { names: [example, 'Nobody'], type: 'profile' } } } },
    ok: data('batch result', 'BatchResult'), errors: batchErrors, limit: batch,
  });
  add('skins', 'get', '/v1/decode', {
    summary: 'Decode a base64 textures value',
    params: [required(query('value', 'properties[].value of a profile', text)), pretty], ok: data('decoded textures', 'DecodeResult'), errors: ['missing_param', 'bad_request'], limit: normal,
  });
  add('skins', 'get', '/v1/status', { summary: 'Service status', description: 'Local state only: asks no upstream; not rate limited.', params: [pretty], ok: data('status record', 'Status') });
  add('skins', 'get', '/v1/status/probe', {
    summary: 'Probe the upstreams', description: 'One cheap question to each enabled source; shared by concurrent callers and reused for 10 s.',
    params: [pretty], ok: data('reachability per source', 'Probe'), limit: normal,
  });
  add('skins', 'get', '/v1/sources', { summary: 'Data sources', description: 'Not rate limited.', params: [pretty], ok: data('source list', 'Sources') });
  const announcements: Spec = {
    summary: 'Announcements of the external service', description: 'HTML cleaned to a tag whitelist; cached 10 minutes.',
    params: [flag('fresh', 0, '1 skips the cache'), pretty], ok: data('announcements', 'Announcements'), errors: ['bad_request', 'upstream_error', 'upstream_timeout'], limit: normal,
  };
  add('skins', 'get', '/v1/external/announcements', announcements);
  add('skins', 'get', '/v1/external/notice', { ...announcements, summary: 'Announcements (same as /v1/external/announcements)' });
  const meta: Spec = {
    summary: 'Authentication metadata of the external service', params: [pretty], ok: data('metadata', 'ExternalMeta'), errors: ['upstream_error', 'upstream_timeout'], limit: normal,
  };
  add('skins', 'get', '/v1/external/meta', meta);
  add('skins', 'get', '/v1/external/yggdrasil', { ...meta, summary: 'Authentication metadata (same as /v1/external/meta)' });
  for (const kind of ['skin', 'cape'] as const) {
    add('skins', 'get', `/v1/${kind}/{name}`, {
      summary: `Raw ${kind} PNG`, description: `The unprocessed texture as the upstream serves it; 404 no_texture when the player has no ${kind}.`,
      params: [namePath(example), flag('download', 0, '1 adds download headers'), flag('upload', 1, `0 ignores a skin-site upload and uses the official ${kind}`), source],
      ok: png(`the ${kind} texture`), conditional: true, head: true, errors: ['bad_request', 'no_texture', ...LOOKUP_ERRORS], limit: image,
    });
  }
  imagePaths(add, example);

  add('skins', 'get', '/oauth/external', {
    summary: 'Log in at the external service', description: 'Redirects to the authorisation page with a random state and a PKCE S256 challenge, both kept in a signed cookie (skinfarm.login); nothing is stored server-side.',
    status: '302', ok: redirect('to the external authorisation page'), errors: ['oauth_not_configured'], limit: normal,
  });
  add('skins', 'get', '/oauth/external/callback', {
    summary: 'Login callback', description: 'Browsers get an HTML page on failure, other clients the envelope.',
    params: [query('code', 'from the authorisation page', text), query('state', 'from the authorisation page', text), query('error', 'set when the provider refused (access_denied: the user said no)', text), query('iss', 'the issuer, when the provider names it (RFC 9207)', text)],
    status: '302', ok: redirect('to / when logged in'),
    errors: ['oauth_state_mismatch', 'oauth_issuer_mismatch', 'oauth_denied', 'missing_param', 'oauth_failed', 'oauth_not_configured'], htmlErrors: true, limit: normal,
  });
  add('skins', 'get', '/oauth/logout', { summary: 'End the session', status: '302', ok: redirect('to /'), errors: ['cross_site_request'] });
  const session = requires('session', '');
  add('skins', 'get', '/v1/me', { summary: 'Login state and user', description: 'Anonymous is a success with logged_in false.', params: [pretty], ok: data('current user', 'Me'), security: session, limit: normal });
  add('skins', 'get', '/v1/me/profiles', {
    summary: 'The account\'s players with UUIDs', description: 'Anonymous: an empty list.', params: [pretty], ok: data('profiles', 'MeProfiles'), errors: ACCOUNT_ERRORS, security: session, limit: normal,
  });
  const verification: Spec = {
    summary: 'Premium verification', description: 'Needs the PremiumVerification.Read permission.', params: [pretty],
    ok: data('verification', 'Verification'), errors: [...ACCOUNT_ERRORS, 'missing_scope'], security: requires('session'), limit: normal,
  };
  add('skins', 'get', '/v1/me/verification', verification);
  add('skins', 'get', '/v1/me/premium', { ...verification, summary: 'Premium verification (same as /v1/me/verification)' });
  add('skins', 'post', '/v1/me/token', {
    summary: 'Game token for one of your profiles',
    description: 'Needs the Yggdrasil.MinecraftToken.Create permission. The token equals a password; it is neither stored nor logged.',
    params: [pretty], body: { required: true, content: { 'application/json': { schema: ref('TokenRequest'), example: { uuid: '<profile uuid>' } } } },
    ok: data('game token', 'GameToken'), errors: [...ACCOUNT_ERRORS, 'missing_param', 'invalid_uuid', 'missing_scope', 'forbidden', 'bad_request', 'unsupported_media_type', 'cross_site_request'], security: requires('session'), limit: normal,
  });

  add('skins', 'get', '/status', { summary: 'Status page (HTML)', description: 'Probes upstreams only when its button is pressed.', ok: html('the page') });
  add('skins', 'get', '/favicon.ico', { summary: 'No icon', description: 'An empty answer browsers may cache for a day.', status: '204', ok: { description: 'no content' } });
  add('skins', 'get', '/docs', { summary: 'This documentation (HTML)', ok: html('the page') });
  add('skins', 'get', '/openapi.json', { summary: 'This description (OpenAPI 3.1)', ok: json('the document', { type: 'object' }) });
}

function mediaPaths(add: Add): void {
  const alias = 'scenery';
  const selectors = Object.entries(SELECTORS).map(([name, s]) =>
    query(name, `media: random ${s.private ? 'private ' : 'public '}${s.type} of the category with this alias${s.private ? ' (password needed)' : ''}`, text, name === 'img' ? alias : undefined));
  // Every service answers / (a page for people); only media takes parameters there.
  add(['media', 'skins', 'search'], 'get', '/', {
    summary: 'A random file of a category (media), or the service\'s page for people',
    description: 'Media: one selector per request. Without format the file itself is answered (Cache-Control: no-store, Content-Location: its permanent address); '
      + 'with redirect=1 a 302 to that address; without any selector the HTML landing page lists the public categories. '
      + 'Skins: the landing page. Search: the front page for a browser; a client asking for JSON gets 404 `route_not_found`.',
    params: [...selectors, query('orientation', 'media: only files of this orientation (square files match neither)', choice(ORIENTATION_FILTERS)),
      query('format', 'media: a JSON description instead of the file', choice(['json']), 'json'), flag('redirect', 0, 'media: 302 to the permanent address')],
    ok: {
      description: 'the file, its JSON description (format=json), or an HTML page',
      content: { 'application/json': { schema: ref('MediaItem') }, 'image/*': { schema: { type: 'string', contentMediaType: 'image/*' } }, 'video/*': { schema: { type: 'string', contentMediaType: 'video/*' } }, 'text/html': HTML },
    },
    more: {
      302: redirect('media, redirect=1: to the file\'s permanent address /f/<id>.<ext>'),
      206: { description: 'media, a Range request: the bytes of the file this client was last given for this selection (a player seeking)', headers: headers('Content-Range'), content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } },
      416: { description: 'media, a Range outside that file (no body)', headers: headers('Content-Range') },
    },
    errors: ['bad_request', 'password_required', 'wrong_password', 'category_not_found', 'empty_category', 'route_not_found'],
    security: requires('', ...MEDIA_PRIVATE),
    limit: mediaLimit,
  });
  add('media', 'get', '/f/{file}', {
    summary: 'A file by its permanent address',
    description: 'Immutable while the file is unchanged; ETag, Last-Modified, single byte ranges (206, 416) and HEAD. Private files need credentials.',
    params: [param('file', 'path', '<id>.<ext> from a JSON answer or a redirect', { type: 'string', pattern: '^[0-9a-f]{24}\\.[a-z0-9]{2,5}$' })],
    ok: { description: 'the file', content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } },
    more: {
      206: { description: 'the bytes of a single Range', headers: headers('Content-Range'), content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } },
      416: { description: 'a Range outside the file (no body)', headers: headers('Content-Range') },
    },
    conditional: true,
    head: true,
    errors: ['route_not_found', 'password_required', 'wrong_password', 'overloaded'],
    security: requires('', ...MEDIA_PRIVATE),
    limit: mediaFileLimit,
  });
  add('media', 'get', '/categories', {
    summary: 'Categories with their counts', description: 'Private categories too when credentials are sent.',
    ok: json('categories and totals', ref('MediaCategories')), errors: ['wrong_password'], security: requires('', ...MEDIA_PRIVATE), limit: mediaLimit,
  });
  add('media', 'get', '/login', { summary: 'Login form (HTML)', ok: html('the form'), limit: mediaLimit });
  add('media', 'post', '/login', {
    summary: 'Trade the password for a link token',
    description: 'A form post gets an HTML page with the token and links (or the form again with the reason, under the error status); JSON gets JSON. '
      + '10 password checks per IP per 10 minutes.',
    body: {
      required: true,
      content: { 'application/json': { schema: ref('MediaLogin'), example: { password: 'PASSWORD' } }, 'application/x-www-form-urlencoded': { schema: ref('MediaLogin') } },
    },
    ok: { description: 'the token (JSON), or a page with it (form post)', content: { 'application/json': { schema: ref('MediaToken') }, 'text/html': HTML } },
    errors: ['bad_request', 'wrong_password'], htmlErrors: true, limit: mediaLimit,
  });
}

function searchPaths(add: Add): void {
  const example = TYPE_INFO.find((t) => t.type === 'email')!.example;
  const keyErrors = ['missing_key', 'invalid_key', 'key_disabled', 'key_expired', 'key_exhausted', 'rate_limited'] as const;
  const searchErrors = ['invalid_query', 'invalid_type', 'bad_request', ...keyErrors, 'search_failed'] as const;
  const description = 'A main pass over every source that answers the type, then a cross pass over the entities found, under one deadline (SEARCH_TIMEOUT_MS). '
    + 'A malformed query is refused before the key is counted.';
  add('search', 'get', '/v1/search', {
    summary: 'Search', description,
    params: [required(query('query', 'the value to search (URL-encode a leading +)', text, example)),
      query('type', 'query type; auto detects it', choice(TYPE_INFO.map((t) => t.type), 'auto')), pretty],
    ok: json('search result', ref('SearchResult')), errors: searchErrors, security: requires('searchApiKey'),
  });
  add('search', 'post', '/v1/search', {
    summary: 'Search (JSON body)', description, params: [pretty],
    body: { required: true, content: { 'application/json': { schema: ref('SearchRequest'), example: { query: example, type: 'email' } } } },
    ok: json('search result', ref('SearchResult')), errors: searchErrors, security: requires('searchApiKey'),
  });
  add('search', 'get', '/v1/types', { summary: 'Query types with a description and an example', description: 'No key needed.', params: [pretty], ok: json('the types', ref('SearchTypes')) });

  const admin = requires('searchAdmin');
  const adminErrors = ['unauthorized', 'admin_disabled', 'rate_limited'] as const;
  const keyId = param('id', 'path', 'key id (key_...)', text);
  const body = (schema: string, example: unknown): RequestBody => ({ required: true, content: { 'application/json': { schema: ref(schema), example } } });
  add('search', 'post', '/v1/admin/keys', {
    summary: 'Create a key', description: 'The key itself is in this answer only; just its hash is stored.',
    body: body('CreateKey', { name: 'acme', plan: 'premium', duration: '2m', request_limit: 10000 }),
    status: '201', ok: json('the key record and the key', ref('ApiKeyCreated')), errors: [...adminErrors, 'bad_request'], security: admin,
  });
  add('search', 'get', '/v1/admin/keys', { summary: 'List keys', params: [pretty], ok: json('every key record', ref('ApiKeyList')), errors: adminErrors, security: admin });
  add('search', 'patch', '/v1/admin/keys/{id}', {
    summary: 'Disable, limit or re-date a key', params: [keyId], body: body('KeyPatch', { disabled: true }),
    ok: json('the updated record', { allOf: [ref('ApiKey'), object({ status: { const: 'success' } })] }), errors: [...adminErrors, 'bad_request', 'not_found'], security: admin,
  });
  add('search', 'delete', '/v1/admin/keys/{id}', { summary: 'Delete a key', params: [keyId], ok: json('deleted', ref('ApiKeyDeleted')), errors: [...adminErrors, 'not_found'], security: admin });
}

/** Paths that more than one service answers the same way. */
function sharedPaths(add: Add): void {
  add([...SERVICE_NAMES], 'get', '/health', {
    summary: 'Health and version', description: 'Each service answers its own shape; no credentials needed.',
    ok: json('service state', { oneOf: [ref('SkinsHealth'), ref('MediaHealth'), ref('SearchHealth')] }),
  });
  add([...SERVICE_NAMES], 'get', '/metrics', {
    summary: 'Prometheus metrics', description: 'The same registry on every service port. With METRICS_TOKEN set a bearer token is required.',
    ok: { description: 'Prometheus text format', content: { 'text/plain': { schema: text } } },
    more: { 401: { description: 'METRICS_TOKEN is set and the request does not carry it', content: { 'text/plain': { schema: text } } } },
    security: requires('', 'metricsToken'),
  });
}

/** The whole document for the current configuration. */
export function buildOpenApi(config: Config): OpenApiDocument {
  const urls = serviceUrls(config);
  const servers: Server[] = SERVICE_NAMES.map((id) => ({ url: urls[id], description: `${id} service`, 'x-service': id }));
  const paths: Record<string, PathItem> = {};
  const add: Add = (services, method, path, spec) => {
    const list = [services].flat();
    // Servers in the order given: tools that take a path's first server get the one it is for.
    const item = paths[path] ??= { servers: list.map((id) => servers.find((s) => s['x-service'] === id)!) };
    // Path keys are shared by all services: two services may not claim one path differently.
    if (item[method] || item.servers.some((s) => !list.includes(s['x-service']))) throw new Error(`${method} ${path} is described twice`);
    item[method] = operation(list, method, path, spec);
    if (spec.head) item.head = headOf(item[method]!);
  };
  skinsPaths(add, config.demoPlayer);
  mediaPaths(add);
  searchPaths(add);
  sharedPaths(add);
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
