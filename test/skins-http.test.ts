// The HTTP layer as a client sees it: headers, CORS, pretty, error codes, status, announcements.
import test from 'ava';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let h: SkinsHarness;
test.before(async () => {
  h = await startSkins();
});
test.after.always(async () => {
  await h?.stop();
});

test('every response carries X-Response-Time, X-Powered-By, X-Request-Id and CORS, errors and 404s too', async (t) => {
  for (const path of ['/v1/status', '/v1/player/bad!name', '/no/such/route', '/v1/player/NobodyAtAll']) {
    const r = await h.get(path);
    t.regex(r.headers.get('x-response-time') ?? '', /^\d+(\.\d+)?ms$/, path);
    t.truthy(r.headers.get('x-powered-by'), path);
    t.truthy(r.headers.get('x-request-id'), path);
    t.is(r.headers.get('access-control-allow-origin'), '*', path);
    t.false(r.text.includes('    at '), `no stack trace in ${path}`);
  }
  const unknown = await h.get('/no/such/route');
  t.is(unknown.status, 404);
  t.is(unknown.json.code, 'route_not_found');
});

test('a sane incoming X-Request-Id is kept and logged', async (t) => {
  const r = await h.get('/v1/status', { headers: { 'x-request-id': 'trace-abc.123' } });
  t.is(r.headers.get('x-request-id'), 'trace-abc.123');
  const line = await h.app.waitForLog((l) => l.req === 'trace-abc.123' && l.msg === 'request');
  t.is(line.path, '/v1/status');
  const hostile = await h.get('/v1/status', { headers: { 'x-request-id': 'a b<script>' } });
  t.not(hostile.headers.get('x-request-id'), 'a b<script>');
});

