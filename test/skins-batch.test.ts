// Batch lookups: bulk chunking per upstream, missing names, UUIDs, full profiles, limits.
import test from 'ava';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let h: SkinsHarness;
test.before(async () => {
  h = await startSkins();
});
test.after.always(async () => {
  await h?.stop();
});

const post = (body: unknown, query = '') => h.get(`/v1/batch${query}`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

test('GET batch resolves names, lists the unknown ones in missing', async (t) => {
  const r = await h.get('/v1/batch?names=ClassicSteve,SlimAlex,NobodyAtAll');
  t.is(r.status, 200);
  const d = r.json.data;
  t.is(d.count, 2);
  t.is(d.source, 'auto');
  t.deepEqual(d.missing, ['NobodyAtAll']);
  t.deepEqual(d.found.map((f: { query: string }) => f.query).sort(), ['ClassicSteve', 'SlimAlex']);
  for (const f of d.found) {
    t.deepEqual(Object.keys(f).sort(), ['dashed', 'id', 'name', 'query', 'source']);
    t.is(f.source, 'official');
  }
});

test.serial('names are sent in chunks of 10 to official and 5 to external', async (t) => {
  h.fake.resetCalls();
  const official = Array.from({ length: 23 }, (_, i) => `gen_${1000 + i}`);
  const external = Array.from({ length: 7 }, (_, i) => `ext_${2000 + i}`);
  const r = await post({ names: [...official, ...external] });
  t.is(r.status, 200);
  t.is(r.json.data.count, 30);
  t.deepEqual(r.json.data.missing, []);
  const calls = h.fake.calls();
  t.is(calls['official.bulk'], 3, '23 official-valid names + 7 -> ceil(30/10)');
  t.is(calls['external.bulk'], 2, '7 names unknown to official -> ceil(7/5)');
  t.is(r.json.data.found.filter((f: { source: string }) => f.source === 'external').length, 7);
});

test.serial('batch results feed the name cache', async (t) => {
  await post({ names: ['gen_77', 'gen_78'] });
  h.fake.resetCalls();
  const r = await h.get('/v1/uuid/gen_77');
  t.true(r.json.data.cached);
  t.is(h.fake.calls()['official.name'] ?? 0, 0);
});

test('POST batch with uuids and type=profile returns full records', async (t) => {
  const { json } = await h.get('/v1/uuid/SlimAlex');
  const r = await post({ uuids: [json.data.dashed, '00000000000000000000000000000009', 'not-a-uuid'], names: ['ClassicSteve'], type: 'profile' });
  t.is(r.status, 200);
  const d = r.json.data;
  t.is(d.count, 2);
  t.deepEqual(d.missing.sort(), ['00000000000000000000000000000009', 'not-a-uuid']);
  const slim = d.found.find((f: { name: string }) => f.name === 'SlimAlex');
  t.is(slim.query, json.data.dashed);
  t.is(slim.model, 'slim');
  t.is(typeof slim.textures.raw_value, 'string');
  t.is(slim.profile.id, json.data.id);
});

test('batch source parameter limits the sources', async (t) => {
  const r = await post({ names: ['ExternalOnly', 'ClassicSteve'], source: 'external' });
  t.is(r.json.data.source, 'external');
  t.deepEqual(r.json.data.missing, ['ClassicSteve']);
});

test('more than 100 entries is too_many_names', async (t) => {
  const names = Array.from({ length: 101 }, (_, i) => `gen_${i}`);
  const r = await post({ names });
  t.is(r.status, 400);
  t.is(r.json.code, 'too_many_names');
  const viaGet = await h.get(`/v1/batch?names=${names.join(',')}`);
  t.is(viaGet.json.code, 'too_many_names');
});

test('bad batch input gets the right codes', async (t) => {
  t.is((await post({})).json.code, 'missing_param');
  t.is((await h.get('/v1/batch')).json.code, 'missing_param');
  t.is((await post('{"names": [1, 2]}')).json.code, 'bad_request');
  t.is((await post('{broken')).json.code, 'bad_request');
  t.is((await post([1])).json.code, 'bad_request');
  t.is((await post({ names: ['a'], source: 'nowhere' })).json.code, 'bad_source');
});
