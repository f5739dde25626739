// A bounded fuzz run over all three services: requests generated from the served /openapi.json
// (valid, boundary and hostile values for every parameter) plus adversarial families (odd
// methods, duplicated parameters, wrong content types, huge and deep JSON, broken multipart, CRLF
// in echoed values, traversal in every path parameter, slow bodies, oversized textures). Seeded, so
// a failure reproduces.
// It fails on any 5xx that is not a deliberate upstream fault, any answer slower than 10 s, a
// stack trace or an internal path in a body, a broken envelope, or an injected header. Abuse
// families: random paths then the metrics' label set, password and key guessing from a rotating
// IPv6 /64, adversarial search strings against a CPU budget, batch budget draining (seeded batches
// of unknown names and UUIDs against the real upstream budgets; image churn against a Redis with a
// memory bound needs its own Redis pair: test/redis-churn.test.ts).
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import sharp from 'sharp';
import { ROUTE_TABLES } from '../api/route-tables.ts';
import { SHELL_ROUTES } from '../api/docs/shared-routes.ts';
import { startFakeUpstream, type FakeUpstream } from '../scripts/fake-upstream/server.ts';
import { call, ROOT, startApp, type RunningApp } from './helpers/service.ts';
import { startSkins } from './helpers/skins.ts';

type ServiceName = 'skins' | 'media' | 'search';
interface Schema { type?: string; enum?: unknown[]; minimum?: number; maximum?: number; default?: unknown }
interface Parameter { name: string; in: string; required?: boolean; schema?: Schema; example?: unknown }
interface Operation { parameters?: Parameter[]; requestBody?: { content?: Record<string, { example?: unknown }> } }
/**
 * How a slow body is sent: all but its last 1,000 bytes, chunked and never ended, or only its
 * headers with a Content-Length over any limit. Each must be answered, not held.
 */
type Stall = 'short' | 'chunked' | 'unsent';
interface Probe { service: ServiceName; method: string; path: string; headers?: Record<string, string>; body?: string | Uint8Array; stall?: Stall; label: string }
interface Outcome { status: number; ms: number; type: string; text: string; headers: Record<string, string> }

const ADMIN_TOKEN = 'fuzzAdmin-B7kWp3ZqM9xTv2LcR6Ny';
const DEADLINE_MS = 10_000;
/** BODY_TIMEOUT_SECONDS of the run: a stalled body is answered well within DEADLINE_MS. */
const BODY_TIMEOUT_SECONDS = 2;
/** Names whose upstream answers fail on purpose (the fake's fault player; hangs are tested elsewhere). */
const DELIBERATE_FAULT = /FailPlayer/i;

