// Error replies as a client and a CDN see them: no success header survives an error, client
// mistakes (odd methods, broken forms) are 4xx envelopes, never a 500.
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startFakeUpstream, type FakeUpstream } from '../scripts/fake-upstream/server.ts';
import { call, startApp, type RunningApp } from './helpers/service.ts';

let fake: FakeUpstream;
let app: RunningApp;
test.before(async () => {
  fake = await startFakeUpstream();
  // No render farm: 3D images answer 503 after the image handler has set its success headers.
  app = await startApp({ ...fake.env, MEDIA_DIR: path.join(mkdtempSync(path.join(os.tmpdir(), 'skinfarm-errors-')), 'media') });
});
test.after.always(async () => {
  await app?.stop();
  await fake?.close();
});

const skins = (p: string, init?: RequestInit) => call(`${app.urls.skins}${p}`, init);

function assertErrorHeaders(t: import('ava').ExecutionContext, r: Awaited<ReturnType<typeof call>>, label: string) {
  t.is(r.headers.get('etag'), null, `${label}: no ETag`);
  t.is(r.headers.get('x-cache'), null, `${label}: no X-Cache`);
  t.is(r.headers.get('content-disposition'), null, `${label}: no Content-Disposition`);
  t.regex(r.headers.get('content-type') ?? '', /json/, `${label}: a JSON envelope`);
  t.is(r.headers.get('access-control-allow-origin'), '*', `${label}: CORS kept`);
  t.truthy(r.headers.get('x-request-id'), `${label}: request id kept`);
  t.false(r.json.success, label);
}

test('an image error carries no success headers: 5xx and 429 are no-store, a 404 a short max-age', async (t) => {
  const outage = await skins('/v1/render/SlimAlex/64');
  t.is(outage.status, 503);
  assertErrorHeaders(t, outage, 'render without farm');
  t.is(outage.headers.get('cache-control'), 'no-store');
  t.truthy(outage.headers.get('x-ratelimit-limit'), 'rate-limit headers kept');

  const broken = await skins('/v1/avatar/NotPng/64?download=1');
  t.is(broken.status, 502);
  assertErrorHeaders(t, broken, 'texture that is not a PNG');
  t.is(broken.headers.get('cache-control'), 'no-store');

  const missing = await skins('/v1/cape/ClassicSteve?download=1');
  t.is(missing.status, 404);
  assertErrorHeaders(t, missing, 'no cape');
  t.is(missing.headers.get('cache-control'), 'public, max-age=60');
});

