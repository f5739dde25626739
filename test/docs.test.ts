// /openapi.json and /docs of a running skins service (with media and search in the same process):
// the document's shape, that it matches the routes and the services' real answers, and the page
// in a real headless Chromium with its try-it forms.
import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import type { Page } from 'puppeteer-core';
import { loadConfig } from '../api/config.ts';
import { describedRoutes, ROUTE_TABLES, serviceUrls } from '../api/docs/openapi.ts';
import { SKINS_ROUTES } from '../api/skins/routes.ts';
import type { LaunchedBrowser } from '../renderer/browser.ts';
import { openPage, startBrowser } from './helpers/browser.ts';
import { freePort } from './helpers/redis.ts';
import { ROOT, call } from './helpers/service.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

const ARTIFACTS = path.join(ROOT, 'test-artifacts/pages');
mkdirSync(ARTIFACTS, { recursive: true });
const ADMIN_TOKEN = 'docs-admin-token-that-must-not-leak';

// Every route of the three services' tables (api/http/route-table.ts), as the document lists them
// ([method, OpenAPI path]), HEAD where a route describes it (Koa answers it on every GET route).
const ROUTES: Array<[string, string]> = describedRoutes().flatMap(({ method, path: p, route }): Array<[string, string]> =>
  [[method, p], ...(route.doc.head ? [['head', p] as [string, string]] : [])]);
/** The routes that get a card on /docs (HEAD is told on its GET card). */
const CARDS = ROUTES.filter(([method]) => method !== 'head');

interface Schema { type?: string; enum?: unknown[]; default?: unknown; minimum?: number; maximum?: number; $ref?: string }
interface Param { name: string; in: string; required: boolean; schema: Schema }
interface Op { operationId: string; tags: string[]; parameters?: Param[]; responses: Record<string, { content?: Record<string, { schema: Schema & { allOf?: Array<Record<string, unknown>> } }> }>; security?: Array<Record<string, string[]>> }
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