/** Mulberry32: small, seeded, good enough to pick cases. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const HOSTILE = [
  '../../etc/passwd', '..%2F..%2Fetc%2Fpasswd', '....//....//etc/passwd', '%2e%2e%2f%2e%2e%2f', '/etc/passwd',
  '\u0000', '%00', '\r\nX-Injected: 1', '%0d%0aX-Injected:%201', '<script>alert(1)</script>', '"><img src=x>',
  "' OR 1=1 --", '${jndi:ldap://127.0.0.1/x}', '{{7*7}}', 'a'.repeat(5000), '💥'.repeat(40), '%', '%zz', ' ', '',
  'SlimAlex', 'ClassicSteve', 'Ext玩家', 'FailPlayer', 'Nobody', '069a79f444e94726a5befca90e38aaf5',
  '069a79f4-44e9-4726-a5be-fca90e38aaf5', 'http://127.0.0.1:6379/', 'file:///etc/passwd', '-1', '1e309', 'NaN',
];
const NUMBERS = ['0', '-1', '1.5', '0x40', '1e2', ' 64', '064', 'NaN', 'Infinity', '-0', '9'.repeat(30), '', 'abc'];

function valuesFor(parameter: Parameter): string[] {
  const schema = parameter.schema ?? {};
  const values = new Set<string>();
  if (parameter.example !== undefined) values.add(String(parameter.example));
  if (schema.default !== undefined) values.add(String(schema.default));
  for (const option of schema.enum ?? []) values.add(String(option));
  if (schema.type === 'integer' || schema.type === 'number') {
    for (const edge of [schema.minimum, schema.maximum]) {
      if (edge === undefined) continue;
      values.add(String(edge));
      values.add(String(edge - 1));
      values.add(String(edge + 1));
    }
    for (const n of NUMBERS) values.add(n);
  }
  for (const h of HOSTILE) values.add(h);
  return [...values];
}

function loadOperations(doc: { paths: Record<string, Record<string, Operation> & { servers?: Array<{ 'x-service'?: ServiceName }> }> }) {
  const operations: Array<{ service: ServiceName; method: string; template: string; op: Operation }> = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    const service = item.servers?.[0]?.['x-service'] ?? 'skins';
    for (const method of ['get', 'post', 'put', 'delete']) {
      const op = item[method] as Operation | undefined;
      if (op) operations.push({ service, method: method.toUpperCase(), template, op });
    }
  }
  return operations;
}

function generate(operations: ReturnType<typeof loadOperations>, random: () => number, searchKey: string): Probe[] {
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)];
  const probes: Probe[] = [];
  const auth = (service: ServiceName): Record<string, string> => (service === 'search' && random() < 0.6 ? { 'x-api-key': searchKey } : {});
  for (const { service, method, template, op } of operations) {
    // Skip what ends this run's own session or would wait on the upstream's slow probe every time.
    if (template === '/v1/admin/keys/{id}' && method === 'DELETE') continue;
    const parameters = op.parameters ?? [];
    const bodyExample = op.requestBody?.content?.['application/json']?.example;
    for (let round = 0; round < 40; round += 1) {
      let url = template;
      const query = new URLSearchParams();
      for (const parameter of parameters) {
        const value = pick(valuesFor(parameter));
        if (parameter.in === 'path') {
          // Traversal and hostile values in every path parameter, encoded and (sometimes) raw.
          url = url.replace(`{${parameter.name}}`, random() < 0.8 ? encodeURIComponent(value) || 'x' : value.replace(/[\r\n\0 #?]/g, '') || 'x');
        } else if (parameter.in === 'query' && (parameter.required || random() < 0.6)) {
          query.append(parameter.name, value);
        }
      }
      const search = query.toString();
      const body = method === 'POST' && bodyExample !== undefined
        ? JSON.stringify(random() < 0.5 ? bodyExample : mutate(bodyExample, random, pick))
        : undefined;
      const headers: Record<string, string> = { ...auth(service), ...(body ? { 'content-type': 'application/json' } : {}) };
      if (template.startsWith('/v1/admin')) headers.authorization = `Bearer ${random() < 0.5 ? ADMIN_TOKEN : 'wrong'}`;
      probes.push({ service, method, path: `${url}${search ? `?${search}` : ''}`, headers, body, label: `${method} ${template}` });
    }
    // Families: duplicated parameters, odd methods, wrong content types, huge and deep JSON.
    const concrete = template.replace(/\{[^}]+\}/g, (m) => (m === '{size}' ? '64' : m === '{file}' ? 'missing.png' : 'SlimAlex'));
    const firstQuery = parameters.find((p) => p.in === 'query');
    if (firstQuery) probes.push({ service, method, path: `${concrete}?${firstQuery.name}=1&${firstQuery.name}=2`, headers: auth(service), label: `duplicated ${firstQuery.name} on ${template}` });
    for (const odd of ['TRACE', 'PROPFIND', 'PURGE', 'M-SEARCH', 'PATCH', 'PUT', 'DELETE']) probes.push({ service, method: odd, path: concrete, label: `${odd} ${template}` });
    if (method === 'POST') {
      for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data', 'application/json; charset=utf-16']) {
        probes.push({ service, method, path: concrete, headers: { ...auth(service), 'content-type': type }, body: '{"names":["SlimAlex"]}', label: `${type} to ${template}` });
      }
      probes.push({ service, method, path: concrete, headers: { ...auth(service), 'content-type': 'application/json' }, body: JSON.stringify({ names: ['x'.repeat(300_000)] }), label: `huge JSON to ${template}` });
      probes.push({ service, method, path: concrete, headers: { ...auth(service), 'content-type': 'application/json' }, body: `${'['.repeat(100_000)}${']'.repeat(100_000)}`, label: `deep JSON to ${template}` });
      probes.push({ service, method, path: concrete, headers: { ...auth(service), 'content-type': 'application/json' }, body: '{"names": ["SlimAlex"', label: `truncated JSON to ${template}` });
      probes.push({ service, method, path: concrete, headers: { ...auth(service), 'content-type': 'multipart/form-data; boundary=zz' }, body: '--zz\r\nContent-Disposition: form-data; name="file"; filename="../../x.png"\r\n\r\n\u0089PNG', label: `broken multipart to ${template}` });
      // Slow bodies, of the type the operation reads.
      const form = op.requestBody?.content?.['multipart/form-data'] !== undefined;
      const slow = form
        ? { type: 'multipart/form-data; boundary=zz', body: `--zz\r\nContent-Disposition: form-data; name="file"; filename="s.png"\r\n\r\n${'\u0089PNG'.padEnd(4000, 'x')}` }
        : { type: Object.keys(op.requestBody?.content ?? {})[0] ?? 'application/json', body: JSON.stringify(bodyExample ?? {}) };
      for (const stall of ['short', 'chunked', 'unsent'] as const) {
        probes.push({ service, method, path: concrete, headers: { ...auth(service), 'content-type': slow.type }, body: slow.body, stall, label: `slow body (${stall}) to ${template}` });
      }
    }
  }
  return probes;
}

/** Replaces one leaf of a JSON example with a hostile value of another type. */
function mutate(example: unknown, random: () => number, pick: <T>(list: T[]) => T): unknown {
  const copy = JSON.parse(JSON.stringify(example)) as Record<string, unknown>;
  const keys = Object.keys(copy);
  if (keys.length === 0) return pick(HOSTILE);
  const key = pick(keys);
  copy[key] = pick<unknown>([null, 42, -1, true, {}, [], [null], pick(HOSTILE), Array.from({ length: 150 }, (_, i) => `n${i}`), { __proto__: { polluted: 1 } }, [pick(HOSTILE)]]);
  if (random() < 0.2) copy[pick(HOSTILE).slice(0, 20)] = pick(HOSTILE);
  return copy;
}

