// /openapi.json and /docs of a running skins service (with media and search in the same process):
// the document's shape, that it matches the routes and the services' real answers, the viewer's
// files, and the page (Swagger UI, bundled) in a real headless Chromium with its try-it.
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import type { Page } from 'puppeteer-core';
import { loadConfig } from '../api/config.ts';
import { buildOpenApi, describedRoutes, serviceUrls } from '../api/docs/openapi.ts';
import { ROUTE_TABLES } from '../api/route-tables.ts';
import { SKINS_TABLE } from '../api/skins/routes.ts';
import type { LaunchedBrowser } from '../renderer/browser.ts';
import { openPage, startBrowser } from './helpers/browser.ts';
import { freePort } from './helpers/redis.ts';
import { ROOT, call } from './helpers/service.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

const ARTIFACTS = path.join(ROOT, 'test-artifacts/pages');
mkdirSync(ARTIFACTS, { recursive: true });
const ADMIN_TOKEN = 'docsAdminMustNotLeak-J6tQw2XzP8mVk4Rb';

// Every route of the three services' tables (api/http/route-table.ts), as the document lists them
// ([method, OpenAPI path]), HEAD where a route describes it (Koa answers it on every GET route).
const ROUTES: Array<[string, string]> = describedRoutes(ROUTE_TABLES).flatMap(({ method, path: p, route }): Array<[string, string]> =>
  [[method, p], ...(route.doc.head ? [['head', p] as [string, string]] : [])]);
interface Schema { type?: string; enum?: unknown[]; default?: unknown; minimum?: number; maximum?: number; pattern?: string; $ref?: string; properties?: Record<string, Schema & { deprecated?: boolean }> }
interface Param { name: string; in: string; required: boolean; schema: Schema; description: string; deprecated?: boolean; example?: unknown }
interface Op {
  operationId: string; tags: string[]; summary: string; description?: string; deprecated?: boolean; parameters?: Param[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema & { allOf?: Array<Record<string, unknown>> } }> }>; security?: Array<Record<string, string[]>>;
}
type Doc = {
  openapi: string; info: { title: string; version: string }; servers: Array<{ url: string; 'x-service': string }>; tags: Array<{ name: string }>;
  paths: Record<string, Record<string, Op> & { servers: Array<{ url: string }> }>; components: Record<string, Record<string, Record<string, unknown>>>;
};

let h: SkinsHarness;
let ports: { media: number; search: number };
let doc: Doc;
let browser: LaunchedBrowser;

test.before(async () => {
  ports = { media: await freePort(), search: await freePort() };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skinfarm-docs-'));
  h = await startSkins({
    SERVICES: 'skins,media,search', MEDIA_PORT: String(ports.media), SEARCH_PORT: String(ports.search),
    MEDIA_DIR: path.join(dir, 'media'), DATA_DIR: path.join(dir, 'data'), DEMO_PLAYER: 'SlimAlex', SEARCH_ADMIN_TOKEN: ADMIN_TOKEN,
  });
  doc = (await h.get('/openapi.json')).json;
  browser = await startBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await h?.stop();
});

const operations = () => Object.entries(doc.paths).flatMap(([p, item]) =>
  Object.entries(item).filter(([method]) => method !== 'servers').map(([method, op]) => ({ path: p, method, op: op as Op })));
const op = (method: string, p: string) => doc.paths[p][method] as Op;
const parameter = (method: string, p: string, name: string) => op(method, p).parameters!.find((x) => x.name === name)!;

