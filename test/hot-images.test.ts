// Hot cached images are answered in front of the Koa stack. Every observable behaviour must be
// the Koa route's: the same request with the name percent-encoded (the fast path leaves it to
// Koa) is the reference for headers and bytes; rate limits count once per request on either path.
// Serial: metric deltas and rate-limit counts would see the other tests' requests.
import http from 'node:http';
import test from 'ava';
import { parseImageUrl } from '../api/skins/hot-images.ts';
import { redisUnavailableReason, startRedis } from './helpers/redis.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';
import { startInOneWindow } from './helpers/rate-window.ts';

let h: SkinsHarness;
test.before(async () => {
  h = await startSkins({ TRUST_PROXY: 'true', ACCESS_LOG: 'true', LOG_LEVEL: 'info' });
  // Renders and profiles cached: every later request of these images is hot.
  t0(await h.get('/v1/avatar/gen_7/128', { headers: { 'x-forwarded-for': '203.0.113.250' } }));
  t0(await h.get('/v1/avatar/gen_7/64?helm=false', { headers: { 'x-forwarded-for': '203.0.113.250' } }));
});
test.after.always(() => h?.stop());

function t0(r: { status: number }): void {
  if (r.status !== 200) throw new Error(`warming failed: ${r.status}`);
}

const from = (ip: string, more: Record<string, string> = {}) => ({ headers: { 'x-forwarded-for': ip, ...more } });
// Per request, or the connection's (fetch closes after a HEAD): not the reply's.
const VOLATILE = new Set(['x-request-id', 'x-response-time', 'x-ratelimit-remaining', 'date', 'connection', 'keep-alive']);
const stable = (headers: Headers) => Object.fromEntries([...headers].filter(([name]) => !VOLATILE.has(name)));

async function metric(line: RegExp): Promise<number> {
  const text = (await h.get('/metrics')).text;
  const found = text.split('\n').find((l) => line.test(l));
  return found ? Number(found.split(' ').at(-1)) : 0;
}

