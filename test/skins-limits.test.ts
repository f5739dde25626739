// Per-IP rate limits with their headers, stale-on-error and negative caching.
import test from 'ava';
import { stillCost } from '../api/skins/image-cost.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';
import { startInOneWindow } from './helpers/rate-window.ts';

// A work budget of 120 small avatars drawn (images not cached cost by pixels and format).
const WORK_BUDGET = 120 * stillCost({ kind: 'avatar', size: 64 }, 'png');

let h: SkinsHarness;
test.before(async () => {
  // Profiles are stale as soon as stored, so every read tries the upstream first.
  h = await startSkins({ TRUST_PROXY: '1', CACHE_TTL_PROFILE: '0', IMAGE_WORK_BUDGET: String(WORK_BUDGET) });
});
test.after.always(async () => {
  await h?.stop();
});

const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });

test('the normal group allows 120 requests a window, then 429 with Retry-After', async (t) => {
  const ip = '198.51.100.10';
  await startInOneWindow();
  const first = await h.get('/v1/decode?value=e30=', from(ip));
  t.is(first.headers.get('x-ratelimit-limit'), '120');
  const remaining = Number(first.headers.get('x-ratelimit-remaining'));
  const reset = Number(first.headers.get('x-ratelimit-reset'));
  t.true(reset * 1000 > Date.now() && reset * 1000 <= Date.now() + 61_000);
  const rest = await Promise.all(Array.from({ length: remaining }, () => h.get('/v1/decode?value=e30=', from(ip))));
  const limitedEarly = rest.filter((r) => r.status === 429).length;
  const limited = await h.get('/v1/decode?value=e30=', from(ip));
  t.is(Number(limited.headers.get('x-ratelimit-reset')), reset, 'one window');
  t.is(limitedEarly, 0);
  t.is(limited.status, 429);
  t.is(limited.json.code, 'rate_limited');
  t.is(limited.headers.get('x-ratelimit-remaining'), '0');
  const retryAfter = Number(limited.headers.get('retry-after'));
  t.true(retryAfter >= 1 && retryAfter <= 60);
  const other = await h.get('/v1/decode?value=e30=', from('198.51.100.11'));
  t.is(other.status, 200, 'another client has its own counter');
  const status = await h.get('/v1/status', from(ip));
  t.is(status.status, 200, '/v1/status is exempt');
  t.is((await h.get('/v1/sources', from(ip))).status, 200, '/v1/sources is exempt');
});

test('groups have their own quotas', async (t) => {
  const ip = '198.51.100.20';
  t.is((await h.get('/v1/batch?names=ClassicSteve', from(ip))).headers.get('x-ratelimit-limit'), '300');
  t.is((await h.get('/v1/skin/ClassicSteve', from(ip))).headers.get('x-ratelimit-limit'), '240');
  t.is((await h.get('/v1/player/ClassicSteve', from(ip))).headers.get('x-ratelimit-limit'), '120');
});

test('the last good profile is served when the upstream fails', async (t) => {
  const first = await h.get('/v1/player/SlimAlex');
  t.is(first.status, 200);
  h.fake.control({ down: { official: true } });
  t.teardown(() => h.fake.control({ down: { official: false } }));
  const stale = await h.get('/v1/player/SlimAlex');
  t.is(stale.status, 200);
  t.is(stale.headers.get('x-cache'), 'STALE');
  t.is(stale.json.data.uuid, first.json.data.uuid);
  const uncached = await h.get('/v1/player/HdPlayer?source=official');
  t.is(uncached.status, 502, 'nothing stale to serve');
  t.is(uncached.json.code, 'upstream_error');
  const status = await h.get('/v1/status');
  t.true(status.json.data.sources.official.errors > 0);
});

test.serial('"no such player" answers are cached', async (t) => {
  h.fake.resetCalls();
  t.is((await h.get('/v1/uuid/GhostPlayer?source=official')).status, 404);
  t.is((await h.get('/v1/uuid/GhostPlayer?source=official')).status, 404);
  t.is(h.fake.calls()['official.name'], 1);
});

// Serial: the stale-on-error test takes the upstream down while it runs.
test.serial('images drawn rather than found cached cost a work budget of their own: here 120 small avatars a window per client', async (t) => {
  const ip = '198.51.100.40';
  await startInOneWindow(30_000);
  const drawn = (i: number, who = ip) => h.get(`/v1/avatar/gen_3/64?bg=${(0x100000 + i).toString(16)}`, from(who));
  const first = await drawn(0);
  t.is(first.status, 200);
  t.is(first.headers.get('x-cache'), 'MISS');
  for (let i = 1; i < 120; i += 10) {
    const batch = await Promise.all(Array.from({ length: Math.min(10, 120 - i) }, (_, j) => drawn(i + j)));
    t.deepEqual(batch.map((r) => r.status), batch.map(() => 200));
  }
  const limited = await drawn(120);
  t.is(limited.status, 429);
  t.is(limited.json.code, 'rate_limited');
  t.is(limited.headers.get('x-ratelimit-limit'), String(WORK_BUDGET));
  t.is(limited.headers.get('x-ratelimit-remaining'), '0');
  t.true(Number(limited.headers.get('retry-after')) >= 1);
  const cached = await drawn(7);
  t.is(cached.status, 200, 'a cached image is still served to the same client');
  t.is(cached.headers.get('x-cache'), 'HIT');
  t.is((await drawn(121, '198.51.100.41')).status, 200, 'another client has its own budget');
});