/** The headers that make a probe's body slow. */
function stallHeaders(probe: Probe): Record<string, string> {
  const length = Buffer.byteLength(probe.body ?? '');
  if (probe.stall === 'short') return { 'content-length': String(length + 1000) };
  return probe.stall === 'unsent' ? { 'content-length': '100000000' } : { 'transfer-encoding': 'chunked' };
}

/** One request on the wire (fetch refuses odd methods and some bodies); a stalled one is left open until answered. */
function send(base: string, probe: Probe): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const headers = { ...probe.headers, ...(probe.stall ? stallHeaders(probe) : {}), 'x-forwarded-for': `198.51.100.${Math.floor(Math.random() * 250) + 1}` };
    const req = http.request(`${base}${probe.path}`, { method: probe.method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        resolve({
          status: res.statusCode ?? 0,
          ms: performance.now() - started,
          type: String(res.headers['content-type'] ?? ''),
          text: Buffer.concat(chunks).toString('utf8'),
          headers: Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, String(v)])),
        });
        // A stalled request is never finished by this side: answered, it is done.
        if (probe.stall) req.destroy();
      });
      res.on('error', reject);
    });
    req.setTimeout(DEADLINE_MS, () => req.destroy(new Error(`no answer in ${DEADLINE_MS} ms`)));
    req.on('error', reject);
    if (!probe.stall) req.end(probe.body);
    else if (probe.stall !== 'unsent') req.write(probe.body ?? '');
    else req.flushHeaders();
  });
}