test('/openapi.json is an OpenAPI 3.1 document with every route of the three services', async (t) => {
  const r = await h.get('/openapi.json');
  t.is(r.status, 200);
  t.regex(r.headers.get('content-type') ?? '', /json/);
  t.regex(doc.openapi, /^3\.1\.\d+$/);
  t.is(doc.info.title, 'Skinfarm');
  t.is(doc.info.version, (await h.get('/v1/status')).json.data.version, 'the documented version is the running one');
  t.deepEqual(doc.tags.map((tag) => tag.name), ['skins', 'media', 'search']);
  t.deepEqual(doc.servers.map((s) => [s['x-service'], s.url]), [
    ['skins', `http://localhost:${new URL(h.base).port}`], ['media', `http://localhost:${ports.media}`], ['search', `http://localhost:${ports.search}`],
  ]);
  for (const [method, p] of ROUTES) t.truthy(doc.paths[p]?.[method], `${method.toUpperCase()} ${p} is described`);
  t.is(operations().length, ROUTES.length, 'every operation is a table route (the routers answer those: next test)');

  const ids = new Set<string>();
  for (const { path: p, method, op: o } of operations()) {
    t.true(Object.keys(o.responses).length > 0, `${method} ${p} has responses`);
    t.false(ids.has(o.operationId), `${o.operationId} is unique`);
    ids.add(o.operationId);
    t.true(o.tags.every((tag) => ['skins', 'media', 'search'].includes(tag)));
    t.true(doc.paths[p].servers.length > 0, `${p} names its server`);
    for (const name of p.match(/\{\w+\}/g) ?? []) {
      t.truthy(o.parameters?.find((x) => `{${x.name}}` === name && x.in === 'path' && x.required), `${method} ${p} declares ${name}`);
    }
  }
  // Every reference points at something that exists.
  const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
  t.true(refs.length > 50);
  for (const ref of new Set(refs)) {
    const [, , kind, name] = ref.slice(8, -1).split('/');
    t.truthy(doc.components[kind]?.[name], ref);
  }
});

test('each service answers exactly the methods its table lists on a path: any other is 405 naming them, and a CORS preflight names the same', async (t) => {
  const bases: Record<string, string> = { skins: h.base, media: `http://127.0.0.1:${ports.media}`, search: `http://127.0.0.1:${ports.search}` };
  const samples: Record<string, string> = { name: 'SlimAlex', size: '64', uuid: '0'.repeat(32), file: `${'0'.repeat(24)}.png`, id: 'key_none' };
  const matches = (template: string, url: string) => new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`).test(url);
  for (const { service, routes } of ROUTE_TABLES) {
    for (const url of new Set(routes.map((r) => r.path.replace(/\{(\w+)\}/g, (_, name: string) => samples[name])))) {
      const listed = routes.filter((r) => matches(r.path, url)).flatMap((r) => (r.method === 'get' ? ['GET', 'HEAD'] : [r.method.toUpperCase()]));
      const r = await call(`${bases[service]}${url}`, { method: 'PUT' });
      t.is(r.status, 405, `PUT ${service} ${url}`);
      t.deepEqual(r.headers.get('allow')?.split(', ').sort(), [...new Set([...listed, 'OPTIONS'])].sort(), `${service} ${url}`);
      const preflight = await call(`${bases[service]}${url}`, { method: 'OPTIONS', headers: { origin: 'https://example.org', 'access-control-request-method': listed[0] } });
      t.is(preflight.status, 204);
      t.is(preflight.headers.get('access-control-allow-methods'), r.headers.get('allow'), `preflight ${service} ${url}`);
    }
  }
  // Where no route answers, a preflight names every method of the service (the 404 then reaches the script).
  const elsewhere = await call(`${bases.search}/v1/nothing-here`, { method: 'OPTIONS', headers: { origin: 'https://example.org', 'access-control-request-method': 'DELETE' } });
  t.deepEqual(elsewhere.headers.get('access-control-allow-methods')?.split(', ').sort(), ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST']);
});

test('each route\'s caching is declared in its table entry: the document lists it, and the answers carry it', async (t) => {
  const declared = ROUTE_TABLES.flatMap(({ routes }) => routes).filter((r) => r.cacheControl && r.path !== '/');
  t.true(declared.length >= 20);
  for (const route of declared) {
    const ok = op(route.method, route.docPath ?? route.path).responses[route.doc.status ?? '200'] as { headers?: Record<string, { description: string }> };
    t.is(ok.headers?.['Cache-Control']?.description, route.cacheControl, `${route.method} ${route.path}`);
  }
  const media = `http://127.0.0.1:${ports.media}`;
  for (const [url, expected] of [[`${h.base}/favicon.ico`, 'public, max-age=86400'], [`${h.base}/status`, 'no-store'], [`${h.base}/`, 'no-store'],
    [`${h.base}/v1/avatar/SlimAlex/32`, 'public, max-age=300, immutable'], [`${h.base}/docs/assets/viewer.js`, 'no-cache'],
    [`${media}/categories`, 'no-store'], [`${media}/`, 'no-store']]) {
    t.is((await call(url)).headers.get('cache-control'), expected, url);
  }
  t.is((await call(`${h.base}/v1/avatar/SlimAlex/32?yaw=400`)).headers.get('cache-control'), 'no-store', 'an error sets its own');
});