test('each service answers exactly the methods its table lists on a path: any other is 405 naming them', async (t) => {
  const bases: Record<string, string> = { skins: h.base, media: `http://127.0.0.1:${ports.media}`, search: `http://127.0.0.1:${ports.search}` };
  const samples: Record<string, string> = { name: 'SlimAlex', size: '64', uuid: '0'.repeat(32), file: `${'0'.repeat(24)}.png`, id: 'key_none' };
  const matches = (template: string, url: string) => new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`).test(url);
  for (const { service, routes } of ROUTE_TABLES) {
    for (const url of new Set(routes.map((r) => r.path.replace(/\{(\w+)\}/g, (_, name: string) => samples[name])))) {
      const listed = routes.filter((r) => matches(r.path, url)).flatMap((r) => (r.method === 'get' ? ['GET', 'HEAD'] : [r.method.toUpperCase()]));
      const r = await call(`${bases[service]}${url}`, { method: 'PUT' });
      t.is(r.status, 405, `PUT ${service} ${url}`);
      t.deepEqual(r.headers.get('allow')?.split(', ').sort(), [...new Set([...listed, 'OPTIONS'])].sort(), `${service} ${url}`);
    }
  }
});

test('two services share a path only under one shared description that names them', (t) => {
  const health = SKINS_ROUTES.find((r) => r.path === '/health')!;
  const ownCopy = { ...health, doc: { ...health.doc } };
  t.throws(() => describedRoutes([{ service: 'skins', routes: [health] }, { service: 'media', routes: [ownCopy] }]), { message: 'get /health is described twice' });
  t.throws(() => describedRoutes([{ service: 'skins', routes: [health] }]), { message: /get \/health is answered by skins, described for skins, media, search/ });
  t.is(describedRoutes().filter((r) => r.path === '/health').length, 1);
});

test('parameters carry defaults, ranges and enums; bodies, schemas and security are described', (t) => {
  t.deepEqual(parameter('get', '/v1/render/{name}/{size}', 'yaw').schema, { type: 'number', minimum: -180, maximum: 180, default: 0 });
  t.deepEqual(parameter('get', '/v1/render/{name}/{size}', 'pitch').schema, { type: 'number', minimum: -90, maximum: 90, default: 0 });
  t.is(parameter('get', '/v1/head/{name}/{size}', 'yaw').schema.default, 35);
  t.like(parameter('get', '/v1/avatar/{name}', 'size'), { in: 'query', required: false, schema: { default: 128 } });
  t.like(parameter('get', '/v1/avatar/{name}/{size}', 'size'), { in: 'path', required: true, schema: { type: 'integer', minimum: 8, maximum: 512, default: 128 } });
  t.is(parameter('get', '/v1/body/{name}/{size}', 'size').schema.default, 256);
  t.deepEqual(parameter('get', '/v1/avatar/{name}/{size}', 'shape').schema.enum, ['square', 'circle']);
  t.deepEqual(parameter('get', '/v1/player/{name}', 'source').schema, { type: 'string', enum: ['auto', 'official', 'external'], default: 'auto' });
  t.deepEqual(parameter('get', '/v1/search', 'type').schema.enum, ['auto', 'phone', 'email', 'messenger_user', 'network_user', 'social_id', 'fio', 'ip', 'domain', 'mac']);
  t.deepEqual(parameter('get', '/', 'orientation').schema.enum, ['landscape', 'portrait']);

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

test('/docs shows every endpoint with its parameters, a curl example and try-it forms, and no secret', async (t) => {
  const r = await h.get('/docs');
  t.is(r.status, 200);
  t.regex(r.headers.get('content-type') ?? '', /text\/html/);
  for (const [method, p] of CARDS) t.true(r.text.includes(`<span class="method ${method}">${method.toUpperCase()}</span> <code>${p}</code>`), `${method} ${p}`);
  const cards = operations().filter((o) => o.method !== 'head').reduce((n, o) => n + o.op.tags.length, 0);
  t.is(r.text.match(/class="card endpoint"/g)?.length, cards, 'a card per endpoint and service');
  const text = r.text.replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c)));
  t.true(text.includes(`curl -H "X-API-Key: $KEY" 'http://localhost:${ports.search}/v1/search?query=ada.example%40example.org'`));
  t.true(text.includes(`curl -o out '${h.base.replace('127.0.0.1', 'localhost')}/v1/avatar/SlimAlex/128?bg=336699'`));
  t.true(text.includes(`curl -F file=@skin.png -F model=slim -F yaw=30 -o out '${h.base.replace('127.0.0.1', 'localhost')}/v1/render/256'`));
  t.true(r.text.includes('<td><code>yaw</code></td><td>query</td><td>number</td><td>0</td><td>-180 .. 180</td>'));
  t.true((r.text.match(/<form class="try"/g)?.length ?? 0) >= 30);
  t.false(r.text.includes(ADMIN_TOKEN));
  t.false(JSON.stringify(doc).includes(ADMIN_TOKEN));
});

const open = () => openPage(browser.browser, { width: 1200, height: 900 }, { failedRequests: true });

/** Fills a try-it form, submits it and waits for its answer; returns the answer element's text. */
async function tryIt(page: Page, formPath: string, values: Record<string, string>, answer: string, base?: string): Promise<string> {
  // A path several services answer has a form on each service's card: `base` picks one.
  const form = (await page.$(`form.try[data-path="${formPath}"]${base ? `[data-base="${base}"]` : ''}`))!;
  for (const [name, value] of Object.entries(values)) {
    await form.$eval(`[data-name="${name}"]`, (el, v) => { (el as HTMLInputElement).value = v; }, value);
  }
  await form.$eval('button', (b) => (b as HTMLButtonElement).click());
  await page.waitForFunction((el, selector) => el.querySelector(selector), {}, form, answer);
  await form.evaluate((el) => el.scrollIntoView());
  return form.$eval(answer, (el) => el.textContent ?? '');
}

test.serial('the status page opens without console errors', async (t) => {
  const { page, errors } = await open();
  await page.goto(`${h.base}/status`, { waitUntil: 'networkidle0' });
  t.regex(await page.evaluate(() => document.body.innerText), /Skinfarm/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'docs-test-status.png') });
  t.deepEqual(errors, []);
});

test.serial('the docs page: try-it forms call the skins, media and search services and show the answers', async (t) => {
  const { page, errors } = await open();
  await page.goto(`${h.base}/docs`, { waitUntil: 'networkidle0' });
  await page.screenshot({ path: path.join(ARTIFACTS, 'docs-top.png') });

  const uuid = JSON.parse(await tryIt(page, '/v1/uuid/{name}', {}, 'pre.answer'));
  t.is(uuid.data.name, 'SlimAlex');
  t.is(uuid.data.id, (await h.get('/v1/uuid/SlimAlex')).json.data.id);
  await (await page.$('form.try[data-path="/v1/uuid/{name}"]'))!.evaluate((el) => el.closest('.card')!.scrollIntoView());
  await page.screenshot({ path: path.join(ARTIFACTS, 'docs-try-uuid.png') });

  await tryIt(page, '/v1/avatar/{name}/{size}', { size: '96', shape: 'circle' }, 'img.answer-media');
  const width = await page.waitForFunction(() => {
    const img = document.querySelector<HTMLImageElement>('form.try[data-path="/v1/avatar/{name}/{size}"] img.answer-media');
    return img?.complete && img.naturalWidth > 0 ? img.naturalWidth : null;
  });
  t.is(await width.jsonValue(), 96);
  await page.screenshot({ path: path.join(ARTIFACTS, 'docs-try-avatar.png') });

  const media = JSON.parse(await tryIt(page, '/', { img: 'scenery', format: 'json', orientation: 'portrait' }, 'pre.answer', `http://localhost:${ports.media}`));
  t.like(media, { alias: 'scenery', orientation: 'portrait' });

  const created = await call(`http://127.0.0.1:${ports.search}/v1/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body: '{"name":"docs"}' });
  const search = JSON.parse(await tryIt(page, '/v1/search', { 'X-API-Key': created.json.key }, 'pre.answer'));
  t.like(search, { status: 'success', search_type: 'email', query: 'ada.example@example.org' });
  await page.screenshot({ path: path.join(ARTIFACTS, 'docs-try-search.png') });
  t.deepEqual(await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie]), [0, 0, ''], 'the key is kept nowhere');
  t.false((await page.content()).includes(created.json.key), 'the key is not written into the page (or a URL)');

  t.deepEqual(errors, []);
});

test.serial('the docs page: a malformed #hash breaks nothing, and no try-it form ever puts a credential in a URL', async (t) => {
  const { page, errors } = await open();
  const requested: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  await page.goto(`${h.base}/docs#%`, { waitUntil: 'networkidle0' });
  const { key } = (await call(`http://127.0.0.1:${ports.search}/v1/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body: '{"name":"docs-leak"}' })).json;
  const search = JSON.parse(await tryIt(page, '/v1/search', { 'X-API-Key': key }, 'pre.answer'));
  t.is(search.status, 'success');
  t.is(page.url(), `${h.base}/docs#%`, 'the form was sent by the script, the page stayed');
  // A native submit goes nowhere (method="dialog" outside a dialog); and were a form ever sent
  // as a GET (a browser without dialog forms), it would carry no field: none has a name.
  t.deepEqual(await page.$$eval('form.try', (forms) => forms.filter((f) => f.getAttribute('method') !== 'dialog').length), 0);
  t.deepEqual(await page.$$eval('form.try [name]', (named) => named.map((el) => el.getAttribute('name'))), []);
  const form = (await page.$('form.try[data-path="/v1/search"]'))!;
  await form.evaluate((el) => { (el as HTMLFormElement).method = 'get'; });
  await Promise.all([page.waitForNavigation(), form.evaluate((el) => (el as HTMLFormElement).submit())]);
  t.is(new URL(page.url()).search, '');
  t.deepEqual(requested.filter((url) => url.includes(key)), []);
  t.deepEqual(errors, []);
});