function problemsOf(probe: Probe, outcome: Outcome): string[] {
  const problems: string[] = [];
  const deliberate = DELIBERATE_FAULT.test(decodeURIComponent(probe.path.replace(/%(?![0-9a-f]{2})/gi, '%25')) + String(probe.body ?? ''));
  if (outcome.status >= 500 && !(deliberate && [502, 504].includes(outcome.status))) problems.push(`status ${outcome.status}`);
  if (outcome.ms > DEADLINE_MS) problems.push(`slow: ${Math.round(outcome.ms)} ms`);
  if ('x-injected' in outcome.headers) problems.push('header injected');
  if (!outcome.type.startsWith('image/')) {
    for (const leak of ['    at ', ROOT, 'node_modules']) if (outcome.text.includes(leak)) problems.push(`body leaks "${leak.trim()}"`);
  }
  if (outcome.type.includes('json') && outcome.status >= 400) {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(outcome.text);
    } catch {
      return [...problems, 'error body is not JSON'];
    }
    if (probe.service === 'search') {
      const error = body.error as { code?: unknown } | undefined;
      if (body.status !== 'error' || typeof error?.code !== 'string') problems.push('search error envelope broken');
    } else if (typeof body.code !== 'string' || body.success !== false || typeof body.message !== 'string' || body.data !== null || typeof body.timestamp !== 'number') {
      problems.push('error envelope broken');
    }
  }
  return problems;
}

let fake: FakeUpstream;
let app: RunningApp;
test.before(async () => {
  fake = await startFakeUpstream();
  const root = mkdtempSync(path.join(os.tmpdir(), 'skinfarm-fuzz-'));
  app = await startApp({
    ...fake.env,
    RENDER_WORKERS: '1',
    TRUST_PROXY: '1',
    UPSTREAM_TIMEOUT_MS: '20000',
    MAX_EVENT_LOOP_LAG_MS: '0',
    BODY_TIMEOUT_SECONDS: String(BODY_TIMEOUT_SECONDS),
    ACCESS_LOG: 'false',
    OFFICIAL_NAMES_BUDGET: 'off', OFFICIAL_PROFILES_BUDGET: 'off', EXTERNAL_NAMES_BUDGET: 'off', EXTERNAL_PROFILES_BUDGET: 'off',
    // One client sends the whole run: its uncached lookups are not limited here (the batch budget
    // draining family starts a service of its own with the budgets on).
    UPSTREAM_CLIENT_LOOKUPS: '1000000',
    MEDIA_DIR: path.join(root, 'media'),
    DATA_DIR: path.join(root, 'data'),
    MEDIA_PASSWORD: 'fuzz password',
    SEARCH_ADMIN_TOKEN: ADMIN_TOKEN,
    // The CPU family sends a key's searches dozens at once, to weigh parsers, not the bound per key.
    SEARCH_KEY_CONCURRENCY: '1000',
    // The fake provider's demo client, so the login routes run their real code.
    OAUTH_CLIENT_ID: 'skinfarm-demo',
    OAUTH_CLIENT_SECRET: 'demo-secret',
    OAUTH_REDIRECT_URL: 'http://127.0.0.1:1/oauth/external/callback',
  });
});
test.after.always(async () => {
  await app?.stop();
  await fake?.close();
});