test('a quota that is a setting is documented as configured', (t) => {
  const built = buildOpenApi(loadConfig({ MEDIA_RATE_LIMIT: '42', MEDIA_FILE_RATE_LIMIT: '43', SEARCH_ADMIN_RATE_LIMIT: '44' }), ROUTE_TABLES);
  t.regex(built.paths['/categories'].get!.description!, /Rate limit: 42 requests per minute per IP \(group media\)/);
  t.regex(built.paths['/f/{file}'].get!.description!, /Rate limit: 43 requests per minute per IP \(group media-file\)/);
  t.regex(built.paths['/v1/admin/keys/{id}'].patch!.description!, /Rate limit: 44 requests per minute per IP \(group search-admin\)/);
  t.regex(built.paths['/v1/search'].get!.description!, /Rate limit: 600 requests per minute per IP \(group search\)/, 'the default where none is set');
});

test('two services share a path only under one shared description that names them', (t) => {
  const health = SKINS_TABLE.routes.find((r) => r.path === '/health')!;
  const ownCopy = { ...health, doc: { ...health.doc } };
  t.throws(() => describedRoutes([{ service: 'skins', routes: [health] }, { service: 'media', routes: [ownCopy] }]), { message: 'get /health is described twice' });
  t.throws(() => describedRoutes([{ service: 'skins', routes: [health] }]), { message: /get \/health is answered by skins, described for skins, media, search/ });
  t.is(describedRoutes(ROUTE_TABLES).filter((r) => r.path === '/health').length, 1);
});

