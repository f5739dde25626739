// OpenAPI 3.1 document of all three services, built from the endpoint list.
import type { Config } from '../config.ts';
import { ERROR_CODES } from '../../shared/errors.ts';
import { ENDPOINTS, type Answer, type Endpoint, type Param, type ServiceId } from './endpoints.ts';

/** Where each service is reached: PUBLIC_URL for skins; MEDIA_/SEARCH_PUBLIC_URL or the port. */
export function serviceUrls(config: Config, env: Record<string, string | undefined> = process.env): Record<ServiceId, string> {
  return {
    skins: config.publicUrl,
    media: env.MEDIA_PUBLIC_URL?.replace(/\/+$/, '') || `http://localhost:${config.ports.media}`,
    search: env.SEARCH_PUBLIC_URL?.replace(/\/+$/, '') || `http://localhost:${config.ports.search}`,
  };
}

const ENVELOPE = {
  type: 'object',
  required: ['code', 'success', 'message', 'data', 'timestamp'],
  properties: {
    code: { oneOf: [{ type: 'integer', const: 0 }, { type: 'string', enum: Object.keys(ERROR_CODES) }] },
    success: { type: 'boolean' },
    message: { type: 'string' },
    data: { type: ['object', 'null'] },
    timestamp: { type: 'integer' },
  },
};

function schema(p: Param) {
  return {
    type: p.type,
    ...(p.enum ? { enum: p.enum } : {}),
    ...(p.default !== undefined ? { default: p.default } : {}),
    ...(p.min !== undefined ? { minimum: p.min } : {}),
    ...(p.max !== undefined ? { maximum: p.max } : {}),
  };
}

const CONTENT: Record<Answer, Record<string, unknown>> = {
  envelope: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } },
  png: { 'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } } },
  html: { 'text/html': { schema: { type: 'string' } } },
  redirect: {},
  file: { '*/*': { schema: { type: 'string' } }, 'application/json': { schema: { type: 'object' } } },
  search: { 'application/json': { schema: { $ref: '#/components/schemas/SearchResult' } } },
  json: { 'application/json': { schema: { type: 'object' } } },
};

function operation(e: Endpoint) {
  const codes = e.errors ?? [];
  const responses: Record<string, unknown> = {
    [e.answer === 'redirect' ? '302' : '200']: { description: e.answer === 'redirect' ? 'redirect' : 'success', ...(Object.keys(CONTENT[e.answer]).length ? { content: CONTENT[e.answer] } : {}) },
  };
  for (const code of codes) {
    const { status, message } = ERROR_CODES[code as keyof typeof ERROR_CODES];
    const previous = responses[String(status)] as { description: string } | undefined;
    responses[String(status)] = { description: previous ? `${previous.description}; ${code}` : `${code}: ${message}`, content: CONTENT[e.service === 'search' ? 'json' : 'envelope'] };
  }
  if (e.service === 'skins' && e.answer !== 'html') responses['429'] = { description: 'rate_limited (Retry-After)' };
  const security = e.auth === 'api-key' ? [{ apiKey: [] }] : e.auth === 'admin' ? [{ adminToken: [] }] : e.auth === 'session' ? [{ session: [] }] : e.auth === 'media-password' ? [{ mediaPassword: [] }] : undefined;
  return {
    tags: [e.service],
    summary: e.summary,
    operationId: `${e.service}_${e.method}_${e.path.replace(/[^a-z0-9]+/gi, '_').replace(/^_|_$/g, '') || 'root'}`,
    ...(e.params?.length ? { parameters: e.params.map((p) => ({ name: p.name, in: p.in, required: !!p.required || p.in === 'path', description: p.description, schema: schema(p), ...(p.example ? { example: p.example } : {}) })) } : {}),
    ...(e.body ? {
      requestBody: e.body === 'multipart'
        ? { required: true, content: { 'multipart/form-data': { schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', contentMediaType: 'image/png' }, model: { type: 'string', enum: ['classic', 'slim'] }, yaw: { type: 'number' }, pitch: { type: 'number' } } } } } }
        : { required: true, content: { 'application/json': { schema: { type: 'object' }, example: JSON.parse(e.body) } } },
    } : {}),
    ...(security ? { security } : {}),
    responses,
  };
}

export function openApiDocument(config: Config, version: string) {
  const urls = serviceUrls(config);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const e of ENDPOINTS) {
    // OpenAPI keys paths by text; "/" exists on skins pages and media, so media's gets a marker.
    const key = e.service === 'media' && e.path === '/' ? '/?img={alias}' : e.path;
    paths[key] ??= { servers: [{ url: urls[e.service], description: e.service }] };
    paths[key][e.method] = operation(e);
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Skinfarm', version, description: 'Player lookup and skin imaging (skins), random media (media), multi-type search (search). Each service has its own base address (see servers).' },
    servers: (['skins', 'media', 'search'] as const).map((id) => ({ url: urls[id], description: id })),
    tags: [{ name: 'skins' }, { name: 'media' }, { name: 'search' }],
    paths,
    components: {
      schemas: {
        Envelope: ENVELOPE,
        SearchResult: {
          type: 'object',
          properties: Object.fromEntries(['status', 'timed_out', 'query', 'search_type', 'count', 'parsed_count', 'entities_found', 'cross_results', 'smart_sections', 'results', 'aggregated', 'data']
            .map((field) => [field, {}])),
        },
      },
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'SEARCH_ADMIN_TOKEN' },
        session: { type: 'apiKey', in: 'cookie', name: 'skinfarm.sid' },
        mediaPassword: { type: 'http', scheme: 'basic', description: 'any user name, MEDIA_PASSWORD' },
      },
    },
  };
}