/** fetch() refuses TRACE and friends; a client on the wire does not. */
function requestWith(method: string, url: string): Promise<{ status: number; allow: string; code: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        // The skins and media envelope has `code`; the search API nests it under `error`.
        const body = JSON.parse(Buffer.concat(chunks).toString() || '{}');
        resolve({ status: res.statusCode ?? 0, allow: String(res.headers.allow ?? ''), code: body.error?.code ?? body.code });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

test('an unknown method on a known path is 405 with Allow on every service; elsewhere 404; never 500', async (t) => {
  const known = { skins: '/v1/player/SlimAlex', media: '/', search: '/v1/types' };
  for (const method of ['TRACE', 'PROPFIND', 'PURGE', 'M-SEARCH', 'DELETE', 'PUT', 'PATCH']) {
    for (const [service, route] of Object.entries(known)) {
      const r = await requestWith(method, `${app.urls[service as keyof typeof known]}${route}`);
      t.is(r.status, 405, `${method} ${service}${route}`);
      t.regex(r.allow, /\bGET\b/, `${method} ${service}: Allow`);
      t.false(r.allow.split(', ').includes(method), `${method} is not allowed`);
      t.is(r.code, 'method_not_allowed', `${method} ${service}`);
    }
    const nowhere = await requestWith(method, `${app.urls.skins}/no/such/route`);
    t.is(nowhere.status, 404, `${method} on an unknown path`);
    t.is(nowhere.code, 'route_not_found');
  }
  const batch = await requestWith('DELETE', `${app.urls.skins}/v1/batch`);
  t.regex(batch.allow, /GET.*POST|POST.*GET/);
  t.false(app.logs.some((l) => l.msg === 'unexpected error'), 'no request was an unexpected error');
});

function multipart(parts: Array<{ name: string; filename?: string; body: Buffer | string }>, boundary = 'skinfarm-test-boundary', end = true): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.filename ? 'Content-Type: image/png\r\n' : ''}\r\n`), Buffer.from(part.body), Buffer.from('\r\n'));
  }
  if (end) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

test('a malformed upload form is 400 and an oversized field 413, never a 500', async (t) => {
  const skin = (await skins('/v1/skin/ClassicSteve')).bytes;
  t.is(skin.subarray(1, 4).toString(), 'PNG');
  const post = (body: Buffer, type = 'multipart/form-data; boundary=skinfarm-test-boundary') => skins('/v1/render/64', { method: 'POST', body: new Uint8Array(body), headers: { "content-type": type } });
  const cases: Array<[string, Buffer, number, string?]> = [
    ['wrong field name', multipart([{ name: 'skin', filename: 's.png', body: skin }]), 400],
    ['two files', multipart([{ name: 'file', filename: 'a.png', body: skin }, { name: 'file', filename: 'b.png', body: skin }]), 400],
    ['more than 20 fields', multipart([{ name: 'file', filename: 's.png', body: skin }, ...Array.from({ length: 25 }, (_, i) => ({ name: `f${i}`, body: '1' }))]), 400],
    ['a 1 MB field', multipart([{ name: 'file', filename: 's.png', body: skin }, { name: 'yaw', body: 'a'.repeat(1024 * 1024) }]), 413],
    ['a truncated body', multipart([{ name: 'file', filename: 's.png', body: skin }], undefined, false).subarray(0, 200), 400],
    ['no boundary', multipart([{ name: 'file', filename: 's.png', body: skin }]), 400, 'multipart/form-data'],
    ['a file that is not a PNG', multipart([{ name: 'file', filename: 's.png', body: 'GIF89a' }]), 400],
  ];
  for (const [label, body, status, type] of cases) {
    const r = await post(body, type);
    t.is(r.status, status, label);
    t.false(r.json.success, label);
    t.false(r.text.includes('    at '), `${label}: no stack`);
  }
  t.false(app.logs.some((l) => l.msg === 'unexpected error'), 'no upload was an unexpected error');
});

/** Writes raw bytes to a service port and reads the whole reply. */
function rawExchange(base: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
}

test('a request Node refuses before Koa still gets the envelope and the common headers', async (t) => {
  for (const bytes of ['BREW /v1/status HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /v1/status HTTP/1.1\r\nHost: x\r\nX-Bad\u0001Header: 1\r\n\r\n', `GET /v1/status HTTP/1.1\r\nHost: x\r\nX-Long: ${'a'.repeat(20_000)}\r\n\r\n`]) {
    const reply = await rawExchange(app.urls.skins, bytes);
    const [head, body] = reply.split('\r\n\r\n');
    t.regex(head, /^HTTP\/1\.1 4(00|31) /, bytes.slice(0, 30));
    t.regex(head, /X-Powered-By: Skinfarm-skins\//);
    t.regex(head, /X-Request-Id: \S+/);
    t.regex(head, /Access-Control-Allow-Origin: \*/);
    t.like(JSON.parse(body), { code: 'bad_request', success: false, data: null });
  }
  const search = await rawExchange(app.urls.search, 'BREW / HTTP/1.1\r\n\r\n');
  t.like(JSON.parse(search.split('\r\n\r\n')[1]), { status: 'error', error: { code: 'bad_request' } });
});

test('a body refused unread ends its connection, so the next request on a kept-alive socket is answered', async (t) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const send = (method: string, url: string, body?: string) => new Promise<number>((resolve, reject) => {
    const req = http.request(url, { method, agent, headers: body ? { 'content-type': 'application/json' } : {} }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.setTimeout(5000, () => req.destroy(new Error('the next request on the connection hung')));
    req.on('error', reject);
    req.end(body);
  });
  const huge = JSON.stringify({ names: ['x'.repeat(400_000)] });
  t.is(await send('POST', `${app.urls.skins}/v1/batch`, huge), 413);
  t.is(await send('GET', `${app.urls.skins}/v1/status`), 200);
  t.is(await send('POST', `${app.urls.media}/login`, huge), 413);
  t.is(await send('GET', `${app.urls.media}/health`), 200);
});

test('error messages: one language per field; skins adds message_en, media and search answer in English', async (t) => {
  const han = /\p{Script=Han}/u;
  const cases = [
    await skins('/v1/player/bad!name'),
    await skins('/v1/batch', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }),
    await skins('/v1/batch', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"names": [' }),
    await skins('/v1/avatar/SlimAlex?helm=2'),
  ];
  for (const r of cases) {
    t.true(han.test(r.json.message), `Chinese message: ${r.json.message}`);
    t.is(typeof r.json.message_en, 'string');
    t.false(han.test(r.json.message_en), `English message_en: ${r.json.message_en}`);
  }
  t.is(cases[1].json.message_en, 'A required parameter is missing: names or uuids');
  const media = await call(`${app.urls.media}/?img=no-such-category`);
  t.is(media.status, 404);
  t.false(han.test(media.json.message), media.json.message);
  const badRange = await call(`${app.urls.media}/?img=scenery&format=nope`);
  t.false(han.test(badRange.json.message), badRange.json.message);
  const search = await call(`${app.urls.search}/v1/search?query=x`);
  t.false(han.test(search.json.error.message), search.json.error.message);
});

test.serial('a 5xx that repeats is logged once as a state, then counted, not once a request', async (t) => {
  const logged = app.logs.length;
  const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => skins(`/v1/render/ClassicSteve/${64 + i}`)));
  t.deepEqual([...new Set(answers.map((r) => r.status))], [503]);
  const lines = app.logs.slice(logged).filter((l) => l.msg === 'request failed' && l.code === 'overloaded');
  t.is(lines.length, 1);
  t.like(lines[0], { level: 'warn', code: 'overloaded' });
});