test.serial('a hot image has the headers and bytes of the Koa reply', async (t) => {
  for (const path of ['/v1/avatar/gen_7/128', '/v1/avatar/gen_7/64?helm=false']) {
    const hot = await h.get(path, from('203.0.113.1'));
    const koa = await h.get(path.replace('gen_7', 'gen%5F7'), from('203.0.113.1'));
    t.is(hot.status, 200);
    t.is(hot.headers.get('x-cache'), 'HIT');
    t.is(hot.headers.get('content-type'), 'image/png');
    t.deepEqual(stable(hot.headers), stable(koa.headers), path);
    t.true(hot.bytes.equals(koa.bytes));
    t.regex(hot.headers.get('x-request-id')!, /^[0-9a-f-]{36}$/);
    t.regex(hot.headers.get('x-response-time')!, /^\d+\.\d\dms$/);
    // Scripts of other origins may read what an image reply carries, and only that.
    t.deepEqual(hot.headers.get('access-control-expose-headers')!.split(', ').sort(), ['ETag', 'X-Cache', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Request-Id', 'X-Response-Time']);
  }
});

test.serial('an incoming request id is kept, a malformed one replaced', async (t) => {
  t.is((await h.get('/v1/avatar/gen_7/128', from('203.0.113.2', { 'x-request-id': 'abc.DEF-1' }))).headers.get('x-request-id'), 'abc.DEF-1');
  t.not((await h.get('/v1/avatar/gen_7/128', from('203.0.113.2', { 'x-request-id': 'no spaces' }))).headers.get('x-request-id'), 'no spaces');
});

test.serial('the rate limit counts each request once, per client address, on both paths', async (t) => {
  // Windows are aligned to the clock: a run that straddles two is tried again with new addresses.
  for (let round = 0; ; round += 1) {
    const windows = new Set<string | null>();
    const attempt = await t.try(async (tt) => {
      const [ip, other] = [`203.0.${113 + round}.3`, `203.0.${113 + round}.4`];
      const remaining = async (path: string, client: string) => {
        const r = await h.get(path, from(client));
        windows.add(r.headers.get('x-ratelimit-reset'));
        return Number(r.headers.get('x-ratelimit-remaining'));
      };
      tt.is(await remaining('/v1/avatar/gen_7/128', ip), 239);
      tt.is(await remaining('/v1/avatar/gen%5F7/128', ip), 238);
      tt.is(await remaining('/v1/avatar/gen_7/128', ip), 237);
      tt.is(await remaining('/v1/avatar/gen_7/128', other), 239);
      for (let i = 0; i < 237; i += 1) await remaining('/v1/avatar/gen_7/128', ip);
      const limitedBefore = await metric(/^skinfarm_rate_limited_total\{group="image"\}/);
      const limited = await h.get('/v1/avatar/gen_7/128', from(ip));
      windows.add(limited.headers.get('x-ratelimit-reset'));
      tt.is(limited.status, 429);
      tt.is(limited.json.code, 'rate_limited');
      tt.is(limited.headers.get('x-ratelimit-remaining'), '0');
      tt.truthy(limited.headers.get('retry-after'));
      tt.is(limited.headers.get('access-control-allow-origin'), '*');
      tt.regex(limited.headers.get('access-control-expose-headers')!, /Retry-After/);
      tt.is(limited.headers.get('etag'), null);
      // Counted by the fast path and answered by Koa: one count, not two.
      tt.is(await metric(/^skinfarm_rate_limited_total\{group="image"\}/), limitedBefore + 1);
    });
    if (attempt.passed || windows.size === 1 || round === 2) {
      attempt.commit();
      return;
    }
    attempt.discard();
  }
});

test.serial('If-None-Match answers 304 with the headers of the Koa 304', async (t) => {
  const { headers } = await h.get('/v1/avatar/gen_7/128', from('203.0.113.5'));
  const etag = headers.get('etag')!;
  for (const tag of [etag, `W/${etag}`, `"other", ${etag}`]) {
    const hot = await h.get('/v1/avatar/gen_7/128', from('203.0.113.5', { 'if-none-match': tag }));
    const koa = await h.get('/v1/avatar/gen%5F7/128', from('203.0.113.5', { 'if-none-match': tag }));
    t.is(hot.status, 304, tag);
    t.is(hot.bytes.length, 0);
    t.deepEqual(stable(hot.headers), stable(koa.headers));
  }
  t.is((await h.get('/v1/avatar/gen_7/128', from('203.0.113.5', { 'if-none-match': '"other"' }))).status, 200);
});

test.serial('HEAD has the GET headers and no body', async (t) => {
  const get = await h.get('/v1/avatar/gen_7/128', from('203.0.113.6'));
  const head = await h.get('/v1/avatar/gen_7/128', { method: 'HEAD', ...from('203.0.113.6') });
  const koa = await h.get('/v1/avatar/gen%5F7/128', { method: 'HEAD', ...from('203.0.113.6') });
  t.is(head.status, 200);
  t.is(head.bytes.length, 0);
  t.is(head.headers.get('content-length'), String(get.bytes.length));
  t.deepEqual(stable(head.headers), stable(get.headers));
  t.deepEqual(stable(head.headers), stable(koa.headers));
});

test.serial('each hot request is counted in the metrics and written to the access log', async (t) => {
  const count = () => metric(/^skinfarm_http_requests_total\{service="skins",route="\/v1\/avatar\/\{name\}\/\{size\}",status="200"\}/);
  const before = await count();
  const r = await h.get('/v1/avatar/gen_7/128?helm=true', from('203.0.113.7', { 'x-request-id': 'hot-log-1' }));
  t.is(r.status, 200);
  t.is(await count(), before + 1);
  const line = await h.app.waitForLog((e) => e.msg === 'request' && e.req === 'hot-log-1');
  t.like(line, { method: 'GET', path: '/v1/avatar/gen_7/128', status: 200, ip: '203.0.113.7', service: 'skins' });
  t.is(typeof line.ms, 'number');
});

test.serial('requests the fast path does not answer are Koa\'s: bad parameters, preflights, other methods', async (t) => {
  const bad = await h.get('/v1/avatar/gen_7/128?size=64', from('203.0.113.8'));
  t.is(bad.status, 400);
  t.is(bad.json.code, 'bad_request');
  t.is((await h.get('/v1/avatar/gen_7/064', from('203.0.113.8'))).status, 400);
  t.is((await h.get('/v1/avatar/gen_7/128?helm=false&helm=true', from('203.0.113.8'))).status, 400);
  const preflight = await h.get('/v1/avatar/gen_7/128', { method: 'OPTIONS', headers: { origin: 'https://example.com', 'access-control-request-method': 'GET' } });
  t.is(preflight.status, 204);
  const post = await h.get('/v1/avatar/gen_7/128', { method: 'POST', ...from('203.0.113.8') });
  t.is(post.status, 405);
  // A cold size of a hot player goes through Koa and renders.
  const cold = await h.get('/v1/avatar/gen_7/100', from('203.0.113.8'));
  t.is(cold.status, 200);
  t.is(cold.headers.get('x-cache'), 'MISS');
  t.is((await h.get('/v1/avatar/gen_7/100', from('203.0.113.8'))).headers.get('x-cache'), 'HIT');
});

/** A GET sent as written: fetch would drop a "#" and all after it. */
function rawGet(path: string, headers: Record<string, string>): Promise<{ status: number; etag: string | undefined; cache: string | undefined; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(h.base);
    http.get({ hostname, port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, etag: res.headers.etag, cache: res.headers['x-cache'] as string | undefined, bytes: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

test.serial('a hot image URL is answered exactly as Koa answers it: the route\'s parameters, Koa\'s query parser', async (t) => {
  // Past 1000 pairs node:querystring stops reading; Koa's URLSearchParams reads them all.
  const many = Array.from({ length: 1000 }, (_, i) => `k${i}=`).join('&');
  for (const path of [
    // The path's name also given in the query: Koa's 400.
    '/v1/avatar/gen_7/128?name=x',
    '/v1/avatar/gen_7/128?name=gen_7',
    '/v1/avatar/gen_7/128?name=',
    // Parameters no route declares are ignored alike.
    '/v1/avatar/gen_7/128?code=abc&state=1',
    `/v1/avatar/gen_7/128?${many}&size=64`,
    '/v1/avatar/gen_7/64?he%6Cm=false',
  ]) {
    const hot = await h.get(path, from('203.0.113.10'));
    const koa = await h.get(path.replace('gen_7', 'gen%5F7'), from('203.0.113.10'));
    t.is(hot.status, koa.status, path.slice(0, 60));
    t.deepEqual(stable(hot.headers), stable(koa.headers), path.slice(0, 60));
    if (hot.headers.get('content-type')?.includes('json')) {
      // Error envelopes carry the second they were made in: two requests may straddle a second.
      const [a, b] = [hot.bytes, koa.bytes].map((bytes) => JSON.parse(bytes.toString()));
      t.true(Math.abs(a.timestamp - b.timestamp) <= 1, path.slice(0, 60));
      t.deepEqual({ ...a, timestamp: 0 }, { ...b, timestamp: 0 }, path.slice(0, 60));
    } else {
      t.true(hot.bytes.equals(koa.bytes), path.slice(0, 60));
    }
  }
  t.is((await h.get('/v1/avatar/gen_7/128?name=x', from('203.0.113.10'))).json.code, 'bad_request');
  // A "#" in the request line: Koa's parser ends the query there, so helm=false is not read.
  const hot = await rawGet('/v1/avatar/gen_7/64?x=1#&helm=false', { 'x-forwarded-for': '203.0.113.10' });
  const koa = await rawGet('/v1/avatar/gen%5F7/64?x=1#&helm=false', { 'x-forwarded-for': '203.0.113.10' });
  t.is(hot.status, 200);
  t.is(hot.etag, koa.etag);
  t.true(hot.bytes.equals(koa.bytes));
  t.not(hot.etag, (await h.get('/v1/avatar/gen_7/64?helm=false', from('203.0.113.10'))).headers.get('etag'));
});

test('the URL memo keeps image URLs only: a login callback\'s code is never stored', (t) => {
  const memo = new Map<string, unknown>() as Parameters<typeof parseImageUrl>[1];
  for (const url of ['/auth/callback?code=secret-code&state=s', '/v1/player/gen_7?code=secret-code', '/v1/avatar/gen%5F7/128', '/v1/avatar/gen_7/128/x', '/v1/avatar/gen_7/128?a=1#code=secret']) {
    t.is(parseImageUrl(url, memo), null, url);
  }
  t.is(memo.size, 0);
  t.like(parseImageUrl('/v1/avatar/gen_7/64?helm=false', memo), { path: '/v1/avatar/gen_7/64', route: '/v1/avatar/{name}/{size}', name: 'gen_7', options: { size: 64, outer: false } });
  t.is(parseImageUrl('/v1/avatar/gen_7/128?name=x', memo), null);
  t.deepEqual([...memo.keys()], ['/v1/avatar/gen_7/64?helm=false', '/v1/avatar/gen_7/128?name=x']);
});

const noRedis = redisUnavailableReason();
(noRedis ? test.skip : test.serial)('with Redis the fast path counts into the shared window: one count per request across instances', async (t) => {
  const redis = await startRedis();
  const [a, b] = [await startSkins({ TRUST_PROXY: 'true', REDIS_URL: redis.url }), await startSkins({ TRUST_PROXY: 'true', REDIS_URL: redis.url })];
  try {
    const remaining = async (on: SkinsHarness, path: string) => Number((await on.get(path, from('203.0.113.9'))).headers.get('x-ratelimit-remaining'));
    await startInOneWindow(5_000);
    t.is(await remaining(a, '/v1/avatar/gen_8/128'), 239);
    t.is(await remaining(a, '/v1/avatar/gen_8/128'), 238);
    t.is(await remaining(a, '/v1/avatar/gen%5F8/128'), 237);
    t.is(await remaining(b, '/v1/avatar/gen_8/128'), 236);
    t.is(await remaining(b, '/v1/avatar/gen_8/128'), 235);
  } finally {
    await a.stop();
    await b.stop();
    await redis.stop();
  }
});