test('parameters carry defaults, ranges and enums; bodies, schemas and security are described', (t) => {
  // The spec's table on the sized render; the isometric view on the isometric address and the cube (issue #41); the bust is a front portrait.
  t.deepEqual(parameter('get', '/v1/render/{name}/{size}', 'yaw').schema, { type: 'number', minimum: -180, maximum: 180, default: 0 });
  t.deepEqual(parameter('get', '/v1/render/{name}/{size}', 'pitch').schema, { type: 'number', minimum: -90, maximum: 90, default: 0 });
  t.deepEqual(parameter('get', '/v1/render/{name}', 'yaw').schema, { type: 'number', minimum: -180, maximum: 180, default: 35 });
  t.deepEqual(parameter('get', '/v1/render/{name}', 'pitch').schema, { type: 'number', minimum: -90, maximum: 90, default: 30 });
  t.is(parameter('get', '/v1/cube/{name}/{size}', 'yaw').schema.default, 35);
  t.is(parameter('get', '/v1/bust/{name}/{size}', 'yaw').schema.default, 0);
  t.deepEqual(parameter('get', '/v1/render/{name}/{size}', 'fov').schema, { type: 'number', minimum: 0, maximum: 90, default: 0 });
  t.deepEqual(parameter('get', '/v1/bust/{name}', 'model').schema.enum, ['classic', 'slim']);
  t.is(parameter('get', '/v1/head/{name}/{size}', 'yaw').schema.default, 35);
  t.like(parameter('get', '/v1/avatar/{name}', 'size'), { in: 'query', required: false, schema: { default: 128 } });
  t.like(parameter('get', '/v1/avatar/{name}/{size}', 'size'), { in: 'path', required: true, schema: { type: 'integer', minimum: 8, maximum: 512, default: 128 } });
  t.is(parameter('get', '/v1/body/{name}/{size}', 'size').schema.default, 256);
  t.deepEqual(parameter('get', '/v1/avatar/{name}/{size}', 'shape').schema.enum, ['square', 'circle']);
  t.deepEqual(parameter('get', '/v1/player/{name}', 'source').schema, { type: 'string', enum: ['auto', 'official', 'external', 'bedrock'], default: 'auto' });
  t.deepEqual(parameter('get', '/v1/search', 'type').schema.enum, ['auto', 'phone', 'email', 'messenger_user', 'network_user', 'social_id', 'fio', 'ip', 'domain', 'mac', 'email_sha256', 'phone_sha256']);
  t.deepEqual(parameter('get', '/', 'orientation').schema.enum, ['landscape', 'portrait', 'auto']);
  t.like(parameter('get', '/', 'count'), { in: 'query', schema: { type: 'integer', minimum: 1, maximum: 50 } });

  t.truthy(op('get', '/v1/cube/{name}/{size}').responses['200'].content!['image/png']);
  t.truthy(op('get', '/v1/skin/{name}').responses['200'].content!['image/png']);
  t.truthy(op('post', '/v1/render/{name}').responses['200'].content!['image/png']);
  t.truthy((op('post', '/v1/render/{name}') as unknown as { requestBody: { content: Record<string, unknown> } }).requestBody.content['multipart/form-data']);
  const dataOf = (method: string, p: string) => op(method, p).responses['200'].content!['application/json'].schema.allOf![1];
  for (const [p, schema] of [['/v1/player/{name}', 'PlayerRecord'], ['/v1/uuid/{name}', 'UuidRecord'], ['/v1/batch', 'BatchResult'], ['/v1/status', 'Status'],
    ['/v1/sources', 'Sources'], ['/v1/external/announcements', 'Announcements'], ['/v1/external/meta', 'ExternalMeta'], ['/v1/me', 'Me'],
    ['/v1/me/profiles', 'MeProfiles'], ['/v1/me/verification', 'Verification']]) {
    t.deepEqual(dataOf('get', p), { properties: { data: { $ref: `#/components/schemas/${schema}` } } }, p);
  }
  t.deepEqual(op('get', '/v1/search').responses['200'].content!['application/json'].schema, { $ref: '#/components/schemas/SearchResult' });
  for (const name of ['Envelope', 'ErrorEnvelope', 'SearchError', 'ProfileRecord', 'GameToken', 'MediaItem', 'ApiKey']) t.truthy(doc.components.schemas[name], name);

  t.like(doc.components.securitySchemes.searchApiKey, { type: 'apiKey', in: 'header', name: 'X-API-Key' });
  t.like(doc.components.securitySchemes.searchAdmin, { type: 'http', scheme: 'bearer' });
  t.deepEqual(op('get', '/v1/search').security, [{ searchApiKey: [] }]);
  t.deepEqual(op('delete', '/v1/admin/keys/{id}').security, [{ searchAdmin: [] }]);
  t.deepEqual(op('get', '/v1/types').security, [], '/v1/types needs no key');
});

test('options an image does not use are described as deprecated; a colour in words, not as a regular expression', (t) => {
  const unused = parameter('get', '/v1/avatar/{name}/{size}', 'yaw');
  t.true(unused.deprecated);
  t.regex(unused.description, /^degrees; .*\. Accepted for compatibility; this image does not use it\.$/);
  t.deepEqual(unused.schema, { type: 'number', minimum: -180, maximum: 180, default: 0 }, 'still read and checked as before');
  for (const [p, name] of [['/v1/render/{name}/{size}', 'yaw'], ['/v1/avatar/{name}/{size}', 'shape'], ['/v1/body/{name}/{size}', 'view']]) {
    t.is(parameter('get', p, name).deprecated, undefined, `${name} changes the image of ${p}`);
  }
  t.deepEqual(operations().flatMap(({ op: o }) => o.parameters ?? []).filter((x) => /no effect/.test(x.description)), []);
  const form = op('post', '/v1/render').requestBody!.content['multipart/form-data'].schema.properties!;
  t.like(form, { view: { deprecated: true }, shape: { deprecated: true }, yaw: { type: 'number' } });
  t.is(form.yaw.deprecated, undefined);

  const bg = parameter('get', '/v1/avatar/{name}/{size}', 'bg');
  t.deepEqual(bg.schema, { type: 'string' });
  t.is(bg.example, '336699');
  t.regex(bg.description, /six hex digits RRGGBB .*`transparent`/);
  t.false(JSON.stringify(doc).includes('[0-9a-fA-F]{6}'), 'no colour as a pattern anywhere');
});

