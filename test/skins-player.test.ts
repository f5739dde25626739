// Player, UUID and profile endpoints against the fake upstream: every field, sources, caching.
import test from 'ava';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let h: SkinsHarness;
test.before(async () => {
  h = await startSkins();
});
test.after.always(async () => {
  await h?.stop();
});

const decodeValue = (value: string) => JSON.parse(Buffer.from(value, 'base64').toString('utf8'));

test('player record has every field of the spec for a classic official player', async (t) => {
  const r = await h.get('/v1/player/classicsteve');
  t.is(r.status, 200);
  t.like(r.json, { code: 0, success: true, message: 'ok' });
  t.true(Number.isInteger(r.json.timestamp));
  const p = r.json.data;
  t.is(p.name, 'ClassicSteve', 'real capitalisation from the upstream');
  t.regex(p.uuid, /^[0-9a-f]{32}$/);
  t.is(p.uuid_dashed, `${p.uuid.slice(0, 8)}-${p.uuid.slice(8, 12)}-${p.uuid.slice(12, 16)}-${p.uuid.slice(16, 20)}-${p.uuid.slice(20)}`);
  t.is(p.source, 'official');
  t.is(p.model, 'classic');
  t.false(p.slim);
  t.is(typeof p.model_label, 'string');
  t.true(p.has_skin);
  t.false(p.has_cape);
  t.is(p.cape_url, null);
  t.is(p.cape_hash, null);
  t.is(p.skin_hash, new URL(p.skin_url).pathname.split('/').pop());
  t.true(p.textures_signed);
  t.true(Number.isInteger(p.textures_updated_at));
  t.is(String(p.textures_updated_at).length, 13);
  t.regex(p.queried_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
  t.deepEqual(Object.keys(p.profile).sort(), ['id', 'name', 'properties']);
  t.is(p.profile.properties[0].name, 'textures');
  t.is(p.textures.raw_value, p.profile.properties[0].value);
  t.is(typeof p.textures.raw_signature, 'string');
  t.deepEqual(p.textures.decoded, decodeValue(p.textures.raw_value));
  t.is(p.textures.decoded.textures.SKIN.url, p.skin_url);
  t.is(p.textures.decoded.profileName, 'ClassicSteve');
});

test('image addresses are full URLs on PUBLIC_URL pointing at the image endpoints', async (t) => {
  const { json } = await h.get('/v1/player/ClassicSteve');
  const { images, uuid } = json.data;
  t.is(images.avatar.url_64, `${h.base.replace('127.0.0.1', 'localhost')}/v1/avatar/${uuid}/64`);
  t.true(images.avatar.sizeable.includes('{size}'));
  t.true(images.head.sizeable.endsWith(`/v1/head/${uuid}/{size}`));
  t.true(images.body.url.includes(`/v1/body/${uuid}`));
  t.true(images.render.sizeable.endsWith(`/v1/render/${uuid}/{size}`));
  t.is(typeof images.render.options, 'object');
  t.true(images.cube.url.includes(`/v1/cube/${uuid}`));
  t.true(images.skin.download.endsWith(`/v1/skin/${uuid}?download=1`));
  t.true(images.cape.url.endsWith(`/v1/cape/${uuid}`));
  t.true(images.isometric.endsWith(`/v1/render/${uuid}`));
});

test('slim player with a cape', async (t) => {
  const { json } = await h.get('/v1/player/SlimAlex');
  t.is(json.data.model, 'slim');
  t.true(json.data.slim);
  t.true(json.data.has_cape);
  t.is(json.data.cape_hash, new URL(json.data.cape_url).pathname.split('/').pop());
});

test('a player without a skin gets the default skin of the modern client', async (t) => {
  const { json } = await h.get('/v1/player/NoSkin');
  t.false(json.data.has_skin);
  t.is(json.data.skin_url, null);
  t.is(typeof json.data.default_skin, 'string');
  t.is(json.data.slim, json.data.model === 'slim');
});

test('source=auto falls through to the external source when official does not know the name', async (t) => {
  const r = await h.get('/v1/player/ExternalOnly');
  t.is(r.status, 200);
  t.is(r.json.data.source, 'external');
  t.true(r.json.data.images.avatar.url_64.endsWith('?source=external'));
  const unicode = await h.get(`/v1/player/${encodeURIComponent('Ext玩家')}`);
  t.is(unicode.status, 200);
  t.is(unicode.json.data.name, 'Ext玩家');
  t.is(unicode.json.data.source, 'external');
});

test('source selects one upstream; a player in both answers per source', async (t) => {
  const official = await h.get('/v1/player/BothSources?source=official');
  const external = await h.get('/v1/player/BothSources?source=external');
  t.is(official.json.data.source, 'official');
  t.is(external.json.data.source, 'external');
  t.not(official.json.data.skin_hash, external.json.data.skin_hash);
  const onlyOfficial = await h.get('/v1/player/ExternalOnly?source=official');
  t.is(onlyOfficial.status, 404);
  t.is(onlyOfficial.json.code, 'not_found');
});

test('lookup by UUID, dashed UUID and /v1/u', async (t) => {
  const { json } = await h.get('/v1/uuid/SlimAlex');
  const { id, dashed } = json.data;
  for (const path of [`/v1/player/${id}`, `/v1/player/${dashed}`, `/v1/u/${id}`, `/v1/player/${id.toUpperCase()}`]) {
    const r = await h.get(path);
    t.is(r.status, 200, path);
    t.is(r.json.data.name, 'SlimAlex', path);
  }
});

test.serial('/v1/uuid reports cached on the second lookup', async (t) => {
  const first = await h.get('/v1/uuid/HdPlayer');
  t.is(first.status, 200);
  t.like(first.json.data, { name: 'HdPlayer', source: 'official', cached: false });
  t.regex(first.json.data.dashed, /^[0-9a-f]{8}-[0-9a-f]{4}-/);
  const before = h.fake.calls()['official.name'] ?? 0;
  const second = await h.get('/v1/uuid/hdplayer');
  t.true(second.json.data.cached);
  t.is(second.headers.get('x-cache'), 'HIT');
  t.is(h.fake.calls()['official.name'] ?? 0, before, 'no upstream call for a cached name');
});

test('/v1/profile returns the profile record', async (t) => {
  const { json } = await h.get('/v1/uuid/CapeWearer');
  const r = await h.get(`/v1/profile/${json.data.dashed}`);
  t.is(r.status, 200);
  const p = r.json.data;
  t.deepEqual(Object.keys(p).sort(), ['cape_url', 'model', 'name', 'profile', 'skin_url', 'source', 'textures', 'uuid', 'uuid_dashed']);
  t.is(p.uuid, json.data.id);
  t.is(typeof p.cape_url, 'string');
  t.is(p.textures.decoded.textures.CAPE.url, p.cape_url);
});

test('unknown players are not_found from every source', async (t) => {
  const byName = await h.get('/v1/player/NobodyHere');
  t.is(byName.status, 404);
  t.like(byName.json, { code: 'not_found', success: false, data: null });
  const byUuid = await h.get('/v1/profile/00000000000000000000000000000001');
  t.is(byUuid.status, 404);
  t.is(byUuid.json.code, 'not_found');
});

test.serial('30 parallel lookups of one uncached player make one name call and one profile call', async (t) => {
  h.fake.resetCalls();
  const results = await Promise.all(Array.from({ length: 30 }, () => h.get('/v1/player/LegacyOld')));
  t.true(results.every((r) => r.status === 200));
  const calls = h.fake.calls();
  // Other tests run at the same time, so the one name lookup may ride in a merged bulk call.
  const legacy = h.fake.requests().filter((r) => r.route === 'official.name' || r.route === 'official.bulk')
    .filter((r) => /legacyold/i.test(`${r.path} ${r.body ?? ''}`));
  t.is(legacy.length, 1);
  t.is(h.fake.requests().filter((r) => r.route === 'official.profile').length, calls['official.profile']);
  t.is(h.fake.requests().filter((r) => r.route === 'official.profile' && r.path.includes(results[0].json.data.uuid)).length, 1);
});