test('2,000+ generated and adversarial requests: no 5xx, no hang, no leak, every error an envelope', async (t) => {
  const doc = (await call(`${app.urls.skins}/openapi.json`)).json;
  const created = await call(`${app.urls.search}/v1/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'fuzz', plan: 'premium', duration: 'lifetime' }) });
  const searchKey = String(created.json?.data?.key ?? created.json?.key ?? 'no-key');
  const probes = generate(loadOperations(doc), rng(20261124), searchKey);
  t.true(probes.length >= 2000, `${probes.length} requests`);

  const failures: string[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < probes.length) {
      const probe = probes[next++];
      try {
        const outcome = await send(app.urls[probe.service], probe);
        statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
        const problems = problemsOf(probe, outcome);
        if (problems.length) failures.push(`${probe.label} ${probe.method} ${probe.path.slice(0, 160)}: ${problems.join(', ')} ${outcome.text.slice(0, 160)}`);
      } catch (error) {
        failures.push(`${probe.label} ${probe.path.slice(0, 160)}: ${(error as Error).message}`);
      }
    }
  }));
  t.log(`${probes.length} requests; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
  t.deepEqual(failures.slice(0, 60).map((f) => f.slice(0, 300)), [], `${failures.length} failures`);
  t.true(statuses.has(200) && statuses.has(400) && statuses.has(405), 'the run reached handlers, validation and routing');
  t.true(statuses.has(408) && statuses.has(413), 'slow bodies were cut at their deadline, unsent ones refused by their length');
  t.false(app.logs.some((l) => l.msg === 'unexpected error'), 'no request was an unexpected error');
  t.is(app.process.exitCode, null, 'the service is still up');
});

/** A PNG of `width` x `height`, opaque rows of one colour but for a few texels (small on the wire, large as texels). */
async function texturePng(width: number, height: number, seed: number): Promise<Buffer> {
  const data = Buffer.alloc(width * height * 4, 255);
  for (let i = 0; i < 64; i += 1) data.writeUInt32BE((seed * 2654435761 + i * 40503) >>> 0, ((i * 7919 + seed) % (width * height)) * 4);
  return sharp(data, { raw: { width, height, channels: 4 } }).png({ compressionLevel: 9 }).toBuffer();
}

// Serial, so before the big concurrent run: uploads whose textures are over what a page keeps
// (4 MiB), odd sizes and decompression bombs, sent together so they share batches. Each is drawn
// or refused (4xx envelope), none is a 5xx or fails another, and a plain render still draws after.
test.serial('oversized textures: HD skins and capes together, odd sizes and bombs are drawn or refused, never a 5xx, and fail no other upload', async (t) => {
  const sizes: Array<[skin: [number, number], cape: [number, number] | null]> = [
    [[1024, 1024], [1024, 512]], [[1024, 1024], [1024, 512]], [[1024, 1024], null], [[64, 64], [2048, 1024]], [[512, 512], [512, 256]],
    [[1000, 1000], null], [[64, 64], [100, 7]], [[4096, 4096], null], [[8192, 8192], null], [[64, 32], [1024, 512]], [[64, 64], null], [[128, 128], [64, 32]],
  ];
  const outcomes = await Promise.all(sizes.map(async ([skin, cape], i) => {
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(await texturePng(...skin, i))], { type: 'image/png' }), 'skin.png');
    if (cape) form.set('cape', new Blob([new Uint8Array(await texturePng(...cape, i + 100))], { type: 'image/png' }), 'cape.png');
    form.set('yaw', '160');
    const started = performance.now();
    const r = await call(`${app.urls.skins}/v1/render/64`, { method: 'POST', body: form, headers: { 'x-forwarded-for': `198.51.100.${200 + i}` } });
    return { label: `${skin.join('x')} + ${cape?.join('x') ?? 'no cape'}`, status: r.status, ms: performance.now() - started, text: r.text };
  }));
  t.log(outcomes.map((o) => `${o.label}: ${o.status} ${o.status === 200 ? "" : o.text.replace(/\s+/g, " ").slice(0, 300)}`).join("; "));
  t.deepEqual(outcomes.filter((o) => o.status >= 500 || o.ms > DEADLINE_MS).map((o) => `${o.label}: ${o.status} ${o.text.slice(0, 200)}`), []);
  const byLabel = (label: string) => outcomes.filter((o) => o.label === label).map((o) => o.status);
  t.deepEqual(byLabel('1024x1024 + 1024x512'), [200, 200], 'the HD skin and cape of the issue are drawn, together with the rest');
  t.deepEqual(byLabel('64x64 + no cape'), [200], 'a plain skin beside them is drawn');
  t.false(app.logs.some((l) => /not in the page/.test(String(l.err))), 'no batch lost a texture it was drawing');
  t.is((await call(`${app.urls.skins}/v1/render/Knight/64?yaw=77`)).status, 200, 'the farm draws after them');
});

/** Every value of one label in a Prometheus text exposition. */
function labelValues(text: string, label: string): Set<string> {
  return new Set([...text.matchAll(new RegExp(`[{,]${label}="((?:[^"\\\\]|\\\\.)*)"`, 'g'))].map((m) => m[1]));
}