test('the upload is POST /v1/render; the older POST /v1/render/{size} still answers and is described as deprecated', async (t) => {
  const upload = op('post', '/v1/render');
  t.is(upload.summary, 'Render an uploaded skin');
  t.is(upload.deprecated, undefined);
  t.like(upload.requestBody!.content['multipart/form-data'].schema.properties!.size, { type: 'integer', minimum: 8, maximum: 512, default: 256 });
  const older = op('post', '/v1/render/{name}');
  t.true(older.deprecated);
  t.regex(older.description!, /older address of POST \/v1\/render.*the path segment is the size in pixels/);
  const form = (fields: Record<string, string>, file?: string) => {
    const body = new FormData();
    if (file !== undefined) body.set('file', new Blob([file], { type: 'image/png' }), 'skin.png');
    for (const [name, value] of Object.entries(fields)) body.set(name, value);
    return { method: 'POST', body };
  };
  // No render farm here: the upload handler answers before it would draw.
  for (const p of ['/v1/render', '/v1/render/64']) {
    t.is((await h.get(p, form({}))).json.code, 'missing_param', p);
    t.is((await h.get(p, form({ yaw: '30' }, 'not a png'))).json.code, 'invalid_skin', p);
  }
  t.is((await h.get('/v1/render', form({ size: '7' }, 'not a png'))).json.code, 'bad_request', 'the size field is read and checked');
  t.is((await h.get('/v1/render?size=600', form({}, 'not a png'))).json.code, 'bad_request', 'or the size in the query');
});

/** The error codes a documented response lists for one HTTP status. */
const documentedCodes = (method: string, p: string, status: number): unknown[] => {
  const described = op(method, p).responses[String(status)]?.content?.['application/json'].schema as { anyOf?: unknown[] } | undefined;
  // A path several services answer lists one shape per service; the codes are the same in each.
  const schema = (described?.anyOf?.[0] ?? described) as { allOf?: Array<Record<string, unknown>> } | undefined;
  const extra = schema?.allOf?.[1] as { properties: { code?: { enum: unknown[] }; error?: { properties: { code: { enum: unknown[] } } } } } | undefined;
  return extra?.properties.code?.enum ?? extra?.properties.error?.properties.code.enum ?? [];
};

test('the documented defaults and errors are what the services answer', async (t) => {
  const avatar = await h.get('/v1/avatar/SlimAlex');
  t.is(avatar.headers.get('content-type'), 'image/png');
  t.is(avatar.bytes.readUInt32BE(16), parameter('get', '/v1/avatar/{name}', 'size').schema.default as number, 'PNG width = documented default size');

  const badName = await h.get('/v1/uuid/bad!name');
  t.is(badName.status, 400);
  t.true(documentedCodes('get', '/v1/uuid/{name}', 400).includes(badName.json.code));
  const badYaw = await h.get('/v1/cube/SlimAlex/64?yaw=181');
  t.true(documentedCodes('get', '/v1/cube/{name}/{size}', 400).includes(badYaw.json.code));
  const noKey = await call(`http://127.0.0.1:${ports.search}/v1/search?query=x`);
  t.is(noKey.status, 401);
  t.true(documentedCodes('get', '/v1/search', 401).includes(noKey.json.error.code));
  const noCategory = await call(`http://127.0.0.1:${ports.media}/?img=nothing-here`);
  t.true(documentedCodes('get', '/', 404).includes(noCategory.json.code));
});

test('MEDIA_PUBLIC_URL and SEARCH_PUBLIC_URL name the other services', (t) => {
  const config = loadConfig({ PUBLIC_URL: 'https://skins.example.org', MEDIA_PORT: '4001', SEARCH_PUBLIC_URL: 'https://search.example.org/' });
  t.deepEqual(serviceUrls(config), {
    skins: 'https://skins.example.org', media: 'http://localhost:4001', search: 'https://search.example.org',
  });
});

