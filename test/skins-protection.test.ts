// Upstream protection: outgoing budgets, merged lookups, back-off after a 429.
import test from 'ava';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

const officialCalls = (h: SkinsHarness) => {
  const c = h.fake.calls();
  return (c['official.name'] ?? 0) + (c['official.legacyName'] ?? 0) + (c['official.bulk'] ?? 0) + (c['official.profile'] ?? 0);
};

test('a burst of 1,000 unknown names costs at most the configured budget of upstream calls', async (t) => {
  const h = await startSkins({ TRUST_PROXY: '1', OFFICIAL_NAMES_BUDGET: '25/600:25', EXTERNAL_ENABLED: 'false' });
  t.teardown(() => h.stop());
  const codes = new Map<string, number>();
  // 10 clients x 100 lookups, so the per-IP limit of the API is not what stops them.
  for (let round = 0; round < 10; round += 1) {
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) =>
      h.get(`/v1/uuid/nobody_${round}_${i}`, { headers: { 'x-forwarded-for': `192.0.2.${round + 1}` } })));
    for (const r of results) codes.set(r.json.code, (codes.get(r.json.code) ?? 0) + 1);
  }
  t.true(officialCalls(h) <= 25, `upstream calls: ${officialCalls(h)}`);
  t.true((codes.get('not_found') ?? 0) > 25, 'merged bulk calls answer many names each');
  t.is((codes.get('not_found') ?? 0) + (codes.get('upstream_busy') ?? 0), 1000, JSON.stringify([...codes]));
  const busy = await h.get('/v1/uuid/one_more_nobody');
  t.is(busy.status, 503);
  t.is(busy.json.code, 'upstream_busy');
  t.true(Number(busy.headers.get('retry-after')) >= 1);
  const status = await h.get('/v1/status');
  t.is(status.json.data.upstream_budgets['official.names'].remaining, 0);
  t.true(status.json.data.sources.official.throttled > 0);
});

test('a 429 from upstream opens the circuit: no more calls, answers from cache', async (t) => {
  // The stale lookup waits for its call (not UPSTREAM_STALE_WAIT_MS), so the 429 has been met when it answers.
  const h = await startSkins({ CACHE_TTL_PROFILE: '0', UPSTREAM_STALE_WAIT_MS: '20000' });
  t.teardown(() => h.stop());
  t.is((await h.get('/v1/player/ClassicSteve')).status, 200);
  h.fake.control({ officialBudget: 0 });
  h.fake.resetCalls();

  const stale = await h.get('/v1/player/ClassicSteve');
  t.is(stale.status, 200, 'the cached profile is answered');
  t.is(stale.headers.get('x-cache'), 'STALE');
  const sent = officialCalls(h);
  t.is(sent, 1, 'one call met the 429');

  const status = await h.get('/v1/status');
  t.false(status.json.data.sources.official.ok);
  t.is(status.json.data.sources.official.circuit.state, 'open');
  t.true(status.json.data.sources.official.circuit.retry_in_s > 0);

  const uncached = await h.get('/v1/player/SlimAlex?source=official');
  t.is(uncached.status, 503);
  t.is(uncached.json.code, 'upstream_busy');
  t.true(Number(uncached.headers.get('retry-after')) > 0);
  const external = await h.get('/v1/player/ExternalOnly');
  t.is(external.status, 200, 'source=auto still reaches the external source');
  t.is(external.json.data.source, 'external');
  t.is(officialCalls(h), sent, 'nothing was sent to the official upstream while backing off');
});

test('concurrent single lookups of different names share bulk calls', async (t) => {
  // A wide window: on a loaded two-core machine 20 requests sent at once reached the service
  // more than 20 ms apart, and a name after a quiet window goes alone (10 calls once).
  const h = await startSkins({ NAME_BATCH_WINDOW_MS: '500' });
  t.teardown(() => h.stop());
  h.fake.resetCalls();
  const names = Array.from({ length: 20 }, (_, i) => `gen_${500 + i}`);
  const results = await Promise.all(names.map((n) => h.get(`/v1/uuid/${n}?source=official`)));
  t.true(results.every((r) => r.status === 200));
  t.deepEqual(results.map((r) => r.json.data.name), names);
  const c = h.fake.calls();
  // Without merging this is 20 calls.
  const calls = (c['official.bulk'] ?? 0) + (c['official.name'] ?? 0);
  t.true(calls <= 8, JSON.stringify(c));
  t.true((c['official.bulk'] ?? 0) >= 1, JSON.stringify(c));
});

const postBatch = (h: SkinsHarness, names: string[], ip: string) => h.get('/v1/batch', {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
  body: JSON.stringify({ names }),
});

test('batches throttled by our own outgoing budget answer 503 upstream_busy with Retry-After, never 502', async (t) => {
  const h = await startSkins({ TRUST_PROXY: '1', OFFICIAL_NAMES_BUDGET: '6/600:6', EXTERNAL_ENABLED: 'false' });
  t.teardown(() => h.stop());
  const statuses: number[] = [];
  for (let round = 0; round < 12; round += 1) {
    const r = await postBatch(h, Array.from({ length: 100 }, (_, i) => `nobody_${round}_${i}`), `192.0.2.${round + 1}`);
    statuses.push(r.status);
    if (r.status === 503) {
      t.is(r.json.code, 'upstream_busy');
      t.true(Number(r.headers.get('retry-after')) >= 1);
    } else {
      t.is(r.status, 200, JSON.stringify(r.json));
    }
  }
  t.true(statuses.includes(503), statuses.join(','));
  t.true(officialCalls(h) <= 6, `upstream calls: ${officialCalls(h)}`);
});

test('the batch path shares the single lookups\' error memo and stale answers', async (t) => {
  const h = await startSkins({ CACHE_TTL_UUID: '0', CACHE_TTL_PROFILE: '0', EXTERNAL_ENABLED: 'false' });
  t.teardown(() => h.stop());
  t.is((await postBatch(h, ['ClassicSteve'], '192.0.2.1')).json.data.count, 1);
  h.fake.control({ officialBudget: 0 });
  const stale = await postBatch(h, ['ClassicSteve'], '192.0.2.1');
  t.is(stale.status, 200);
  t.is(stale.json.data.found[0]?.name, 'ClassicSteve', 'the stale entry answers while the upstream refuses');

  h.fake.control({ officialBudget: 1_000_000 });
  const first = await postBatch(h, ['FailPlayer'], '192.0.2.2');
  t.true(first.status >= 500, JSON.stringify(first.json));
  h.fake.resetCalls();
  const again = await postBatch(h, ['FailPlayer'], '192.0.2.2');
  t.is(again.status, first.status);
  t.is(officialCalls(h), 0, 'a failure just seen is not asked again');
});
