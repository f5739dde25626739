// Textures by id (issue #41): the hex hash that ends an official skin address stands in for a
// player on every image route and /v1/skin, drawn as a classic player wearing it is, fetched from
// OFFICIAL_TEXTURE_URL only (held to the allow-list), and asks no player source.
import test from 'ava';
import { startFakeUpstream, type FakeUpstream } from '../scripts/fake-upstream/server.ts';
import { evilBase, TRAP_HASHES } from '../scripts/fake-upstream/textures.ts';
import type { ApiError } from '../shared/errors.ts';
import { parseSubjectQuery } from '../api/skins/validate.ts';
import { decodePng } from './helpers/png.ts';
import { startInOneWindow } from './helpers/rate-window.ts';
import { call, startApp, type RunningApp } from './helpers/service.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let h: SkinsHarness;
/** ClassicSteve's skin hash: a classic player of the fake without a cape. */
let id: string;
/** SlimAlex's skin hash: a slim player of the fake, who wears a cape. */
let slimId: string;
test.before(async () => {
  h = await startSkins({ RENDER_WORKERS: '1' });
  // Learnt from the fake's own answers, so the service's lookup is not warmed.
  const skinHash = async (name: string) => {
    const uuid = h.fake.players.byName('official', name)!.uuid;
    const profile = await (await fetch(`${h.fake.env.OFFICIAL_SESSION_URL}/session/minecraft/profile/${uuid}`)).json() as { properties: { value: string }[] };
    return (JSON.parse(Buffer.from(profile.properties[0].value, 'base64').toString()).textures.SKIN.url as string).split('/').pop()!;
  };
  id = await skinHash('ClassicSteve');
  slimId = await skinHash('SlimAlex');
  h.fake.resetCalls();
});
test.after.always(async () => {
  await h?.stop();
});

/** Fake calls other than texture downloads: a lookup by texture id makes none. */
const lookupCalls = (fake: FakeUpstream) => Object.entries(fake.calls()).filter(([route, n]) => route !== 'official.texture' && n > 0);

test.serial('a texture id draws the same image as the player who wears it, and asks no player source', async (t) => {
  t.regex(id, /^[0-9a-f]{64}$/);
  const paths = ['render/{}/64', 'avatar/{}/64', 'head/{}/64', 'body/{}/64', 'cube/{}/64', 'bust/{}/64', 'turntable/{}/32?frames=8'];
  const byId = [];
  for (const path of paths) {
    const r = await h.get(`/v1/${path.replace('{}', id)}`);
    t.is(r.status, 200, path);
    byId.push(r);
  }
  t.deepEqual(lookupCalls(h.fake), [], 'no name or profile call');
  t.is(h.fake.calls()['official.texture'], 1, 'one download, by its hash');
  for (const [i, path] of paths.entries()) {
    const player = await h.get(`/v1/${path.replace('{}', 'ClassicSteve')}`);
    t.is(player.status, 200, path);
    t.true(player.bytes.equals(byId[i].bytes), `${path}: the same bytes`);
    t.is(player.headers.get('etag'), byId[i].headers.get('etag'), `${path}: the same render key`);
    t.is(player.headers.get('x-cache'), 'HIT', `${path}: drawn once, for the id`);
  }
  const render = await decodePng(byId[0].bytes);
  t.true(render.data.some((v, i) => i % 4 === 3 && v === 255), 'a figure, not an empty picture');
  t.is(h.fake.calls()['official.texture'], 1, 'the player\'s texture is the one cached by hash');
});

test.serial('an id is drawn classic unless model says otherwise, and without a cape', async (t) => {
  const classic = await h.get(`/v1/render/${slimId}/64`);
  const slim = await h.get(`/v1/render/${slimId}/64?model=slim`);
  const player = await h.get('/v1/render/SlimAlex/64?equip=none');
  t.is(slim.status, 200);
  t.true(slim.bytes.equals(player.bytes), 'model=slim: the slim player without its cape');
  t.false(classic.bytes.equals(player.bytes), 'by default the classic model');
});

test.serial('the id is case-insensitive, canonicalised for the cache and the ETag', async (t) => {
  const lower = await h.get(`/v1/render/${id}/64`);
  const upper = await h.get(`/v1/render/${id.toUpperCase()}/64`);
  t.is(upper.status, 200);
  t.is(upper.headers.get('etag'), lower.headers.get('etag'));
  t.is(upper.headers.get('x-cache'), 'HIT');
  t.true(upper.bytes.equals(lower.bytes));
  const skin = await h.get(`/v1/skin/${id}`);
  const skinUpper = await h.get(`/v1/skin/${id.toUpperCase()}?download=1`);
  t.is(skinUpper.headers.get('etag'), skin.headers.get('etag'));
  t.regex(skinUpper.headers.get('content-disposition') ?? '', new RegExp(`filename="${id}-skin.png"`));
});

test.serial('/v1/skin/{id} is the player\'s skin file; an id has no cape', async (t) => {
  const byId = await h.get(`/v1/skin/${id}`);
  const player = await h.get('/v1/skin/ClassicSteve');
  t.is(byId.status, 200);
  t.is(byId.headers.get('content-type'), 'image/png');
  t.true(byId.bytes.equals(player.bytes));
  const cape = await h.get(`/v1/cape/${id}`);
  t.is(cape.status, 404);
  t.is(cape.json.code, 'no_texture');
});