const dist = (name: string) => readFileSync(createRequire(import.meta.url).resolve(`swagger-ui-dist/${name}`));

test('/docs is the bundled viewer: only its own files, under a strict Content-Security-Policy, and no secret', async (t) => {
  const r = await h.get('/docs');
  t.is(r.status, 200);
  t.regex(r.headers.get('content-type') ?? '', /text\/html/);
  const policy = Object.fromEntries((r.headers.get('content-security-policy') ?? '').split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
  t.deepEqual(policy['default-src'], ["'none'"]);
  t.deepEqual(policy['script-src'], ["'self'"]);
  t.deepEqual(policy['form-action'], ["'none'"], 'no form on the page can send a typed credential anywhere');
  t.deepEqual(policy['connect-src'], ["'self'", ...doc.servers.map((s) => s.url)], 'try-it reaches the documented servers and nothing else');
  t.true(policy['style-src'].every((source) => source === "'self'" || source.startsWith("'sha256-")), 'no unsafe-inline');
  const loaded = [...r.text.matchAll(/<script src="([^"]+)"|<link rel="stylesheet" href="([^"]+)"/g)].map((m) => m[1] ?? m[2]);
  t.deepEqual(loaded.sort(), ['/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui.css', '/docs/assets/viewer.js'], 'nothing from a CDN');
  t.true(r.text.includes('<a href="/openapi.json">/openapi.json</a>'));
  t.false(r.text.includes(ADMIN_TOKEN));
  t.false(JSON.stringify(doc).includes(ADMIN_TOKEN));
});

test('the viewer\'s files: as installed, gzip when accepted, 304 when unchanged; no other name is served', async (t) => {
  const bundle = await h.get('/docs/assets/swagger-ui-bundle.js');
  t.is(bundle.status, 200);
  t.is(bundle.headers.get('content-type'), 'text/javascript; charset=utf-8');
  t.is(bundle.headers.get('content-encoding'), 'gzip', 'fetch asks for gzip and unpacks it');
  t.true(bundle.bytes.equals(dist('swagger-ui-bundle.js')));
  t.true(Number(bundle.headers.get('content-length')) < dist('swagger-ui-bundle.js').length / 2);
  const plain = await h.get('/docs/assets/swagger-ui.css', { headers: { 'accept-encoding': 'identity' } });
  t.is(plain.headers.get('content-encoding'), null);
  t.true(plain.bytes.equals(dist('swagger-ui.css')));
  t.regex((await h.get('/docs/assets/LICENSE.swagger-ui.txt')).text, /Apache License/);
  const again = await h.get('/docs/assets/swagger-ui-bundle.js', { headers: { 'if-none-match': bundle.headers.get('etag')! } });
  t.is(again.status, 304);
  for (const name of ['package.json', 'index.html', 'swagger-ui-bundle.js.map', '..%2Fpackage.json', '..%2F..%2F..%2Fpackage.json', '%2E%2E%2Fswagger-ui-dist%2Fpackage.json',
    '..%5Cpackage.json', '%00', '%', 'viewer.js%00', 'constructor', '__proto__']) {
    const r = await h.get(`/docs/assets/${name}`);
    t.is(r.status, 404, name);
    t.is(r.json.code, 'route_not_found', name);
  }
});

test('/openapi.json is made once: the same bytes and ETag each time, gzip when accepted, 304 when unchanged', async (t) => {
  const first = await h.get('/openapi.json');
  const etag = first.headers.get('etag');
  t.truthy(etag, 'an ETag');
  t.is(first.headers.get('content-encoding'), 'gzip', 'fetch asks for gzip and unpacks it');
  t.true(Number(first.headers.get('content-length')) < first.bytes.length / 4, 'the gzip form is sent');
  const plain = await h.get('/openapi.json', { headers: { 'accept-encoding': 'identity' } });
  t.is(plain.headers.get('etag'), etag);
  t.true(plain.bytes.equals(first.bytes), 'the same bytes');
  t.is(plain.text, JSON.stringify(JSON.parse(plain.text)), 'compact JSON');
  const again = await h.get('/openapi.json', { headers: { 'if-none-match': etag! } });
  t.is(again.status, 304);
  t.is(again.bytes.length, 0);
});

const open = () => openPage(browser.browser, { width: 1200, height: 900 }, { failedRequests: true });

/** The viewer, loaded: every operation listed. */
async function openDocs(page: Page, hash = ''): Promise<void> {
  await page.goto(`${h.base}/docs${hash}`, { waitUntil: 'networkidle0' });
  await page.waitForSelector('.opblock');
}

/**
 * Opens an operation of the viewer, fills its try-it fields and runs it; resolves with the
 * answer's element (`pre`: a text body, `img`: an image) once shown.
 */
async function tryIt(page: Page, tag: string, operationId: string, values: Record<string, string>, answer: 'pre' | 'img') {
  const op = `#operations-${tag}-${operationId}`;
  await page.click(`${op} .opblock-summary-control`);
  // The operation opens after the click has returned: its button is there a moment later.
  await (await page.waitForSelector(`${op} .try-out__btn`))!.click();
  for (const [name, value] of Object.entries(values)) {
    const field = (await page.$(`${op} tr[data-param-name="${name}"] select`)) ? 'select' : 'input';
    if (field === 'select') await page.select(`${op} tr[data-param-name="${name}"] select`, value);
    else await page.$eval(`${op} tr[data-param-name="${name}"] input`, (el) => { (el as HTMLInputElement).value = ''; });
    if (field === 'input') await page.type(`${op} tr[data-param-name="${name}"] input`, value);
  }
  await page.click(`${op} .execute`);
  const shown = `${op} .live-responses-table tbody .response-col_description ${answer === 'pre' ? '.highlight-code pre' : 'img'}`;
  const element = (await page.waitForSelector(shown, { timeout: 60_000 }))!;
  await page.$eval(`${op} .responses-wrapper`, (el) => el.scrollIntoView());
  return element;
}

/** Enters a credential in the Authorize dialog, as a person does. */
async function authorize(page: Page, scheme: string, value: string): Promise<void> {
  await page.click('.btn.authorize');
  const container = (await page.waitForSelector(`xpath///div[contains(@class, "auth-container")][.//h4[contains(., "${scheme}")]]`))!;
  await (await container.$('input'))!.type(value);
  await (await container.$('button.authorize'))!.click();
  await page.click('.modal-ux .close-modal');
}

test.serial('the status page opens without console errors', async (t) => {
  const { page, errors } = await open();
  await page.goto(`${h.base}/status`, { waitUntil: 'networkidle0' });
  t.regex(await page.evaluate(() => document.body.innerText), /Skinfarm/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'docs-test-status.png') });
  t.deepEqual(errors, []);
});