// Serial (so before the big concurrent run): each reads counts the others would disturb.
test.serial('random paths on every service, then /metrics: every label value is a declared route or "other"', async (t) => {
  const declared = new Set(['other', ...SHELL_ROUTES.map((r) => r.path), ...ROUTE_TABLES.flatMap((table) => table.routes.map((r) => r.path))]);
  const random = rng(20261126);
  const word = () => Math.floor(random() * 36 ** 6).toString(36);
  const probes: Probe[] = [];
  for (const service of ['skins', 'media', 'search'] as const) {
    for (let i = 0; i < 400; i += 1) {
      const path = ['/v1', '', '/f', '/oauth', '/docs'][i % 5] + `/${word()}`.repeat(1 + (i % 3)) + (i % 4 ? '' : `?${word()}=${word()}`);
      probes.push({ service, method: i % 7 ? 'GET' : 'POST', path, label: 'random path' });
    }
  }
  const before = (await call(`${app.urls.skins}/metrics`)).text;
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < probes.length) {
      const probe = probes[next++];
      const outcome = await send(app.urls[probe.service], probe);
      t.true(outcome.status < 500, `${probe.path}: ${outcome.status}`);
    }
  }));
  const after = (await call(`${app.urls.skins}/metrics`)).text;
  t.deepEqual([...labelValues(after, 'route')].filter((value) => !declared.has(value)), []);
  t.true(after.split('\n').length - before.split('\n').length < 300, `${after.split('\n').length - before.split('\n').length} new lines for 1,200 random paths`);
});

test.serial('guessing from one IPv6 /64 that rotates its addresses ends in 429: media password and search keys', async (t) => {
  const network = '2001:db8:fa:11';
  const from = (i: number) => ({ 'x-forwarded-for': `${network}:${(i + 1).toString(16)}::${i + 7}` });
  const passwords = [];
  for (let i = 0; i < 12; i += 1) passwords.push((await call(`${app.urls.media}/?sim=secret`, { headers: { ...from(i), 'x-media-password': `guess-${i}` } })).status);
  t.deepEqual(passwords.slice(10), [429, 429], passwords.join());
  const keys = [];
  for (let i = 0; i < 35; i += 1) keys.push((await call(`${app.urls.search}/v1/search?query=192.0.2.1`, { headers: { ...from(i), 'x-api-key': `sk_guess_${i}` } })).status);
  t.true(keys.slice(-5).every((status) => status === 429), keys.join());
  t.true(keys.slice(0, 5).every((status) => status === 401), keys.join());
});

// Batch budget draining (issue #39): seeded batches (GET and POST, names and UUIDs, every source,
// hostile values mixed in) from one IPv6 /64 that rotates its addresses, against a skins service of
// its own with the production upstream budgets on. The drainer is answered 200, 503 upstream_busy
// or 429 rate_limited with Retry-After, and ends refused for itself; every other client's uncached
// lookups still succeed. Nothing is timed: refilling buckets only help the other clients.
test.serial('batch budget draining: one /64 draining with batches cannot fail other clients\' uncached lookups', async (t) => {
  const skins = await startSkins({
    TRUST_PROXY: 'true', ACCESS_LOG: 'false',
    OFFICIAL_NAMES_BUDGET: '600/600:60', OFFICIAL_PROFILES_BUDGET: '600/600:60', EXTERNAL_NAMES_BUDGET: '1200/600:60', EXTERNAL_PROFILES_BUDGET: '600/600:60',
  });
  t.teardown(() => skins.stop());
  const random = rng(20261129);
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)];
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join('');
  const network = '2001:db8:39:1';
  const failures: string[] = [];
  const statuses: number[] = [];
  for (let i = 0; i < 10; i += 1) {
    const uuids = Array.from({ length: 60 + Math.floor(random() * 40) }, () => (random() < 0.1 ? pick(HOSTILE) : hex(32)));
    const names = Array.from({ length: Math.floor(random() * (100 - uuids.length)) }, () => (random() < 0.2 ? pick(HOSTILE) : `Dr${hex(10)}`));
    const source = pick(['auto', 'official', 'external']);
    const headers = { 'x-forwarded-for': `${network}:${(i + 1).toString(16)}::${i + 3}` };
    const r = random() < 0.5
      ? await call(`${skins.base}/v1/batch`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ uuids, names, source }) })
      // A query string has room for fewer (the URL's limit): 60 short ones.
      : await call(`${skins.base}/v1/batch?${new URLSearchParams({ uuids: uuids.filter((u) => u.length < 64 && !u.includes(',')).slice(0, 60).join(','), source })}`, { headers });
    statuses.push(r.status);
    const code = r.json?.code;
    if (r.status === 429 && (code !== 'rate_limited' || !(Number(r.headers.get('retry-after')) >= 1))) failures.push(`batch ${i}: 429 ${code} retry-after ${r.headers.get('retry-after')}`);
    else if (r.status === 503 && code !== 'upstream_busy') failures.push(`batch ${i}: 503 ${code}`);
    else if (![200, 400, 429, 503].includes(r.status)) failures.push(`batch ${i}: ${r.status} ${r.text.slice(0, 200)}`);
  }
  t.deepEqual(failures, []);
  t.is(statuses.at(-1), 429, `the drainer ends refused for itself: ${statuses.join()}`);
  for (const [i, name] of ['Robot', 'Knight', 'Wizard', 'Dinnerbone'].entries()) {
    const other = await skins.get(`/v1/player/${name}`, { headers: { 'x-forwarded-for': `203.0.113.${i + 10}` } });
    t.is(other.status, 200, `${name}: ${other.text.slice(0, 200)}`);
  }
});