test.serial('the processed skin, the cape picture and groups take an id as a player', async (t) => {
  const processed = await h.get(`/v1/skin/${id}?processed=1`);
  t.is(processed.status, 200);
  t.true(processed.bytes.equals((await h.get('/v1/skin/ClassicSteve?processed=1')).bytes));
  const group = await h.get(`/v1/group/64?names=${id},ClassicSteve`);
  t.is(group.status, 200);
  t.is(group.headers.get('etag'), (await h.get('/v1/group/64?names=ClassicSteve,ClassicSteve')).headers.get('etag'));
  t.is((await h.get(`/v1/cape/${id}/64`)).json.code, 'no_texture');
  // An id the host lacks is left out of a group and named, as an unknown name is.
  const missing = 'ab'.repeat(32);
  const partial = await h.get(`/v1/group/64?names=${missing},ClassicSteve`);
  t.is(partial.status, 200, partial.text.slice(0, 200));
  t.is(partial.headers.get('x-group-missing'), missing);
  t.is(partial.headers.get('etag'), (await h.get('/v1/group/64?names=ClassicSteve')).headers.get('etag'));
});

test('an id whose file the texture host lacks is no_texture, and 60 to 64 digits are ids', async (t) => {
  for (const missing of ['ab'.repeat(32), 'c'.repeat(63), 'd'.repeat(60)]) {
    for (const path of [`/v1/skin/${missing}`, `/v1/avatar/${missing}/64`, `/v1/render/${missing}/64`]) {
      const r = await h.get(path);
      t.is(r.status, 404, path);
      t.is(r.json.code, 'no_texture', path);
    }
  }
});

test('59 or 65 hex digits are invalid_name; the JSON lookups take no texture id', async (t) => {
  for (const wrong of ['e'.repeat(59), 'f'.repeat(65)]) {
    for (const path of [`/v1/skin/${wrong}`, `/v1/avatar/${wrong}/64`, `/v1/player/${wrong}`]) {
      const r = await h.get(path);
      t.is(r.status, 400, path);
      t.is(r.json.code, 'invalid_name', path);
    }
  }
  for (const path of [`/v1/player/${id}`, `/v1/u/${id}`, `/v1/uuid/${id}`]) {
    const r = await h.get(path);
    t.is(r.status, 400, path);
    t.is(r.json.code, 'invalid_name', path);
  }
  // Its parameter is a UUID (the spec): anything else there is a malformed one.
  t.is((await h.get(`/v1/profile/${id}`)).json.code, 'invalid_uuid');
});

test('names, UUIDs and texture ids never overlap', (t) => {
  t.deepEqual(parseSubjectQuery('ClassicSteve'), { kind: 'name', name: 'ClassicSteve' });
  t.deepEqual(parseSubjectQuery('a'.repeat(16)), { kind: 'name', name: 'a'.repeat(16) });
  t.deepEqual(parseSubjectQuery('A'.repeat(32)), { kind: 'uuid', uuid: 'a'.repeat(32) });
  t.deepEqual(parseSubjectQuery(`${'b'.repeat(8)}-${'b'.repeat(4)}-${'b'.repeat(4)}-${'b'.repeat(4)}-${'b'.repeat(12)}`), { kind: 'uuid', uuid: 'b'.repeat(32) });
  t.deepEqual(parseSubjectQuery('C'.repeat(60)), { kind: 'texture', id: 'c'.repeat(60) });
  t.deepEqual(parseSubjectQuery('c'.repeat(64)), { kind: 'texture', id: 'c'.repeat(64) });
  for (const length of [33, 59, 65, 128]) t.is(t.throws<ApiError>(() => parseSubjectQuery('d'.repeat(length)))?.code, 'invalid_name', `${length} hex digits`);
});

test('a texture that is not a PNG or is too large is refused as a player\'s is', async (t) => {
  for (const trap of [TRAP_HASHES.notPng, TRAP_HASHES.huge, TRAP_HASHES.redirect]) {
    const r = await h.get(`/v1/skin/${trap}`);
    t.is(r.status, 502);
    t.is(r.json.code, 'upstream_error');
  }
});

test('a texture host off the allow-list is never asked, and an id costs no lookup budget', async (t) => {
  const fake = await startFakeUpstream();
  let app: RunningApp | undefined;
  try {
    // The fake's own port under another host name: not on TEXTURE_HOSTS.
    app = await startApp({ SERVICES: 'skins', ...fake.env, OFFICIAL_TEXTURE_URL: evilBase(fake.baseUrl), UPSTREAM_CLIENT_LOOKUPS: '2' });
    const get = (path: string) => call(`${app!.urls.skins}${path}`);
    await startInOneWindow();
    // The client's two uncached lookups (a name, a profile) are spent; the next player is refused.
    t.is((await get('/v1/player/ClassicSteve')).status, 200);
    t.is((await get('/v1/player/Robot')).json.code, 'rate_limited');
    for (const path of [`/v1/skin/${'ab'.repeat(32)}`, `/v1/avatar/${'ab'.repeat(32)}/64`]) {
      const r = await get(path);
      t.is(r.status, 502, path);
      t.is(r.json.code, 'upstream_error', path);
      t.regex(r.json.message_en, /not allowed/, path);
    }
    t.is(fake.calls().evil ?? 0, 0);
  } finally {
    await app?.stop();
    await fake.close();
  }
});