test.serial('the docs page lists every operation by service (HEAD is told on its GET) and its search finds them by their words', async (t) => {
  const { page, errors } = await open();
  await openDocs(page);
  await page.screenshot({ path: path.join(ARTIFACTS, 'docs-top.png') });
  t.deepEqual(await page.$$eval('.opblock-tag', (tags) => tags.map((tag) => tag.getAttribute('data-tag'))), ['skins', 'media', 'search']);
  const listed = operations().filter((o) => o.method !== 'head').reduce((n, o) => n + o.op.tags.length, 0);
  t.is(await page.$$eval('.opblock', (ops) => ops.length), listed, 'an entry per operation and service');
  t.is(await page.$$eval('.opblock-head', (ops) => ops.length), 0);
  t.true(listed > 60);

  // The upload's summary holds no "/v1/render" and its path no "upload": both words count.
  await page.type('.operation-filter-input', 'upload skin');
  await page.waitForFunction(() => document.querySelectorAll('.opblock').length === 2);
  t.deepEqual(await page.$$eval('.opblock', (ops) => ops.map((o) => [o.querySelector('[data-path]')!.getAttribute('data-path'), o.classList.contains('opblock-deprecated')])),
    [['/v1/render/{name}', true], ['/v1/render', false]]);
  await page.screenshot({ path: path.join(ARTIFACTS, 'docs-search.png') });
  t.deepEqual(errors, []);
});