/** CPU the service process has used (user + system), in clock ticks. */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

test.serial('adversarial search strings cost about what plain ones do (CPU of the service, same run)', async (t) => {
  const created = await call(`${app.urls.search}/v1/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'cpu', plan: 'premium', duration: 'lifetime' }) });
  const key = created.json.key as string;
  // Runs of one unit between digits (the shape that made the phone parser super-linear), at
  // several lengths, and long runs ending in a character no pattern expects.
  const hostile = [' ', '\t', '1 ', '.', '@', '-', '1-', 'a.', 'ext ', 'x', '1 1', '+1 ', '((', 'é']
    .flatMap((unit) => [...[250, 510, 800].map((n) => `1${unit.repeat(Math.ceil(n / unit.length))}1`), `${unit.repeat(2000 / unit.length)}!`]);
  const plain = ['192.0.2.1', 'ada.example@example.org', '+12025550143', 'example.org', '00:1a:2b:3c:4d:5e', 'Ada Lovelace'];
  const measure = async (queries: string[]) => {
    const before = cpuTicks(app.process.pid!);
    for (let round = 0; round < 4; round += 1) {
      await Promise.all(queries.map((query, i) => send(app.urls.search, { service: 'search', method: 'POST', path: '/v1/search', label: 'cpu', headers: { 'x-api-key': key, 'content-type': 'application/json', 'x-forwarded-for': `198.18.${round}.${i + 1}` }, body: JSON.stringify({ query }) })));
    }
    return cpuTicks(app.process.pid!) - before;
  };
  const plainTicks = await measure(Array.from({ length: hostile.length }, (_, i) => plain[i % plain.length]));
  const hostileTicks = await measure(hostile);
  t.log(`${hostile.length * 4} requests each: plain ${plainTicks} ticks, adversarial ${hostileTicks} ticks`);
  // A super-linear parser costs tens of ms each here (a 512-character run of spaces cost 111 ms).
  t.true(hostileTicks <= 2 * plainTicks + 20, `${hostileTicks} ticks against ${plainTicks}`);
});

/** Keys written in camelCase, outside data passed through from an upstream verbatim. */
function camelKeys(value: unknown, at = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v) => camelKeys(v, `${at}[]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, v]) => {
    // The decoded textures property and the Yggdrasil metadata are the upstream's own JSON.
    if (key === 'decoded' || key === 'metadata') return [];
    return [...(/[A-Z]/.test(key) ? [`${at}.${key}`] : []), ...camelKeys(v, `${at}.${key}`)];
  });
}

test('every JSON key the services write is snake_case', async (t) => {
  const answers = await Promise.all([
    call(`${app.urls.skins}/v1/status`), call(`${app.urls.skins}/v1/player/SlimAlex`), call(`${app.urls.skins}/v1/sources`),
    call(`${app.urls.skins}/v1/batch?names=SlimAlex&type=profile`), call(`${app.urls.skins}/v1/external/meta`), call(`${app.urls.skins}/v1/me`),
    call(`${app.urls.media}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: 'fuzz password' }) }),
    call(`${app.urls.media}/?img=scenery&format=json`), call(`${app.urls.media}/health`), call(`${app.urls.search}/health`), call(`${app.urls.search}/v1/types`),
  ]);
  for (const answer of answers) t.is(answer.status, 200);
  t.truthy(answers[0].json.data.render.pages_alive, 'the render farm is in the status');
  t.deepEqual(answers.flatMap((a) => camelKeys(a.json)), []);
});