test('CORS preflight is answered', async (t) => {
  const r = await h.get('/v1/batch', { method: 'OPTIONS', headers: { origin: 'https://example.org', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
  t.is(r.status, 204);
  t.is(r.headers.get('access-control-allow-origin'), '*');
  t.regex(r.headers.get('access-control-allow-methods') ?? '', /GET.*POST.*OPTIONS/);
  t.regex(r.headers.get('access-control-allow-headers') ?? '', /content-type/i);
});

test('a preflight of a URL with a repeated parameter is answered; the request itself gets the 400', async (t) => {
  const headers = { origin: 'https://example.org', 'access-control-request-method': 'GET' };
  const preflight = await h.get('/v1/sources?pretty=0&pretty=1', { method: 'OPTIONS', headers });
  t.is(preflight.status, 204);
  t.is(preflight.headers.get('access-control-allow-origin'), '*');
  const request = await h.get('/v1/sources?pretty=0&pretty=1', { headers: { origin: 'https://example.org' } });
  t.is(request.status, 400);
  t.is(request.headers.get('access-control-allow-origin'), '*', 'the browser can read the 400');
});

test('pretty: indented by default, compact with 0 or false', async (t) => {
  t.true((await h.get('/v1/sources')).text.includes('\n  "code"'));
  for (const value of ['0', 'false']) {
    const r = await h.get(`/v1/sources?pretty=${value}`);
    t.false(r.text.includes('\n'), value);
    t.is(r.json.code, 0);
  }
  t.true((await h.get('/v1/sources?pretty=1')).text.includes('\n'));
});

test('validation errors use the spec codes', async (t) => {
  const cases: Array<[string, number, string]> = [
    ['/v1/player/bad!name', 400, 'invalid_name'],
    ['/v1/player/a_name_that_is_far_too_long_for_anyone_at_all', 400, 'invalid_name'],
    ['/v1/player/ClassicSteve?source=elsewhere', 400, 'bad_source'],
    ['/v1/profile/1234', 400, 'invalid_uuid'],
    ['/v1/player/0123456789abcdef-0123456789abcdef0', 400, 'invalid_uuid'],
    ['/v1/decode', 400, 'missing_param'],
    ['/v1/decode?value=%%%not-base64', 400, 'bad_request'],
    ['/v1/decode?value=bm90IGpzb24=', 400, 'bad_request'],
    ['/v1/skin/ClassicSteve?download=yes', 400, 'bad_request'],
  ];
  for (const [path, status, code] of cases) {
    const r = await h.get(path);
    t.is(r.status, status, path);
    t.like(r.json, { code, success: false, data: null }, path);
    t.is(typeof r.json.message, 'string');
    t.true(Number.isInteger(r.json.timestamp));
  }
  // The official rule only binds source=official; the external service allows longer names.
  t.is((await h.get('/v1/player/name-with-dash?source=official')).json.code, 'invalid_name');
  t.is((await h.get('/v1/player/name-with-dash')).json.code, 'not_found');
});

test('a hung upstream is upstream_timeout, a failing one upstream_error', async (t) => {
  // Its own service with a short timeout: only the hung player waits on it.
  const short = await startSkins({ UPSTREAM_TIMEOUT_MS: '1000' });
  t.teardown(() => short.stop());
  const hang = await short.get('/v1/player/HangPlayer?source=official');
  t.is(hang.status, 504);
  t.is(hang.json.code, 'upstream_timeout');
  const fail = await short.get('/v1/player/FailPlayer');
  t.is(fail.status, 502);
  t.is(fail.json.code, 'upstream_error');
});

test('decode returns the decoded textures and the raw text', async (t) => {
  const { json } = await h.get('/v1/player/SlimAlex');
  const value = json.data.textures.raw_value;
  const r = await h.get(`/v1/decode?value=${encodeURIComponent(value)}`);
  t.is(r.status, 200);
  t.is(r.json.data.raw, Buffer.from(value, 'base64').toString('utf8'));
  t.deepEqual(r.json.data.decoded, JSON.parse(r.json.data.raw));
  t.is(r.json.data.decoded.textures.SKIN.metadata.model, 'slim');
});

test.serial('status reads local state only and reports sources and cache', async (t) => {
  await h.get('/v1/player/ClassicSteve');
  const before = JSON.stringify(h.fake.calls());
  const r = await h.get('/v1/status');
  t.is(JSON.stringify(h.fake.calls()), before, 'status asks no upstream');
  t.is(r.json.data.version, '1.0.0');
  t.true(Number.isInteger(r.json.data.uptime_ms));
  t.like(r.json.data.cache, { enabled: true });
  t.true(r.json.data.cache.entries > 0);
  t.true(r.json.data.cache.misses > 0);
  t.like(r.json.data.sources.official, { enabled: true });
  t.is(typeof r.json.data.sources.external.ok, 'boolean');
  t.is(r.headers.get('x-ratelimit-limit'), null, 'status is not rate limited');
});

test('sources lists the three upstreams', async (t) => {
  const r = await h.get('/v1/sources');
  t.deepEqual(r.json.data.sources.map((s: { id: string }) => s.id), ['official', 'external', 'bedrock']);
  t.true(r.json.data.sources.every((s: { enabled: boolean; label: string }) => s.enabled && s.label));
});

test.serial('announcements are cleaned, cached, and fresh=1 skips the cache', async (t) => {
  const r = await h.get('/v1/external/announcements');
  t.is(r.status, 200);
  const d = r.json.data;
  t.is(d.source, 'external');
  t.is(d.count, d.announcements.length);
  t.true(d.count > 0);
  for (const a of d.announcements) {
    t.false(/<script|onerror|onclick|javascript:|<iframe/i.test(a.content), a.content);
    t.true(Number.isInteger(a.timestamp));
    t.is(typeof a.time_text, 'string');
    t.is(typeof a.expand, 'boolean');
  }
  t.true(d.announcements.some((a: { content: string }) => /<(p|li|strong)>/.test(a.content)), 'allowed tags survive');
  const calls = () => h.fake.calls()['external.announcements'] ?? 0;
  const before = calls();
  const notice = await h.get('/v1/external/notice');
  t.deepEqual(notice.json.data.announcements, d.announcements);
  t.is(calls(), before, 'second read from cache');
  await h.get('/v1/external/announcements?fresh=1');
  t.is(calls(), before + 1);
});

test('external metadata', async (t) => {
  for (const path of ['/v1/external/meta', '/v1/external/yggdrasil']) {
    const r = await h.get(path);
    t.is(r.status, 200, path);
    const d = r.json.data;
    for (const field of ['api_root', 'auth_url', 'session_url', 'homepage', 'register']) t.regex(d[field], /^https?:\/\//, field);
    t.is(typeof d.metadata.meta.serverName, 'string');
    t.is(typeof d.metadata.meta.implementationName, 'string');
  }
});

test('/metrics speaks the Prometheus text format with request, cache and upstream series', async (t) => {
  await h.get('/v1/player/ClassicSteve');
  await h.get('/v1/player/ClassicSteve');
  const r = await h.get('/metrics');
  t.is(r.status, 200);
  t.regex(r.headers.get('content-type') ?? '', /text\/plain/);
  t.regex(r.text, /skinfarm_http_requests_total\{service="skins",route="\/v1\/player\/\{name\}",status="200"\} \d+/);
  t.regex(r.text, /skinfarm_http_request_duration_seconds_bucket\{le="0.005",service="skins",route="\/v1\/player\/\{name\}"\}/);
  t.regex(r.text, /skinfarm_cache_lookups_total\{namespace="profile",result="hit"\} [1-9]/);
  t.regex(r.text, /skinfarm_upstream_calls_total\{source="official",outcome="ok"\} [1-9]/);
  t.regex(r.text, /skinfarm_process_resident_memory_bytes \d+/);
});