test.serial('the docs page: try-it calls the skins, media and search services and shows the answers', async (t) => {
  const { page, errors } = await open();
  await openDocs(page);

  const uuid = JSON.parse(await (await tryIt(page, 'skins', 'skinsGetV1UuidByName', {}, 'pre')).evaluate((el) => el.textContent ?? ''));
  t.is(uuid.data.name, 'SlimAlex');
  t.is(uuid.data.id, (await h.get('/v1/uuid/SlimAlex')).json.data.id);
  await page.screenshot({ path: path.join(ARTIFACTS, 'docs-try-uuid.png') });

  const avatar = await tryIt(page, 'skins', 'skinsGetV1AvatarByNameBySize', { size: '96', shape: 'circle' }, 'img');
  await page.waitForFunction((img) => (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth > 0, {}, avatar);
  t.is(await avatar.evaluate((img) => (img as HTMLImageElement).naturalWidth), 96);
  await page.screenshot({ path: path.join(ARTIFACTS, 'docs-try-avatar.png') });

  // `/` is answered by all three; on the media service's entry it goes to the media service.
  const media = JSON.parse(await (await tryIt(page, 'media', 'allGetRoot', { orientation: 'portrait' }, 'pre')).evaluate((el) => el.textContent ?? ''));
  t.like(media, { alias: 'scenery', orientation: 'portrait' });

  const created = await call(`http://127.0.0.1:${ports.search}/v1/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body: '{"name":"docs"}' });
  await authorize(page, 'searchApiKey', created.json.key);
  const search = JSON.parse(await (await tryIt(page, 'search', 'searchGetV1Search', {}, 'pre')).evaluate((el) => el.textContent ?? ''));
  t.like(search, { status: 'success', search_type: 'email', query: 'ada.example@example.org' });
  t.regex(await page.$eval('#operations-search-searchGetV1Search .curl-command', (el) => el.textContent ?? ''), /-H 'X-API-Key: \$KEY'/, 'the curl shown names the key by a placeholder');
  await page.screenshot({ path: path.join(ARTIFACTS, 'docs-try-search.png') });
  t.deepEqual(await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie]), [0, 0, ''], 'the key is kept nowhere');
  t.false((await page.content()).includes(created.json.key), 'the key is not written into the page (or a URL)');

  t.deepEqual(errors, []);
});

test.serial('the docs page: a malformed #hash breaks nothing, and a key typed into it never reaches a URL', async (t) => {
  const { page, errors } = await open();
  const requested: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  await openDocs(page, '#%');
  t.is(page.url(), `${h.base}/docs`, 'the hash that names nothing is dropped, the page stays');
  const { key } = (await call(`http://127.0.0.1:${ports.search}/v1/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body: '{"name":"docs-leak"}' })).json;
  await authorize(page, 'searchApiKey', key);
  const search = JSON.parse(await (await tryIt(page, 'search', 'searchGetV1Search', {}, 'pre')).evaluate((el) => el.textContent ?? ''));
  t.is(search.status, 'success');
  t.is(new URL(page.url()).pathname, '/docs', 'the request was sent by the script, the page stayed');
  t.is(new URL(page.url()).search, '');

  // Were the dialog's form ever sent natively (a script failing), the page's policy stops it.
  await page.click('.btn.authorize');
  const form = (await page.waitForSelector('.modal-ux form:has(input)'))!;
  await form.$eval('input', (el) => { (el as HTMLInputElement).value = 'typed-secret-value'; });
  const blocked = page.evaluate(() => new Promise((resolve) => document.addEventListener('securitypolicyviolation', (e) => resolve(e.effectiveDirective), { once: true })));
  await form.evaluate((el) => { (el as HTMLFormElement).method = 'get'; HTMLFormElement.prototype.submit.call(el); });
  t.is(await blocked, 'form-action');
  t.is(new URL(page.url()).search, '');
  t.deepEqual(requested.filter((url) => url.includes(key) || url.includes('typed-secret-value')), []);
  t.true(errors.every((e) => /form-action/.test(e)), errors.join('\n'));
});
